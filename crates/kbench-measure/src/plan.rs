//! What a test's sampling aims for and why it stopped: the plan a run
//! hands every agent, and the reasons sampling ends.

use serde::{Deserialize, Serialize};
use std::time::Duration;

/// The per-test stopping rule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SamplingPlan {
    /// Never stop before this many samples.
    pub min_samples: usize,
    /// Never take more than this many samples.
    pub max_samples: usize,
    /// Stop when the CI half-width is at most this fraction of the mean.
    pub target_ci: f64,
    /// Time budget per test, calibration included.
    pub max_time: Duration,
    /// The shortest timed interval (benchmarks.md: at least 5 ms).
    pub min_interval: Duration,
    /// Whether the user chose `min_samples` (`--min-samples`); when not, an
    /// external profile's own minimum replaces it (its runs take seconds).
    #[serde(default)]
    pub min_samples_chosen: bool,
    /// Whether the user chose `max_time` (`--max-time`); when not, an
    /// external profile's own time budget replaces it.
    #[serde(default)]
    pub max_time_chosen: bool,
}

impl Default for SamplingPlan {
    fn default() -> Self {
        SamplingPlan {
            min_samples: 5,
            max_samples: 10_000,
            target_ci: 0.01,
            // Per round: the default 3 rounds give each test 3 s.
            max_time: Duration::from_secs(1),
            min_interval: kbench_bench::MIN_INTERVAL,
            min_samples_chosen: false,
            max_time_chosen: false,
        }
    }
}

/// Why sampling stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    TargetMet,
    TimeBudget,
    SampleBudget,
    /// The stop flag was raised (SIGINT): the test is unfinished.
    Interrupted,
    /// Taking turns ([`crate::turns`]): the block's leader ended the round.
    BlockEnded,
}

impl StopReason {
    pub fn describe(self, plan: &SamplingPlan) -> String {
        match self {
            StopReason::TargetMet => format!("CI within {:.1} %", plan.target_ci * 100.0),
            StopReason::TimeBudget => format!("time budget of {:?} used", plan.max_time),
            StopReason::SampleBudget => format!("{} samples taken", plan.max_samples),
            StopReason::Interrupted => "interrupted".to_string(),
            StopReason::BlockEnded => "as many samples as the block's first variant".to_string(),
        }
    }
}
