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
//!    instead of the paper's permutation test (no randomness), each part's
//!    variance taken as at least the other's (the search favours parts
//!    that are quiet by chance; see `Series::test`): a split stays if
//!    p < 0.01 and the ratio of geometric means is beyond the threshold;
//!    then both halves are searched again.
//! 3. Final pass: every change point is re-tested between its neighbouring
//!    change points at p < 0.001 (the weakest failure is removed, then all
//!    are re-tested). A single interior version that differs from both
//!    neighbours while they agree is a spike that recovered, not a change:
//!    both its change points are removed.
//!
//! Cost: the pairwise distance sums are O(N^2) in samples, once (2-D
//! prefix sums then give any segment's in O(1)); each searched segment of
//! g versions costs O(g^2). 500 versions of one sample: about 1 ms.
//!
//! MongoDB runs the same E-divisive means on its performance CI (Daly et
//! al., "The Use of Change Point Detection to Identify Software Performance
//! Regressions in a Continuous Integration System", ICPE 2020).

use serde::{Deserialize, Serialize};

use crate::Estimate;
use crate::compare::{Better, Side, Verdict, Welch, welch_from};

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

/// Log samples of every version, with the sums the energy statistic and
/// the tests need. Logs are centred on their overall mean (sums of squares
/// stay small; a shift changes no statistic).
struct Series {
    versions: usize,
    /// `cross[i * stride + j]`: sum of |x - y| over x in versions < i, y in
    /// versions < j. Symmetric.
    cross: Vec<f64>,
    stride: usize,
    /// Observations in versions < i.
    counts: Vec<usize>,
    /// Sum and sum of squares of the (centred) logs in versions < i.
    sums: Vec<f64>,
    squares: Vec<f64>,
    /// Whether the logs in versions < i are all equal, tracked per version
    /// so that constant data gives an exact zero variance.
    constant: Vec<bool>,
    /// `cross[i][i]`.
    diagonal: Vec<f64>,
    /// 1 / k and 1 / (k (k - 1)) (0 for k < 2) for k up to all samples.
    inverse: Vec<f64>,
    inverse_pairs: Vec<f64>,
}

/// Versions [from, to).
type Range = (usize, usize);

/// Count, mean and variance (n - 1) of the logs of some versions.
#[derive(Debug, Clone, Copy)]
struct Moments {
    n: usize,
    mean: f64,
    variance: f64,
}

impl Series {
    fn new(versions: &[Side]) -> Series {
        let g = versions.len();
        let all: Vec<&[f64]> = versions.iter().map(|v| v.logs().as_slice()).collect();
        let total: usize = all.iter().map(|v| v.len()).sum();
        let centre = if total == 0 {
            0.0
        } else {
            all.iter().flat_map(|v| v.iter()).sum::<f64>() / total as f64
        };
        let logs: Vec<Vec<f64>> = all
            .iter()
            .map(|v| v.iter().map(|x| x - centre).collect())
            .collect();
        let stride = g + 1;
        // 2-D prefix sums of the pairwise distance sums, row by row:
        // cross[i+1][j+1] = cross[i][j+1] + sum over k <= j of D(i, k).
        let mut cross = vec![0.0; stride * stride];
        let single: Option<Vec<f64>> = logs.iter().map(|v| (v.len() == 1).then(|| v[0])).collect();
        for i in 0..g {
            let (above, row) = cross.split_at_mut((i + 1) * stride);
            let above = &above[i * stride..];
            let mut running = 0.0;
            match &single {
                // One sample per version (the common long series): no inner loops.
                Some(values) => {
                    let x = values[i];
                    for j in 0..g {
                        running += (x - values[j]).abs();
                        row[j + 1] = above[j + 1] + running;
                    }
                }
                None => {
                    for j in 0..g {
                        running += logs[i]
                            .iter()
                            .map(|x| logs[j].iter().map(|y| (x - y).abs()).sum::<f64>())
                            .sum::<f64>();
                        row[j + 1] = above[j + 1] + running;
                    }
                }
            }
        }
        let mut counts = vec![0];
        let mut sums = vec![0.0];
        let mut squares = vec![0.0];
        let mut constant = vec![true];
        for v in &logs {
            counts.push(counts[counts.len() - 1] + v.len());
            sums.push(sums[sums.len() - 1] + v.iter().sum::<f64>());
            squares.push(squares[squares.len() - 1] + v.iter().map(|x| x * x).sum::<f64>());
            constant.push(v.iter().all(|x| *x == v[0]));
        }
        let diagonal = (0..stride).map(|i| cross[i * stride + i]).collect();
        let total = counts[g];
        let inverse = (0..=total).map(|k| 1.0 / k.max(1) as f64).collect();
        let inverse_pairs = (0..=total)
            .map(|k| {
                if k < 2 {
                    0.0
                } else {
                    1.0 / (k * (k - 1)) as f64
                }
            })
            .collect();
        Series {
            versions: g,
            cross,
            diagonal,
            inverse,
            inverse_pairs,
            stride,
            counts,
            sums,
            squares,
            constant,
        }
    }

