//! `kbench bisect`: find the commit that changed a metric (kbench-bisect).
//! Progress on stderr; the result as text, or `--json` (kbench.bisect/3),
//! on stdout, and as an HTML page with `--html`.

use super::context::{Db, EXIT_INTERRUPTED};
use crate::cli::BisectArgs;
use anyhow::Context;
use kbench_analysis::bisect::BisectReport;
use kbench_bisect::{Bisection, Progress};
use kbench_report::format::{Style, text_or_json};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

pub fn bisect(args: BisectArgs, db: &Db) -> anyhow::Result<ExitCode> {
    let setup = args.setup(db.location()?.data_dir())?;
    // Everything that can be checked without writing comes first.
    let bisection = Bisection::prepare(setup, &mut say)?;
    let stop = Arc::new(AtomicBool::new(false));
    kbench_measure::agent::stop_on_signals(&stop)?;
    let mut store = db.open()?;
    let steps = crate::progress::Steps::new(0);
    let ran = bisection.run(store.as_mut(), &stop, &mut |progress| match progress {
        Progress::Testing {
            commit,
            tested,
            left,
        } => steps.step_of(
            tested as u64 + 1,
            (tested + left) as u64,
            format!("testing {commit}"),
        ),
        Progress::Step(line) => steps.line(line.to_string()),
        other => say(other),
    });
    steps.finish();
    let report = match ran {
        Ok(report) => report,
        Err(error) if error.is_interrupted() => {
            eprintln!("kbench: {error}");
            return Ok(ExitCode::from(EXIT_INTERRUPTED));
        }
        Err(error) => return Err(error.into()),
    };
    if let Some(path) = &args.html {
        let page = kbench_report::format::html::bisect_page(&report);
        std::fs::write(path, page).with_context(|| format!("writing {}", path.display()))?;
    }
    print!(
        "{}",
        text_or_json::<BisectReport>(args.json).render(&report, Style::default())
    );
    Ok(ExitCode::SUCCESS)
}

/// Progress on stderr; with -q only warnings. `run` draws the search's
/// commits as a bar on a terminal.
fn say(progress: Progress<'_>) {
    match progress {
        Progress::Step(_) | Progress::Note(_) if crate::logs::quiet() => {}
        Progress::Step(line) => eprintln!("{line}"),
        Progress::Note(note) => eprintln!("kbench: {note}"),
        Progress::Warning(warning) => eprintln!("kbench: WARNING: {warning}"),
        Progress::Testing { commit, .. } => say(Progress::Step(&format!("testing {commit}"))),
    }
}
