//! `bars`: the OpenBenchmarking (Phoronix Test Suite) text export, one block
//! per metric:
//!
//! ```text
//! pipe-lat - placement: cross
//! us < Lower Is Better
//! v5.8 ......... 5.000 +-0.1% |==================================================
//! PLU 0 ........ 5.500 +-0.1% |=======================================================  +10.0% REGRESSION
//! ```
//!
//! A profile test's block starts with its title as PTS writes it ("Redis
//! 7.0.15 - Test: GET - Parallel Connections: 50", [`kbench_analysis::title`]).
//! kbench adds each mean's 95 % CI half-width relative to it (`+-x.x%`), and
//! after the bar of every identifier but the baseline the change of its
//! mean against the baseline's and the verdict (`REGRESSION`,
//! `IMPROVEMENT`, `no change`, `? inconclusive`, `CANNOT DECIDE`). The bar
//! is scaled to the metric's largest mean (50 `=`). The change is the one
//! every format shows ([`opening::CHANGE_RULE`]): + for a higher value.
//! The report opens with the verdict ([`opening`]) and ends with the
//! verdict counts again, a line per identifier.

use super::common::{self, paint};
use super::opening;
use super::render::{Render, Style};
use kbench_analysis::comparison::{ComparisonReport, IdentifierResult, MetricReport};
use kbench_analysis::number;
use kbench_stats::Verdict;
use std::fmt::Write;

/// `=` characters of the largest value's bar.
const BAR_WIDTH: usize = 50;

pub struct Bars;

impl Render<ComparisonReport> for Bars {
    fn render(&self, report: &ComparisonReport, style: Style) -> String {
        let mut out = String::new();
        for line in opening::lines(report, style) {
            let _ = writeln!(out, "{line}");
        }
        let name_width = report
            .identifiers
            .iter()
            .map(|n| common::width(n))
            .max()
            .unwrap_or(0);
        for metric in &report.metrics {
            out.push('\n');
            metric_block(&mut out, metric, name_width, style);
        }
        summary(&mut out, report, name_width, style);
        out
    }
}

fn metric_block(out: &mut String, metric: &MetricReport, name_width: usize, style: Style) {
    if let Some(title) = &metric.title {
        let _ = writeln!(out, "{title}");
    }
    let _ = writeln!(out, "{}", common::readable(&metric.key));
    let _ = writeln!(out, "{}", common::unit_line(&metric.unit, metric.direction));
    let largest = metric
        .results
        .iter()
        .filter_map(|r| r.summary.as_ref())
        .map(|s| s.mean)
        .filter(|m| m.is_finite())
        .fold(0.0, f64::max);
    let cells: Vec<Option<(String, String)>> = metric
        .results
        .iter()
        .map(|r| {
            r.summary.as_ref().map(|s| {
                (
                    number::value(s.mean),
                    common::ci_text(s.ci.relative_half_width()),
                )
            })
        })
        .collect();
    let value_width = cells
        .iter()
        .flatten()
        .map(|(v, _)| common::width(v))
        .max()
        .unwrap_or(0);
    let ci_width = cells
        .iter()
        .flatten()
        .map(|(_, c)| common::width(c))
        .max()
        .unwrap_or(0);
    for (index, (result, cell)) in metric.results.iter().zip(&cells).enumerate() {
        let mut line = common::dotted(&result.identifier, name_width);
        match (cell, &result.summary) {
            (Some((value, ci)), Some(summary)) => {
                let _ = write!(
                    line,
                    " {} {} |{}",
                    common::right(value, value_width),
                    common::left(ci, ci_width),
                    common::left(&bar(summary.mean, largest), BAR_WIDTH)
                );
                if index > 0 {
                    let _ = write!(line, "  {}", change(result, style));
                }
            }
            _ => line.push_str(" (no samples)"),
        }
        let _ = writeln!(out, "{}", line.trim_end());
        if let Some(why) = common::why_text(result) {
            let _ = writeln!(out, "{}   {why}", " ".repeat(name_width));
        }
    }
}

/// `=` scaled so that `largest` gets [`BAR_WIDTH`]; at least one for a
/// positive value.
fn bar(value: f64, largest: f64) -> String {
    if !(value.is_finite() && value > 0.0 && largest > 0.0) {
        return String::new();
    }
    let length = ((value / largest) * BAR_WIDTH as f64).round() as usize;
    "=".repeat(length.clamp(1, BAR_WIDTH))
}

/// "+10.0% REGRESSION", "+1.5% ? inconclusive (~24 samples would decide)",
/// "+20.0% CANNOT DECIDE (no spread)".
fn change(result: &IdentifierResult, style: Style) -> String {
    let Some(c) = &result.comparison else {
        return "not compared (baseline has no samples)".to_string();
    };
    let mut text = format!(
        "{} {}",
        common::change_text(c),
        paint(common::mark(c.verdict), Some(c.verdict), style)
    );
    if c.verdict == Verdict::Inconclusive
        && let Some(needed) = common::needed_text(result)
    {
        let _ = write!(text, " ({needed})");
    }
    if let Some(reason) = common::undecided_reason(c) {
        let _ = write!(text, " ({reason})");
    }
    text
}

/// The verdict counts again at the end, where a long report leaves the
/// terminal: a line per compared identifier (the opening has the rest).
fn summary(out: &mut String, report: &ComparisonReport, name_width: usize, style: Style) {
    if report.summaries.is_empty() {
        return;
    }
    let _ = writeln!(out, "\nSummary against the baseline '{}':", report.baseline);
    for s in &report.summaries {
        let _ = writeln!(
            out,
            "{} {}; {}",
            common::dotted(&s.identifier, name_width),
            paint(&common::counts_text(s), opening::headline(s), style),
            common::geomean_text(s)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars_scale_to_the_largest() {
        assert_eq!(bar(10.0, 10.0).len(), BAR_WIDTH);
        assert_eq!(bar(5.0, 10.0).len(), BAR_WIDTH / 2);
        assert_eq!(bar(0.0001, 10.0).len(), 1);
        assert_eq!(bar(0.0, 10.0), "");
        assert_eq!(bar(f64::NAN, 10.0), "");
    }
}
