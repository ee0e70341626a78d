//! How every text format of a comparison opens (bars, table,
//! regressions; markdown takes the same pieces in its own form): what was
//! compared, then the verdict, so that the first screen says it: per
//! compared identifier its counts per verdict, geometric mean and worst
//! regressions, the level of analysis, and how a change reads; then the
//! systems and the notes. The per-metric detail follows.

use super::common::{self, paint};
use super::render::Style;
use super::systems;
use kbench_analysis::comparison::{ComparisonReport, IdentifierSummary, MetricReport};
use kbench_stats::{Comparison, Verdict};

/// How many of an identifier's regressions the verdict names.
const WORST: usize = 3;

/// How every format's change reads (docs/reports.md, "Changes"): the
/// quantity the verdict decides on, signed as the value moved.
pub(crate) const CHANGE_RULE: &str = "Change: current against baseline in % (the ratio of \
    geometric means, or the paired shift, that the verdict decides on); + = a higher value, \
    whichever is better: the verdict says worse or better.";

/// The label of a column of changes.
pub(crate) const CHANGE_LABEL: &str = "Change, % (+ = higher value)";

/// The opening lines of a comparison's text formats.
pub(super) fn lines(report: &ComparisonReport, style: Style) -> Vec<String> {
    let mut lines = common::title_lines(report.title.as_deref(), report.description.as_deref());
    lines.push(format!(
        "kbench compare: result set '{}', {} metric{}; baseline '{}', threshold {}",
        report.result_set,
        report.metrics.len(),
        if report.metrics.len() == 1 { "" } else { "s" },
        report.baseline,
        report.threshold_text()
    ));
    lines.extend(verdict_lines(report, style));
    lines.push(String::new());
    lines.extend(systems::lines(&report.systems, &report.differences));
    if !report.notes.is_empty() {
        lines.push("Notes:".to_string());
        lines.extend(report.notes.iter().map(|note| format!("  - {note}")));
    }
    lines
}

/// Per compared identifier its counts and geometric mean, and its worst
/// regressions; the level of analysis (once when every identifier shares
/// it); how a change reads.
fn verdict_lines(report: &ComparisonReport, style: Style) -> Vec<String> {
    if report.summaries.is_empty() {
        return vec![format!(
            "One identifier ('{}'): nothing to compare against.",
            report.baseline
        )];
    }
    let width = report
        .summaries
        .iter()
        .map(|s| common::width(&s.identifier))
        .max()
        .unwrap_or(0);
    let indent = " ".repeat(width + 3);
    let mut lines = vec![format!(
        "Verdict against the baseline '{}':",
        report.baseline
    )];
    for (index, summary) in report.summaries.iter().enumerate() {
        lines.push(format!(
            "  {} {}; {} ({})",
            common::dotted(&summary.identifier, width),
            paint(&common::counts_text(summary), headline(summary), style),
            common::geomean_text(summary),
            common::geomean_basis(summary)
        ));
        let worst = worst_regressions(report, index + 1);
        if !worst.is_empty() {
            let named: Vec<String> = worst
                .iter()
                .map(|(metric, c)| format!("{} {}", metric.test, common::change_text(c)))
                .collect();
            let of = if summary.regressions > worst.len() {
                format!(" {} of {}", worst.len(), summary.regressions)
            } else {
                String::new()
            };
            lines.push(format!("  {indent}worst{of}: {}", named.join(", ")));
        }
    }
    lines.extend(levels(report).into_iter().map(|(of, level)| match of {
        Some(name) => format!("Analysis of '{name}': {level}"),
        None => format!("Analysis: {level}"),
    }));
    lines.extend(common::wrap(CHANGE_RULE, 100, "  "));
    lines
}

/// The levels of analysis of the compared identifiers: one, of none in
/// particular, when they all share it; else each identifier's.
pub(crate) fn levels(report: &ComparisonReport) -> Vec<(Option<&str>, &str)> {
    let each: Vec<(Option<&str>, &str)> = report
        .summaries
        .iter()
        .filter_map(|s| Some((Some(s.identifier.as_str()), s.analysis.as_deref()?)))
        .collect();
    match each.first() {
        Some(&(_, first)) if each.iter().all(|(_, level)| *level == first) => {
            vec![(None, first)]
        }
        _ => each,
    }
}

/// The colour of an identifier's counts: its worst decided verdict.
pub(super) fn headline(summary: &IdentifierSummary) -> Option<Verdict> {
    if summary.regressions > 0 {
        Some(Verdict::Regression)
    } else if summary.improvements > 0 {
        Some(Verdict::Improvement)
    } else {
        None
    }
}

/// The REGRESSION metrics of the identifier in `column`, the largest
/// change first, at most [`WORST`].
pub(crate) fn worst_regressions(
    report: &ComparisonReport,
    column: usize,
) -> Vec<(&MetricReport, &Comparison)> {
    let mut regressions: Vec<(&MetricReport, &Comparison)> = report
        .metrics
        .iter()
        .filter_map(|m| Some((m, m.results[column].comparison.as_ref()?)))
        .filter(|(_, c)| c.verdict == Verdict::Regression)
        .collect();
    regressions.sort_by(|a, b| {
        b.1.change_pct
            .point
            .abs()
            .total_cmp(&a.1.change_pct.point.abs())
    });
    regressions.truncate(WORST);
    regressions
}
