//! `svg`: one metric as a standalone SVG document, for a mail or a wiki
//! (`kbench compare SET --format svg --metric TEXT -o x.svg`; `--metric`
//! must match exactly one metric, or be one's whole name among longer
//! ones): its name and unit, the bar chart of the
//! means with 95 % CI whiskers and the change against the baseline, and the
//! raw samples as box and strip plots. Light or dark with the viewer's
//! colour scheme; no script, no external reference.
//!
//! The chart helpers here draw templated SVG from plain data, and the html
//! format's pages embed them: [`bar_chart`], [`strip_chart`] and, for the
//! history page, [`line_chart`]. Both write through [`crate::markup`]; svg
//! needs nothing of html.

mod bars;
mod line;
mod scale;
mod strip;

pub use bars::{Bar, bar_chart};
pub use line::{ChangeMarker, LineChart, LinePoint, line_chart};
pub use strip::{Distribution, MAX_POINTS, strip_chart};

use super::common;
use super::{Render, Style};
use crate::comparison::{ComparisonReport, MetricReport};
use crate::markup::{Markup, Px, markup};
use crate::number::{self, Unbounded};
use kbench_stats::{Comparison, Summary, Verdict};

/// Colours (light, and dark with `prefers-color-scheme`) as CSS variables.
pub const THEME_CSS: &str = include_str!("svg/theme.css");
/// The chart classes of every helper.
pub const CHART_CSS: &str = include_str!("svg/chart.css");
/// The content of a standalone picture's `<style>` element.
const DOCUMENT_STYLE: &str = concat!(include_str!("svg/theme.css"), include_str!("svg/chart.css"));

/// The Content-Security-Policy of a standalone picture: its own style, no
/// script, nothing loaded.
pub fn document_policy() -> &'static str {
    static POLICY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    POLICY.get_or_init(|| super::csp::policy(&[DOCUMENT_STYLE], &[], "'none'"))
}

/// A drawn chart: its content in a `width` x `height` coordinate system.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    pub width: f64,
    pub height: f64,
    /// What it shows, for screen readers.
    pub label: String,
    pub body: Markup,
}

impl Chart {
    /// The chart as an inline `<svg>` of an HTML page: it scales to the
    /// width of its box.
    pub fn inline(&self) -> Markup {
        markup!(
            "<svg class=\"chart\" viewBox=\"0 0 {{w}} {{h}}\" role=\"img\" aria-label=\"{{label}}\">{{body}}</svg>",
            w = Px(self.width),
            h = Px(self.height),
            label = self.label,
            body = self.body,
        )
    }
}

/// Vertical grid lines at the ticks of `axis` down to `bottom`, their
/// labels under it and `caption` at the right: one path and one group.
fn x_axis(axis: &scale::Axis, x: &scale::Linear, bottom: f64, caption: &str) -> Markup {
    let mut grid = String::new();
    let mut labels = Markup::new();
    for &tick in &axis.ticks {
        let tx = Px(x.at(tick));
        grid.push_str(&format!("M{tx} 0V{}", Px(bottom)));
        labels.push(&markup!(
            "<text x=\"{{x}}\" y=\"{{y}}\">{{t}}</text>",
            x = tx,
            y = Px(bottom + 13.0),
            t = axis.label(tick),
        ));
    }
    markup!(
        "<path class=\"c-grid\" d=\"{{grid}}\"/><g class=\"c-m c-c\">{{labels}}</g><text class=\"c-m c-r\" x=\"{{r}}\" y=\"{{y}}\">{{caption}}</text>",
        grid = grid,
        labels = labels,
        r = Px(x.r1.max(x.r0)),
        y = Px(bottom + 26.0),
        caption = caption,
    )
}

/// The CSS class of a verdict in charts and pages.
pub fn verdict_class(verdict: Option<Verdict>) -> &'static str {
    match verdict {
        None => "v-none",
        Some(Verdict::Regression) => "v-regression",
        Some(Verdict::Improvement) => "v-improvement",
        Some(Verdict::NoChange) => "v-same",
        Some(Verdict::Inconclusive) => "v-inconclusive",
        Some(Verdict::CannotDecide) => "v-undecided",
    }
}

/// `text` cut to `max` characters with an ellipsis.
pub fn truncate(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_string()
    } else {
        let mut cut: String = text.chars().take(max.saturating_sub(1)).collect();
        cut.push('…');
        cut
    }
}

