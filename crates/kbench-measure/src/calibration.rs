//! `kbench calibrate`'s measuring: A/A units of this unchanged host, each
//! a fresh kbench process that measures the tests (booting a VM kernel
//! with one) into a scratch database, so that every unit is an
//! invocation, or a boot, of its own; then the drift of their consecutive
//! pairs (kbench-analysis' `calibration`). The scratch database goes
//! however this ends, so an interrupted calibration leaves nothing.

use crate::MeasureError;
use crate::agent::stop_on_signals;
use kbench_analysis::calibration;
use kbench_catalog::profile::Profiles;
use kbench_model::{CalibratedUnit, Calibration};
use kbench_store::{Results, SqliteStore};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// The result set and identifier the units are measured into.
const SCRATCH: &str = "calibration";

/// A calibration to measure.
#[derive(Debug, Clone)]
pub struct CalibrationRun {
    /// `--profiles` directories to pass on.
    pub profiles: Vec<PathBuf>,
    /// Suites, benchmarks or tests, as `kbench run` takes them.
    pub names: Vec<String>,
    pub rounds: u32,
    /// A VM kernel: each unit is a boot of it (`kbench vm run`).
    pub kernel: Option<String>,
    /// A/A pairs of units.
    pub pairs: u32,
}

/// How a calibration ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Calibrated {
    Done(Calibration),
    /// `stop` was raised: nothing was measured to keep.
    Interrupted,
}

impl CalibrationRun {
    /// What a unit is: a boot with a kernel, else a run.
    pub fn unit(&self) -> CalibratedUnit {
        match self.kernel {
            Some(_) => CalibratedUnit::Boot,
            None => CalibratedUnit::Run,
        }
    }

    /// Measures the 2 x pairs units, calling `on_unit(i, what)` before
    /// unit `i`, and then the calibration of their drift. Ctrl-C (SIGINT,
    /// SIGTERM) stops it after the unit, whose child gets it too.
    pub fn measure(
        &self,
        mut on_unit: impl FnMut(u32, String),
    ) -> Result<Calibrated, MeasureError> {
        // The names resolve as each unit's `kbench run` resolves them: a
        // bad name or option value fails here, before the first unit.
        let profiles = Profiles::load(&self.profiles).map_err(invalid)?;
        kbench_catalog::expand_with(&self.names, &profiles).map_err(invalid)?;
        let stop = Arc::new(AtomicBool::new(false));
        stop_on_signals(&stop).map_err(|cause| MeasureError::Os {
            what: "routing Ctrl-C to the calibration".into(),
            cause,
        })?;
        let scratch = tempfile::tempdir().map_err(|cause| MeasureError::Os {
            what: "making a scratch directory for the calibration".into(),
            cause,
        })?;
        let db = scratch.path().join("calibration.db");
        let (unit, units) = (self.unit(), 2 * self.pairs);
        for i in 0..units {
            let what = format!("{} {} of {units}", unit.as_str(), i + 1);
            on_unit(i, format!("{what} ({})", self.names.join(" ")));
            let measured = self.measure_unit(&db);
            if stop.load(Ordering::SeqCst) {
                return Ok(Calibrated::Interrupted);
            }
            measured.map_err(|e| e.at(format!("{what} of the calibration")))?;
        }
        let data = SqliteStore::open(&db)?.load(SCRATCH)?;
        calibration::measure(&data, unit, self.pairs, kbench_model::now_ms())
            .map(Calibrated::Done)
            .map_err(|e| MeasureError::Invalid(e.to_string()))
    }

    /// One unit; its errors go to stderr as the child prints them, and a
    /// failure says nothing was stored.
    fn measure_unit(&self, db: &Path) -> Result<(), MeasureError> {
        let exe = std::env::current_exe().map_err(|cause| MeasureError::Os {
            what: "finding the kbench binary to measure with".into(),
            cause,
        })?;
        let mut command = Command::new(&exe);
        command.arg("--db").arg(db).arg("--quiet");
        if !self.profiles.is_empty() {
            let dirs: Vec<String> = self
                .profiles
                .iter()
                .map(|d| d.display().to_string())
                .collect();
            command.arg("--profiles").arg(dirs.join(":"));
        }
        match &self.kernel {
            Some(kernel) => command.args(["vm", "run", "--kernel", kernel]),
            None => command.arg("run"),
        };
        command
            .args(&self.names)
            .args(["--as", SCRATCH, "--into", SCRATCH, "--rounds"])
            .arg(self.rounds.to_string())
            .stdout(Stdio::null());
        let status = command.status().map_err(|cause| MeasureError::Os {
            what: format!("starting {}", exe.display()),
            cause,
        })?;
        match status.success() {
            true => Ok(()),
            false => Err(MeasureError::Agent(format!(
                "the measuring kbench failed ({status}); nothing was stored"
            ))),
        }
    }
}

/// A name or profile directory the catalog refuses, as this crate's error.
fn invalid(error: kbench_catalog::CatalogError) -> MeasureError {
    MeasureError::Invalid(error.to_string())
}
