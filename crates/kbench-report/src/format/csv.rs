//! `csv`: one row per metric x identifier (RFC 4180: comma-separated,
//! CRLF line ends, fields holding a comma, quote or line break quoted with
//! quotes doubled). Columns:
//!
//! `result_set, test, benchmark, options, metric, unit, direction,
//! identifier, is_baseline, n, rounds, mean, median, sd, ci_low, ci_high,
//! change_pct, change_ci_low, change_ci_high, p_value, q_value, verdict,
//! explained_by`
//!
//! `options` is `k=v,k=v`; `ci_*` the 95 % CI of the mean; `change_*` the
//! change against the baseline in percent with its 95 % CI, the one every
//! format shows (`opening::CHANGE_RULE`: + for a higher value); `verdict` as in
//! the JSON document (`regression`, `improvement`, `no_change`,
//! `inconclusive`); `explained_by` for a regression or improvement the
//! counters and monitors that moved significantly with it, largest first,
//! as `metric=difference` separated by spaces. A missing or unbounded value is an empty cell (the
//! baseline's change columns, an identifier without samples). Numbers are
//! written in full precision. Never coloured.
//!
//! A name cell (result set, test, benchmark, options, metric, unit,
//! identifier) that starts with `=`, `+`, `-`, `@`, a tab or a carriage
//! return gets a leading `'` (OWASP's rule against CSV injection), so a
//! spreadsheet shows it as text instead of running it as a formula. Number
//! cells stay numbers: a change of `-3.2` is written `-3.2`.

use super::render::{Render, Style};
use kbench_analysis::comparison::{ComparisonReport, IdentifierResult, MetricReport};
use kbench_stats::Verdict;

pub struct Csv;

const COLUMNS: &[&str] = &[
    "result_set",
    "test",
    "benchmark",
    "options",
    "metric",
    "unit",
    "direction",
    "identifier",
    "is_baseline",
    "n",
    "rounds",
    "mean",
    "median",
    "sd",
    "ci_low",
    "ci_high",
    "change_pct",
    "change_ci_low",
    "change_ci_high",
    "p_value",
    "q_value",
    "verdict",
    "explained_by",
];

impl Render<ComparisonReport> for Csv {
    fn render(&self, report: &ComparisonReport, _style: Style) -> String {
        let mut out = String::new();
        line(&mut out, COLUMNS.iter().map(|c| c.to_string()));
        for metric in &report.metrics {
            for (index, result) in metric.results.iter().enumerate() {
                line(&mut out, fields(report, metric, result, index == 0));
            }
        }
        out
    }
}

fn fields(
    report: &ComparisonReport,
    metric: &MetricReport,
    result: &IdentifierResult,
    is_baseline: bool,
) -> Vec<String> {
    let summary = result.summary.as_ref();
    let comparison = result.comparison.as_ref();
    vec![
        text(&report.result_set),
        text(&metric.test),
        text(&metric.key.benchmark),
        text(&metric.key.options_text()),
        text(&metric.key.metric),
        text(&metric.unit),
        metric.direction.as_str().to_string(),
        text(&result.identifier),
        is_baseline.to_string(),
        summary.map_or(String::new(), |s| s.n.to_string()),
        result.rounds.to_string(),
        number(summary.map(|s| s.mean)),
        number(summary.map(|s| s.median)),
        number(summary.and_then(|s| s.sd)),
        number(summary.map(|s| s.ci.ci_low)),
        number(summary.map(|s| s.ci.ci_high)),
        number(comparison.map(|c| c.change_pct.point)),
        number(comparison.map(|c| c.change_pct.ci_low)),
        number(comparison.map(|c| c.change_pct.ci_high)),
        number(comparison.map(|c| c.p_value)),
        number(comparison.map(|c| c.q_value)),
        comparison.map_or(String::new(), |c| verdict(c.verdict).to_string()),
        explained_by(result),
    ]
}

/// `perf.context_switches_per_op=1.02 softirqs.SCHED_per_op=0.0176`: the
/// secondary metrics that moved with a regression or improvement.
fn explained_by(result: &IdentifierResult) -> String {
    let (Some(comparison), Some(explanation)) = (&result.comparison, &result.explanation) else {
        return String::new();
    };
    let moved: Vec<String> = explanation
        .why(comparison.verdict)
        .iter()
        .map(|c| format!("{}={}", c.metric, c.difference.point))
        .collect();
    text(&moved.join(" "))
}

fn verdict(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Regression => "regression",
        Verdict::Improvement => "improvement",
        Verdict::NoChange => "no_change",
        Verdict::Inconclusive => "inconclusive",
        Verdict::CannotDecide => "cannot_decide",
    }
}

/// A name as a cell a spreadsheet cannot take for a formula: `'` before a
/// leading `=`, `+`, `-`, `@`, tab or carriage return.
fn text(name: &str) -> String {
    if name.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        format!("'{name}")
    } else {
        name.to_string()
    }
}

/// Full precision, without an exponent for ordinary magnitudes; empty for
/// a missing or non-finite value.
fn number(value: Option<f64>) -> String {
    match value {
        Some(v) if v.is_finite() => {
            if v == 0.0 || (1e-6..1e15).contains(&v.abs()) {
                format!("{v}")
            } else {
                format!("{v:e}")
            }
        }
        _ => String::new(),
    }
}

/// One RFC 4180 record with its CRLF.
fn line(out: &mut String, fields: impl IntoIterator<Item = String>) {
    let fields: Vec<String> = fields.into_iter().map(|f| quote(&f)).collect();
    out.push_str(&fields.join(","));
    out.push_str("\r\n");
}

/// The field, quoted when it holds a comma, quote or line break.
fn quote(field: &str) -> String {
    if field.contains([',', '"', '\r', '\n']) {
        format!("\"{}\"", field.replace('"', "\"\""))
    } else {
        field.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_per_rfc_4180() {
        assert_eq!(quote("plain"), "plain");
        assert_eq!(quote("a,b"), "\"a,b\"");
        assert_eq!(quote("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(quote("two\nlines"), "\"two\nlines\"");
    }

    #[test]
    fn formula_like_names_are_text() {
        for name in ["=1+2", "+1", "-2", "@SUM(A1)", "\tx", "\rx"] {
            assert_eq!(text(name), format!("'{name}"));
        }
        for name in ["6.18", "pipe-lat[placement=cross]", "a=b", "x-1", "'q"] {
            assert_eq!(text(name), name);
        }
    }

    #[test]
    fn numbers_keep_precision() {
        assert_eq!(number(Some(115.25)), "115.25");
        assert_eq!(number(Some(1.5e-20)), "1.5e-20");
        assert_eq!(number(Some(0.0)), "0");
        assert_eq!(number(Some(f64::INFINITY)), "");
        assert_eq!(number(None), "");
    }
}
