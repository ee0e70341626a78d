//! Mann-Whitney U test (Mann and Whitney, "On a Test of Whether one of Two
//! Random Variables is Stochastically Larger than the Other", 1947), from
//! `statrs`: normal approximation with the tie correction of the variance
//! and a continuity correction of 0.5 (as SciPy's `asymptotic` method;
//! Lehmann, "Nonparametrics", 1975, ch. 1.4). The exact method is avoided:
//! its enumeration explodes for unequal sides, and it cannot handle ties.

use statrs::stats_tests::Alternative;
use statrs::stats_tests::mannwhitneyu::{MannWhitneyUMethod, mannwhitneyu};

use crate::Samples;

/// The U statistic of `a` and the two-sided p-value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MannWhitney {
    /// Number of (a, b) pairs with a > b, ties counting one half.
    pub u: f64,
    pub p_value: f64,
}

pub fn mann_whitney(a: &Samples, b: &Samples) -> MannWhitney {
    let (u, p_value) = mannwhitneyu(
        a.as_slice(),
        b.as_slice(),
        MannWhitneyUMethod::AsymptoticInclContinuityCorrection,
        Alternative::TwoSided,
    )
    .expect("samples are non-empty and finite");
    MannWhitney { u, p_value }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(values: &[f64]) -> Samples {
        Samples::new(values.to_vec()).unwrap()
    }

    #[test]
    fn separated_samples() {
        // U(a) = 0; mu = 4.5, sigma = sqrt(9 * 7 / 12); z = (9 - 4.5 - 0.5) / sigma.
        let m = mann_whitney(&s(&[1.0, 2.0, 3.0]), &s(&[4.0, 5.0, 6.0]));
        assert_eq!(m.u, 0.0);
        assert!((m.p_value - 0.080856).abs() < 1e-5, "p = {}", m.p_value);
    }

    #[test]
    fn ties_share_ranks_and_shrink_the_variance() {
        // Ranks 1, 3, 3 | 3, 5, 6 -> U(a) = 7 - 6 = 1.
        // sigma^2 = 9/12 * (7 - (27 - 3) / 30) = 4.65; z = (8 - 4.5 - 0.5) / sqrt(4.65).
        let m = mann_whitney(&s(&[1.0, 2.0, 2.0]), &s(&[2.0, 3.0, 4.0]));
        assert_eq!(m.u, 1.0);
        assert!((m.p_value - 0.164160).abs() < 1e-5, "p = {}", m.p_value);
    }

    #[test]
    fn all_equal_gives_p_one() {
        let m = mann_whitney(&s(&[2.0; 6]), &s(&[2.0; 6]));
        assert_eq!(m.p_value, 1.0);
    }
}
