//! `kbench compare`: verdicts per metric in a chosen report format, and a
//! CI gate (`--fail-on-regression`).

use super::context::{Db, EXIT_REGRESSION};
use crate::cli::CompareArgs;
use anyhow::Context;
use kbench_analysis::comparison::CompareRequest;
use kbench_report::format::Style;
use kbench_report::printed::{self, By};
use std::io::IsTerminal;
use std::process::ExitCode;

pub fn compare(args: CompareArgs, db: &Db) -> anyhow::Result<ExitCode> {
    let mut store = db.open_existing()?;
    let color = match args.color.as_str() {
        "always" => true,
        "never" => false,
        _ => {
            args.output.is_none()
                && std::io::stdout().is_terminal()
                && std::env::var_os("NO_COLOR").is_none()
        }
    };
    let request = CompareRequest {
        baseline: args.baseline.clone(),
        identifiers: args.identifiers.clone(),
        threshold: args.threshold.clone(),
        metric_filter: args.metric.clone(),
        calibrations: store.calibrations()?,
    };
    let by = args.by.as_deref().map(|factor| By {
        factor,
        baseline_level: args.baseline_level.as_deref(),
    });
    let style = Style {
        color,
        all_rows: args.all_rows,
    };
    let data = store.load_part(&args.set, &printed::part(&request, by))?;
    let printed = printed::compare(&data, &request, by, &args.format, style)?;
    match &args.output {
        Some(path) => std::fs::write(path, &printed.text)
            .with_context(|| format!("cannot write {}", path.display()))?,
        None => print!("{}", printed.text),
    }
    Ok(if args.fail_on_regression && printed.regression {
        ExitCode::from(EXIT_REGRESSION)
    } else {
        ExitCode::SUCCESS
    })
}
