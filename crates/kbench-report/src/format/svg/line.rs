//! A metric over versions (the history page): one point per version with
//! its confidence interval as a whisker, joined by a line that breaks where
//! a version has no value, and change points as dashed lines between two
//! versions, coloured by verdict and labelled with the change. Versions are
//! evenly spaced in the given order; the value axis spans the data, not zero.

use super::chart::{Chart, truncate, verdict_class};
use super::scale::{Axis, Linear};
use crate::markup::{Markup, Px, markup};
use kbench_stats::Verdict;
use std::fmt::Write;

pub const WIDTH: f64 = 640.0;
pub const HEIGHT: f64 = 276.0;
const LEFT: f64 = 56.0;
const RIGHT: f64 = 12.0;
const TOP: f64 = 30.0;
/// Room for version labels of up to 16 characters at -40 degrees.
const BOTTOM: f64 = 86.0;
/// Version labels written at most; with more versions every k-th.
const MAX_LABELS: usize = 24;

/// One version's value with its confidence interval (non-finite ends: no
/// whisker).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LinePoint {
    pub value: f64,
    pub ci_low: f64,
    pub ci_high: f64,
}

/// A change between versions `index - 1` and `index`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChangeMarker {
    pub index: usize,
    pub verdict: Verdict,
    /// The change in percent (after / before - 1, times 100).
    pub change_pct: f64,
}

/// Everything a line chart shows: plain data.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LineChart<'a> {
    /// The versions (identifiers) in order: the x axis.
    pub versions: &'a [String],
    /// One per version; `None` where the version has no value.
    pub points: &'a [Option<LinePoint>],
    pub changes: &'a [ChangeMarker],
    /// Caption of the value axis, e.g. "us (lower is better)".
    pub unit: &'a str,
    /// What the chart shows, for screen readers.
    pub label: &'a str,
}

