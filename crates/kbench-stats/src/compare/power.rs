//! Power of Welch's t-test, the test that decides: the smallest effect
//! found with the given power, and the sample count that finds a given
//! effect (Cohen, "Statistical Power Analysis for the Behavioral Sciences",
//! 1988, with t instead of normal quantiles, and Welch's standard error and
//! degrees of freedom instead of a pooled SD, so that the MDE matches the
//! CI that the verdict reads):
//!
//! MDE = (t(1 - alpha/2, v) + t(power, v)) * sqrt(s_a^2/n_a + s_b^2/n_b),
//! v = Welch-Satterthwaite degrees of freedom.
//!
//! With equal variances and counts this is the pooled formula. On logs, s
//! is about the CV and the MDE about a relative change (the table in
//! docs/statistics.md, "The verdict": 1 % CV, 10 samples per side -> 1.3 %).
//!
//! The blocked and levelled analyses use the same form with their own
//! standard error and degrees of freedom ([`detectable`]), and the same
//! walk up from the normal approximation for the count that finds an
//! effect ([`smallest_count`]).

use super::welch::welch_error;
use crate::Samples;
use crate::dist::{t_quantile, z_quantile};

/// Past this many samples per side an effect counts as out of reach.
const MAX_SAMPLES: usize = 1_000_000;

/// The spread of one side: the variance of its observations (of their
/// logs, in a comparison) and their count.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spread {
    pub variance: f64,
    pub n: usize,
}

impl Spread {
    /// `None` with fewer than two values (no variance estimate).
    pub fn of(samples: &Samples) -> Option<Spread> {
        Some(Spread {
            variance: samples.variance()?,
            n: samples.len(),
        })
    }
}

/// Smallest true difference found with probability `power` by Welch's
/// two-sided test at `alpha`, in the units of the spreads. `None` with
/// fewer than two values on a side; 0 when neither side has any spread.
pub fn min_detectable_effect(a: Spread, b: Spread, alpha: f64, power: f64) -> Option<f64> {
    if a.n < 2 || b.n < 2 {
        return None;
    }
    let (se, df) = welch_error((a.variance, a.n), (b.variance, b.n));
    if se == 0.0 {
        return Some(0.0);
    }
    Some(detectable(se, df, alpha, power))
}

/// Smallest true difference found with probability `power` by any
/// two-sided t-test at `alpha` whose standard error is `se` on `df`
/// degrees of freedom: (t(1 - alpha/2, df) + t(power, df)) * se.
pub(super) fn detectable(se: f64, df: f64, alpha: f64, power: f64) -> f64 {
    (t_quantile(1.0 - alpha / 2.0, df) + t_quantile(power, df)) * se
}

/// How far the CI of `log_ratio` must reach to clear the threshold band
/// edge nearest to it (`threshold` a fraction): the gap between them on
/// the log scale. Beyond the edge the CI must clear it outwards (a
/// change), within it inwards (no change).
pub(super) fn gap_to_band(log_ratio: f64, threshold: f64) -> f64 {
    let edge = if log_ratio >= 0.0 {
        threshold.ln_1p()
    } else {
        -(-threshold).ln_1p()
    };
    (log_ratio.abs() - edge).abs()
}

/// Samples per side (the same on both, at least 2) whose MDE is at most
/// `effect`, for sides with variances `va` and `vb`. `None` when the effect
/// is zero or needs more than a million samples.
pub fn samples_needed(va: f64, vb: f64, effect: f64, alpha: f64, power: f64) -> Option<usize> {
    let spread = |variance, n| Spread { variance, n };
    smallest_count(va + vb, effect, MAX_SAMPLES, alpha, power, |n| {
        min_detectable_effect(spread(va, n), spread(vb, n), alpha, power)
    })
}

