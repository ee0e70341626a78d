//! kbench's reports: what people already read, built from stored results.
//! Data flows one way: a [`kbench_model::results::ResultSetData`] (as a
//! store returns it; this crate sees no database) and the statistics of
//! `kbench-stats` in, text or JSON out.

mod blocks;
pub mod comparison;
pub mod format;
pub mod header;
pub mod history;
pub mod interference;
pub mod number;
pub mod show;
#[cfg(feature = "testing")]
pub mod testing;