/// "+10.0 % [+9.8, +10.2]".
pub(super) fn change_text(c: &Comparison) -> String {
    format!(
        "{} [{}, {}]",
        bound(c.change_pct.point, " %"),
        bound(c.change_pct.ci_low, ""),
        bound(c.change_pct.ci_high, "")
    )
}

/// A signed percentage bound with one decimal as the pictures write it:
/// infinities as such.
pub(super) fn bound(v: f64, suffix: &str) -> String {
    number::signed(v, 1, suffix, Unbounded::Symbol)
}

/// "110.0 ±0.2 %", "110.0 (n = 1)"; "no samples".
pub(super) fn mean_text(summary: Option<&Summary>) -> String {
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
pub(super) fn unit_caption(metric: &MetricReport) -> String {
    format!("{} ({} is better)", metric.unit, metric.direction.as_str())
}

/// The bar chart of one metric: one bar per identifier.
pub(super) fn metric_bars(metric: &MetricReport) -> Chart {
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
pub(super) fn metric_samples(metric: &MetricReport) -> Chart {
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

pub struct Svg;

impl Render<ComparisonReport> for Svg {
    /// The first metric of the report (the registry's
    /// [`fit`](super::Renderer::fit) keeps one); an empty document without
    /// metrics.
    fn render(&self, report: &ComparisonReport, _style: Style) -> String {
        document(report, report.metrics.first())
    }
}

const MARGIN: f64 = 12.0;

fn document(report: &ComparisonReport, metric: Option<&MetricReport>) -> String {
    let Some(metric) = metric else {
        return markup!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 200 20\"><text y=\"14\">no metric</text></svg>\n"
        )
        .into_string();
    };
    let bars = metric_bars(metric);
    let samples = metric_samples(metric);
    let width = bars.width.max(samples.width) + 2.0 * MARGIN;
    let bars_top = 78.0;
    let samples_top = bars_top + bars.height + 32.0;
    let height = samples_top + samples.height + 26.0;
    let subtitle = format!(
        "{} · result set {}, baseline {}, threshold {:.2} %",
        common::unit_line(&metric.unit, metric.direction),
        report.result_set,
        report.baseline,
        report.threshold_pct
    );
    markup!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <svg xmlns=\"http://www.w3.org/2000/svg\" class=\"c\" width=\"{{w}}\" height=\"{{h}}\" viewBox=\"0 0 {{w}} {{h}}\" role=\"img\" aria-label=\"{{title}}\">\n\
         <title>{{title}}</title>\n<style>{{style}}</style>\n\
         <rect class=\"c-bg\" width=\"100%\" height=\"100%\"/>\n\
         <text class=\"c-h\" x=\"{{m}}\" y=\"24\">{{test}}</text>\n\
         <text class=\"c-m\" x=\"{{m}}\" y=\"42\">{{subtitle}}</text>\n\
         <text class=\"c-t c-b\" x=\"{{m}}\" y=\"{{bl}}\">Mean and 95 % CI; change against {{baseline}}</text>\n\
         <g transform=\"translate({{m}} {{bt}})\">{{bars}}</g>\n\
         <text class=\"c-t c-b\" x=\"{{m}}\" y=\"{{sl}}\">Raw samples (box: quartiles; at most {{max}} drawn per identifier)</text>\n\
         <g transform=\"translate({{m}} {{st}})\">{{samples}}</g>\n\
         <text class=\"c-m\" x=\"{{m}}\" y=\"{{fy}}\">kbench {{version}}</text>\n\
         </svg>\n",
        w = Px(width),
        h = Px(height),
        title = format!("{} — kbench compare {}", metric.test, report.result_set),
        style = Markup::raw(DOCUMENT_STYLE),
        m = Px(MARGIN),
        test = truncate(&metric.test, 60),
        subtitle = truncate(&subtitle, 84),
        bl = Px(bars_top - 12.0),
        baseline = truncate(&report.baseline, 30),
        bt = Px(bars_top),
        bars = bars.body,
        sl = Px(samples_top - 12.0),
        max = MAX_POINTS,
        st = Px(samples_top),
        samples = samples.body,
        fy = Px(height - 8.0),
        version = env!("CARGO_PKG_VERSION"),
    )
    .into_string()
}
