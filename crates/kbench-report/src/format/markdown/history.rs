//! The history as markdown, for an issue or a mail: a table of every change point
//! (test, where, change with its 95 % CI, p, verdict), then per metric with
//! a change its series as a table (version, mean +- CI, marked at each
//! change). User strings are escaped so `|`, `*`, `_` and the like stay
//! text.

use super::escape::escape;
use kbench_analysis::history::HistoryReport;
use kbench_analysis::number;
use std::fmt::Write;

pub(super) fn markdown(report: &HistoryReport) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# kbench history: {}\n", escape(&report.result_set));
    let _ = writeln!(
        out,
        "{} versions in order: {}. Threshold {:.2} %. {} of {} metrics changed. Change points by \
         E-divisive means on the version means, a t-test between neighbouring segments with the \
         noise of the series (p < 0.001), the whole CI beyond the threshold.",
        report.identifiers.len(),
        report
            .identifiers
            .iter()
            .map(|i| escape(i))
            .collect::<Vec<_>>()
            .join(", "),
        report.threshold_pct,
        report.changed_metrics,
        report.metrics.len()
    );
    let _ = writeln!(out, "\n## Change points\n");
    if report.changed_metrics == 0 {
        let _ = writeln!(out, "None: no metric changed by more than the threshold.");
    } else {
        let _ = writeln!(
            out,
            "| Test | Unit | Better | From | To | Change \\[95 % CI\\] | p | Verdict |"
        );
        let _ = writeln!(out, "| --- | --- | --- | --- | --- | ---: | ---: | --- |");
        for metric in &report.metrics {
            for c in &metric.changes {
                let _ = writeln!(
                    out,
                    "| {} | {} | {} | {} | {} | {:+.2} % \\[{:+.1}, {:+.1}\\] | {:.1e} | **{}** |",
                    escape(&metric.test),
                    escape(&metric.unit),
                    metric.direction.as_str(),
                    escape(&c.previous),
                    escape(&c.identifier),
                    c.change_pct.point,
                    c.change_pct.ci_low,
                    c.change_pct.ci_high,
                    c.p_value,
                    c.verdict
                );
            }
        }
    }
    for metric in report.metrics.iter().filter(|m| !m.changes.is_empty()) {
        let _ = writeln!(
            out,
            "\n## {} ({}, {} is better)\n",
            escape(&metric.test),
            escape(&metric.unit),
            metric.direction.as_str()
        );
        let _ = writeln!(out, "| Version | Mean | 95 % CI | n | Change |");
        let _ = writeln!(out, "| --- | ---: | ---: | ---: | --- |");
        for point in &metric.series {
            let (mean, ci, n) = match &point.summary {
                Some(s) => {
                    let half = s.ci.relative_half_width();
                    (
                        number::value(s.mean),
                        if half.is_finite() {
                            format!("± {:.1} %", half * 100.0)
                        } else {
                            "-".to_string()
                        },
                        s.n.to_string(),
                    )
                }
                None => ("-".into(), "-".into(), "0".into()),
            };
            let change = metric
                .changes
                .iter()
                .find(|c| c.identifier == point.identifier)
                .map(|c| format!("**{} {:+.2} %**", c.verdict, c.change_pct.point))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "| {} | {mean} | {ci} | {n} | {change} |",
                escape(&point.identifier)
            );
        }
    }
    if !report.notes.is_empty() {
        let _ = writeln!(out, "\n## Notes\n");
        for note in &report.notes {
            let _ = writeln!(out, "- {}", escape(note));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use kbench_analysis::fixtures::{history_data, history_request};
    use kbench_analysis::history::build;

    #[test]
    fn tables_of_changes_and_series() {
        let text = markdown(&build(&history_data(), &history_request()).unwrap());
        assert!(
            text.contains("| pipe-lat | us | lower | v2 | v3 | +10.00 % \\[+"),
            "{text}"
        );
        assert!(text.contains("| v3 | 4.401 | ± 0.3 % | 8 |"), "{text}");
        assert!(text.contains("**REGRESSION +10.00 %**"), "{text}");
        assert!(!text.contains("## bw"), "{text}");
        assert_eq!(escape("a|b_c"), "a\\|b\\_c");
    }
}