pub fn line_chart(chart: &LineChart<'_>) -> Chart {
    let n = chart.versions.len().max(1);
    let band = (WIDTH - LEFT - RIGHT) / n as f64;
    let x_of = |i: usize| LEFT + (i as f64 + 0.5) * band;
    let bottom = HEIGHT - BOTTOM;
    let finite: Vec<f64> = chart
        .points
        .iter()
        .flatten()
        .flat_map(|p| [p.value, p.ci_low, p.ci_high])
        .filter(|v| v.is_finite())
        .collect();
    let lo = finite.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = finite.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let axis = Axis::new(lo, hi, 5);
    let y = Linear {
        d0: axis.lo,
        d1: axis.hi,
        r0: bottom,
        r1: TOP,
    };
    let mut body = Markup::new();
    for &tick in &axis.ticks {
        body.push(&markup!(
            "<path class=\"c-grid\" d=\"M{{l}} {{y}}H{{r}}\"/><text class=\"c-m c-r\" x=\"{{tx}}\" y=\"{{ty}}\">{{t}}</text>",
            l = Px(LEFT),
            r = Px(WIDTH - RIGHT),
            y = Px(y.at(tick)),
            tx = Px(LEFT - 6.0),
            ty = Px(y.at(tick) + 4.0),
            t = axis.label(tick),
        ));
    }
    body.push(&markup!(
        "<path class=\"c-axis\" d=\"M{{l}} {{b}}H{{r}}\"/><text class=\"c-m\" x=\"4\" y=\"12\">{{unit}}</text>",
        l = Px(LEFT),
        r = Px(WIDTH - RIGHT),
        b = Px(bottom),
        unit = chart.unit,
    ));
    let every = chart.versions.len().div_ceil(MAX_LABELS).max(1);
    for (i, version) in chart.versions.iter().enumerate() {
        if i % every != 0 {
            continue;
        }
        body.push(&markup!(
            "<text class=\"c-m c-r\" transform=\"rotate(-40 {{x}} {{y}})\" x=\"{{x}}\" y=\"{{y}}\">{{v}}<title>{{full}}</title></text>",
            x = Px(x_of(i)),
            y = Px(bottom + 14.0),
            v = truncate(version, 16),
            full = version.as_str(),
        ));
    }
    if finite.is_empty() {
        body.push(&markup!(
            "<text class=\"c-m c-c\" x=\"{{x}}\" y=\"{{y}}\">no values</text>",
            x = Px(WIDTH / 2.0),
            y = Px((TOP + bottom) / 2.0),
        ));
    }
    for change in chart.changes.iter().filter(|c| c.index < n) {
        let cx = LEFT + change.index as f64 * band;
        let before = change
            .index
            .checked_sub(1)
            .and_then(|i| chart.versions.get(i))
            .map_or("", String::as_str);
        let after = chart.versions.get(change.index).map_or("", String::as_str);
        body.push(&markup!(
            "<g class=\"{{class}}\"><title>{{title}}</title><path class=\"c-cp\" d=\"M{{x}} {{t}}V{{b}}\"/><text class=\"c-t c-c c-b\" x=\"{{x}}\" y=\"{{ly}}\">{{text}}</text></g>",
            class = verdict_class(Some(change.verdict)),
            title = format!(
                "change point between {before} and {after}: {:+.1} % {}",
                change.change_pct, change.verdict
            ),
            x = Px(cx),
            t = Px(TOP - 4.0),
            b = Px(bottom),
            ly = Px(TOP - 8.0),
            text = format!("{:+.1} %", change.change_pct),
        ));
    }
    let mut line = String::new();
    let mut whiskers = String::new();
    let mut pen_down = false;
    let mut dots = Markup::new();
    for (i, point) in chart.points.iter().enumerate().take(n) {
        let Some(p) = point.filter(|p| p.value.is_finite()) else {
            pen_down = false;
            continue;
        };
        let (px, py) = (x_of(i), y.at(p.value));
        let _ = write!(
            line,
            "{}{} {}",
            if pen_down { "L" } else { "M" },
            Px(px),
            Px(py)
        );
        pen_down = true;
        if p.ci_low.is_finite() && p.ci_high.is_finite() {
            let _ = write!(
                whiskers,
                "M{} {}V{}",
                Px(px),
                Px(y.clamped(p.ci_low)),
                Px(y.clamped(p.ci_high))
            );
        }
        let version = chart.versions.get(i).map_or("", String::as_str);
        dots.push(&markup!(
            "<circle class=\"c-dot\" cx=\"{{x}}\" cy=\"{{y}}\" r=\"3\"><title>{{t}}</title></circle>",
            x = Px(px),
            y = Px(py),
            t = format!(
                "{version}: {} [{}, {}]",
                kbench_analysis::number::value(p.value),
                kbench_analysis::number::value(p.ci_low),
                kbench_analysis::number::value(p.ci_high)
            ),
        ));
    }
    if !whiskers.is_empty() {
        body.push(&markup!("<path class=\"c-ci\" d=\"{{d}}\"/>", d = whiskers));
    }
    if !line.is_empty() {
        body.push(&markup!("<path class=\"c-line\" d=\"{{d}}\"/>", d = line));
    }
    body.push(&dots);
    Chart {
        width: WIDTH,
        height: HEIGHT,
        label: chart.label.to_string(),
        body,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(value: f64) -> Option<LinePoint> {
        Some(LinePoint {
            value,
            ci_low: value * 0.99,
            ci_high: value * 1.01,
        })
    }

    fn versions(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_step_with_a_gap_and_a_change_point() {
        let versions = versions(&["6.1", "6.2", "6.3", "<script>x</script>", "6.5", "6.6"]);
        let points = [
            point(100.0),
            point(100.5),
            point(99.8),
            point(110.0),
            None,
            point(110.2),
        ];
        let changes = [ChangeMarker {
            index: 3,
            verdict: Verdict::Regression,
            change_pct: 10.1,
        }];
        let chart = line_chart(&LineChart {
            versions: &versions,
            points: &points,
            changes: &changes,
            unit: "us (lower is better)",
            label: "pipe-lat over versions",
        });
        let svg = chart.inline();
        let svg = svg.as_str();
        assert_eq!(svg.matches("<circle").count(), 5);
        // The line breaks at the missing version: two subpaths.
        let line = svg.split("class=\"c-line\" d=\"").nth(1).unwrap();
        let line = &line[..line.find('"').unwrap()];
        assert_eq!(line.matches('M').count(), 2, "{line}");
        assert_eq!(line.matches('L').count(), 3, "{line}");
        // One change marker, between the third and fourth version, red.
        assert_eq!(svg.matches("class=\"c-cp\"").count(), 1);
        assert!(svg.contains("<g class=\"v-regression\">"));
        assert!(svg.contains(">+10.1 %</text>"));
        let band = (WIDTH - LEFT - RIGHT) / 6.0;
        assert!(svg.contains(&format!(
            "d=\"M{} {}V",
            Px(LEFT + 3.0 * band),
            Px(TOP - 4.0)
        )));
        assert!(svg.contains("between 6.3 and &lt;script&gt;x&lt;/script&gt;"));
        assert!(!svg.contains("<script"));
        assert!(svg.contains("aria-label=\"pipe-lat over versions\""));
        // The higher level is drawn higher (smaller y).
        let ys: Vec<f64> = svg
            .split("<circle class=\"c-dot\"")
            .skip(1)
            .map(|c| {
                let cy = c.split("cy=\"").nth(1).unwrap();
                cy[..cy.find('"').unwrap()].parse().unwrap()
            })
            .collect();
        assert!(ys[3] < ys[0] && ys[4] < ys[2], "{ys:?}");
    }

    #[test]
    fn empty_and_many_versions() {
        let none = line_chart(&LineChart {
            versions: &[],
            points: &[],
            changes: &[],
            unit: "ns",
            label: "empty",
        });
        assert!(none.body.as_str().contains("no values"));
        let names: Vec<String> = (0..100).map(|i| format!("v{i}")).collect();
        let points: Vec<Option<LinePoint>> = (0..100).map(|i| point(50.0 + f64::from(i))).collect();
        let chart = line_chart(&LineChart {
            versions: &names,
            points: &points,
            changes: &[],
            unit: "ns",
            label: "many",
        });
        let svg = chart.body.as_str();
        assert_eq!(svg.matches("<circle").count(), 100);
        assert!(svg.matches("rotate(-40").count() <= MAX_LABELS);
        assert!(!svg.contains("NaN"));
    }
}
