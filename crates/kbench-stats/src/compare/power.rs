//! Power of the two-sample t-test: the smallest effect found with the given
//! power, and the sample count that finds a given effect (Cohen,
//! "Statistical Power Analysis for the Behavioral Sciences", 1988, with t
//! instead of normal quantiles):
//!
//! MDE = (t(1 - alpha/2, v) + t(power, v)) * s * sqrt(1/n_a + 1/n_b),
//! v = n_a + n_b - 2.
//!
//! On logs, s is about the CV and the MDE about a relative change (the
//! table in statistics.md: 1 % CV, 10 samples per side -> 1.3 %).

use crate::dist::{t_quantile, z_quantile};

/// Past this many samples per side an effect counts as out of reach.
const MAX_SAMPLES: usize = 1_000_000;

/// Smallest true difference found with probability `power` by a two-sided
/// test at `alpha`, in the units of `sd`. `None` with fewer than three
/// values in all (no degrees of freedom).
pub fn min_detectable_effect(
    sd: f64,
    n_a: usize,
    n_b: usize,
    alpha: f64,
    power: f64,
) -> Option<f64> {
    if n_a == 0 || n_b == 0 || n_a + n_b < 3 {
        return None;
    }
    let df = (n_a + n_b - 2) as f64;
    let quantiles = t_quantile(1.0 - alpha / 2.0, df) + t_quantile(power, df);
    Some(quantiles * sd * (1.0 / n_a as f64 + 1.0 / n_b as f64).sqrt())
}

/// Samples per side (at least 2) whose MDE is at most `effect`. `None`
/// when the effect is zero or needs more than a million samples.
pub fn samples_needed(sd: f64, effect: f64, alpha: f64, power: f64) -> Option<usize> {
    if effect <= 0.0 {
        return None;
    }
    // The normal approximation never overestimates: start there, walk up.
    let z = z_quantile(1.0 - alpha / 2.0) + z_quantile(power);
    let start = 2.0 * (z * sd / effect).powi(2);
    if start > MAX_SAMPLES as f64 {
        return None;
    }
    let mut n = (start.ceil() as usize).max(2);
    while min_detectable_effect(sd, n, n, alpha, power)? > effect {
        n += 1;
        if n > MAX_SAMPLES {
            return None;
        }
    }
    Some(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// statistics.md, "Minimum detectable effect (80 % power, alpha 0.05,
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
                let mde = min_detectable_effect(cv, n, n, 0.05, 0.8).unwrap();
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

    #[test]
    fn samples_needed_inverts_the_mde() {
        for n in [2, 5, 10, 37, 400] {
            let mde = min_detectable_effect(0.02, n, n, 0.05, 0.8).unwrap();
            assert_eq!(samples_needed(0.02, mde * 1.000001, 0.05, 0.8), Some(n));
        }
        assert_eq!(samples_needed(0.0, 0.01, 0.05, 0.8), Some(2));
        assert_eq!(samples_needed(0.01, 0.0, 0.05, 0.8), None);
        assert_eq!(samples_needed(0.01, 1e-9, 0.05, 0.8), None);
    }

    #[test]
    fn too_few_values() {
        assert_eq!(min_detectable_effect(0.01, 1, 1, 0.05, 0.8), None);
        assert!(min_detectable_effect(0.01, 1, 2, 0.05, 0.8).is_some());
    }
}
