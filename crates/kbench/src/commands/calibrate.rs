//! `kbench calibrate`: A/A units of this unchanged host, each a fresh
//! `kbench run` (or a `kbench vm run` boot), measured into a scratch
//! database; the drift of consecutive pairs is then stored in the user's
//! database whole, so an interrupted calibration stores nothing.

use super::context::{Db, ended, print_json};
use crate::cli::CalibrateArgs;
use crate::progress::Steps;
use anyhow::{Context, bail};
use kbench_analysis::calibration;
use kbench_analysis::number::date;
use kbench_measure::agent::stop_on_signals;
use kbench_model::{CalibratedUnit, Calibration};
use kbench_store::{Results, SqliteStore};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// The scratch result set and identifier the units are measured into.
const SCRATCH: &str = "calibration";

pub fn calibrate(args: CalibrateArgs, db: &Db, profiles: &[PathBuf]) -> anyhow::Result<ExitCode> {
    if args.show {
        let calibrations = db.open_existing()?.calibrations()?;
        return show(&calibrations, args.json);
    }
    // Open (and create) the user's database first: a bad --db fails now,
    // not after minutes of measuring.
    let mut store = db.open()?;
    let scratch = tempfile::tempdir().context("making a scratch directory for the calibration")?;
    let scratch_db = scratch.path().join("calibration.db");
    let unit = match args.kernel {
        Some(_) => CalibratedUnit::Boot,
        None => CalibratedUnit::Run,
    };
    // Ctrl-C stops between units (the measuring child gets it too), and
    // the scratch database goes with its directory.
    let stop = Arc::new(AtomicBool::new(false));
    stop_on_signals(&stop)?;
    let units = 2 * args.pairs;
    let steps = Steps::new(u64::from(units));
    for i in 0..units {
        let what = format!("{} {} of {units}", unit.as_str(), i + 1);
        steps.step(u64::from(i), format!("{what} ({})", args.names.join(" ")));
        let measured = measure_unit(&args, &scratch_db, profiles);
        if stop.load(Ordering::SeqCst) {
            steps.finish();
            crate::logs::closing("Calibration interrupted: nothing was stored.", true);
            return Ok(ended(true));
        }
        measured.with_context(|| format!("{what} of the calibration"))?;
    }
    steps.finish();
    let data = SqliteStore::open(&scratch_db)?.load(SCRATCH)?;
    let at_ms = kbench_model::now_ms();
    let calibration = calibration::measure(&data, unit, args.pairs, at_ms)?;
    store.record_calibration(&calibration)?;
    show(std::slice::from_ref(&calibration), args.json)
}

/// One unit: a fresh kbench process measuring the tests (booting the
/// kernel with --kernel) into the scratch database, its errors on stderr.
fn measure_unit(
    args: &CalibrateArgs,
    scratch_db: &Path,
    profiles: &[PathBuf],
) -> anyhow::Result<()> {
    let exe = std::env::current_exe().context("finding the kbench binary to measure with")?;
    let mut command = Command::new(exe);
    command.arg("--db").arg(scratch_db).arg("--quiet");
    if !profiles.is_empty() {
        let dirs: Vec<String> = profiles.iter().map(|d| d.display().to_string()).collect();
        command.arg("--profiles").arg(dirs.join(":"));
    }
    match &args.kernel {
        Some(kernel) => command.args(["vm", "run", "--kernel", kernel]),
        None => command.arg("run"),
    };
    command
        .args(&args.names)
        .args(["--as", SCRATCH, "--into", SCRATCH, "--rounds"])
        .arg(args.rounds.to_string())
        .stdout(std::process::Stdio::null());
    let status = command.status().context("starting kbench")?;
    if !status.success() {
        bail!("the measuring kbench failed ({status}); nothing was stored");
    }
    Ok(())
}

/// The calibrations, newest first: per test its drift in percent.
fn show(calibrations: &[Calibration], json: bool) -> anyhow::Result<ExitCode> {
    if json {
        print_json(&calibrations)?;
        return Ok(ExitCode::SUCCESS);
    }
    if calibrations.is_empty() {
        println!("No calibration stored: `kbench calibrate` measures this host's drift.");
    }
    for c in calibrations {
        println!(
            "{} drift on {} ({}, {} pairs, kernel {}):",
            c.unit.as_str(),
            c.hardware,
            date(c.at_ms),
            c.pairs,
            c.kernel_release
        );
        let width = c
            .tests
            .iter()
            .map(|t| t.test.to_string().len())
            .max()
            .unwrap_or(0);
        for t in &c.tests {
            println!(
                "  {:width$}  {:>6.2} %  ({} df)",
                t.test.to_string(),
                100.0 * t.sd,
                t.df
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
