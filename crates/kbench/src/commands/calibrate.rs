//! `kbench calibrate`: measures this host's drift between identical runs
//! (or VM boots) with kbench-measure's `calibration`, under a progress
//! bar, and stores it whole; `--show` lists the stored ones.

use super::context::{Db, ended};
use crate::cli::CalibrateArgs;
use crate::progress::Steps;
use kbench_measure::calibration::{Calibrated, CalibrationRun};
use kbench_model::Calibration;
use kbench_report::format::{Style, text_or_json};
use std::path::PathBuf;
use std::process::ExitCode;

pub fn calibrate(args: CalibrateArgs, db: &Db, profiles: &[PathBuf]) -> anyhow::Result<ExitCode> {
    let shown = match args.show {
        true => db.open_existing()?.calibrations()?,
        false => {
            // The user's database first: a bad --db fails before measuring.
            let mut store = db.open()?;
            let run = CalibrationRun {
                profiles: profiles.to_vec(),
                names: args.names,
                rounds: args.rounds,
                kernel: args.kernel,
                pairs: args.pairs,
            };
            let steps = Steps::new(u64::from(2 * args.pairs));
            let measured = run.measure(|i, what| steps.step(u64::from(i), what));
            steps.finish();
            let Calibrated::Done(calibration) = measured? else {
                crate::logs::closing("Calibration interrupted: nothing was stored.", true);
                return Ok(ended(true));
            };
            store.record_calibration(&calibration)?;
            vec![calibration]
        }
    };
    let renderer = text_or_json::<Vec<Calibration>>(args.json);
    print!("{}", renderer.render(&shown, Style::default()));
    Ok(ExitCode::SUCCESS)
}
