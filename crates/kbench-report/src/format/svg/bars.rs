//! A horizontal bar chart of means with their confidence intervals as
//! whiskers: one row per identifier, its name and change against the
//! baseline above the bar, the mean at the right. Bars start at zero (a
//! bar's length is its value); a dashed line marks the baseline's mean.

use super::chart::{Chart, truncate, x_axis};
use super::scale::{Axis, Linear};
use crate::markup::{Markup, Px, markup};

pub const WIDTH: f64 = 480.0;
const PAD: f64 = 8.0;
/// Right of the bars: the mean's text.
const VALUE_COLUMN: f64 = 78.0;
const ROW: f64 = 36.0;
const AXIS: f64 = 30.0;

/// One bar: plain data.
#[derive(Debug, Clone, PartialEq)]
pub struct Bar<'a> {
    /// The identifier's name (shortened when long; whole in the tooltip).
    pub label: &'a str,
    pub mean: f64,
    /// The mean's confidence interval; non-finite ends draw no whisker.
    pub ci_low: f64,
    pub ci_high: f64,
    /// Right of the name, e.g. "+10.0 % [+9.8, +10.2] REGRESSION"; empty
    /// for the baseline.
    pub change: String,
    /// At the bar's right, e.g. "110.0 ±0.2 %".
    pub value: String,
    /// CSS class of the bar and change text: `base` or a verdict's class.
    pub class: &'static str,
    /// The bar's tooltip.
    pub tooltip: String,
}