/// The smallest count n >= 2, up to `max`, whose detectable effect
/// `mde(n)` is at most `effect`, for a test whose variance at a count of
/// one is `variance`. `None` when the effect is zero or out of reach.
pub(super) fn smallest_count(
    variance: f64,
    effect: f64,
    max: usize,
    alpha: f64,
    power: f64,
    mde: impl Fn(usize) -> Option<f64>,
) -> Option<usize> {
    if effect <= 0.0 {
        return None;
    }
    // The normal approximation never overestimates: start there, walk up.
    let z = z_quantile(1.0 - alpha / 2.0) + z_quantile(power);
    let start = z * z * variance / (effect * effect);
    if start > max as f64 {
        return None;
    }
    let mut n = (start.ceil() as usize).max(2);
    while mde(n)? > effect {
        n += 1;
        if n > max {
            return None;
        }
    }
    Some(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spread(sd: f64, n: usize) -> Spread {
        Spread {
            variance: sd * sd,
            n,
        }
    }

    /// docs/statistics.md ("The verdict"), "Minimum detectable effect (80 % power, alpha 0.05,
    /// two-sided)": rows CV 1, 2, 5 %; columns n = 5, 10, 20, 30.
    const TABLE: [(f64, [f64; 4]); 3] = [
        (1.0, [2.0, 1.3, 0.9, 0.7]),
        (2.0, [4.0, 2.7, 1.8, 1.5]),
        (5.0, [10.0, 6.6, 4.5, 3.7]),
    ];
    const NS: [usize; 4] = [5, 10, 20, 30];

    #[test]
    fn reproduces_the_mde_table() {
        for (cv, row) in TABLE {
            for (n, printed) in NS.into_iter().zip(row) {
                let mde = min_detectable_effect(spread(cv, n), spread(cv, n), 0.05, 0.8).unwrap();
                // Printed to one decimal (two significant digits at 10 %).
                let precision = if printed >= 10.0 { 1.0 } else { 0.1 };
                let rounded = (mde / precision).round() * precision;
                assert!(
                    (rounded - printed).abs() < 1e-9,
                    "CV {cv} n {n}: {mde:.3} vs {printed}"
                );
            }
        }
    }

    /// SD 1 % on 5 values against SD 3 % on 12. SciPy:
    /// wa, wb = 0.01**2/5, 0.03**2/12; se = sqrt(wa + wb) = 0.0097468;
    /// df = (wa+wb)**2 / (wa**2/4 + wb**2/11) = 14.76208;
    /// (t.ppf(0.975, df) + t.ppf(0.8, df)) * se = 0.0292511.
    /// The pooled SD (old code) gave 0.0418128 on 15 df.
    #[test]
    fn unequal_counts_and_variances_use_welchs_se_and_df() {
        let (a, b) = (spread(0.01, 5), spread(0.03, 12));
        let mde = min_detectable_effect(a, b, 0.05, 0.8).unwrap();
        assert!((mde - 0.029_251_086_6).abs() < 1e-7, "{mde}");
        assert_eq!(
            min_detectable_effect(b, a, 0.05, 0.8),
            Some(mde),
            "symmetric"
        );
        // for n in range(2, 100): the first n per side whose MDE <= 0.02
        // is 22 (MDE 0.019639).
        assert_eq!(
            samples_needed(a.variance, b.variance, 0.02, 0.05, 0.8),
            Some(22)
        );
    }

    #[test]
    fn one_constant_side_takes_the_other_sides_freedom() {
        // df = n_b - 1 = 9: (t(0.975, 9) + t(0.8, 9)) * 0.02 / sqrt(10).
        let mde = min_detectable_effect(spread(0.0, 4), spread(0.02, 10), 0.05, 0.8).unwrap();
        let expected = (2.262_157_163 + 0.883_403_860) * 0.02 / 10f64.sqrt();
        assert!((mde - expected).abs() < 1e-8, "{mde} vs {expected}");
    }

    #[test]
    fn samples_needed_inverts_the_mde() {
        let v = 0.02f64.powi(2);
        for n in [2, 5, 10, 37, 400] {
            let mde = min_detectable_effect(spread(0.02, n), spread(0.02, n), 0.05, 0.8).unwrap();
            assert_eq!(samples_needed(v, v, mde * 1.000001, 0.05, 0.8), Some(n));
        }
        assert_eq!(samples_needed(0.0, 0.0, 0.01, 0.05, 0.8), Some(2));
        assert_eq!(samples_needed(1e-4, 1e-4, 0.0, 0.05, 0.8), None);
        assert_eq!(samples_needed(1e-4, 1e-4, 1e-9, 0.05, 0.8), None);
    }

    #[test]
    fn too_few_values() {
        assert_eq!(
            min_detectable_effect(spread(0.01, 1), spread(0.01, 1), 0.05, 0.8),
            None
        );
        assert_eq!(
            min_detectable_effect(spread(0.01, 1), spread(0.01, 2), 0.05, 0.8),
            None
        );
        assert_eq!(
            min_detectable_effect(spread(0.0, 2), spread(0.0, 2), 0.05, 0.8),
            Some(0.0)
        );
    }
}
