//! `regressions`: the Linaro kernel regression report, one block per
//! compared identifier against the baseline:
//!
//! ```text
//! Regressions
//! Benchmark/Test/Metric, Units | Baseline Mean | Current Mean | Diff, % | SD | Samples | Confidence interval | p | q | Verdict
//! ------------------------------------------------------------------------------------------------------------------------
//! syscall-null, ns             |         100.0 |        110.0 | +10.00  | ...
//! futex1[mode=thread], ops/s
//!   - futex1-tasks-2           |       2000000 |      1960000 |  -2.00  | ...
//! ```
//!
//! Metrics are grouped by benchmark: a task/thread/process count option
//! (`tasks`, `threads`, `procs`) becomes an indented sub-row
//! `- futex1-tasks-2` under the test without it, as in the seed.
//! `Diff, %` is the signed change of the current mean against the baseline
//! (ratio of geometric means); `SD` is baseline / current; `Samples` is the
//! observations per side (per-round means when measured in rounds);
//! `Confidence interval` is the 95 % CI of the change in percent; `p`
//! Welch's, `q` Benjamini-Hochberg over the block's metrics (all of them,
//! whatever `--metric` shows). Sections: Regressions, Improvements,
//! Inconclusive (with the minimum detectable effect and the samples per
//! side that would decide), Cannot decide (only when there are such
//! metrics; the warning says why), then the count of NO CHANGE and the
//! metrics not compared.
//! Warnings other than "one round" (covered by the header's notes) follow
//! their row.

use super::common::{self, paint};
use super::render::{Render, Style};
use crate::comparison::{ComparisonReport, IdentifierResult, IdentifierSummary, MetricReport};
use crate::number::{self, Unbounded};
use kbench_model::TestKey;
use kbench_stats::{Comparison, Verdict, Warning};
use std::fmt::Write;

/// Options that count tasks: shown as the seed's indexed sub-rows.
const COUNT_OPTIONS: &[&str] = &["tasks", "threads", "procs"];

pub struct Regressions;

impl Render<ComparisonReport> for Regressions {
    fn render(&self, report: &ComparisonReport, style: Style) -> String {
        let mut out = String::new();
        for line in common::header_lines(report) {
            let _ = writeln!(out, "{line}");
        }
        if report.summaries.is_empty() {
            let _ = writeln!(
                out,
                "\nOne identifier ('{}'): nothing to compare against.",
                report.baseline
            );
            return out;
        }
        for (index, summary) in report.summaries.iter().enumerate() {
            block(&mut out, report, index + 1, summary, style);
        }
        out
    }
}

/// One metric of a block: the metric and its comparison.
struct Row<'a> {
    metric: &'a MetricReport,
    result: &'a IdentifierResult,
    comparison: &'a Comparison,
}

fn block(
    out: &mut String,
    report: &ComparisonReport,
    column: usize,
    summary: &IdentifierSummary,
    style: Style,
) {
    let name = &report.identifiers[column];
    let _ = writeln!(out, "\n=== {name} vs baseline {} ===", report.baseline);
    let _ = writeln!(
        out,
        "{}; {} ({})",
        common::counts_text(summary),
        common::geomean_text(summary),
        common::geomean_basis(summary)
    );
    let rows: Vec<Row> = report
        .metrics
        .iter()
        .filter_map(|m| {
            let result = &m.results[column];
            result.comparison.as_ref().map(|comparison| Row {
                metric: m,
                result,
                comparison,
            })
        })
        .collect();
    let of = |verdict: Verdict| -> Vec<&Row> {
        rows.iter()
            .filter(|r| r.comparison.verdict == verdict)
            .collect()
    };
    section(out, "Regressions", &of(Verdict::Regression), false, style);
    section(out, "Improvements", &of(Verdict::Improvement), false, style);
    section(
        out,
        "Inconclusive (need more samples)",
        &of(Verdict::Inconclusive),
        true,
        style,
    );
    let undecided = of(Verdict::CannotDecide);
    if !undecided.is_empty() {
        section(out, "Cannot decide", &undecided, false, style);
    }
    let no_change = of(Verdict::NoChange).len();
    let _ = writeln!(
        out,
        "\nNo change: {no_change} metric{} (the change's CI within +-{:.2} %).",
        if no_change == 1 { "" } else { "s" },
        report.threshold_pct
    );
    let missing: Vec<String> = report
        .metrics
        .iter()
        .filter(|m| m.results[column].comparison.is_none())
        .map(|m| {
            let side = if m.results[0].summary.is_none() {
                "baseline"
            } else {
                name.as_str()
            };
            format!("{} (no samples in {side})", m.test)
        })
        .collect();
    if !missing.is_empty() {
        let text = format!(
            "Not compared: {} metric{}: {}.",
            missing.len(),
            if missing.len() == 1 { "" } else { "s" },
            missing.join(", ")
        );
        for line in common::wrap(&text, 100, "  ") {
            let _ = writeln!(out, "{line}");
        }
    }
}

/// The test without its count option, with the unit: the seed's
/// `Benchmark/Test/Metric, Units` (group header or single row).
fn group_label(metric: &MetricReport) -> String {
    let mut key: TestKey = metric.key.clone();
    key.options
        .retain(|k, _| !COUNT_OPTIONS.contains(&k.as_str()));
    format!("{key}, {}", metric.unit)
}

/// `- futex1-tasks-2` for a metric with count options.
fn sub_label(metric: &MetricReport) -> Option<String> {
    let counts: Vec<String> = metric
        .key
        .options
        .iter()
        .filter(|(k, _)| COUNT_OPTIONS.contains(&k.as_str()))
        .map(|(k, v)| format!("-{k}-{v}"))
        .collect();
    (!counts.is_empty()).then(|| format!("  - {}{}", metric.key.benchmark, counts.concat()))
}

