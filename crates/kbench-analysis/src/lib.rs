//! kbench's analysis: what a report says, built once from stored results
//! and laid out by kbench-report's renderers. Data flows one way: a
//! [`kbench_model::results::ResultSetData`] (as a store returns it; this
//! crate sees no database) and the statistics of `kbench-stats` in, models
//! out. Nothing here lays a report out; the few words it writes are the
//! models' own (notes, a bisection's log, a run's last line).
//!
//! - [`show`] (and its [`counters`] view): what one result set holds.
//! - [`comparison`]: identifiers against a baseline, with the system
//!   [`header`] facts, what the [`interference`] monitors saw, and what
//!   the counters and system monitors [`explain`]; per-metric
//!   [`thresholds`].
//! - [`history`]: a metric across ordered versions, with its change
//!   points.
//! - [`factors`]: comparisons within the groups of a designed experiment
//!   (`compare --by`).
//! - [`bisect`]: the report and log kbench-bisect builds as it measures.
//! - [`title`]: a profile test's title from the tool its runs recorded.
//! - `level`: the level of analysis a comparison's summary states;
//!   `notes`, its notes, each said once (`named`: the identifiers a note
//!   names).
//! - [`apart`]: how identifiers measured apart are compared (the level,
//!   the host's drift, the plan's costs) and what the report says of it.
//! - [`calibration`]: the host's drift, measured from A/A units, and the
//!   calibration a comparison measured apart uses.
//! - [`units`]: the boots and runs an identifier's rounds were measured
//!   in, the units a comparison of identifiers measured apart replicates.
//! - [`number`]: how numbers are written, in the models' words and the
//!   renderers'.

pub mod apart;
pub mod apart_notes;
pub mod bisect;
mod blocks;
pub mod calibration;
pub mod comparison;
pub mod counters;
mod error;
pub mod explain;
pub mod factors;
#[cfg(any(test, feature = "fixtures"))]
pub mod fixtures;
pub mod header;
pub mod history;
pub mod interference;
mod level;
mod named;
mod notes;
pub mod number;
mod parallel;
pub mod show;
mod sides;
pub mod thresholds;
pub mod title;
pub mod units;

pub use error::Error;
