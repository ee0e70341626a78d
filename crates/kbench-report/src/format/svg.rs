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
mod chart;
mod line;
mod metric;
mod scale;
mod strip;

pub use bars::{Bar, bar_chart};
pub use chart::{Chart, truncate, verdict_class};
pub use line::{ChangeMarker, LineChart, LinePoint, line_chart};
pub use strip::{Distribution, MAX_POINTS, strip_chart};

// One metric's charts and labels, which the html compare page draws too.
pub(super) use metric::{bound, mean_text, metric_bars, metric_samples};

use super::common;
use super::render::{Render, Style};
use crate::markup::{Markup, Px, markup};
use kbench_analysis::comparison::{ComparisonReport, MetricReport};

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
