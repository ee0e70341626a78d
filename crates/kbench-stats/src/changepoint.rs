//! Change points in a history: an ordered list of versions, each with its
//! samples. Three steps, all deterministic:
//!
//! 1. E-divisive means (Matteson and James, "A Nonparametric Approach for
//!    Multiple Change Point Analysis of Multivariate Data", JASA 109, 2014)
//!    with binary segmentation: within a segment, pick the split tau (and
//!    the end kappa of the part after it) that maximizes the energy
//!    statistic Q = mn/(m+n) (2 E|X-Y| - E|X-X'| - E|Y-Y'|) on log samples.
//!    Splits fall only on version boundaries.
//! 2. Significance by Welch's t-test on logs between the two adjacent parts
//!    instead of the paper's permutation test (no randomness): a split
//!    stays if p < 0.01 and the ratio of geometric means is beyond the
//!    threshold; then both halves are searched again.
//! 3. Final pass: every change point is re-tested between its neighbouring
//!    change points at p < 0.001 (the weakest failure is removed, then all
//!    are re-tested). A single interior version that differs from both
//!    neighbours while they agree is a spike that recovered, not a change:
//!    both its change points are removed.
//!
//! MongoDB runs the same E-divisive means on its performance CI (Daly et
//! al., "The Use of Change Point Detection to Identify Software Performance
//! Regressions in a Continuous Integration System", ICPE 2020).

use serde::{Deserialize, Serialize};

use crate::compare::{Better, Side, Verdict, Welch, welch};
use crate::{Estimate, Samples};

/// Knobs of the search.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChangePointOptions {
    /// Smallest change that counts, as a fraction (0.01 = 1 %).
    pub threshold: f64,
    /// Significance of a split during the search.
    pub p_search: f64,
    /// Significance a change point must keep in the final pass.
    pub p_final: f64,
}

impl Default for ChangePointOptions {
    fn default() -> ChangePointOptions {
        ChangePointOptions {
            threshold: 0.01,
            p_search: 0.01,
            p_final: 0.001,
        }
    }
}

/// A change between versions `index - 1` and `index`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChangePoint {
    /// The first version of the new level.
    pub index: usize,
    /// Geometric mean after / before (neighbouring segments), 95 % CI.
    pub ratio: Estimate,
    pub p_value: f64,
    /// `Regression` or `Improvement`.
    pub verdict: Verdict,
}

/// Change points of the series `versions`, in order.
pub fn change_points(
    versions: &[Side],
    better: Better,
    options: &ChangePointOptions,
) -> Vec<ChangePoint> {
    let series = Series::new(versions);
    let mut points = Vec::new();
    series.search(0, versions.len(), options, &mut points);
    points.sort_unstable();
    loop {
        series.prune(&mut points, options);
        if !series.remove_spike(&mut points, options) {
            break;
        }
    }
    let mut bounds = vec![0];
    bounds.extend(&points);
    bounds.push(versions.len());
    bounds
        .windows(3)
        .map(|w| {
            let test = series
                .test((w[0], w[1]), (w[1], w[2]))
                .expect("kept points were tested");
            let ratio = test.diff.map(f64::exp);
            let worse = (ratio.point > 1.0) == (better == Better::Lower);
            ChangePoint {
                index: w[1],
                ratio,
                p_value: test.p_value,
                verdict: if worse {
                    Verdict::Regression
                } else {
                    Verdict::Improvement
                },
            }
        })
        .collect()
}

/// Log samples of every version, with the sums the energy statistic needs.
struct Series<'a> {
    versions: &'a [Side],
    /// `cross[i][j]`: sum of |x - y| over x in versions < i, y in versions < j.
    cross: Vec<Vec<f64>>,
    /// Samples in versions < i.
    counts: Vec<usize>,
}

/// Versions [from, to).
type Range = (usize, usize);

