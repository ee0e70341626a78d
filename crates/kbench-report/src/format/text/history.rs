//! The history for a terminal: per metric, the series as compact rows (version, mean, 95 % CI
//! of the mean in percent) with a `|` before every version where a change
//! point falls, then one line per change: where, the change in percent with
//! its 95 % CI, the p-value and the verdict. Rows wrap at 100 columns.
//!
//! ```text
//! pipe-lat (us, lower is better): 1 change
//!   version   2.6.5  2.6.6| 2.6.7  2.6.8
//!   mean      4.410  4.380| 5.120  5.090
//!   ±CI %       0.4    0.5|   0.4    0.3
//!   2.6.6 -> 2.6.7: REGRESSION +16.44 % [95 % CI +15.8, +17.1], p = 3.1e-12
//! ```

use kbench_analysis::history::{HistoryReport, MetricHistory, VersionPoint};
use kbench_analysis::number::{self, Unbounded};
use std::fmt::Write;

/// Widest line before a series wraps.
const WIDTH: usize = 100;
const LABEL: usize = 10;

pub(super) fn text(report: &HistoryReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "kbench history: result set '{}', {} version{}, {} metric{}, {} with change points; \
         threshold {:.2} %",
        report.result_set,
        report.identifiers.len(),
        plural(report.identifiers.len()),
        report.metrics.len(),
        plural(report.metrics.len()),
        report.changed_metrics,
        report.threshold_pct
    );
    for metric in &report.metrics {
        out.push('\n');
        metric_text(&mut out, metric);
    }
    if !report.notes.is_empty() {
        out.push('\n');
        for note in &report.notes {
            let _ = writeln!(out, "note: {note}");
        }
    }
    out
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

fn metric_text(out: &mut String, metric: &MetricHistory) {
    let count = metric.changes.len();
    let _ = writeln!(
        out,
        "{} ({}, {} is better): {}",
        metric.test,
        metric.unit,
        metric.direction.as_str(),
        match count {
            0 => "no change".to_string(),
            1 => "1 change".to_string(),
            n => format!("{n} changes"),
        }
    );
    let cells: Vec<[String; 3]> = metric.series.iter().map(cells).collect();
    let widths: Vec<usize> = cells
        .iter()
        .map(|c| c.iter().map(|s| s.chars().count()).max().unwrap_or(1))
        .collect();
    // Chunks of versions that fit in WIDTH.
    let mut start = 0;
    while start < cells.len() {
        let mut end = start;
        let mut used = 2 + LABEL;
        while end < cells.len() && (end == start || used + widths[end] + 2 <= WIDTH) {
            used += widths[end] + 2;
            end += 1;
        }
        for (row, label) in ["version", "mean", "±CI %"].iter().enumerate() {
            let mut line = format!("  {label:<width$}", width = LABEL - 2);
            for i in start..end {
                let sep = if metric.series[i].changed { "| " } else { "  " };
                let cell = &cells[i][row];
                let pad = widths[i].saturating_sub(cell.chars().count());
                let _ = write!(line, "{sep}{}{cell}", " ".repeat(pad));
            }
            let _ = writeln!(out, "{}", line.trim_end());
        }
        start = end;
    }
    for change in &metric.changes {
        let _ = writeln!(
            out,
            "  {} -> {}: {} {:+.2} % [95 % CI {}, {}], p = {:.1e}",
            change.previous,
            change.identifier,
            change.verdict,
            change.change_pct.point,
            number::signed(change.change_pct.ci_low, 1, "", Unbounded::NotAvailable),
            number::signed(change.change_pct.ci_high, 1, "", Unbounded::NotAvailable),
            change.p_value
        );
    }
}

/// Version name, mean and CI half-width in percent ("-" without samples).
fn cells(point: &VersionPoint) -> [String; 3] {
    let Some(summary) = &point.summary else {
        return [point.identifier.clone(), "-".into(), "-".into()];
    };
    let ci = summary.ci.relative_half_width();
    let ci = if ci.is_finite() {
        format!("{:.1}", ci * 100.0)
    } else {
        "n=1".to_string()
    };
    [point.identifier.clone(), number::value(summary.mean), ci]
}

#[cfg(test)]
mod tests {
    use super::*;
    use kbench_analysis::fixtures::{history_data, history_request};
    use kbench_analysis::history::build;

    #[test]
    fn marks_the_change_in_the_series() {
        let text = text(&build(&history_data(), &history_request()).unwrap());
        assert!(
            text.contains("pipe-lat (us, lower is better): 1 change"),
            "{text}"
        );
        assert!(
            text.contains("  version      v0     v1     v2|    v3     v4     v5\n"),
            "{text}"
        );
        assert!(
            text.contains("  mean      4.001  4.001  4.001| 4.401  4.401  4.401\n"),
            "{text}"
        );
        assert!(
            text.contains("  v2 -> v3: REGRESSION +10.00 % [95 % CI +"),
            "{text}"
        );
        assert!(
            text.contains("bw (MB/s, higher is better): no change"),
            "{text}"
        );
        assert!(text.contains("note: bw: no samples in v5"), "{text}");
    }

    #[test]
    fn long_series_wrap() {
        let mut data = history_data();
        let template = data.identifiers[0].clone();
        for v in 6..40 {
            let mut id = template.clone();
            id.name = format!("version-{v}");
            data.identifiers.push(id);
        }
        let text = text(&build(&data, &history_request()).unwrap());
        assert!(text.lines().all(|l| l.chars().count() <= WIDTH), "{text}");
        assert!(text.matches("  version ").count() >= 6, "{text}");
    }
}
