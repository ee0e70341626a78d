//! What a test's sampling aims for and why it stopped: the plan a run
//! hands every agent, and the reasons sampling ends.

use crate::error::{MeasureError, Result, invalid};
use crate::sysmon::SystemMonitor;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// The fewest samples per test and round, unless chosen (`--min-samples`).
pub const MIN_SAMPLES: usize = 5;
/// The most samples per test and round, unless chosen (`--max-samples`).
pub const MAX_SAMPLES: usize = 10_000;
/// The CI half-width to stop at, percent of the mean (`--target-ci`).
pub const TARGET_CI_PERCENT: f64 = 1.0;
/// Time per test and round unless chosen (`--max-time`): of `--rounds`
/// and of a VM's rounds...
pub const MAX_TIME: Duration = Duration::from_secs(1);
/// ...and of the short rounds of adaptive runs and of variants' blocks
/// (a block of a few variants then lasts about a second).
pub const SHORT_ROUND: Duration = Duration::from_millis(200);

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
    /// The shortest timed interval (docs/benchmarks.md: at least 5 ms).
    pub min_interval: Duration,
    /// Whether the user chose `min_samples` (`--min-samples`); when not, an
    /// external profile's own minimum replaces it (its runs take seconds).
    #[serde(default)]
    pub min_samples_chosen: bool,
    /// Whether the user chose `max_time` (`--max-time`); when not, an
    /// external profile's own time budget replaces it.
    #[serde(default)]
    pub max_time_chosen: bool,
    /// What is recorded beside each test's own numbers.
    #[serde(default)]
    pub record: Recording,
}

/// The secondary metrics a round records (docs/counters.md): the
/// measuring task's perf counters and the system monitors.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Recording {
    /// `false` with `--no-counters`.
    pub counters: bool,
    /// `--monitor`'s sources.
    pub monitors: Vec<SystemMonitor>,
}

impl Recording {
    /// From `--no-counters` and `--monitor`'s list; an unknown monitor is
    /// refused with the closest name.
    pub fn chosen(no_counters: bool, monitors: &str) -> Result<Recording> {
        Ok(Recording {
            counters: !no_counters,
            monitors: SystemMonitor::parse_list(monitors)
                .map_err(|e| MeasureError::Invalid(format!("--monitor: {e}")))?,
        })
    }
}

impl Default for Recording {
    fn default() -> Self {
        Recording {
            counters: true,
            monitors: SystemMonitor::ALL.to_vec(),
        }
    }
}

impl Default for SamplingPlan {
    fn default() -> Self {
        SamplingPlan {
            min_samples: MIN_SAMPLES,
            max_samples: MAX_SAMPLES,
            target_ci: TARGET_CI_PERCENT / 100.0,
            max_time: MAX_TIME,
            min_interval: kbench_bench::MIN_INTERVAL,
            min_samples_chosen: false,
            max_time_chosen: false,
            record: Recording::default(),
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

/// What a user chose of a plan (`--target-ci`, `--max-time`,
/// `--min-samples`, `--max-samples`), before it is checked.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanChoice {
    /// Percent of the mean.
    pub target_ci_percent: f64,
    /// Seconds per test and round, when chosen.
    pub max_time: Option<f64>,
    pub min_samples: Option<u64>,
    pub max_samples: u64,
}

impl SamplingPlan {
    /// The plan `choice` asks for, checked; what it leaves unchosen keeps
    /// the default (and an external profile's own values apply then).
    pub fn chosen(choice: &PlanChoice) -> Result<SamplingPlan> {
        let target = choice.target_ci_percent;
        if !(target.is_finite() && target > 0.0 && target < 100.0) {
            invalid!("--target-ci {target} must be a percentage above 0 and below 100");
        }
        let defaults = SamplingPlan::default();
        let max_time = choice.max_time.unwrap_or(defaults.max_time.as_secs_f64());
        if !(max_time.is_finite() && max_time > 0.0 && max_time <= 86_400.0) {
            invalid!("--max-time {max_time} must be a number of seconds above 0 (at most a day)");
        }
        let min_samples = choice.min_samples.unwrap_or(defaults.min_samples as u64);
        if min_samples > choice.max_samples {
            invalid!(
                "--min-samples {min_samples} is more than --max-samples {}",
                choice.max_samples
            );
        }
        Ok(SamplingPlan {
            min_samples: min_samples as usize,
            max_samples: choice.max_samples as usize,
            target_ci: target / 100.0,
            max_time: Duration::from_secs_f64(max_time),
            min_samples_chosen: choice.min_samples.is_some(),
            max_time_chosen: choice.max_time.is_some(),
            ..defaults
        })
    }
}