impl<'a> Series<'a> {
    fn new(versions: &'a [Side]) -> Series<'a> {
        let g = versions.len();
        let mut cross = vec![vec![0.0; g + 1]; g + 1];
        for i in 0..g {
            let xs = versions[i].logs().as_slice();
            for j in 0..g {
                let ys = versions[j].logs().as_slice();
                let sum: f64 = xs
                    .iter()
                    .map(|x| ys.iter().map(|y| (x - y).abs()).sum::<f64>())
                    .sum();
                cross[i + 1][j + 1] = sum + cross[i][j + 1] + cross[i + 1][j] - cross[i][j];
            }
        }
        let mut counts = vec![0];
        for v in versions {
            counts.push(counts[counts.len() - 1] + v.logs().len());
        }
        Series {
            versions,
            cross,
            counts,
        }
    }

    /// Sum of |x - y| for x in versions `xs`, y in versions `ys`.
    fn distance(&self, (a, b): Range, (c, d): Range) -> f64 {
        self.cross[b][d] - self.cross[a][d] - self.cross[b][c] + self.cross[a][c]
    }

    /// Matteson-James Q between versions [s, tau) and [tau, kappa).
    fn energy(&self, s: usize, tau: usize, kappa: usize) -> f64 {
        let m = (self.counts[tau] - self.counts[s]) as f64;
        let n = (self.counts[kappa] - self.counts[tau]) as f64;
        let within = |count: f64, range| {
            if count > 1.0 {
                self.distance(range, range) / (count * (count - 1.0))
            } else {
                0.0
            }
        };
        let between = 2.0 * self.distance((s, tau), (tau, kappa)) / (m * n);
        m * n / (m + n) * (between - within(m, (s, tau)) - within(n, (tau, kappa)))
    }

    /// Welch's test on logs of `after` against `before`.
    fn test(&self, before: Range, after: Range) -> Option<Welch> {
        welch(&self.logs(before), &self.logs(after), 0.95)
    }

    fn logs(&self, (from, to): Range) -> Samples {
        let values = self.versions[from..to]
            .iter()
            .flat_map(|v| v.logs().as_slice().to_vec());
        Samples::new(values.collect()).expect("versions are non-empty and finite")
    }

    /// Whether `after` differs from `before`: p below `level` and the ratio
    /// beyond the threshold. Also returns p (1 when a part has one sample).
    fn differs(&self, before: Range, after: Range, level: f64, threshold: f64) -> (bool, f64) {
        let Some(test) = self.test(before, after) else {
            return (false, 1.0);
        };
        let ratio = test.diff.point.exp();
        let big = ratio >= 1.0 + threshold || ratio <= 1.0 - threshold;
        (test.p_value < level && big, test.p_value)
    }

    /// Binary segmentation of versions [s, e).
    fn search(&self, s: usize, e: usize, options: &ChangePointOptions, points: &mut Vec<usize>) {
        let mut best: Option<(f64, usize, usize)> = None;
        for tau in s + 1..e {
            for kappa in tau + 1..=e {
                let q = self.energy(s, tau, kappa);
                if best.is_none_or(|(top, _, _)| q > top) {
                    best = Some((q, tau, kappa));
                }
            }
        }
        let Some((_, tau, kappa)) = best else { return };
        if self
            .differs((s, tau), (tau, kappa), options.p_search, options.threshold)
            .0
        {
            points.push(tau);
            self.search(s, tau, options, points);
            self.search(tau, e, options, points);
        }
    }

    /// Drops change points that fail the final test against their
    /// neighbours, the largest p first, until all pass.
    fn prune(&self, points: &mut Vec<usize>, options: &ChangePointOptions) {
        loop {
            let mut weakest: Option<(f64, usize)> = None;
            for (i, &point) in points.iter().enumerate() {
                let (start, end) = self.neighbours(points, i);
                let (change, p) = self.differs(
                    (start, point),
                    (point, end),
                    options.p_final,
                    options.threshold,
                );
                if !change && weakest.is_none_or(|(top, _)| p > top) {
                    weakest = Some((p, i));
                }
            }
            let Some((_, i)) = weakest else { return };
            points.remove(i);
        }
    }

    /// Removes one spike: a single interior version whose neighbouring
    /// segments do not differ. Returns whether one was removed.
    fn remove_spike(&self, points: &mut Vec<usize>, options: &ChangePointOptions) -> bool {
        for i in 0..points.len().saturating_sub(1) {
            if points[i + 1] != points[i] + 1 {
                continue;
            }
            let (start, _) = self.neighbours(points, i);
            let (_, end) = self.neighbours(points, i + 1);
            let before = (start, points[i]);
            let after = (points[i + 1], end);
            if !self
                .differs(before, after, options.p_final, options.threshold)
                .0
            {
                points.drain(i..=i + 1);
                return true;
            }
        }
        false
    }

    /// The segment around change point `i`: previous and next boundaries.
    fn neighbours(&self, points: &[usize], i: usize) -> Range {
        let start = if i == 0 { 0 } else { points[i - 1] };
        let end = points.get(i + 1).copied().unwrap_or(self.versions.len());
        (start, end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Eight samples around `level` with a fixed +-0.5 % pattern.
    fn version(level: f64) -> Side {
        let pattern = [0.0, 0.5, -0.5, 0.3, -0.3, 0.1, -0.1, 0.0];
        let values = pattern.iter().map(|p| level * (1.0 + p / 100.0)).collect();
        Side::new(Samples::new(values).unwrap()).unwrap()
    }

    fn history(levels: &[f64]) -> Vec<Side> {
        levels.iter().map(|&l| version(l)).collect()
    }

    fn found(levels: &[f64], better: Better) -> Vec<(usize, Verdict)> {
        change_points(&history(levels), better, &ChangePointOptions::default())
            .iter()
            .map(|c| (c.index, c.verdict))
            .collect()
    }

    #[test]
    fn flat_history_has_no_change() {
        assert!(found(&[100.0; 10], Better::Lower).is_empty());
    }

    #[test]
    fn a_step() {
        let levels = [100.0, 100.0, 100.0, 100.0, 105.0, 105.0, 105.0, 105.0];
        assert_eq!(
            found(&levels, Better::Lower),
            vec![(4, Verdict::Regression)]
        );
        assert_eq!(
            found(&levels, Better::Higher),
            vec![(4, Verdict::Improvement)]
        );
    }

    #[test]
    fn a_change_at_the_last_version() {
        let mut levels = [100.0; 10];
        levels[9] = 103.0;
        assert_eq!(
            found(&levels, Better::Lower),
            vec![(9, Verdict::Regression)]
        );
    }

    #[test]
    fn a_one_version_spike_that_recovers_is_not_a_change() {
        let mut levels = [100.0; 10];
        levels[5] = 110.0;
        assert!(found(&levels, Better::Lower).is_empty());
    }

    #[test]
    fn regress_then_fix_two_versions_apart() {
        let mut levels = [100.0; 10];
        levels[4] = 105.0;
        levels[5] = 105.0;
        let changes = found(&levels, Better::Lower);
        assert_eq!(
            changes,
            vec![(4, Verdict::Regression), (6, Verdict::Improvement)]
        );
    }

    #[test]
    fn changes_below_the_threshold_are_ignored() {
        let levels = [100.0, 100.0, 100.0, 100.0, 100.5, 100.5, 100.5, 100.5];
        assert!(found(&levels, Better::Lower).is_empty());
    }

    #[test]
    fn tiny_inputs() {
        assert!(found(&[], Better::Lower).is_empty());
        assert!(found(&[100.0], Better::Lower).is_empty());
        let single = |v: f64| Side::new(Samples::new(vec![v]).unwrap()).unwrap();
        let one_each = [single(1.0), single(2.0)];
        assert!(change_points(&one_each, Better::Lower, &ChangePointOptions::default()).is_empty());
    }
}
