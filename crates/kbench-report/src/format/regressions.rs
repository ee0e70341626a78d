//! `regressions`: the Linaro kernel regression report, one block per
//! compared identifier against the baseline:
//!
//! ```text
//! Regressions
//! Benchmark/Test/Metric, Units | Baseline Mean | Current Mean | Change, % (+ = higher value) | CI of change, % | Diff, % (+ = worse) | SD | Samples | Confidence interval | p | q | Verdict
//! ------------------------------------------------------------------------------------------------------------------------
//! syscall-null, ns             |       100.000 |      110.000 |                      +10.000 |   +9.80 / +10.20 |             +10.000 | ...
//! futex1[mode=thread], ops/s
//!   - futex1-tasks-2           |   2000000.000 |  1960000.000 |                       -2.000 | ...
//! ```
//!
//! `Change, %` is the change every format shows ([`opening::CHANGE_RULE`]:
//! what the verdict decides on, + for a higher value) and `CI of change,
//! %` its 95 % CI. As in Linaro's report, kept as an extra: `Diff, %` is
//! (current mean - baseline mean) / baseline mean of the means the row
//! prints, signed so that + is worse whatever the metric's direction;
//! `Confidence interval` is the baseline mean's 95 % CI in the metric's
//! units (Linaro's brackets their baseline mean), so a current mean
//! outside it stands out. `SD` and `Samples` are baseline / current; `p`
//! is Welch's (or the paired test's), `q` Benjamini-Hochberg over the
//! block's metrics (all of them, whatever `--metric` shows).
//!
//! Metrics are grouped by benchmark: a task/thread/process/instance count
//! option (`tasks`, `threads`, `procs`, stress-ng's `instances`) becomes an
//! indented sub-row `- futex1-tasks-2` (`- madvise-instances-1`: a
//! profile's stressor names it) under the test without it, as in the seed,
//! ordered by count; a test named as Linaro's `Benchmark/Test/Metric` is
//! indexed as theirs (`- futex1-threads-2`). Sections: Regressions,
//! Improvements, Inconclusive (with the minimum detectable effect and the
//! samples per side that would decide), Cannot decide (only when there are
//! such metrics; the warning says why), No change (with
//! `Style::all_rows`, else only counted), then the metrics not compared.
//! Warnings other than "one round" (covered by the header's notes) follow
//! their row.

use super::common::{self, paint};
use super::opening;
use super::render::{Render, Style};
use kbench_analysis::apart_notes::unit_word;
use kbench_analysis::comparison::{
    ComparisonReport, IdentifierResult, IdentifierSummary, MetricReport,
};
use kbench_analysis::number::{self, Unbounded};
use kbench_model::{Direction, TestKey};
use kbench_stats::{Analysis, Comparison, Verdict, Warning};
use std::fmt::Write;

/// Options that count tasks: shown as the seed's indexed sub-rows.
const COUNT_OPTIONS: &[&str] = &["tasks", "threads", "procs", "instances"];

/// An option naming what a profile's test runs (stress-ng's stressor):
/// the sub-row's name instead of the benchmark's.
const NAME_OPTION: &str = "stressor";

/// What the columns mean, once before the blocks (the opening says how
/// the change reads).
const LEGEND: &str = "Change, %: as above; CI of change, %: its 95 % CI. Diff, %: Linaro's \
    column, (current mean - baseline mean) / baseline mean, + = worse whatever the metric's \
    direction. Confidence interval: the baseline mean's 95 % CI, in the metric's units. SD and \
    Samples: baseline / current.";

pub struct Regressions;