/// The chart of `bars`; `reference` (the baseline's mean) is drawn as a
/// dashed line; `unit` captions the axis.
pub fn bar_chart(bars: &[Bar<'_>], reference: Option<f64>, unit: &str, label: &str) -> Chart {
    let finite = |v: f64| v.is_finite().then_some(v);
    let largest = bars
        .iter()
        .flat_map(|b| [finite(b.mean), finite(b.ci_high)])
        .flatten()
        .fold(0.0, f64::max);
    let smallest = bars
        .iter()
        .flat_map(|b| [finite(b.mean), finite(b.ci_low)])
        .flatten()
        .fold(0.0, f64::min);
    let axis = Axis::new(smallest, largest, 4);
    let x = Linear {
        d0: axis.lo,
        d1: axis.hi,
        r0: PAD,
        r1: WIDTH - VALUE_COLUMN,
    };
    let plot_bottom = ROW * bars.len() as f64 + 4.0;
    let height = plot_bottom + AXIS;
    let mut body = Markup::new();
    // Grid and tick labels.
    body.push(&x_axis(&axis, &x, plot_bottom, unit));
    let zero = x.clamped(0.0);
    // The bars with their whiskers (and tooltips), the baseline's mean over
    // them, the texts over everything (with a halo of the background).
    let mut texts = Markup::new();
    for (i, bar) in bars.iter().enumerate() {
        let y0 = ROW * i as f64 + 4.0;
        let bar_y = y0 + 17.0;
        let mut row = markup!("<title>{{tooltip}}</title>", tooltip = bar.tooltip);
        if bar.mean.is_finite() {
            let end = x.clamped(bar.mean);
            row.push(&markup!(
                "<rect class=\"c-bar {{class}}\" x=\"{{x}}\" y=\"{{y}}\" width=\"{{w}}\" height=\"12\"/>",
                class = bar.class,
                x = Px(zero.min(end)),
                y = Px(bar_y),
                w = Px((end - zero).abs()),
            ));
            if bar.ci_low.is_finite() && bar.ci_high.is_finite() {
                let (lo, hi) = (x.clamped(bar.ci_low), x.clamped(bar.ci_high));
                let mid = bar_y + 6.0;
                row.push(&markup!(
                    "<path class=\"c-ci\" d=\"M{{lo}} {{mid}}H{{hi}}M{{lo}} {{top}}v10M{{hi}} {{top}}v10\"/>",
                    lo = Px(lo),
                    hi = Px(hi),
                    mid = Px(mid),
                    top = Px(mid - 5.0),
                ));
            }
        }
        body.push(&markup!("<g>{{row}}</g>", row = row));
        texts.push(&markup!(
            "<text class=\"c-t\" x=\"{{x}}\" y=\"{{y}}\">{{label}}</text>",
            x = Px(PAD),
            y = Px(y0 + 11.0),
            label = truncate(bar.label, label_room(&bar.change)),
        ));
        if !bar.change.is_empty() {
            texts.push(&markup!(
                "<text class=\"c-t c-r c-b {{class}}\" x=\"{{x}}\" y=\"{{y}}\">{{change}}</text>",
                class = bar.class,
                x = Px(WIDTH - PAD),
                y = Px(y0 + 11.0),
                change = bar.change,
            ));
        }
        texts.push(&markup!(
            "<text class=\"c-m c-r\" x=\"{{x}}\" y=\"{{y}}\">{{value}}</text>",
            x = Px(WIDTH - PAD),
            y = Px(bar_y + 10.0),
            value = bar.value,
        ));
    }
    if let Some(reference) = reference.filter(|r| r.is_finite()) {
        body.push(&markup!(
            "<path class=\"c-ref\" d=\"M{{x}} 2V{{b}}\"/>",
            x = Px(x.clamped(reference)),
            b = Px(plot_bottom),
        ));
    }
    body.push(&texts);
    Chart {
        width: WIDTH,
        height,
        label: label.to_string(),
        body,
    }
}

/// Characters of the name that fit left of `change` (the texts' average
/// widths at their sizes: 7.4 and, bold, 8.3 units a character).
fn label_room(change: &str) -> usize {
    let free = WIDTH - 2.0 * PAD - 12.0 - 8.3 * change.chars().count() as f64;
    ((free / 7.4).floor() as usize).clamp(8, 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bar<'a>(label: &'a str, mean: f64, half: f64, class: &'static str) -> Bar<'a> {
        Bar {
            label,
            mean,
            ci_low: mean - half,
            ci_high: mean + half,
            change: if class == "base" {
                String::new()
            } else {
                "+10.0 %".into()
            },
            value: format!("{mean}"),
            class,
            tooltip: format!("{label}: {mean}"),
        }
    }

    #[test]
    fn one_bar_and_whisker_per_row_scaled_from_zero() {
        let bars = [
            bar("base", 100.0, 1.0, "base"),
            bar("<b>slow</b>", 110.0, 1.0, "v-regression"),
        ];
        let chart = bar_chart(&bars, Some(100.0), "ns", "syscall-null");
        let svg = chart.body.as_str();
        assert_eq!(svg.matches("<rect class=\"c-bar").count(), 2);
        assert_eq!(svg.matches("class=\"c-ci\"").count(), 2);
        assert!(svg.contains("<rect class=\"c-bar v-regression\""));
        assert!(svg.contains("&lt;b&gt;slow&lt;/b&gt;") && !svg.contains("<b>"));
        // Axis 0..120: the 110 bar is 110/120 of the plot.
        assert!(svg.contains(&format!(
            "x=\"8\" y=\"57\" width=\"{}\"",
            ((WIDTH - VALUE_COLUMN - PAD) * 110.0 / 120.0 * 10.0).round() / 10.0
        )));
        assert_eq!(chart.height, 2.0 * ROW + 4.0 + AXIS);
    }

    #[test]
    fn an_unbounded_ci_has_no_whisker() {
        let mut one = bar("n1", 5.0, 0.0, "v-inconclusive");
        one.ci_low = f64::NEG_INFINITY;
        one.ci_high = f64::INFINITY;
        let chart = bar_chart(&[one], None, "us", "x");
        assert!(!chart.body.as_str().contains("c-ci"));
        assert!(!chart.body.as_str().contains("NaN") && !chart.body.as_str().contains("inf"));
    }
}
