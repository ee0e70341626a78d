//! Quantiles and tail probabilities of the distributions the tests need,
//! from `statrs` (no hand-written special functions).

use statrs::distribution::{ContinuousCDF, Normal, StudentsT};
use std::cell::RefCell;
use std::collections::HashMap;

/// How many t quantiles each thread keeps: the few (p, df) a report asks
/// again and again (every summary of n samples needs the one of n - 1 df;
/// statrs inverts the CDF by search, some microseconds each).
const KEPT_QUANTILES: usize = 4096;

thread_local! {
    static QUANTILES: RefCell<HashMap<(u64, u64), f64>> = RefCell::new(HashMap::new());
}

/// Quantile of Student's t with `df` > 0 degrees of freedom; the same
/// number whether computed now or kept from an earlier call.
pub(crate) fn t_quantile(p: f64, df: f64) -> f64 {
    let key = (p.to_bits(), df.to_bits());
    QUANTILES.with(|kept| {
        if let Some(&quantile) = kept.borrow().get(&key) {
            return quantile;
        }
        let quantile = students_t(df).inverse_cdf(p);
        let mut kept = kept.borrow_mut();
        if kept.len() < KEPT_QUANTILES {
            kept.insert(key, quantile);
        }
        quantile
    })
}

/// Two-sided p-value of a t statistic.
pub(crate) fn t_two_sided(t: f64, df: f64) -> f64 {
    (2.0 * students_t(df).sf(t.abs())).min(1.0)
}

/// Quantile of the standard normal distribution.
pub(crate) fn z_quantile(p: f64) -> f64 {
    Normal::standard().inverse_cdf(p)
}

fn students_t(df: f64) -> StudentsT {
    StudentsT::new(0.0, 1.0, df).expect("degrees of freedom are positive")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_values() {
        // Textbook t table: t(0.975, 10) = 2.228, z(0.975) = 1.960.
        assert!((t_quantile(0.975, 10.0) - 2.228).abs() < 1e-3);
        // Kept or computed anew, the same number.
        let fresh = students_t(10.0).inverse_cdf(0.975);
        assert_eq!(t_quantile(0.975, 10.0).to_bits(), fresh.to_bits());
        assert!((z_quantile(0.975) - 1.960).abs() < 1e-3);
        assert!((t_two_sided(2.228, 10.0) - 0.05).abs() < 1e-3);
    }
}
