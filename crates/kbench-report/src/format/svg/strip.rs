//! The raw samples of each identifier as a box plot (quartiles, median,
//! whiskers to the furthest sample within 1.5 IQR) with the samples drawn
//! over it as a jittered strip. The box uses every sample; the strip at
//! most [`MAX_POINTS`], evenly spaced order statistics of the sorted
//! samples (deterministic, and the same shape), so that a page of 200
//! metrics stays small. The axis spans the samples, not zero.

use super::chart::{Chart, truncate, x_axis};
use super::scale::{Axis, Linear};
use crate::markup::{Markup, Px, markup};
use std::fmt::Write;

pub const WIDTH: f64 = 480.0;
/// Samples drawn per identifier at most.
pub const MAX_POINTS: usize = 40;
const PAD: f64 = 8.0;
/// Between the chart's edge and the axis ends: room for half a tick label.
const SIDE: f64 = 24.0;
const ROW: f64 = 40.0;
const BAND: f64 = 16.0;
const AXIS: f64 = 30.0;

/// One identifier's samples: plain data.
#[derive(Debug, Clone, PartialEq)]
pub struct Distribution<'a> {
    pub label: &'a str,
    pub values: &'a [f64],
    /// CSS class of the samples: `base` or a verdict's class.
    pub class: &'static str,
}

/// Quartiles (linear interpolation between order statistics) and the
/// whisker ends of sorted finite `values`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BoxStats {
    pub q1: f64,
    pub median: f64,
    pub q3: f64,
    pub low: f64,
    pub high: f64,
}

impl BoxStats {
    pub fn of(sorted: &[f64]) -> Option<BoxStats> {
        if sorted.is_empty() {
            return None;
        }
        let q = |p: f64| {
            let h = p * (sorted.len() - 1) as f64;
            let (i, frac) = (h.floor() as usize, h - h.floor());
            let next = sorted[(i + 1).min(sorted.len() - 1)];
            sorted[i] + frac * (next - sorted[i])
        };
        let (q1, median, q3) = (q(0.25), q(0.5), q(0.75));
        let fence = 1.5 * (q3 - q1);
        let low = sorted
            .iter()
            .copied()
            .find(|v| *v >= q1 - fence)
            .unwrap_or(q1);
        let high = sorted
            .iter()
            .rev()
            .copied()
            .find(|v| *v <= q3 + fence)
            .unwrap_or(q3);
        Some(BoxStats {
            q1,
            median,
            q3,
            low,
            high,
        })
    }
}

/// At most `max` of the sorted `values`: evenly spaced order statistics,
/// the smallest and largest included.
pub fn thin(sorted: &[f64], max: usize) -> Vec<f64> {
    if sorted.len() <= max {
        return sorted.to_vec();
    }
    if max < 2 {
        return sorted[sorted.len() / 2..]
            .iter()
            .take(max)
            .copied()
            .collect();
    }
    let last = (sorted.len() - 1) as f64;
    (0..max)
        .map(|i| sorted[(i as f64 * last / (max - 1) as f64).round() as usize])
        .collect()
}

