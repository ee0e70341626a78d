//! The blocked (paired) analysis of a change: when baseline and current
//! were measured in the same short blocks, each block gives one difference
//! (the log of the ratio of the block's means), and drift between blocks
//! cancels. The machine here is two-mode and comes in spells, so one spell
//! can move a mean: the estimate is the Hodges-Lehmann shift (the median of
//! the Walsh averages, Hodges and Lehmann, "Estimates of Location Based on
//! Rank Tests", 1963) with the distribution-free CI that inverts the
//! Wilcoxon signed-rank test (Hollander and Wolfe, "Nonparametric
//! Statistical Methods", 3rd ed., ch. 3.2), and the p-value of that test.
//! Both come from one test, so the CI excludes 0 exactly when p < alpha.
//!
//! Exact null distribution for up to [`EXACT_MAX`] untied differences;
//! beyond, or with tied magnitudes, the normal approximation with the tie
//! correction of the variance. Zero differences are dropped (Wilcoxon's
//! rule); they still count in no Walsh average of the shift.

use crate::Estimate;
use crate::dist::z_quantile;
use statrs::distribution::{ContinuousCDF, Normal};

/// Largest number of differences whose null distribution is enumerated.
const EXACT_MAX: usize = 60;

/// The shift of paired differences with its CI and p-value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PairedShift {
    /// Hodges-Lehmann estimate with its CI (unbounded when too few blocks
    /// for the level: with 5 or fewer the signed-rank test cannot reach
    /// p < 0.05), `n` = the number of differences.
    pub shift: Estimate,
    /// Two-sided Wilcoxon signed-rank p-value.
    pub p_value: f64,
}

/// The paired analysis of `diffs` at confidence `level` (0.95); `None`
/// with fewer than two differences (nothing to rank).
pub fn hodges_lehmann(diffs: &[f64], level: f64) -> Option<PairedShift> {
    if diffs.len() < 2 || diffs.iter().any(|d| !d.is_finite()) {
        return None;
    }
    let walsh = walsh_averages(diffs);
    let point = median_sorted(&walsh);
    let nonzero: Vec<f64> = diffs.iter().copied().filter(|d| *d != 0.0).collect();
    let ranks = abs_ranks(&nonzero);
    let tied = has_ties(&ranks);
    let n = nonzero.len();
    let t_plus: f64 = nonzero
        .iter()
        .zip(&ranks)
        .filter(|(d, _)| **d > 0.0)
        .map(|(_, r)| r)
        .sum();
    let p_value = if n == 0 {
        1.0
    } else if tied || n > EXACT_MAX {
        normal_p(t_plus, &ranks)
    } else {
        exact_p(t_plus, n)
    };
    // The CI uses all differences (zeros included): the k-th smallest and
    // largest Walsh averages, k from the signed-rank null distribution.
    let k = critical_rank(diffs.len(), 1.0 - level);
    let (ci_low, ci_high) = match k {
        Some(k) => (walsh[k - 1], walsh[walsh.len() - k]),
        None => (f64::NEG_INFINITY, f64::INFINITY),
    };
    Some(PairedShift {
        shift: Estimate {
            point,
            ci_low,
            ci_high,
            n: diffs.len(),
        },
        p_value,
    })
}

/// All (d_i + d_j) / 2 for i <= j, sorted.
fn walsh_averages(diffs: &[f64]) -> Vec<f64> {
    let mut walsh = Vec::with_capacity(diffs.len() * (diffs.len() + 1) / 2);
    for (i, a) in diffs.iter().enumerate() {
        for b in &diffs[i..] {
            walsh.push((a + b) / 2.0);
        }
    }
    walsh.sort_by(f64::total_cmp);
    walsh
}

fn median_sorted(sorted: &[f64]) -> f64 {
    let mid = sorted.len() / 2;
    if sorted.len() % 2 == 1 {
        sorted[mid]
    } else {
        (sorted[mid - 1] + sorted[mid]) / 2.0
    }
}

