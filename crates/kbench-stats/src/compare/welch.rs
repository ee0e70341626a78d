//! Welch's unequal-variance t-test (Welch, "The generalization of
//! 'Student's' problem when several different population variances are
//! involved", Biometrika 34, 1947) with Welch-Satterthwaite degrees of
//! freedom, and the confidence interval of the difference of means.
//!
//! On logs, the difference of means is the log of the ratio of geometric
//! means. Zero variance on both sides means there is no noise: the
//! difference is exact (p = 1 when equal, 0 otherwise, degenerate CI).

use crate::dist::{t_quantile, t_two_sided};
use crate::{Estimate, Samples};

/// The test of `b` against `a` (and the shape of any t-test here: a
/// difference, its CI, t, the degrees of freedom and p).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Welch {
    /// mean(b) - mean(a) with its confidence interval.
    pub diff: Estimate,
    pub t: f64,
    pub df: f64,
    /// Two-sided.
    pub p_value: f64,
}

/// `None` when a side has fewer than two values (no variance estimate).
/// `level` is the confidence level of the interval, e.g. 0.95.
pub fn welch(a: &Samples, b: &Samples, level: f64) -> Option<Welch> {
    let (va, vb) = (a.variance()?, b.variance()?);
    Some(welch_from(
        (a.mean(), va, a.len()),
        (b.mean(), vb, b.len()),
        level,
    ))
}

/// The test from each side's (mean, variance, count); counts at least 2.
pub(crate) fn welch_from(
    (mean_a, va, count_a): (f64, f64, usize),
    (mean_b, vb, count_b): (f64, f64, usize),
    level: f64,
) -> Welch {
    let (se, df) = welch_error((va, count_a), (vb, count_b));
    t_test(mean_b - mean_a, se, df, count_a + count_b, level)
}

/// Welch's standard error of the difference of two means from each side's
/// (variance, count), counts at least 2, with its Welch-Satterthwaite
/// degrees of freedom (n_a + n_b - 2 when the error is 0).
pub(crate) fn welch_error((va, count_a): (f64, usize), (vb, count_b): (f64, usize)) -> (f64, f64) {
    let (na, nb) = (count_a as f64, count_b as f64);
    let (wa, wb) = (va / na, vb / nb);
    let se = (wa + wb).sqrt();
    let df = if se == 0.0 {
        na + nb - 2.0
    } else {
        satterthwaite_df((wa, count_a), (wb, count_b))
    };
    (se, df)
}

/// The t-test of a difference `diff` with standard error `se` on `df`
/// degrees of freedom, from `n` values: its CI at `level` and two-sided p.
/// A zero `se` means no noise: the difference is exact (p = 1 when it is
/// 0, else 0; a degenerate CI).
pub(crate) fn t_test(diff: f64, se: f64, df: f64, n: usize, level: f64) -> Welch {
    if se == 0.0 {
        return Welch {
            diff: Estimate {
                point: diff,
                ci_low: diff,
                ci_high: diff,
                n,
            },
            t: if diff == 0.0 {
                0.0
            } else {
                diff.signum() * f64::INFINITY
            },
            df,
            p_value: if diff == 0.0 { 1.0 } else { 0.0 },
        };
    }
    let t = diff / se;
    let half = t_quantile(0.5 + level / 2.0, df) * se;
    Welch {
        diff: Estimate {
            point: diff,
            ci_low: diff - half,
            ci_high: diff + half,
            n,
        },
        t,
        df,
        p_value: t_two_sided(t, df),
    }
}

/// Welch-Satterthwaite degrees of freedom from each side's squared
/// standard error (variance / count) and count (at least 2); not both
/// squared errors zero.
pub(crate) fn satterthwaite_df((wa, count_a): (f64, usize), (wb, count_b): (f64, usize)) -> f64 {
    satterthwaite(&[(wa, (count_a - 1) as f64), (wb, (count_b - 1) as f64)])
}

/// Satterthwaite's degrees of freedom of a sum of independent variance
/// terms, each (its value, its own degrees of freedom > 0): (sum w)^2 /
/// sum(w^2 / df). Terms of zero add nothing; not all of them zero.
pub(crate) fn satterthwaite(terms: &[(f64, f64)]) -> f64 {
    let total: f64 = terms.iter().map(|(w, _)| w).sum();
    let spread: f64 = terms
        .iter()
        .filter(|(w, _)| *w != 0.0)
        .map(|(w, df)| w * w / df)
        .sum();
    total * total / spread
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(values: &[f64]) -> Samples {
        Samples::new(values.to_vec()).unwrap()
    }

    #[test]
    fn wikipedia_example_1() {
        // en.wikipedia.org/wiki/Welch's_t-test, example 1 lists t = -2.46,
        // v = 24.9, p = 0.021; to more digits t = -2.45536, v = 24.98853,
        // p = 0.021378 (Welch-Satterthwaite by hand, t tail by quadrature).
        let a1 = s(&[
            27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6, 19.0, 21.7,
            21.4,
        ]);
        let a2 = s(&[
            27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1, 22.9, 20.5,
            24.4,
        ]);
        let w = welch(&a2, &a1, 0.95).unwrap();
        assert!((w.t - -2.45536).abs() < 1e-5, "t = {}", w.t);
        assert!((w.df - 24.98853).abs() < 1e-5, "df = {}", w.df);
        assert!((w.p_value - 0.021378).abs() < 1e-6, "p = {}", w.p_value);
        // The 95 % CI excludes 0 exactly when p < 0.05.
        assert!(w.diff.ci_high < 0.0);
    }

    #[test]
    fn zero_variance_is_exact() {
        let same = welch(&s(&[3.0, 3.0]), &s(&[3.0, 3.0, 3.0]), 0.95).unwrap();
        assert_eq!(
            (same.p_value, same.diff.ci_low, same.diff.ci_high),
            (1.0, 0.0, 0.0)
        );
        let moved = welch(&s(&[3.0, 3.0]), &s(&[4.0, 4.0]), 0.95).unwrap();
        assert_eq!(
            (moved.p_value, moved.diff.ci_low, moved.diff.ci_high),
            (0.0, 1.0, 1.0)
        );
    }

    #[test]
    fn one_constant_side_uses_the_other_sides_freedom() {
        let w = welch(&s(&[3.0, 3.0, 3.0]), &s(&[1.0, 2.0, 3.0, 4.0]), 0.95).unwrap();
        assert!((w.df - 3.0).abs() < 1e-12);
    }

    #[test]
    fn needs_two_values_per_side() {
        assert!(welch(&s(&[1.0]), &s(&[1.0, 2.0]), 0.95).is_none());
        assert!(welch(&s(&[1.0, 2.0]), &s(&[1.0, 2.0]), 0.95).is_some());
    }
}
