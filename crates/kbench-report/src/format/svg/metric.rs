//! One metric of a comparison as charts: the bars of its means with their
//! CI and change, and the box and strip plot of its raw samples, with the
//! labels they write (which the html page's table writes too).

use super::bars::{Bar, bar_chart};
use super::chart::{Chart, verdict_class};
use super::strip::{Distribution, strip_chart};
use kbench_analysis::comparison::MetricReport;
use kbench_analysis::number::{self, Unbounded};
use kbench_stats::{Comparison, Summary};

/// "+10.0 % [+9.8, +10.2]".
fn change_text(c: &Comparison) -> String {
    format!(
        "{} [{}, {}]",
        bound(c.change_pct.point, " %"),
        bound(c.change_pct.ci_low, ""),
        bound(c.change_pct.ci_high, "")
    )
}

/// A signed percentage bound with one decimal as the pictures write it:
/// infinities as such.
pub fn bound(v: f64, suffix: &str) -> String {
    number::signed(v, 1, suffix, Unbounded::Symbol)
}

/// "110.0 ±0.2 %", "110.0 (n = 1)"; "no samples".
pub fn mean_text(summary: Option<&Summary>) -> String {
    match summary {
        None => "no samples".to_string(),
        Some(s) => {
            let ci = s.ci.relative_half_width();
            if ci.is_finite() {
                let pct = ci * 100.0;
                let decimals = if pct < 1.0 { 2 } else { 1 };
                format!("{} ±{pct:.decimals$} %", number::value(s.mean))
            } else {
                format!("{} (n = 1)", number::value(s.mean))
            }
        }
    }
}

/// "ns (lower is better)".
fn unit_caption(metric: &MetricReport) -> String {
    format!("{} ({} is better)", metric.unit, metric.direction.as_str())
}

/// The bar chart of one metric: one bar per identifier.
pub fn metric_bars(metric: &MetricReport) -> Chart {
    let bars: Vec<Bar<'_>> = metric
        .results
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let verdict = r.comparison.as_ref().map(|c| c.verdict);
            let change = match (&r.comparison, i) {
                (_, 0) => String::new(),
                (Some(c), _) => format!("{} {}", change_text(c), c.verdict),
                (None, _) => "not compared".to_string(),
            };
            let mut tooltip = r.identifier.clone();
            if let Some(s) = &r.summary {
                tooltip.push_str(&format!(
                    ": mean {} {}, 95 % CI [{}, {}], n = {}{}",
                    number::value(s.mean),
                    metric.unit,
                    number::value(s.ci.ci_low),
                    number::value(s.ci.ci_high),
                    s.n,
                    if r.rounds > 1 { " rounds" } else { "" }
                ));
            }
            if let Some(c) = &r.comparison {
                tooltip.push_str(&format!(
                    "; p = {}, q = {}",
                    number::p_value(c.p_value),
                    number::p_value(c.q_value),
                ));
            }
            Bar {
                label: &r.identifier,
                mean: r.summary.as_ref().map_or(f64::NAN, |s| s.mean),
                ci_low: r.summary.as_ref().map_or(f64::NAN, |s| s.ci.ci_low),
                ci_high: r.summary.as_ref().map_or(f64::NAN, |s| s.ci.ci_high),
                change,
                value: mean_text(r.summary.as_ref()),
                class: if i == 0 {
                    "base"
                } else {
                    verdict_class(verdict)
                },
                tooltip,
            }
        })
        .collect();
    let reference = metric.results[0].summary.as_ref().map(|s| s.mean);
    bar_chart(
        &bars,
        reference,
        &unit_caption(metric),
        &format!(
            "{}: mean per identifier with 95 % confidence interval",
            metric.test
        ),
    )
}

/// The box and strip plot of one metric's raw samples.
pub fn metric_samples(metric: &MetricReport) -> Chart {
    let rows: Vec<Distribution<'_>> = metric
        .results
        .iter()
        .enumerate()
        .map(|(i, r)| Distribution {
            label: &r.identifier,
            values: &r.values,
            class: if i == 0 {
                "base"
            } else {
                verdict_class(r.comparison.as_ref().map(|c| c.verdict))
            },
        })
        .collect();
    strip_chart(
        &rows,
        &metric.unit,
        &format!("{}: raw samples per identifier", metric.test),
    )
}