impl Render<ComparisonReport> for Regressions {
    fn render(&self, report: &ComparisonReport, style: Style) -> String {
        let mut out = String::new();
        for line in opening::lines(report, style) {
            let _ = writeln!(out, "{line}");
        }
        if report.summaries.is_empty() {
            return out;
        }
        let _ = writeln!(out);
        for line in common::wrap(LEGEND, 100, "  ") {
            let _ = writeln!(out, "{line}");
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
    let no_change = of(Verdict::NoChange);
    if style.all_rows {
        section(out, "No change", &no_change, false, style);
    }
    let no_change = no_change.len();
    let _ = writeln!(
        out,
        "\nNo change: {no_change} metric{} (the change's CI within +-{}).",
        if no_change == 1 { "" } else { "s" },
        report.threshold_text()
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

/// The count options of a metric, in key order.
fn counts(metric: &MetricReport) -> Vec<(&String, &String)> {
    let options = &metric.key.options;
    options
        .iter()
        .filter(|(k, _)| COUNT_OPTIONS.contains(&k.as_str()))
        .collect()
}

/// `- futex1-tasks-2` (`- madvise-instances-1` for stress-ng's stressor
/// madvise) for a metric with count options. A test named as Linaro's
/// `Benchmark/Test/Metric` (an import of their report) is indexed as
/// theirs, its Test and counts: `- futex1-threads-2`.
fn sub_label(metric: &MetricReport) -> Option<String> {
    let counts = counts(metric);
    if counts.is_empty() {
        return None;
    }
    let key = &metric.key;
    let parts: Vec<&str> = key.benchmark.split('/').collect();
    let suffix: Vec<String> = match parts[..] {
        [_, test, _] => std::iter::once(test.to_string())
            .chain(counts.iter().map(|(_, v)| v.to_string()))
            .collect(),
        _ => std::iter::once(
            key.options
                .get(NAME_OPTION)
                .unwrap_or(&key.benchmark)
                .clone(),
        )
        .chain(counts.iter().map(|(k, v)| format!("{k}-{v}")))
        .collect(),
    };
    Some(format!("  - {}", suffix.join("-")))
}

/// Orders the sub-rows of a group by count: numbers by value, then any
/// other value (`cpus`) by its text.
fn count_order(metric: &MetricReport) -> Vec<(u64, String)> {
    counts(metric)
        .into_iter()
        .map(|(_, v)| (v.parse().unwrap_or(u64::MAX), v.clone()))
        .collect()
}

/// A number with three decimals, or "n/a".
fn num(value: Option<f64>) -> String {
    value.map_or("n/a".to_string(), number::fixed)
}

/// +1 when a higher value is worse, -1 when a lower one is.
fn worse_sign(comparison: &Comparison) -> f64 {
    match comparison.better {
        Direction::Lower => 1.0,
        Direction::Higher => -1.0,
    }
}

/// The seed's Diff: the change of the printed means in percent, + = worse.
fn diff_pct(comparison: &Comparison) -> f64 {
    let (base, current) = (comparison.baseline.mean, comparison.current.mean);
    worse_sign(comparison) * 100.0 * (current - base) / base
}

fn cells(row: &Row, inconclusive: bool) -> Vec<(String, Option<Verdict>)> {
    let c = row.comparison;
    let plain = |s: String| (s, None);
    let change = &c.change_pct;
    let mut cells = vec![
        plain(num(Some(c.baseline.mean))),
        plain(num(Some(c.current.mean))),
        plain(number::signed(change.point, 3, "", Unbounded::Ascii)),
        plain(format!(
            "{} / {}",
            signed(change.ci_low),
            signed(change.ci_high)
        )),
        plain(number::signed(diff_pct(c), 3, "", Unbounded::Ascii)),
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
        num(Some(c.baseline.ci.ci_low)),
        num(Some(c.baseline.ci.ci_high))
    )));
    cells.push(plain(number::p_value(c.p_value)));
    cells.push(plain(number::p_value(c.q_value)));
    if inconclusive {
        cells.push(plain(
            c.mde_pct.map_or("n/a".to_string(), |m| format!("{m:.2}")),
        ));
        cells.push(plain(needed(c)));
    } else {
        cells.push((c.verdict.to_string(), Some(c.verdict)));
    }
    cells
}

/// What would decide an INCONCLUSIVE row, per side: samples (or rounds),
/// or measured apart the plan's units ("6 runs"); "n/a" when nothing would.
fn needed(c: &Comparison) -> String {
    let levelled = match c.analysis {
        Analysis::Levels { unit, .. } => Some(unit_word(unit)),
        _ => None,
    };
    match (levelled, c.plan.and_then(|p| p.units_per_side)) {
        (Some(unit), Some(n)) => format!("{n} {unit}s"),
        (Some(_), None) => "n/a".to_string(),
        (None, _) => c
            .samples_needed
            .map_or("n/a".to_string(), |n| n.to_string()),
    }
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
        opening::CHANGE_LABEL,
        "CI of change, %",
        "Diff, % (+ = worse)",
    ];
    if !inconclusive {
        headers.push("SD");
    }
    headers.extend(["Samples", "Confidence interval", "p", "q"]);
    if inconclusive {
        headers.extend(["MDE, %", "Needed per side"]);
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
        let mut members: Vec<&Row> = rows
            .iter()
            .copied()
            .filter(|r| &group_label(r.metric) == group)
            .collect();
        members.sort_by_cached_key(|r| count_order(r.metric));
        ordered.extend(members);
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
            "* the index after a test name is its task/thread/process/instance count option."
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kbench_analysis::comparison::{CompareRequest, build};
    use kbench_analysis::fixtures::{Round, identifier, quiet, set};
    use kbench_analysis::thresholds::Thresholds;

    /// One metric, syscall-null, measured in 5 rounds a side, the
    /// current's values `factor` times the baseline's.
    fn one_metric(direction: Direction, factor: f64) -> ComparisonReport {
        // The runs alternate; the current side takes the same steps in
        // another order (step i of run 2i mod 5), so that the paired
        // differences spread and the means stay the same.
        let rounds = |scale: f64, stride: u32| -> Vec<Round> {
            (0..5)
                .map(|i| Round {
                    value: scale * (100.0 + f64::from(i * stride % 5) * 0.05),
                    ..quiet(1.0)
                })
                .collect()
        };
        let mut data = set(vec![
            identifier("base", 2, &rounds(1.0, 1)),
            identifier("new", 2, &rounds(factor, 2)),
        ]);
        data.tests[0].direction = direction;
        let request = CompareRequest {
            baseline: None,
            identifiers: vec![],
            threshold: Thresholds::uniform(0.01),
            metric_filter: None,
            calibrations: vec![],
        };
        build(&data, &request).unwrap()
    }

    /// The row's cells after its label.
    fn row_of(text: &str) -> Vec<String> {
        let line = text
            .lines()
            .find(|l| l.starts_with("syscall-null, "))
            .unwrap_or_else(|| panic!("no row in\n{text}"));
        line.split(" | ")
            .skip(1)
            .map(|c| c.trim().to_string())
            .collect()
    }

    /// The summary's "21.40 % worse" as +21.40, "3.00 % better" as -3.00.
    fn summary_pct(text: &str) -> f64 {
        let line = text.lines().find(|l| l.contains(" regression")).unwrap();
        let (_, geomean) = line.split_once("; ").unwrap();
        let (number, rest) = geomean.split_once(" % ").unwrap();
        let value: f64 = number.parse().unwrap();
        if rest.starts_with("worse") {
            value
        } else {
            -value
        }
    }

    /// A time up about 21.2 % (the fixture's within-round steps are not
    /// scaled): the row's Diff says +21.188 and so does the summary (once
    /// "17.48 % worse", 1 - 1/1.212, the inverse ratio); a rate up as much
    /// is -21.188, 21.19 % better; a rate down 20 % is about +20, as many
    /// % worse. The Change is signed as the value moved, whichever is
    /// better: up for both 1.214s, down for both 0.8s.
    #[test]
    fn the_summary_of_one_metric_is_its_row() {
        for (direction, factor, expected) in [
            (Direction::Lower, 1.214, 21.188_f64),
            (Direction::Higher, 1.214, -21.188),
            (Direction::Higher, 0.8, 19.802),
            (Direction::Lower, 0.8, -19.802),
        ] {
            let report = one_metric(direction, factor);
            let text = Regressions.render(&report, Style::default());
            let row = row_of(&text);
            let change: f64 = row[2].parse().unwrap();
            assert_eq!(change.signum(), (factor - 1.0).signum(), "{text}");
            assert!((change.abs() - expected.abs()).abs() < 0.1, "{text}");
            let shown: f64 = row[4].parse().unwrap();
            assert!(
                (shown - expected).abs() < 0.0005,
                "{direction:?} x{factor}:\n{text}"
            );
            assert!(
                (summary_pct(&text) - shown).abs() < 0.006,
                "{direction:?} x{factor}:\n{text}"
            );
            let worse = report.summaries[0].worse_fraction().unwrap();
            assert!((worse * 100.0 - shown).abs() < 0.0005, "{worse}");
        }
    }

    /// The row prints the means its Diff is of, the baseline mean's CI in
    /// the metric's units around it, and the change with its CI as every
    /// format does (a rate down 10 %: -10, worse; the Diff +10); no-change
    /// rows only with `all_rows`.
    #[test]
    fn columns_agree_with_the_means_and_no_change_rows_on_request() {
        let report = one_metric(Direction::Higher, 0.9);
        let text = Regressions.render(&report, Style::default());
        let row = row_of(&text);
        let base: f64 = row[0].parse().unwrap();
        let current: f64 = row[1].parse().unwrap();
        let change: f64 = row[2].parse().unwrap();
        let diff: f64 = row[4].parse().unwrap();
        assert!(
            (diff - 100.0 * (base - current) / base).abs() < 0.001,
            "{text}"
        );
        assert!((change + diff).abs() < 0.1 && change < 0.0, "{text}");
        let (low, high) = row[7].split_once(" / ").unwrap();
        let (low, high): (f64, f64) = (low.parse().unwrap(), high.parse().unwrap());
        assert!(low < base && base < high && high < current * 1.2, "{text}");
        let (low, high) = row[3].split_once(" / ").unwrap();
        let (low, high): (f64, f64) = (low.parse().unwrap(), high.parse().unwrap());
        assert!(low < change && change < high && high < 0.0, "{text}");
        assert!(text.contains("Diff, % (+ = worse)"), "{text}");
        assert!(text.contains("Change, % (+ = higher value)"), "{text}");
        let same = one_metric(Direction::Lower, 1.0);
        let counted = Regressions.render(&same, Style::default());
        assert!(!counted.contains("\nsyscall-null, ns"), "{counted}");
        assert!(counted.contains("No change: 1 metric "), "{counted}");
        let listed = Regressions.render(
            &same,
            Style {
                all_rows: true,
                ..Style::default()
            },
        );
        let section = listed
            .split("\nNo change\n")
            .nth(1)
            .expect("a No change section");
        assert_eq!(row_of(section)[4], "+0.000", "{listed}");
    }

    #[test]
    fn signs_and_infinities() {
        assert_eq!(signed(10.0), "+10.00");
        assert_eq!(signed(-3.054), "-3.05");
        assert_eq!(signed(f64::INFINITY), "+inf");
        assert_eq!(signed(-100.0), "-100.00");
    }
}
