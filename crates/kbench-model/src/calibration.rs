//! A host's calibration (`kbench calibrate`): how far identical units of an
//! unchanged system, runs or boots, differ on this hardware, per test. A
//! comparison with one unit on a side cannot measure that drift itself, so
//! it uses the calibration of the hardware both sides ran on
//! (docs/statistics.md, "Measured apart"). It is keyed by the hardware and
//! the unit, never by the kernel: the two sides of a kernel comparison
//! always differ in kernel.

use crate::{SystemSnapshot, TestKey};
use serde::{Deserialize, Serialize};

/// What a calibration's units are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CalibratedUnit {
    /// One `kbench run` invocation.
    Run,
    /// One boot of the measuring system.
    Boot,
}

impl CalibratedUnit {
    /// "run" or "boot", as stored.
    pub fn as_str(self) -> &'static str {
        match self {
            CalibratedUnit::Run => "run",
            CalibratedUnit::Boot => "boot",
        }
    }

    /// The unit named `text` ("run" or "boot").
    pub fn parse(text: &str) -> Option<CalibratedUnit> {
        [CalibratedUnit::Run, CalibratedUnit::Boot]
            .into_iter()
            .find(|u| u.as_str() == text)
    }
}

/// The hardware a calibration holds for: what stays when the kernel
/// changes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hardware {
    pub cpu_model: String,
    /// Memory in GiB, rounded: two kernels reserve a few MiB differently.
    pub memory_gib: u64,
    /// [`SystemSnapshot::machine_id`]: empty where the system has none.
    pub machine_id: String,
}

impl Hardware {
    /// The hardware of a run's measuring system: a VM guest's host when
    /// there is one (its boots are the host's guests), else its own.
    pub fn of(snapshot: &SystemSnapshot, host: Option<&SystemSnapshot>) -> Hardware {
        let system = host.unwrap_or(snapshot);
        Hardware {
            cpu_model: system.cpu_model.clone(),
            memory_gib: (system.memory_total_kib as f64 / (1024.0 * 1024.0)).round() as u64,
            machine_id: system.machine_id.clone(),
        }
    }
}

impl std::fmt::Display for Hardware {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}, {} GiB", self.cpu_model, self.memory_gib)?;
        if !self.machine_id.is_empty() {
            write!(f, ", machine {}", self.machine_id)?;
        }
        Ok(())
    }
}

/// One test's drift in a calibration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestDrift {
    pub test: TestKey,
    /// SD of one unit's level on logs (about a relative SD), net of the
    /// rounds' share.
    pub sd: f64,
    /// Its degrees of freedom: the pairs measured, less one.
    pub df: f64,
}

/// A calibration as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Calibration {
    pub hardware: Hardware,
    pub unit: CalibratedUnit,
    /// When it finished, ms since the epoch.
    pub at_ms: i64,
    /// A/A pairs of units measured.
    pub pairs: u32,
    /// The kernel it ran on: for the reader, not part of the key.
    pub kernel_release: String,
    /// Per test, in the order measured.
    pub tests: Vec<TestDrift>,
}

impl Calibration {
    /// The drift of `test`, if this calibration measured it.
    pub fn drift_of(&self, test: &TestKey) -> Option<&TestDrift> {
        self.tests.iter().find(|t| &t.test == test)
    }
}