    fn cross(&self, i: usize, j: usize) -> f64 {
        self.cross[i * self.stride + j]
    }

    /// Sum of |x - y| for x in versions `xs`, y in versions `ys`.
    fn distance(&self, (a, b): Range, (c, d): Range) -> f64 {
        self.cross(b, d) - self.cross(a, d) - self.cross(b, c) + self.cross(a, c)
    }

    /// Matteson-James Q between versions [s, tau) and [tau, kappa).
    #[cfg(test)]
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

    /// The (tau, kappa) with the largest Q in versions [s, e): the energy of
    /// [`Series::energy`] rewritten as (2 D(X,Y) - mn (W(X) + W(Y))) / (m+n),
    /// W the mean within-part distance, with the rows of `cross` read in
    /// order and reciprocals from tables (no division in the inner loop).
    fn best_split(&self, s: usize, e: usize) -> Option<(usize, usize)> {
        let mut best: Option<(f64, usize, usize)> = None;
        let row_s = &self.cross[s * self.stride..(s + 1) * self.stride];
        for tau in s + 1..e {
            let row_tau = &self.cross[tau * self.stride..(tau + 1) * self.stride];
            let m = self.counts[tau] - self.counts[s];
            let within_x = self.distance((s, tau), (s, tau)) * self.inverse_pairs[m];
            let (c_tau_tau, c_s_tau) = (row_tau[tau], row_s[tau]);
            let base = self.counts[tau];
            for kappa in tau + 1..=e {
                let n = self.counts[kappa] - base;
                let between = row_tau[kappa] - row_s[kappa] - c_tau_tau + c_s_tau;
                let within_y = (self.diagonal[kappa] - 2.0 * row_tau[kappa] + c_tau_tau)
                    * self.inverse_pairs[n];
                let mn = (m * n) as f64;
                let q = (2.0 * between - mn * (within_x + within_y)) * self.inverse[m + n];
                if best.is_none_or(|(top, _, _)| q > top) {
                    best = Some((q, tau, kappa));
                }
            }
        }
        best.map(|(_, tau, kappa)| (tau, kappa))
    }

    fn moments(&self, (from, to): Range) -> Moments {
        let n = self.counts[to] - self.counts[from];
        let sum = self.sums[to] - self.sums[from];
        let mean = sum / n as f64;
        let constant = (from..to).all(|v| self.constant[v + 1])
            && (from + 1..to).all(|v| self.version_first(v) == self.version_first(from));
        let variance = if n < 2 || constant {
            0.0
        } else {
            ((self.squares[to] - self.squares[from] - sum * mean) / (n - 1) as f64).max(0.0)
        };
        Moments { n, mean, variance }
    }