/// A number with four significant digits, or "n/a".
fn num(value: Option<f64>) -> String {
    value.map_or("n/a".to_string(), number::value)
}

fn cells(row: &Row, inconclusive: bool) -> Vec<(String, Option<Verdict>)> {
    let c = row.comparison;
    let plain = |s: String| (s, None);
    let mut cells = vec![
        plain(num(Some(c.baseline.mean))),
        plain(num(Some(c.current.mean))),
        plain(signed(c.change_pct.point)),
    ];
    if !inconclusive {
        cells.push(plain(format!(
            "{} / {}",
            num(c.baseline.sd),
            num(c.current.sd)
        )));
    }
    cells.push(plain(format!("{} / {}", c.baseline.n, c.current.n)));
    cells.push(plain(format!(
        "{} / {}",
        signed(c.change_pct.ci_low),
        signed(c.change_pct.ci_high)
    )));
    cells.push(plain(number::p_value(c.p_value)));
    cells.push(plain(number::p_value(c.q_value)));
    if inconclusive {
        cells.push(plain(
            c.mde_pct.map_or("n/a".to_string(), |m| format!("{m:.2}")),
        ));
        cells.push(plain(
            c.samples_needed
                .map_or("n/a".to_string(), |n| n.to_string()),
        ));
    } else {
        cells.push((c.verdict.to_string(), Some(c.verdict)));
    }
    cells
}

/// "+10.00", "-3.05"; "-inf"/"+inf" for an unbounded limit.
fn signed(pct: f64) -> String {
    number::signed(pct, 2, "", Unbounded::Ascii)
}

fn section(out: &mut String, title: &str, rows: &[&Row], inconclusive: bool, style: Style) {
    let _ = writeln!(out, "\n{title}");
    if rows.is_empty() {
        let _ = writeln!(out, "  none");
        return;
    }
    let mut headers = vec![
        "Benchmark/Test/Metric, Units",
        "Baseline Mean",
        "Current Mean",
        "Diff, %",
    ];
    if !inconclusive {
        headers.push("SD");
    }
    headers.extend(["Samples", "Confidence interval", "p", "q"]);
    if inconclusive {
        headers.extend(["MDE, %", "Samples needed"]);
    } else {
        headers.push("Verdict");
    }
    // Lines in order: a group header (no cells) before the first sub-row of
    // each group; then the row.
    enum Line<'a> {
        Group(String),
        Row(String, Vec<(String, Option<Verdict>)>, &'a Row<'a>),
    }
    let mut lines: Vec<Line> = vec![];
    let mut groups: Vec<String> = vec![];
    let mut ordered: Vec<&Row> = vec![];
    for row in rows {
        let label = group_label(row.metric);
        if !groups.contains(&label) {
            groups.push(label);
        }
    }
    for group in &groups {
        ordered.extend(rows.iter().filter(|r| &group_label(r.metric) == group));
    }
    let mut current_group: Option<String> = None;
    for row in ordered {
        let cells = cells(row, inconclusive);
        match sub_label(row.metric) {
            Some(sub) => {
                let label = group_label(row.metric);
                if current_group.as_ref() != Some(&label) {
                    lines.push(Line::Group(label.clone()));
                    current_group = Some(label);
                }
                lines.push(Line::Row(sub, cells, row));
            }
            None => {
                current_group = None;
                lines.push(Line::Row(group_label(row.metric), cells, row));
            }
        }
    }
    let mut widths: Vec<usize> = headers.iter().map(|h| common::width(h)).collect();
    for line in &lines {
        if let Line::Row(label, cells, _) = line {
            widths[0] = widths[0].max(common::width(label));
            for (i, (text, _)) in cells.iter().enumerate() {
                widths[i + 1] = widths[i + 1].max(common::width(text));
            }
        }
    }
    let header: Vec<String> = headers
        .iter()
        .zip(&widths)
        .enumerate()
        .map(|(i, (h, w))| {
            if i == 0 {
                common::left(h, *w)
            } else {
                common::right(h, *w)
            }
        })
        .collect();
    let header = header.join(" | ");
    let _ = writeln!(out, "{header}");
    let _ = writeln!(out, "{}", "-".repeat(common::width(&header)));
    let mut counted = false;
    for line in lines {
        match line {
            Line::Group(label) => {
                let _ = writeln!(out, "{label}");
            }
            Line::Row(label, cells, row) => {
                counted |= label.starts_with("  - ");
                let mut parts = vec![common::left(&label, widths[0])];
                for (i, (text, verdict)) in cells.iter().enumerate() {
                    parts.push(paint(&common::right(text, widths[i + 1]), *verdict, style));
                }
                let _ = writeln!(out, "{}", parts.join(" | "));
                for warning in &row.comparison.warnings {
                    if !matches!(warning, Warning::OneRound { .. }) {
                        let _ = writeln!(out, "      ! {warning}");
                    }
                }
                if let Some(why) = common::why_text(row.result) {
                    let _ = writeln!(out, "      {why}");
                }
            }
        }
    }
    if counted {
        let _ = writeln!(
            out,
            "* the index after a test name is its task/thread/process count option."
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signs_and_infinities() {
        assert_eq!(signed(10.0), "+10.00");
        assert_eq!(signed(-3.054), "-3.05");
        assert_eq!(signed(f64::INFINITY), "+inf");
        assert_eq!(signed(-100.0), "-100.00");
    }
}
