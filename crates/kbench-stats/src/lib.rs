//! kbench's pure statistics: summaries, outlier flags, A/B verdicts,
//! geometric means, change points and the decisions of a bisection. No
//! I/O; every method is described, with its reference, in its module.
//! What users read about it: docs/statistics.md.

mod bimodal;
pub mod bisection;
pub mod changepoint;
pub mod compare;
mod dist;
mod error;
mod estimate;
pub mod geomean;
pub mod outliers;
pub mod paired;
mod samples;
mod serde_float;
mod summary;

pub use bimodal::is_bimodal;
pub use compare::{
    Analysis, CompareOptions, Comparison, MetricInput, Side, Verdict, Warning, compare_all,
    compare_all_thresholded, compare_metric,
};
pub use error::StatsError;
pub use estimate::Estimate;
pub use samples::Samples;
pub use summary::Summary;