/// Ranks of |d| from 1, ties sharing their mean rank.
fn abs_ranks(diffs: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..diffs.len()).collect();
    order.sort_by(|&i, &j| diffs[i].abs().total_cmp(&diffs[j].abs()));
    let mut ranks = vec![0.0; diffs.len()];
    let mut start = 0;
    while start < order.len() {
        let magnitude = diffs[order[start]].abs();
        let end = order[start..]
            .iter()
            .position(|&i| diffs[i].abs() != magnitude)
            .map_or(order.len(), |p| start + p);
        let mean_rank = (start + 1 + end) as f64 / 2.0;
        for &i in &order[start..end] {
            ranks[i] = mean_rank;
        }
        start = end;
    }
    ranks
}

fn has_ties(ranks: &[f64]) -> bool {
    ranks.iter().any(|r| r.fract() != 0.0)
        || ranks
            .iter()
            .enumerate()
            .any(|(i, r)| ranks[i + 1..].contains(r))
}

/// P(T+ = t) for t = 0 ..= n(n+1)/2 under the null (every sign equally
/// likely): the number of subsets of {1..n} summing to t, over 2^n.
fn null_distribution(n: usize) -> Vec<f64> {
    let max = n * (n + 1) / 2;
    let mut counts = vec![0.0f64; max + 1];
    counts[0] = 1.0;
    for k in 1..=n {
        for t in (k..=k * (k + 1) / 2).rev() {
            counts[t] += counts[t - k];
        }
    }
    let total = 2f64.powi(n as i32);
    counts.iter().map(|c| c / total).collect()
}

/// Exact two-sided p of an untied T+ from `n` differences.
fn exact_p(t_plus: f64, n: usize) -> f64 {
    let dist = null_distribution(n);
    let t = t_plus.round() as usize;
    let lower: f64 = dist[..=t].iter().sum();
    let upper: f64 = dist[t..].iter().sum();
    (2.0 * lower.min(upper)).min(1.0)
}

/// Normal-approximation two-sided p with the tie-corrected variance and a
/// continuity correction of 0.5.
fn normal_p(t_plus: f64, ranks: &[f64]) -> f64 {
    let n = ranks.len() as f64;
    let mean = n * (n + 1.0) / 4.0;
    let variance = ranks.iter().map(|r| r * r).sum::<f64>() / 4.0;
    if variance == 0.0 {
        return 1.0;
    }
    let z = ((t_plus - mean).abs() - 0.5).max(0.0) / variance.sqrt();
    (2.0 * Normal::standard().sf(z)).min(1.0)
}

