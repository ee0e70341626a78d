//! The agent protocol: JSON lines a measuring process writes, one event a
//! line, as each thing happens. The same stream comes from a child process
//! on the host (stdout) and from a VM guest (its results channel).

use crate::{Direction, SystemSnapshot, TestKey};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum AgentEvent {
    /// The measuring process's view of the system.
    Snapshot { snapshot: Box<SystemSnapshot> },
    /// A test begins; `iterations` is the calibrated count per sample.
    TestStart {
        test: TestKey,
        unit: String,
        direction: Direction,
        iterations: u64,
    },
    /// A metric of the current test whose unit or direction is not the
    /// test's (an external tool's latency beside its throughput). Sent once,
    /// before the metric's first sample; a metric never declared has the
    /// test's unit and direction.
    Metric {
        metric: String,
        unit: String,
        direction: Direction,
    },
    /// One sample of one metric of the current test.
    Sample {
        metric: String,
        value: f64,
        iterations: u64,
        at_ms: i64,
    },
    /// The current test is done; `target_met` says whether the CI target was
    /// reached, `stop` why sampling stopped.
    TestEnd { target_met: bool, stop: String },
    /// The test cannot run here; the run goes on.
    Skip { test: TestKey, reason: String },
    /// The test failed while running; the run goes on.
    Failed { test: TestKey, reason: String },
}

impl AgentEvent {
    /// A secondary metric's one sample of a round, declared first (counts
    /// per operation: fewer is better).
    pub fn secondary_sample(
        metric: String,
        unit: &str,
        value: f64,
        iterations: u64,
        at_ms: i64,
    ) -> [AgentEvent; 2] {
        [
            AgentEvent::Metric {
                metric: metric.clone(),
                unit: unit.to_string(),
                direction: Direction::Lower,
            },
            AgentEvent::Sample {
                metric,
                value,
                iterations,
                at_ms,
            },
        ]
    }
}
