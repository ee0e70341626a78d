//! The comparison as markdown, the verdict first: a summary table
//! (geometric mean and verdict counts per identifier) with each
//! identifier's worst regressions and level of analysis; then the systems
//! as a table of facts per identifier, their differences and the notes,
//! and a metrics table with, per metric, the baseline's mean +- CI and for
//! every other identifier its mean, change [95 % CI] (the change of every
//! format, `opening::CHANGE_RULE`) and verdict; warnings last.

use super::escape::escape;
use crate::format::{common, opening, systems};
use kbench_analysis::comparison::{ComparisonReport, IdentifierResult, MetricReport};
use kbench_analysis::number::{self, Unbounded};
use kbench_stats::Verdict;
use std::fmt::Write;

/// The comparison as markdown.
pub(super) fn markdown(report: &ComparisonReport) -> String {
    let mut out = String::new();
    match &report.title {
        Some(title) => {
            let _ = writeln!(out, "# {}\n", escape(title));
            let _ = writeln!(out, "Result set {}.\n", escape(&report.result_set));
        }
        None => {
            let _ = writeln!(out, "# kbench compare: {}\n", escape(&report.result_set));
        }
    }
    for paragraph in report.description.iter().flat_map(|d| d.split("\n\n")) {
        let _ = writeln!(out, "{}\n", escape(paragraph));
    }
    let _ = write!(
        out,
        "Baseline: **{}**. Threshold: {:.2} %. {} metric{}.",
        escape(&report.baseline),
        report.threshold_pct,
        report.metrics.len(),
        if report.metrics.len() == 1 { "" } else { "s" }
    );
    if report.identifiers.len() > 1 {
        let _ = write!(
            out,
            " Verdicts: REGRESSION / IMPROVEMENT when q < 0.05 and the change's 95 % CI \
             lies wholly beyond the threshold; NO CHANGE when it lies within it; \
             INCONCLUSIVE otherwise; CANNOT DECIDE when no test can be made. {}",
            opening::CHANGE_RULE
        );
    }
    out.push('\n');
    summary(&mut out, report);
    systems(&mut out, report);
    metrics(&mut out, report);
    warnings(&mut out, report);
    out
}

/// A table row from already escaped cells.
fn row(cells: &[String]) -> String {
    format!("| {} |", cells.join(" | "))
}

fn rule(columns: usize, numeric_from: usize) -> String {
    let cells: Vec<String> = (0..columns)
        .map(|i| if i >= numeric_from { "---:" } else { "---" }.to_string())
        .collect();
    row(&cells)
}

fn systems(out: &mut String, report: &ComparisonReport) {
    let _ = writeln!(out, "\n## Systems\n");
    let mut header = vec!["Fact".to_string()];
    header.extend(report.identifiers.iter().map(|i| escape(i)));
    let _ = writeln!(out, "{}", row(&header));
    let _ = writeln!(out, "{}", rule(header.len(), usize::MAX));
    let per_system: Vec<Vec<(String, String)>> =
        report.systems.iter().map(systems::system_facts).collect();
    let mut labels: Vec<String> = vec![];
    for facts in &per_system {
        for (label, _) in facts {
            if !labels.contains(label) {
                labels.push(label.clone());
            }
        }
    }
    for label in &labels {
        let mut cells = vec![escape(label)];
        cells.extend(per_system.iter().map(|facts| {
            facts.iter().find(|(l, _)| l == label).map_or_else(
                // A missing wrapper is none; any other missing fact unknown.
                || {
                    if label == "Wrapper" {
                        "none".to_string()
                    } else {
                        String::new()
                    }
                },
                |(_, v)| escape(v),
            )
        }));
        let _ = writeln!(out, "{}", row(&cells));
    }
    let mut runs = vec!["Runs".to_string()];
    runs.extend(report.systems.iter().map(|s| s.runs.to_string()));
    let _ = writeln!(out, "{}", row(&runs));
    let unrecorded = systems::unrecorded(&report.systems);
    let differ = !report.differences.is_empty();
    if let Some(sentence) = systems::sentence(report.systems.len(), &unrecorded, differ) {
        let _ = writeln!(out, "\n{}", escape(&sentence));
    }
    if differ {
        let _ = writeln!(out, "\n### Differences between identifiers\n");
        for d in &report.differences {
            let values: Vec<String> = d
                .values
                .iter()
                .map(|(name, value)| format!("{}: {}", escape(name), escape(systems::known(value))))
                .collect();
            let _ = writeln!(out, "- **{}**: {}", escape(&d.fact), values.join("; "));
        }
    }
    if !report.notes.is_empty() {
        let _ = writeln!(out, "\n### Notes\n");
        for note in &report.notes {
            let _ = writeln!(out, "- {}", escape(note));
        }
    }
}

