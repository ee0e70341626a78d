//! Change points in a history: an ordered list of versions, each with its
//! observations (the raw samples of one round, or the means of several).
//! The unit is the version: each contributes the mean of its log
//! observations, as the samples of one version share what differs between
//! versions (drift between invocations, the machine's slow spells) and
//! cannot be counted as independent across versions. All deterministic:
//!
//! 1. The noise of a version mean comes from the series itself: a robust
//!    scale of the successive differences of the version means, at least
//!    the versions' own spread (see [`noise`]). So a version-to-version
//!    drift of 1 % is noise, not a change; fewer than three versions and
//!    no spread within them decide nothing.
//! 2. E-divisive means (Matteson and James, "A Nonparametric Approach for
//!    Multiple Change Point Analysis of Multivariate Data", JASA 109, 2014)
//!    on the version means, with binary segmentation: within a segment,
//!    pick the split tau (and the end kappa of the part after it) that
//!    maximizes the energy statistic Q = mn/(m+n) (2 E|X-Y| - E|X-X'| -
//!    E|Y-Y'|).
//! 3. The split is tested by a t-test of the difference of the mean version
//!    means of the two adjacent parts, with the series noise: standard
//!    error sigma sqrt(1/m + 1/n), the noise's degrees of freedom. It stays
//!    if p < 0.01, |t| is at least 1.3 sqrt(2 ln g) for g versions (a
//!    search tries ~g splits; see [`SCAN_CONSTANT`]) and the 95 % CI of the
//!    ratio lies wholly beyond the threshold, as `compare` calls a REGRESSION or IMPROVEMENT (a CI that
//!    straddles it would be INCONCLUSIVE there); then both halves are
//!    searched again.
//! 4. Final pass: every change point is re-tested between its neighbouring
//!    change points at p < 0.001 (the weakest failure is removed, then all
//!    are re-tested). A lone change point is held to the scan threshold of
//!    step 3; with two or more, each one's test has a segment that ends at
//!    another change point, both ends chosen by the search: one of the
//!    ~g^2 / 2 (tau, kappa) pairs it tries, so the threshold counts those,
//!    1.3 sqrt(2 ln (g (g - 1) / 2)) (see [`Series::prune`]). A single
//!    interior version that differs from both neighbours while they agree
//!    is a spike that recovered, not a change: both its change points are
//!    removed.
//!
//! Why the pair threshold: with only the single split's, 500 versions of
//! one sample with 1 % noise gave a false pair of change points around a
//! chance block of 2-10 versions in about 4 of 1,000 series (|t| 4.6-5.7
//! against 4.58; `examples/changepoint_speed.rs --list` prints them), and a
//! step now and then came split in two around a short block. The largest of
//! n independent standard normals grows like sqrt(2 ln n): Fryzlewicz's
//! threshold takes n = g splits, a pair of change points is one of n =
//! g (g - 1) / 2 blocks (a Bonferroni count, conservative as the blocks
//! overlap). Blocks whose level leaves and comes back are the epidemic
//! alternative (Yao, "Tests for change-points with epidemic alternatives",
//! Biometrika 80, 1993), whose scan also runs over both ends of the block.
//! The cost is power on the shortest blocks only: a +5 % regression
//! lasting exactly 2 of 500 single-sample versions (|t| about 7) is found
//! about half the time instead of 9 in 10; 3 versions or more about as
//! before (see the test `short_blocks_in_a_long_series`). Short series are
//! unchanged in practice, as p < 0.001 at their few degrees of freedom is
//! the stricter bar there (no accuracy test's figure got worse).
//!
//! Cost: each searched segment of g versions costs O(g^2), computed
//! incrementally in buffers of length g that stay in the cache (no table
//! of all pairs), in loops the compiler vectorizes. 500 versions: about
//! 0.35 ms on one core of this project's machine (10,000 such series in
//! 1.6 s on 2 threads with `examples/changepoint_speed.rs`, which also
//! scores what it finds against the steps it planted).
//!
//! MongoDB runs the same E-divisive means on its performance CI (Daly et
//! al., "The Use of Change Point Detection to Identify Software Performance
//! Regressions in a Continuous Integration System", ICPE 2020).

