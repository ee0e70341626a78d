//! What every chart is drawn with: the [`Chart`] it gives, the x axis of
//! the bar and strip charts, the CSS class of a verdict, and labels cut to
//! fit.

use super::scale::{Axis, Linear};
use crate::markup::{Markup, Px, markup};
use kbench_stats::Verdict;

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
pub(super) fn x_axis(axis: &Axis, x: &Linear, bottom: f64, caption: &str) -> Markup {
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