fn summary(out: &mut String, report: &ComparisonReport) {
    let _ = writeln!(out, "\n## Summary against {}\n", escape(&report.baseline));
    if report.summaries.is_empty() {
        let _ = writeln!(out, "One identifier: nothing to compare against.");
        return;
    }
    let header: Vec<String> = [
        "Identifier",
        "Geometric mean vs baseline",
        "Metrics used",
        "Left out",
        "Regressions",
        "Improvements",
        "No change",
        "Inconclusive",
        "Cannot decide",
    ]
    .map(String::from)
    .to_vec();
    let _ = writeln!(out, "{}", row(&header));
    let _ = writeln!(out, "{}", rule(header.len(), 2));
    for s in &report.summaries {
        let cells = vec![
            escape(&s.identifier),
            common::geomean_text(s),
            s.metrics_used.to_string(),
            s.metrics_left_out.to_string(),
            s.regressions.to_string(),
            s.improvements.to_string(),
            s.no_change.to_string(),
            s.inconclusive.to_string(),
            s.cannot_decide.to_string(),
        ];
        let _ = writeln!(out, "{}", row(&cells));
    }
    out.push('\n');
    for (index, s) in report.summaries.iter().enumerate() {
        let worst: Vec<String> = opening::worst_regressions(report, index + 1)
            .iter()
            .map(|(metric, c)| format!("{} {}", escape(&metric.test), change(c.change_pct.point)))
            .collect();
        if !worst.is_empty() {
            let _ = writeln!(
                out,
                "- **{}**, worst regressions: {}",
                escape(&s.identifier),
                worst.join(", ")
            );
        }
    }
    for (of, level) in opening::levels(report) {
        let _ = match of {
            Some(name) => writeln!(out, "- Analysis of **{}**: {}", escape(name), escape(level)),
            None => writeln!(out, "- Analysis: {}", escape(level)),
        };
    }
}

/// "+10.0 %", "-31.2 %": a change, one decimal, + for a higher value.
fn change(point: f64) -> String {
    format!("{} %", number::signed(point, 1, "", Unbounded::Ascii))
}

/// "115.2 ± 0.3 %"; "-" without samples.
fn mean_cell(result: &IdentifierResult) -> String {
    match &result.summary {
        None => "-".to_string(),
        Some(s) => {
            let ci = s.ci.relative_half_width();
            if ci.is_finite() {
                format!("{} ± {:.1} %", number::value(s.mean), ci * 100.0)
            } else {
                format!("{} (n = 1)", number::value(s.mean))
            }
        }
    }
}

/// "+10.0 % [+9.8, +10.2]".
fn change_cell(result: &IdentifierResult) -> String {
    let Some(c) = &result.comparison else {
        return "-".to_string();
    };
    let bound = |v: f64| number::signed(v, 1, "", Unbounded::Ascii);
    format!(
        "{} \\[{}, {}\\]",
        change(c.change_pct.point),
        bound(c.change_pct.ci_low),
        bound(c.change_pct.ci_high)
    )
}

fn verdict_cell(result: &IdentifierResult) -> String {
    match result.comparison.as_ref().map(|c| c.verdict) {
        None => "-".to_string(),
        Some(v @ (Verdict::Regression | Verdict::Improvement)) => format!("**{v}**"),
        Some(v) => v.to_string(),
    }
}

fn metrics(out: &mut String, report: &ComparisonReport) {
    let _ = writeln!(out, "\n## Metrics\n");
    let mut header = vec![
        "Test".to_string(),
        "Unit".to_string(),
        "Better".to_string(),
        format!("{} (baseline)", escape(&report.baseline)),
    ];
    for name in &report.identifiers[1..] {
        let name = escape(name);
        header.push(name.clone());
        header.push(format!(
            "{name}: {} \\[95 % CI\\]",
            opening::CHANGE_LABEL.to_lowercase()
        ));
        header.push(format!("{name}: verdict"));
    }
    let _ = writeln!(out, "{}", row(&header));
    let _ = writeln!(out, "{}", rule(header.len(), 3));
    for metric in &report.metrics {
        let _ = writeln!(out, "{}", row(&metric_cells(metric)));
    }
}

fn metric_cells(metric: &MetricReport) -> Vec<String> {
    let test = match &metric.title {
        Some(title) => format!("{} ({})", escape(title), escape(&metric.test)),
        None => escape(&metric.test),
    };
    let mut cells = vec![
        test,
        escape(&metric.unit),
        metric.direction.as_str().to_string(),
        mean_cell(&metric.results[0]),
    ];
    for result in &metric.results[1..] {
        cells.push(mean_cell(result));
        cells.push(change_cell(result));
        cells.push(verdict_cell(result));
    }
    cells
}

/// Warnings per metric and identifier, except "one round" (a note).
fn warnings(out: &mut String, report: &ComparisonReport) {
    let mut lines = vec![];
    for metric in &report.metrics {
        for result in &metric.results[1..] {
            let texts = common::warning_texts(result, |w| escape(&w));
            if !texts.is_empty() {
                lines.push(format!(
                    "- {} ({}): {}",
                    escape(&metric.test),
                    escape(&result.identifier),
                    texts.join("; ")
                ));
            }
        }
    }
    if !lines.is_empty() {
        let _ = writeln!(out, "\n## Warnings\n");
        for line in lines {
            let _ = writeln!(out, "{line}");
        }
    }
}
