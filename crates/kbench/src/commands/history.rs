//! `kbench history`: change points across a result set's identifiers in
//! version order, per metric.

use super::context::Db;
use crate::cli::HistoryArgs;
use anyhow::{Context, bail};
use kbench_analysis::history::{self, HistoryReport, HistoryRequest};
use kbench_report::format::{self, Style};
use std::process::ExitCode;

pub fn history(args: HistoryArgs, db: &Db) -> anyhow::Result<ExitCode> {
    let order: Vec<String> = args
        .order
        .iter()
        .map(|name| name.trim().to_string())
        .filter(|name| !name.is_empty())
        .collect();
    let mut store = db.open_existing()?;
    let request = HistoryRequest {
        order,
        metric_filter: args.metric.clone(),
        threshold: args.threshold / 100.0,
    };
    let data = store.load_part(&args.set, &request.part())?;
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