/// The k (from 1) of the CI [W_(k), W_(M+1-k)] with coverage at least
/// 1 - alpha: the largest k with P(T+ <= k - 1) <= alpha / 2. `None` when
/// even k = 1 covers less (too few differences).
fn critical_rank(n: usize, alpha: f64) -> Option<usize> {
    let k = if n <= EXACT_MAX {
        let dist = null_distribution(n);
        let mut cumulative = 0.0;
        let mut k = 0;
        for p in &dist {
            cumulative += p;
            if cumulative > alpha / 2.0 + 1e-12 {
                break;
            }
            k += 1;
        }
        k
    } else {
        let m = (n * (n + 1) / 2) as f64;
        let sd = (n as f64 * (n as f64 + 1.0) * (2.0 * n as f64 + 1.0) / 24.0).sqrt();
        (m / 2.0 - z_quantile(1.0 - alpha / 2.0) * sd)
            .floor()
            .max(0.0) as usize
    };
    (k >= 1).then_some(k)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn null_distribution_of_three() {
        // Subset sums of {1, 2, 3}: 0 1 2 3(x2) 4 5 6.
        let d = null_distribution(3);
        let expected = [1.0, 1.0, 1.0, 2.0, 1.0, 1.0, 1.0].map(|c| c / 8.0);
        assert!(d.iter().zip(expected).all(|(a, b)| close(*a, b)), "{d:?}");
    }

    #[test]
    fn exact_p_matches_scipy() {
        // scipy.stats.wilcoxon([1.1, 2.3, -0.4, 3.2, 1.7, 0.9, 2.8, -1.5])
        // -> statistic (smaller rank sum) 5, p = 0.078125 (exact).
        let d = [1.1, 2.3, -0.4, 3.2, 1.7, 0.9, 2.8, -1.5];
        let s = hodges_lehmann(&d, 0.95).unwrap();
        assert!(close(s.p_value, 0.078125), "{}", s.p_value);
        // All positive, n = 6: p = 2 / 64.
        let all = hodges_lehmann(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.5], 0.95).unwrap();
        assert!(close(all.p_value, 0.03125), "{}", all.p_value);
    }

    #[test]
    fn shift_is_the_median_of_walsh_averages() {
        // Walsh averages of 1, 2, 9: 1 1.5 2 5 5.5 9 -> median 3.5.
        let s = hodges_lehmann(&[1.0, 2.0, 9.0], 0.95).unwrap();
        assert!(close(s.shift.point, 3.5));
        // Three blocks cannot reach 95 %: the CI is unbounded.
        assert_eq!(s.shift.ci_low, f64::NEG_INFINITY);
    }

    #[test]
    fn one_outlying_block_barely_moves_the_shift() {
        // Twenty blocks: the outlier's 20 Walsh averages stay outside the
        // 52 trimmed from each end (n = 10 would trim only 8).
        let steady: Vec<f64> = (0..20)
            .map(|i| 0.03 + 0.001 * f64::from(i % 5) - 0.002)
            .collect();
        let mut spell = steady.clone();
        spell[3] = 0.30;
        let a = hodges_lehmann(&steady, 0.95).unwrap().shift;
        let b = hodges_lehmann(&spell, 0.95).unwrap().shift;
        assert!((b.point - a.point).abs() < 0.002, "{a:?} {b:?}");
        assert!(b.ci_low > 0.02 && b.ci_high < 0.05, "{b:?}");
    }

    #[test]
    fn ci_covers_at_the_level_by_exact_rank() {
        // n = 10: P(T+ <= 8) = 0.0244 <= 0.025 < P(T+ <= 9): k = 9.
        assert_eq!(critical_rank(10, 0.05), Some(9));
        // n = 6: k = 1 (P(T+ = 0) = 1/64); n = 5: none.
        assert_eq!(critical_rank(6, 0.05), Some(1));
        assert_eq!(critical_rank(5, 0.05), None);
        // The normal approximation continues the exact ranks smoothly.
        let exact = critical_rank(EXACT_MAX, 0.05).unwrap() as f64;
        let n = EXACT_MAX as f64;
        let approx =
            n * (n + 1.0) / 4.0 - 1.959964 * (n * (n + 1.0) * (2.0 * n + 1.0) / 24.0).sqrt();
        assert!((exact - approx).abs() < 2.0, "{exact} {approx}");
    }

    #[test]
    fn ties_and_zeros_use_the_normal_approximation() {
        // scipy.stats.wilcoxon([1, 1, 2, 2, 0, 3, -1], correction=True,
        // method="approx", zero_method="wilcox") -> p = 0.08898 (the zero dropped).
        let s = hodges_lehmann(&[1.0, 1.0, 2.0, 2.0, 0.0, 3.0, -1.0], 0.95).unwrap();
        assert!((s.p_value - 0.088984).abs() < 1e-5, "{}", s.p_value);
        assert_eq!(hodges_lehmann(&[0.0, 0.0], 0.95).unwrap().p_value, 1.0);
        assert_eq!(hodges_lehmann(&[1.0], 0.95), None);
    }
}