mod noise;

use kbench_model::Direction;
use serde::{Deserialize, Serialize};

use crate::Estimate;
use crate::compare::{Side, Verdict};
use crate::dist::{t_quantile, t_two_sided};
use noise::Noise;

/// Knobs of the search.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChangePointOptions {
    /// Smallest change that counts, as a fraction (0.01 = 1 %): the whole
    /// 95 % CI of a change must lie beyond it.
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
    /// Geometric mean of the version means after / before (neighbouring
    /// segments), 95 % CI; `n` counts the versions of both segments.
    pub ratio: Estimate,
    pub p_value: f64,
    /// `Regression` or `Improvement`.
    pub verdict: Verdict,
}

/// Change points of the series `versions`, in order.
pub fn change_points(
    versions: &[Side],
    better: Direction,
    options: &ChangePointOptions,
) -> Vec<ChangePoint> {
    let Some(series) = Series::new(versions) else {
        return Vec::new();
    };
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
            let test = series.test((w[0], w[1]), (w[1], w[2]));
            let ratio = test.diff.map(f64::exp);
            let worse = (ratio.point > 1.0) == (better == Direction::Lower);
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

/// The version means (of logs) with the sums the energy statistic and the
/// tests need, and the series noise.
struct Series {
    versions: usize,
    /// The version means (of logs).
    means: Vec<f64>,
    /// Sum of the means of versions < i.
    sums: Vec<f64>,
    /// 1 / k and 1 / (k (k - 1)) (0 for k < 2) for k up to all versions.
    inverse: Vec<f64>,
    inverse_pairs: Vec<f64>,
    /// k as a float, for k up to all versions.
    counts: Vec<f64>,
    /// Standard deviation of one version mean, and its degrees of freedom.
    sigma: f64,
    df: f64,
    /// Student's t quantile of a two-sided 95 % CI at the noise's df.
    quantile: f64,
    /// Smallest |t| of a change: see [`SCAN_CONSTANT`].
    min_t: f64,
    /// The same for a change next to another: see [`Series::prune`].
    min_t_pair: f64,
}

/// Versions [from, to).
type Range = (usize, usize);

/// The number of blocks [a, b) of g versions, g (g - 1) / 2 (at least 1):
/// the (tau, kappa) pairs a search of the whole series tries.
fn pairs(g: usize) -> f64 {
    ((g * g.saturating_sub(1)) as f64 / 2.0).max(1.0)
}

/// A test of one segment against the one before it.
#[derive(Debug, Clone, Copy)]
struct Test {
    /// Mean log of the later segment less the earlier's, 95 % CI.
    diff: Estimate,
    /// The difference over its standard error.
    t: f64,
    p_value: f64,
}

/// The constant C of the threshold C sqrt(2 ln g) on the standardized
/// difference, for g versions: the largest of the ~g splits a search tries
/// on a flat series of g versions grows like sqrt(2 ln g) (Fryzlewicz,
/// "Wild binary segmentation for multiple change-point detection", Annals
/// of Statistics 42, 2014, whose default C is 1.3). It only bites on long
/// series (above p = 0.001 from about 60 versions): with 500 versions of one
/// sample, a block of 4 versions 2 % off by chance passed p < 0.001.
const SCAN_CONSTANT: f64 = 1.3;

impl Series {
    /// `None` when the noise cannot be estimated.
    fn new(versions: &[Side]) -> Option<Series> {
        let noise = Noise::of(versions)?;
        let means: Vec<f64> = versions.iter().map(|v| v.logs().mean()).collect();
        let g = means.len();
        let mut sums = vec![0.0];
        for m in &means {
            sums.push(sums[sums.len() - 1] + m);
        }
        let inverse = (0..=g).map(|k| 1.0 / k.max(1) as f64).collect();
        let inverse_pairs = (0..=g)
            .map(|k| {
                if k < 2 {
                    0.0
                } else {
                    1.0 / (k * (k - 1)) as f64
                }
            })
            .collect();
        let counts = (0..=g).map(|k| k as f64).collect();
        Some(Series {
            versions: g,
            means,
            sums,
            inverse,
            inverse_pairs,
            counts,
            sigma: noise.variance.sqrt(),
            df: noise.df,
            quantile: t_quantile(0.975, noise.df),
            min_t: SCAN_CONSTANT * (2.0 * (g as f64).ln()).sqrt(),
            min_t_pair: SCAN_CONSTANT * (2.0 * pairs(g).ln()).sqrt(),
        })
    }

    /// Matteson-James Q between versions [s, tau) and [tau, kappa), from
    /// its definition: the check of [`Series::best_split`].
    #[cfg(test)]
    fn energy(&self, s: usize, tau: usize, kappa: usize) -> f64 {
        let distance = |(a, b): Range, (c, d): Range| -> f64 {
            let (xs, ys) = (&self.means[a..b], &self.means[c..d]);
            xs.iter()
                .map(|x| ys.iter().map(|y| (x - y).abs()).sum::<f64>())
                .sum()
        };
        let m = (tau - s) as f64;
        let n = (kappa - tau) as f64;
        let within = |count: f64, range| {
            if count > 1.0 {
                distance(range, range) / (count * (count - 1.0))
            } else {
                0.0
            }
        };
        let between = 2.0 * distance((s, tau), (tau, kappa)) / (m * n);
        m * n / (m + n) * (between - within(m, (s, tau)) - within(n, (tau, kappa)))
    }

    /// The (tau, kappa) with the largest Q in versions [s, e): the energy of
    /// [`Series::energy`] rewritten as (2 D(X,Y) - mn (W(X) + W(Y))) / (m+n),
    /// W the mean within-part distance, D a sum of distances. Incremental,
    /// in buffers of the segment's length (no table of all pairs): with
    /// versions counted from s, `within[k]` is D over [0, k) x [0, k), and
    /// as tau grows `row[kappa]` is kept at D over [0, tau) x [0, kappa)
    /// for kappa >= tau, each step adding one version's distances. For each
    /// tau the Q of every kappa goes into a buffer in a loop without
    /// branches (which the compiler vectorizes), then the row's largest is
    /// found and, when it beats the best so far, its first place: the first
    /// of equal ones, as a scan in order would. Reciprocals come from
    /// tables (no division in the inner loops).
    ///
    /// On an x86_64 CPU with AVX2 the same code runs compiled for it
    /// ([`Series::best_split_avx2`]).
    fn best_split(&self, s: usize, e: usize) -> Option<(usize, usize)> {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: this CPU runs AVX2 instructions (checked just above).
            return unsafe { self.best_split_avx2(s, e) };
        }
        self.best_split_scan(s, e)
    }

    /// [`Series::best_split_scan`] compiled for AVX2: four lanes an
    /// instruction instead of SSE2's two in its vectorized loops. The
    /// operations and their order are the code's, so the energies are the
    /// same to the bit on either path (no fused multiply-add: the code
    /// asks for none).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn best_split_avx2(&self, s: usize, e: usize) -> Option<(usize, usize)> {
        self.best_split_scan(s, e)
    }

    /// [`Series::best_split`]'s scan, inlined into each path that compiles it.
    #[inline(always)]
    fn best_split_scan(&self, s: usize, e: usize) -> Option<(usize, usize)> {
        let means = &self.means[s..e];
        let len = means.len();
        // left[k]: the distances of version k to those before it.
        let left: Vec<f64> = (0..len)
            .map(|k| distance_sum(means[k], &means[..k]))
            .collect();
        let mut within = vec![0.0; len + 1];
        for k in 0..len {
            within[k + 1] = within[k] + 2.0 * left[k];
        }
        let mut row = vec![0.0; len + 1];
        let mut steps = vec![0.0; len];
        let mut energies = vec![0.0; len];
        let mut best: Option<(f64, usize, usize)> = None;
        for tau in 1..len {
            // Version tau - 1 joins the first part: add its distances to
            // versions < kappa, for kappa >= tau.
            let joining = means[tau - 1];
            let steps = &mut steps[..len - tau];
            distance_prefix(joining, &means[tau..], steps);
            row[tau] += left[tau - 1];
            for (cell, step) in row[tau + 1..].iter_mut().zip(steps.iter()) {
                *cell += left[tau - 1] + step;
            }
            let c_tau_tau = row[tau];
            let within_x = within[tau] * self.inverse_pairs[tau];
            let m = self.counts[tau];
            let q = &mut energies[..len - tau];
            // kappa = tau + 1 + k, n = k + 1.
            for (k, ((q, &c_tau), &within_kappa)) in q
                .iter_mut()
                .zip(&row[tau + 1..])
                .zip(&within[tau + 1..])
                .enumerate()
            {
                let between = c_tau - c_tau_tau;
                let within_y = (within_kappa - 2.0 * c_tau + c_tau_tau) * self.inverse_pairs[k + 1];
                let mn = m * self.counts[k + 1];
                *q = (2.0 * between - mn * (within_x + within_y)) * self.inverse[tau + k + 1];
            }
            let top = largest(q);
            if best.is_none_or(|(best_q, _, _)| top > best_q) {
                let k = q.iter().position(|&v| v == top).unwrap_or(0);
                best = Some((top, s + tau, s + tau + 1 + k));
            }
        }
        best.map(|(_, tau, kappa)| (tau, kappa))
    }

    /// Mean of the version means in `range`.
    fn mean(&self, (from, to): Range) -> f64 {
        (self.sums[to] - self.sums[from]) / (to - from) as f64
    }

    /// `after` against `before`, with the series noise.
    fn test(&self, before: Range, after: Range) -> Test {
        let (m, n) = ((before.1 - before.0) as f64, (after.1 - after.0) as f64);
        let diff = self.mean(after) - self.mean(before);
        let se = self.sigma * (1.0 / m + 1.0 / n).sqrt();
        let half = self.quantile * se;
        Test {
            diff: Estimate {
                point: diff,
                ci_low: diff - half,
                ci_high: diff + half,
                n: (m + n) as usize,
            },
            t: diff / se,
            p_value: t_two_sided(diff / se, self.df),
        }
    }

    /// Whether `after` differs from `before`: p below `level`, |t| at
    /// least the scan threshold `min_t` and the whole CI of the ratio
    /// beyond the threshold. Also returns p.
    fn differs(
        &self,
        (before, after): (Range, Range),
        min_t: f64,
        level: f64,
        threshold: f64,
    ) -> (bool, f64) {
        let test = self.test(before, after);
        let ratio = test.diff.map(f64::exp);
        let beyond = ratio.ci_low > 1.0 + threshold || ratio.ci_high < 1.0 - threshold;
        let significant = test.p_value < level && test.t.abs() >= min_t;
        (significant && beyond, test.p_value)
    }

    /// Binary segmentation of versions [s, e).
    fn search(&self, s: usize, e: usize, options: &ChangePointOptions, points: &mut Vec<usize>) {
        let Some((tau, kappa)) = self.best_split(s, e) else {
            return;
        };
        if self
            .differs(
                ((s, tau), (tau, kappa)),
                self.min_t,
                options.p_search,
                options.threshold,
            )
            .0
        {
            points.push(tau);
            self.search(s, tau, options, points);
            self.search(tau, e, options, points);
        }
    }

    /// Drops change points that fail the final test against their
    /// neighbours, the largest p first, until all pass. A lone change point
    /// splits the series once, one of ~g splits: `min_t`. With two or more,
    /// each one's test has a segment that ends at another, both ends chosen
    /// by the search, one of the ~g^2 / 2 (tau, kappa) pairs: `min_t_pair`.
    fn prune(&self, points: &mut Vec<usize>, options: &ChangePointOptions) {
        loop {
            let min_t = if points.len() > 1 {
                self.min_t_pair
            } else {
                self.min_t
            };
            let mut weakest: Option<(f64, usize)> = None;
            for (i, &point) in points.iter().enumerate() {
                let (start, end) = self.neighbours(points, i);
                let (change, p) = self.differs(
                    ((start, point), (point, end)),
                    min_t,
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
                .differs(
                    (before, after),
                    self.min_t,
                    options.p_final,
                    options.threshold,
                )
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

/// The sum of |x - v| over `values`, from four running sums.
#[inline(always)]
fn distance_sum(x: f64, values: &[f64]) -> f64 {
    let mut lanes = [0.0f64; 4];
    let chunks = values.chunks_exact(4);
    let rest = chunks.remainder();
    for chunk in chunks {
        for (lane, &value) in lanes.iter_mut().zip(chunk) {
            *lane += (x - value).abs();
        }
    }
    let tail: f64 = rest.iter().map(|value| (x - value).abs()).sum();
    (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]) + tail
}

/// `out[j]` = the sum of |x - values[k]| for k <= j. Four independent
/// running sums (one per quarter, offset after), not one: the additions of
/// one sum wait for each other, those of four overlap.
#[inline(always)]
fn distance_prefix(x: f64, values: &[f64], out: &mut [f64]) {
    let quarter = values.len() / 4;
    let mut sums = [0.0f64; 4];
    for t in 0..quarter {
        for (k, sum) in sums.iter_mut().enumerate() {
            let j = k * quarter + t;
            *sum += (x - values[j]).abs();
            out[j] = *sum;
        }
    }
    let mut offset = 0.0;
    for (k, sum) in sums.iter().enumerate() {
        for value in &mut out[k * quarter..(k + 1) * quarter] {
            *value += offset;
        }
        offset += sum;
    }
    for j in 4 * quarter..values.len() {
        offset += (x - values[j]).abs();
        out[j] = offset;
    }
}

/// The largest of `values` (-inf for none), from four running maxima.
#[inline(always)]
fn largest(values: &[f64]) -> f64 {
    let mut lanes = [f64::NEG_INFINITY; 4];
    let chunks = values.chunks_exact(4);
    let rest = chunks.remainder();
    for chunk in chunks {
        for (lane, &value) in lanes.iter_mut().zip(chunk) {
            if value > *lane {
                *lane = value;
            }
        }
    }
    for &value in rest {
        if value > lanes[0] {
            lanes[0] = value;
        }
    }
    lanes.into_iter().fold(
        f64::NEG_INFINITY,
        |top, lane| if lane > top { lane } else { top },
    )
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

    fn found(levels: &[f64], better: Direction) -> Vec<(usize, Verdict)> {
        change_points(&history(levels), better, &ChangePointOptions::default())
            .iter()
            .map(|c| (c.index, c.verdict))
            .collect()
    }

    /// The four-lane helpers agree with plain loops at every length (the
    /// lanes and the tail).
    #[test]
    fn lane_helpers_are_the_plain_sums_and_maximum() {
        let values: Vec<f64> = (0..11).map(|i| ((i * 7) % 5) as f64 - 1.5).collect();
        for len in 0..=values.len() {
            let part = &values[..len];
            let mut out = vec![0.0; len];
            distance_prefix(0.25, part, &mut out);
            let mut running = 0.0;
            for (j, value) in part.iter().enumerate() {
                running += (0.25 - value).abs();
                assert!((out[j] - running).abs() < 1e-12, "{len} {j}");
            }
            assert!((distance_sum(0.25, part) - running).abs() < 1e-12);
            let top = part.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            assert_eq!(largest(part), top);
        }
    }

    #[test]
    fn flat_history_has_no_change() {
        assert!(found(&[100.0; 10], Direction::Lower).is_empty());
    }

    #[test]
    fn a_step() {
        let levels = [100.0, 100.0, 100.0, 100.0, 105.0, 105.0, 105.0, 105.0];
        assert_eq!(
            found(&levels, Direction::Lower),
            vec![(4, Verdict::Regression)]
        );
        assert_eq!(
            found(&levels, Direction::Higher),
            vec![(4, Verdict::Improvement)]
        );
    }

    #[test]
    fn a_change_at_the_last_version() {
        let mut levels = [100.0; 10];
        levels[9] = 103.0;
        assert_eq!(
            found(&levels, Direction::Lower),
            vec![(9, Verdict::Regression)]
        );
    }

    #[test]
    fn a_one_version_spike_that_recovers_is_not_a_change() {
        let mut levels = [100.0; 10];
        levels[5] = 110.0;
        assert!(found(&levels, Direction::Lower).is_empty());
    }

    #[test]
    fn regress_then_fix_two_versions_apart() {
        let mut levels = [100.0; 10];
        levels[4] = 105.0;
        levels[5] = 105.0;
        let changes = found(&levels, Direction::Lower);
        assert_eq!(
            changes,
            vec![(4, Verdict::Regression), (6, Verdict::Improvement)]
        );
    }

    /// 500 single-sample versions (uniform noise of +-1 %, the same every
    /// run) with a block of 3 from version 250 at one level, `t` standard
    /// errors (of the block against the rest) below 100.
    fn block_of_three(t: f64) -> Vec<Side> {
        let mut state = 88_172_645_463_325_252u64;
        let mut levels: Vec<f64> = (0..500)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                100.0 * (1.0 + 0.02 * ((state >> 11) as f64 / (1u64 << 53) as f64 - 0.5))
            })
            .collect();
        let single = |v: f64| Side::new(Samples::new(vec![v]).unwrap()).unwrap();
        let flat: Vec<Side> = levels.iter().map(|&l| single(l)).collect();
        let sigma = Series::new(&flat).unwrap().sigma;
        for level in &mut levels[250..253] {
            *level = 100.0 * (-t * sigma * (1.0f64 / 3.0 + 1.0 / 497.0).sqrt()).exp();
        }
        levels.iter().map(|&l| single(l)).collect()
    }

    /// The final pass of a block between `min_t` and `min_t_pair` (which a
    /// lone split would pass) drops both its ends; one beyond `min_t_pair`
    /// is found whole.
    #[test]
    fn a_short_block_must_clear_the_scan_threshold_of_a_pair() {
        let options = ChangePointOptions::default();
        let chance = block_of_three(5.5);
        let series = Series::new(&chance).unwrap();
        let mut points = vec![250, 253];
        series.prune(&mut points, &options);
        assert!(points.is_empty(), "{points:?}");
        // 1.3 sqrt(2 ln 500) and 1.3 sqrt(2 ln (500 x 499 / 2)).
        assert!((series.min_t - 4.584).abs() < 1e-3, "{}", series.min_t);
        assert!(
            (series.min_t_pair - 6.298).abs() < 1e-3,
            "{}",
            series.min_t_pair
        );
        let found: Vec<(usize, Verdict)> =
            change_points(&block_of_three(9.0), Direction::Lower, &options)
                .iter()
                .map(|c| (c.index, c.verdict))
                .collect();
        assert_eq!(
            found,
            vec![(250, Verdict::Improvement), (253, Verdict::Regression)]
        );
    }

    #[test]
    fn changes_below_the_threshold_are_ignored() {
        let levels = [100.0, 100.0, 100.0, 100.0, 100.5, 100.5, 100.5, 100.5];
        assert!(found(&levels, Direction::Lower).is_empty());
    }

    /// `versions` versions of 1 to 4 samples (uneven counts), at 100 and
    /// from version `step_at` on at `high`, each sample up to 2 % above
    /// its level (a deterministic wobble).
    fn stepped_series(versions: usize, step_at: usize, high: f64) -> Series {
        let mut x = 0.3f64;
        let versions: Vec<Side> = (0..versions)
            .map(|v| {
                let values = (0..1 + v % 4)
                    .map(|_| {
                        x = (x * 7.77).fract();
                        (if v >= step_at { high } else { 100.0 }) * (1.0 + 0.02 * x)
                    })
                    .collect();
                Side::new(Samples::new(values).unwrap()).unwrap()
            })
            .collect();
        Series::new(&versions).unwrap()
    }

    #[test]
    fn best_split_is_the_largest_energy() {
        // Uneven sample counts, a level change and some structure.
        let series = stepped_series(9, 5, 110.0);
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

    /// The AVX2 build of the scan finds what the portable one finds, on a
    /// series long enough for every vectorized loop to run whole.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn the_avx2_scan_agrees_with_the_portable_one() {
        if !std::arch::is_x86_feature_detected!("avx2") {
            eprintln!("this CPU has no AVX2: nothing to compare");
            return;
        }
        let series = stepped_series(203, 120, 103.0);
        for (s, e) in [(0, 203), (0, 120), (57, 203), (100, 109)] {
            // SAFETY: this CPU runs AVX2 instructions (checked above).
            let avx2 = unsafe { series.best_split_avx2(s, e) };
            assert_eq!(avx2, series.best_split_scan(s, e), "{s}..{e}");
        }
    }

    #[test]
    fn a_short_quiet_segment_is_judged_by_the_series_noise() {
        // Two single-sample versions that agree closely, 2 % below a rest
        // that wobbles by up to 1.7 %: the series' noise, not theirs.
        let mut levels: Vec<f64> = (0..20)
            .map(|i| 100.0 * (1.0 + 0.017 * (2.4 * i as f64).sin()))
            .collect();
        levels[10] = 98.0;
        levels[11] = 98.01;
        let single = |v: f64| Side::new(Samples::new(vec![v]).unwrap()).unwrap();
        let versions: Vec<Side> = levels.iter().map(|&l| single(l)).collect();
        let series = Series::new(&versions).unwrap();
        let test = series.test((0, 10), (10, 12));
        assert!(test.p_value > 0.01, "{test:?}");
        assert!(
            change_points(&versions, Direction::Lower, &ChangePointOptions::default()).is_empty()
        );
    }

    #[test]
    fn the_test_is_on_version_means_with_the_series_noise() {
        // Versions of 8 samples that agree exactly: the noise is the
        // samples' own variance of a mean (35 df), the observations are
        // the 5 versions, and the CI follows from both.
        let versions = history(&[100.0, 100.0, 104.0, 104.0, 104.0]);
        let series = Series::new(&versions).unwrap();
        let logs = versions[0].logs();
        let se_mean = (logs.variance().unwrap() / 8.0).sqrt();
        assert!((series.sigma - se_mean).abs() < 1e-15);
        assert_eq!(series.df, 5.0 * 7.0);
        let test = series.test((0, 2), (2, 5));
        let se = se_mean * (1.0f64 / 2.0 + 1.0 / 3.0).sqrt();
        assert!((test.diff.point - 1.04f64.ln()).abs() < 1e-12);
        assert!((test.diff.half_width() - t_quantile(0.975, 35.0) * se).abs() < 1e-15);
        assert_eq!(test.diff.n, 5);
        let constant = [Side::new(Samples::new(vec![3.0; 4]).unwrap()).unwrap()];
        assert!(Series::new(&constant).is_none());
    }

    #[test]
    fn tiny_inputs() {
        assert!(found(&[], Direction::Lower).is_empty());
        assert!(found(&[100.0], Direction::Lower).is_empty());
        let single = |v: f64| Side::new(Samples::new(vec![v]).unwrap()).unwrap();
        let one_each = [single(1.0), single(2.0)];
        assert!(
            change_points(&one_each, Direction::Lower, &ChangePointOptions::default()).is_empty()
        );
    }
}
