//! Quantiles and tail probabilities of the distributions the tests need,
//! from `statrs` (no hand-written special functions).

use statrs::distribution::{ContinuousCDF, Normal, StudentsT};

/// Quantile of Student's t with `df` > 0 degrees of freedom.
pub(crate) fn t_quantile(p: f64, df: f64) -> f64 {
    students_t(df).inverse_cdf(p)
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
        assert!((z_quantile(0.975) - 1.960).abs() < 1e-3);
        assert!((t_two_sided(2.228, 10.0) - 0.05).abs() < 1e-3);
    }
}
