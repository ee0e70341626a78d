//! `kbench history`: change points across a result set's identifiers in
//! version order, per metric.

use crate::cli::formats;
use anyhow::{Context, bail};
use kbench_report::format::{self, Style};
use kbench_report::history::{self, HistoryReport, HistoryRequest};
use std::path::PathBuf;
use std::process::ExitCode;

/// Change points across a result set's identifiers in version order
#[derive(Debug, clap::Args)]
#[command(
    after_help = "For each metric, the identifiers are a series of versions, each one observation: \
its mean. The noise of a version mean is estimated from the series (the spread of successive \
differences, so version-to-version drift is noise), at least the versions' own spread. Change \
points are found by E-divisive means and kept when a t-test between neighbouring segments gives \
p < 0.001 and the whole 95 % CI of the change lies beyond --threshold, as compare's verdicts \
(docs/json.md, kbench.history/1). A one-version spike that recovers is not a change.\n\n\
Examples:\n  kbench history lkml-26 --order 2.6.0,2.6.1,2.6.2\n  kbench history lkml-26 --metric pipe-lat --format markdown\n  \
kbench history lkml-26 --format html -o series.html"
)]
pub struct HistoryArgs {
    /// Result set whose identifiers are the versions
    pub set: String,

    /// Identifiers in version order, comma-separated (default: the stored order)
    #[arg(long, value_name = "V1,V2,...", value_delimiter = ',')]
    pub order: Vec<String>,

    /// Only metrics whose test name contains this text
    #[arg(long, value_name = "TEXT")]
    pub metric: Option<String>,

    /// Report format
    #[arg(long, default_value = "text", value_parser = formats::<HistoryReport>())]
    pub format: String,

    /// Write the report to this file instead of stdout
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Practical threshold in percent: a change point's whole CI must lie beyond it
    #[arg(long, value_name = "PERCENT", default_value_t = 1.0)]
    pub threshold: f64,
}

pub fn history(args: HistoryArgs, db: &super::Db) -> anyhow::Result<ExitCode> {
    if !(args.threshold.is_finite() && (0.0..100.0).contains(&args.threshold)) {
        bail!(
            "--threshold {} must be a percentage from 0 to below 100",
            args.threshold
        );
    }
    let order: Vec<String> = args
        .order
        .iter()
        .map(|name| name.trim().to_string())
        .filter(|name| !name.is_empty())
        .collect();
    let mut store = db.open_existing()?;
    let data = store.load(&args.set)?;
    let request = HistoryRequest {
        order,
        metric_filter: args.metric.clone(),
        threshold: args.threshold / 100.0,
    };
    let report = history::build(&data, &request)?;
    if report.metrics.is_empty() {
        match &args.metric {
            Some(text) => bail!(
                "no metric of result set '{}' matches --metric '{text}'",
                args.set
            ),
            None => bail!("result set '{}' has no samples", args.set),
        }
    }
    let formatter = format::find::<HistoryReport>(&args.format).expect("clap checked the format");
    let text = formatter.render(&report, Style::default());
    match &args.output {
        Some(path) => std::fs::write(path, &text)
            .with_context(|| format!("cannot write {}", path.display()))?,
        None => print!("{text}"),
    }
    Ok(ExitCode::SUCCESS)
}
