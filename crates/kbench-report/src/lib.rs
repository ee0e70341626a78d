//! kbench's reports: what people already read, built from stored results.
//! Data flows one way: a [`kbench_model::results::ResultSetData`] (as a
//! store returns it; this crate sees no database) and the statistics of
//! `kbench-stats` in, text or JSON out.
//!
//! - The models, built once from the data: [`show`] (and its
//!   [`counters`] view), [`comparison`] and
//!   [`history`] (with the system [`header`] facts and what the
//!   [`interference`] monitors saw, and what the counters and system
//!   monitors [`explain`]); [`factors`], comparisons within the groups of
//!   a designed experiment (`compare --by`), with per-metric
//!   [`thresholds`]; and [`bisect`], the report
//!   kbench-bisect builds as it measures.
//! - The renderers that lay them out: [`format`], one trait and one
//!   registry of every format; [`printed`] builds and lays out what
//!   `kbench compare` prints in one call.
//! - The lab's records as text: [`lab`] (the job queue).
//! - What the renderers share, written once: [`number`] formatting and the
//!   escaping templates of [`markup`] (which `kbench serve`'s dashboard
//!   uses too).

pub mod bisect;
mod blocks;
pub mod comparison;
pub mod counters;
mod error;
pub mod explain;
pub mod factors;
#[cfg(test)]
mod fixtures;
pub mod format;
pub mod header;
pub mod history;
pub mod interference;
pub mod lab;
pub mod markup;
pub mod number;
mod parallel;
pub mod printed;
pub mod show;
mod sides;
#[cfg(feature = "testing")]
pub mod testing;
pub mod thresholds;
pub mod title;

pub use error::Error;
