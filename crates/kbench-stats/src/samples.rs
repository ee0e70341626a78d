//! Raw samples, checked once: never empty, never NaN or infinite.
//!
//! Quantiles use linear interpolation between order statistics (Hyndman and
//! Fan, "Sample Quantiles in Statistical Packages", 1996, definition 7; the
//! default of R and NumPy).

use serde::{Deserialize, Serialize};

use crate::StatsError;

/// A non-empty list of finite values in measurement order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "Vec<f64>", into = "Vec<f64>")]
pub struct Samples(Vec<f64>);

impl Samples {
    /// Checks the invariant: at least one value, all finite.
    pub fn new(values: Vec<f64>) -> Result<Samples, StatsError> {
        if values.is_empty() {
            return Err(StatsError::Empty);
        }
        if let Some((index, &value)) = values.iter().enumerate().find(|(_, v)| !v.is_finite()) {
            return Err(StatsError::NonFinite { index, value });
        }
        Ok(Samples(values))
    }

    /// The per-round means: one observation per round (Kalibera and Jones
    /// 2013: the round, a fresh invocation, is the unit of replication).
    pub fn round_means(rounds: &[Samples]) -> Result<Samples, StatsError> {
        if rounds.is_empty() {
            return Err(StatsError::NoRounds);
        }
        Ok(Samples(rounds.iter().map(Samples::mean).collect()))
    }

    /// Natural logarithms; ratios are differences of logs.
    pub fn ln(&self) -> Result<Samples, StatsError> {
        if let Some((index, &value)) = self.0.iter().enumerate().find(|(_, v)| **v <= 0.0) {
            return Err(StatsError::NonPositive { index, value });
        }
        Ok(Samples(self.0.iter().map(|v| v.ln()).collect()))
    }

    pub fn as_slice(&self) -> &[f64] {
        &self.0
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Always false: kept for the `len` convention.
    pub fn is_empty(&self) -> bool {
        false
    }

    pub fn mean(&self) -> f64 {
        self.0.iter().sum::<f64>() / self.0.len() as f64
    }

    /// Sample variance (n - 1 denominator); `None` for a single value,
    /// exactly 0 for equal values (rounding in the mean must not invent
    /// noise).
    pub fn variance(&self) -> Option<f64> {
        let n = self.0.len();
        if n < 2 {
            return None;
        }
        if self.min() == self.max() {
            return Some(0.0);
        }
        let mean = self.mean();
        let squares: f64 = self.0.iter().map(|v| (v - mean).powi(2)).sum();
        Some(squares / (n - 1) as f64)
    }

    /// Sample standard deviation; `None` for a single value.
    pub fn sd(&self) -> Option<f64> {
        self.variance().map(f64::sqrt)
    }

    pub fn min(&self) -> f64 {
        self.0.iter().copied().fold(f64::INFINITY, f64::min)
    }

    pub fn max(&self) -> f64 {
        self.0.iter().copied().fold(f64::NEG_INFINITY, f64::max)
    }

    /// The values in ascending order.
    pub fn sorted(&self) -> Vec<f64> {
        let mut sorted = self.0.clone();
        sorted.sort_by(f64::total_cmp);
        sorted
    }

    pub fn median(&self) -> f64 {
        quantile_of_sorted(&self.sorted(), 0.5)
    }

    /// The `p`-quantile, `p` in [0, 1] (clamped), Hyndman-Fan definition 7.
    pub fn quantile(&self, p: f64) -> f64 {
        quantile_of_sorted(&self.sorted(), p)
    }
}

/// Hyndman-Fan definition 7 on already sorted, non-empty values.
pub(crate) fn quantile_of_sorted(sorted: &[f64], p: f64) -> f64 {
    let h = (sorted.len() - 1) as f64 * p.clamp(0.0, 1.0);
    let below = h.floor() as usize;
    let above = h.ceil() as usize;
    sorted[below] + (h - below as f64) * (sorted[above] - sorted[below])
}

impl TryFrom<Vec<f64>> for Samples {
    type Error = StatsError;

    fn try_from(values: Vec<f64>) -> Result<Samples, StatsError> {
        Samples::new(values)
    }
}

impl From<Samples> for Vec<f64> {
    fn from(samples: Samples) -> Vec<f64> {
        samples.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(values: &[f64]) -> Samples {
        Samples::new(values.to_vec()).unwrap()
    }

    #[test]
    fn rejects_empty_and_non_finite() {
        assert_eq!(Samples::new(vec![]), Err(StatsError::Empty));
        assert!(matches!(
            Samples::new(vec![1.0, f64::NAN]),
            Err(StatsError::NonFinite { index: 1, .. })
        ));
        assert!(matches!(
            Samples::new(vec![f64::INFINITY]),
            Err(StatsError::NonFinite { index: 0, .. })
        ));
    }

    #[test]
    fn moments_of_a_known_sample() {
        let x = s(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]);
        assert_eq!(x.mean(), 5.0);
        // Sum of squares 32 over n - 1 = 7.
        assert!((x.variance().unwrap() - 32.0 / 7.0).abs() < 1e-12);
        assert_eq!(x.min(), 2.0);
        assert_eq!(x.max(), 9.0);
        assert_eq!(x.median(), 4.5);
        assert_eq!(s(&[3.0]).variance(), None);
        assert_eq!(s(&[0.1f64.ln(); 7]).variance(), Some(0.0));
    }

    #[test]
    fn quantiles_match_r_type_7() {
        // R: quantile(c(1, 2, 3, 4, 10), c(.25, .75)) == 2, 4; .1 -> 1.4
        let x = s(&[10.0, 1.0, 4.0, 2.0, 3.0]);
        assert_eq!(x.quantile(0.25), 2.0);
        assert_eq!(x.quantile(0.75), 4.0);
        assert!((x.quantile(0.1) - 1.4).abs() < 1e-12);
        assert_eq!(x.quantile(0.0), 1.0);
        assert_eq!(x.quantile(1.0), 10.0);
    }

    #[test]
    fn logs_need_positive_values() {
        assert!(matches!(
            s(&[1.0, 0.0]).ln(),
            Err(StatsError::NonPositive { index: 1, .. })
        ));
        let logs = s(&[1.0, std::f64::consts::E]).ln().unwrap();
        assert_eq!(logs.as_slice()[0], 0.0);
        assert!((logs.as_slice()[1] - 1.0).abs() < 1e-15);
    }

    #[test]
    fn round_means_are_one_value_per_round() {
        let rounds = [s(&[1.0, 3.0]), s(&[10.0])];
        assert_eq!(
            Samples::round_means(&rounds).unwrap().as_slice(),
            &[2.0, 10.0]
        );
        assert_eq!(Samples::round_means(&[]), Err(StatsError::NoRounds));
    }
}