    /// The mean of a constant version (its first log).
    fn version_first(&self, v: usize) -> f64 {
        let n = self.counts[v + 1] - self.counts[v];
        (self.sums[v + 1] - self.sums[v]) / n as f64
    }

    /// Welch's test on logs of `after` against `before` (see
    /// `compare::welch`), except that each segment's variance is at least
    /// the other's. The search picks the split with the largest energy,
    /// and the energy grows as a segment's spread shrinks: a short segment
    /// that is quiet by chance would otherwise pass for a sure change (on
    /// one-sample versions, 1 in 7 flat series of 500 points alarmed).
    /// `None` when a side has one observation.
    fn test(&self, before: Range, after: Range) -> Option<Welch> {
        let (a, b) = (self.moments(before), self.moments(after));
        if a.n < 2 || b.n < 2 {
            return None;
        }
        let variance = a.variance.max(b.variance);
        Some(welch_from(
            (a.mean, variance, a.n),
            (b.mean, variance, b.n),
            0.95,
        ))
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
        let Some((tau, kappa)) = self.best_split(s, e) else {
            return;
        };
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
        let end = points.get(i + 1).copied().unwrap_or(self.versions);
        (start, end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Samples;

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
    fn best_split_is_the_largest_energy() {
        // Uneven sample counts, a level change and some structure.
        let mut x = 0.3f64;
        let versions: Vec<Side> = (0..9)
            .map(|v| {
                let values = (0..1 + v % 4)
                    .map(|_| {
                        x = (x * 7.77).fract();
                        (if v >= 5 { 110.0 } else { 100.0 }) * (1.0 + 0.02 * x)
                    })
                    .collect();
                Side::new(Samples::new(values).unwrap()).unwrap()
            })
            .collect();
        let series = Series::new(&versions);
        for (s, e) in [(0, 9), (2, 7), (0, 2), (4, 9)] {
            let mut best = (f64::NEG_INFINITY, 0, 0);
            for tau in s + 1..e {
                for kappa in tau + 1..=e {
                    let q = series.energy(s, tau, kappa);
                    if q > best.0 {
                        best = (q, tau, kappa);
                    }
                }
            }
            assert_eq!(series.best_split(s, e), Some((best.1, best.2)), "{s}..{e}");
        }
        assert_eq!(series.best_split(3, 4), None);
    }

    #[test]
    fn a_short_segment_borrows_its_neighbours_noise() {
        // Two single-sample versions that agree closely, 2 % below a noisy
        // rest: on their own variance they would look like a sure change.
        let mut levels: Vec<f64> = (0..20)
            .map(|i| 100.0 * (1.0 + 0.01 * ((i * 37 % 11) as f64 - 5.0) / 3.0))
            .collect();
        levels[10] = 98.0;
        levels[11] = 98.01;
        let single = |v: f64| Side::new(Samples::new(vec![v]).unwrap()).unwrap();
        let versions: Vec<Side> = levels.iter().map(|&l| single(l)).collect();
        let series = Series::new(&versions);
        let test = series.test((0, 10), (10, 12)).unwrap();
        assert!(test.p_value > 0.01, "{test:?}");
        assert!(change_points(&versions, Better::Lower, &ChangePointOptions::default()).is_empty());
    }

    #[test]
    fn moments_match_the_samples() {
        let versions = history(&[100.0, 104.0, 104.0]);
        let series = Series::new(&versions);
        let m = series.moments((1, 3));
        let logs: Vec<f64> = versions[1..]
            .iter()
            .flat_map(|v| v.logs().as_slice().to_vec())
            .collect();
        let exact = Samples::new(logs).unwrap();
        assert_eq!(m.n, 16);
        assert!((m.variance - exact.variance().unwrap()).abs() < 1e-15);
        let constant = [Side::new(Samples::new(vec![3.0; 4]).unwrap()).unwrap()];
        assert_eq!(Series::new(&constant).moments((0, 1)).variance, 0.0);
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