/// The chart of `rows`; `unit` captions the axis.
pub fn strip_chart(rows: &[Distribution<'_>], unit: &str, label: &str) -> Chart {
    let sorted: Vec<Vec<f64>> = rows
        .iter()
        .map(|r| {
            let mut v: Vec<f64> = r.values.iter().copied().filter(|v| v.is_finite()).collect();
            v.sort_by(f64::total_cmp);
            v
        })
        .collect();
    let lo = sorted
        .iter()
        .filter_map(|v| v.first())
        .copied()
        .fold(f64::INFINITY, f64::min);
    let hi = sorted
        .iter()
        .filter_map(|v| v.last())
        .copied()
        .fold(f64::NEG_INFINITY, f64::max);
    let axis = Axis::new(lo, hi, 5);
    let x = Linear {
        d0: axis.lo,
        d1: axis.hi,
        r0: SIDE,
        r1: WIDTH - SIDE,
    };
    let plot_bottom = ROW * rows.len() as f64 + 4.0;
    let mut body = Markup::new();
    body.push(&x_axis(&axis, &x, plot_bottom, unit));
    for (i, (row, values)) in rows.iter().zip(&sorted).enumerate() {
        let y0 = ROW * i as f64 + 4.0;
        let band = y0 + 18.0;
        let mid = band + BAND / 2.0;
        let shown = thin(values, MAX_POINTS);
        let count = if shown.len() < values.len() {
            format!("n = {} ({} drawn)", values.len(), shown.len())
        } else {
            format!("n = {}", values.len())
        };
        let mut g = Markup::new();
        g.push(&markup!(
            "<text class=\"c-t\" x=\"{{x}}\" y=\"{{y}}\">{{label}}</text><text class=\"c-m c-r\" x=\"{{r}}\" y=\"{{y}}\">{{count}}</text>",
            x = Px(PAD),
            r = Px(WIDTH - PAD),
            y = Px(y0 + 11.0),
            label = truncate(row.label, 40),
            count = count,
        ));
        match BoxStats::of(values) {
            None => g.push(&markup!(
                "<text class=\"c-m\" x=\"{{x}}\" y=\"{{y}}\">no samples</text>",
                x = Px(PAD),
                y = Px(mid + 4.0),
            )),
            Some(b) => {
                let (q1, q3, med) = (x.at(b.q1), x.at(b.q3), x.at(b.median));
                g.push(&markup!(
                    "<path class=\"c-wh\" d=\"M{{lo}} {{mid}}H{{q1}}M{{q3}} {{mid}}H{{hi}}M{{lo}} {{t}}v8M{{hi}} {{t}}v8\"/>\
                     <rect class=\"c-box\" x=\"{{q1}}\" y=\"{{y}}\" width=\"{{w}}\" height=\"{{h}}\"/>\
                     <path class=\"c-med\" d=\"M{{med}} {{y}}v{{h}}\"/>",
                    lo = Px(x.at(b.low)),
                    hi = Px(x.at(b.high)),
                    q1 = Px(q1),
                    q3 = Px(q3),
                    med = Px(med),
                    mid = Px(mid),
                    t = Px(mid - 4.0),
                    y = Px(band),
                    w = Px(q3 - q1),
                    h = Px(BAND),
                ));
                g.push(&markup!(
                    "<path class=\"c-pts {{class}}\" d=\"{{d}}\"/>",
                    class = row.class,
                    d = points_path(&shown, &x, mid),
                ));
                g.push(&markup!(
                    "<title>{{t}}</title>",
                    t = format!(
                        "{}: median {}, quartiles {} to {}, whiskers {} to {}",
                        row.label,
                        kbench_analysis::number::value(b.median),
                        kbench_analysis::number::value(b.q1),
                        kbench_analysis::number::value(b.q3),
                        kbench_analysis::number::value(b.low),
                        kbench_analysis::number::value(b.high),
                    ),
                ));
            }
        }
        body.push(&markup!("<g>{{g}}</g>", g = g));
    }
    Chart {
        width: WIDTH,
        height: plot_bottom + AXIS,
        label: label.to_string(),
        body,
    }
}

/// The points as zero-length subpaths (drawn as dots by round line caps)
/// at whole coordinates, each moved to relative to the one before: about 7
/// bytes a point. Jittered vertically by a fixed low-discrepancy sequence,
/// so the same data gives the same picture.
fn points_path(values: &[f64], x: &Linear, mid: f64) -> String {
    let mut d = String::with_capacity(values.len() * 8);
    let mut at: Option<(i64, i64)> = None;
    for (i, &v) in values.iter().enumerate() {
        let jitter = ((i as f64 * 0.618_034).fract() - 0.5) * (BAND - 4.0);
        let (px, py) = (x.at(v).round() as i64, (mid + jitter).round() as i64);
        let _ = match at {
            None => write!(d, "M{px} {py}h0"),
            Some((ax, ay)) => write!(d, "m{} {}h0", px - ax, py - ay),
        };
        at = Some((px, py));
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quartiles_and_whiskers() {
        let v: Vec<f64> = (1..=9).map(f64::from).chain([100.0]).collect();
        let b = BoxStats::of(&v).unwrap();
        assert_eq!((b.q1, b.median, b.q3), (3.25, 5.5, 7.75));
        assert_eq!((b.low, b.high), (1.0, 9.0), "100 is beyond the fence");
        assert!(BoxStats::of(&[]).is_none());
        let one = BoxStats::of(&[4.0]).unwrap();
        assert_eq!((one.q1, one.q3, one.low, one.high), (4.0, 4.0, 4.0, 4.0));
    }

    #[test]
    fn thins_deterministically_keeping_the_ends() {
        let v: Vec<f64> = (0..1000).map(f64::from).collect();
        let t = thin(&v, 40);
        assert_eq!(t.len(), 40);
        assert_eq!((t[0], t[39]), (0.0, 999.0));
        assert_eq!(t, thin(&v, 40));
        assert_eq!(thin(&v[..10], 40).len(), 10);
        assert!(thin(&[], 40).is_empty());
    }

    #[test]
    fn draws_at_most_max_points_per_row() {
        let many: Vec<f64> = (0..500).map(|i| 100.0 + f64::from(i % 7)).collect();
        let few = [5.0, 5.1, 5.2];
        let rows = [
            Distribution {
                label: "a",
                values: &many,
                class: "base",
            },
            Distribution {
                label: "<i>b</i>",
                values: &few,
                class: "v-regression",
            },
            Distribution {
                label: "none",
                values: &[],
                class: "v-none",
            },
        ];
        let chart = strip_chart(&rows, "us", "t");
        let svg = chart.body.as_str();
        assert_eq!(svg.matches("h0").count(), MAX_POINTS + 3);
        assert!(svg.contains(&format!("n = 500 ({MAX_POINTS} drawn)")));
        assert!(svg.contains("no samples"));
        assert!(svg.contains("&lt;i&gt;b&lt;/i&gt;"));
        assert_eq!(svg.matches("class=\"c-box\"").count(), 2);
    }
}
