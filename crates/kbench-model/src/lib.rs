//! kbench's shared vocabulary.
//!
//! Every other crate speaks in these types: what a test is ([`TestKey`],
//! [`TestSpec`]), which way is better ([`Direction`]), one raw [`Sample`],
//! the [`SystemSnapshot`] taken with every run, and the [`AgentEvent`]s a
//! measuring process streams to whoever stores its samples (the `kbench run`
//! parent on the host, or the host side of a VM). [`results`] is the read
//! model of stored results (a [`results::ResultSetData`] is what reports
//! read), [`lab`] the records of the shared lab and its API, and
//! [`campaign`] the state of a campaign of boots.

mod calibration;
pub mod campaign;
mod event;
mod imported;
mod kernel_spec;
pub mod lab;
mod monitor;
mod names;
pub mod results;
mod secondary;
mod snapshot;
mod test_key;

pub use calibration::{CalibratedUnit, Calibration, Hardware, TestDrift};
pub use event::AgentEvent;
pub use imported::{Field, ImportedRecord, field_value};
pub use kernel_spec::KernelSpec;
pub use monitor::{
    MONITOR_CONTROL, MONITOR_NIVCSW, MONITOR_PREFIX, MONITOR_RUNNING, MONITOR_STEAL, MONITORS,
    REDO_NOTE, is_monitor_metric,
};
pub use names::{
    MAX_NAME_CHARS, MAX_TEST_NAME_CHARS, MAX_TEXT_CHARS, MAX_UNIT_CHARS, check_test_spec,
    parse_factor, validate_id, validate_name, validate_text,
};
pub use secondary::{
    COUNTER_PREFIX, SECONDARY_FAMILIES, is_result_metric, is_secondary_metric, secondary_family,
    secondary_label,
};
pub use snapshot::{
    BOOT_VIA_ENV, ROOTFS_RECORD_PATH, RootfsRecord, SystemSnapshot, ToolRecord, VariantRecord,
};
pub use test_key::{MAIN_METRIC, ParseTestKeyError, TestKey};

use serde::{Deserialize, Serialize};

/// Which way a metric is better. Decides the sign of a regression.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Smaller values are better (latencies, times).
    Lower,
    /// Larger values are better (throughput, bandwidth).
    Higher,
}

impl Direction {
    /// The form written in reports: "Lower Is Better" / "Higher Is Better".
    pub fn phrase(self) -> &'static str {
        match self {
            Direction::Lower => "Lower Is Better",
            Direction::Higher => "Higher Is Better",
        }
    }

    /// The stored form: "lower" / "higher".
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Lower => "lower",
            Direction::Higher => "higher",
        }
    }

    /// Parses the stored form.
    pub fn parse(text: &str) -> Option<Direction> {
        match text {
            "lower" => Some(Direction::Lower),
            "higher" => Some(Direction::Higher),
            _ => None,
        }
    }
}

/// A test: what is measured (key) with its unit and direction.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct TestSpec {
    #[serde(flatten)]
    pub key: TestKey,
    pub unit: String,
    pub direction: Direction,
}

/// One raw measurement: one timed interval divided by its iteration count,
/// in the unit of its test.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    pub value: f64,
    /// Iterations in the timed interval (1 for external tools).
    pub iterations: u64,
    /// When it was measured, milliseconds since the Unix epoch.
    pub at_ms: i64,
    /// The round (fresh invocation) it belongs to, from 0.
    #[serde(default)]
    pub round: u32,
}

/// 32 random hex digits from the kernel's generator: push ids, run uids.
pub fn random_id() -> std::io::Result<String> {
    use std::io::Read;
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Milliseconds since the Unix epoch, now.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}
