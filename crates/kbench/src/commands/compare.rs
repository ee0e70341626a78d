//! `kbench compare`: verdicts per metric in a chosen report format, and a
//! CI gate (`--fail-on-regression`).

use super::context::Db;
use crate::cli::CompareArgs;
use anyhow::{Context, bail};
use kbench_report::comparison::{self, CompareRequest};
use kbench_report::factors::{self, FactorRequest};
use kbench_report::format::{self, Style};
use std::io::IsTerminal;
use std::process::ExitCode;

/// Status for a usage error or any failure to compare (1 is the gate's).
const EXIT_ERROR: u8 = 2;
const EXIT_REGRESSION: u8 = 1;

pub fn compare(args: CompareArgs, db: &Db) -> ExitCode {
    match run(args, db) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("kbench: error: {error:#}");
            ExitCode::from(EXIT_ERROR)
        }
    }
}

fn run(args: CompareArgs, db: &Db) -> anyhow::Result<ExitCode> {
    let formatter = format::by_name(&args.format).expect("clap checked the format");
    if !(args.threshold.is_finite() && (0.0..100.0).contains(&args.threshold)) {
        bail!(
            "--threshold {} must be a percentage from 0 to below 100",
            args.threshold
        );
    }
    let mut store = db.open_existing()?;
    let data = store.load(&args.set)?;
    let color = match args.color.as_str() {
        "always" => true,
        "never" => false,
        _ => {
            args.output.is_none()
                && std::io::stdout().is_terminal()
                && std::env::var_os("NO_COLOR").is_none()
        }
    };
    let (text, regression) = if let Some(factor) = &args.by {
        let report = factors::build(
            &data,
            &FactorRequest {
                factor: factor.clone(),
                baseline_level: args.baseline_level.clone(),
                baseline: args.baseline.clone(),
                threshold: args.threshold / 100.0,
                metric_filter: args.metric.clone(),
            },
        )?;
        let text = factors::render(&report, &args.format, Style { color })?;
        (text, report.has_regression())
    } else {
        let request = CompareRequest {
            baseline: args.baseline.clone(),
            identifiers: args.identifiers.clone(),
            threshold: args.threshold / 100.0,
            metric_filter: args.metric.clone(),
        };
        let mut report = comparison::build(&data, &request)?;
        if report.identifiers.len() < 2 {
            bail!(
                "result set '{}' has only '{}'; run under a second identifier (--as) to compare",
                report.result_set,
                report.baseline
            );
        }
        if report.metrics.is_empty() {
            bail!(
                "no metric of result set '{}' matches --metric",
                report.result_set
            );
        }
        formatter.fit(&mut report, args.metric.as_deref())?;
        let text = formatter.render(&report, Style { color });
        (text, report.has_regression())
    };
    match &args.output {
        Some(path) => std::fs::write(path, &text)
            .with_context(|| format!("cannot write {}", path.display()))?,
        None => print!("{text}"),
    }
    Ok(if args.fail_on_regression && regression {
        ExitCode::from(EXIT_REGRESSION)
    } else {
        ExitCode::SUCCESS
    })
}
