//! Descriptive summary of one test's samples, with a 95 % Student t
//! confidence interval of the mean (the `--target-ci` stopping rule).
//!
//! With a single value there is no spread to estimate: SD and CV are `None`
//! and the interval is unbounded (`-inf..inf`) rather than a false `[x, x]`.

use serde::{Deserialize, Serialize};

use crate::dist::t_quantile;
use crate::{Estimate, Samples, StatsError};

/// Confidence level of [`Summary::ci`].
const LEVEL: f64 = 0.95;

/// n, mean, median, SD, CV, min, max and the 95 % CI of the mean.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub n: usize,
    pub mean: f64,
    pub median: f64,
    /// Sample SD; `None` for one value.
    pub sd: Option<f64>,
    /// SD / |mean|; `None` for one value or a zero mean.
    pub cv: Option<f64>,
    pub min: f64,
    pub max: f64,
    /// 95 % Student t interval of the mean.
    pub ci: Estimate,
}

impl Summary {
    pub fn of(samples: &Samples) -> Summary {
        let n = samples.len();
        let mean = samples.mean();
        let sd = samples.sd();
        let half = match sd {
            Some(sd) => t_quantile(0.5 + LEVEL / 2.0, (n - 1) as f64) * sd / (n as f64).sqrt(),
            None => f64::INFINITY,
        };
        Summary {
            n,
            mean,
            median: samples.median(),
            sd,
            cv: sd.filter(|_| mean != 0.0).map(|sd| sd / mean.abs()),
            min: samples.min(),
            max: samples.max(),
            ci: Estimate {
                point: mean,
                ci_low: mean - half,
                ci_high: mean + half,
                n,
            },
        }
    }

    /// Summary of the per-round means: with several rounds the round is the
    /// unit of replication (Kalibera and Jones 2013), so n counts rounds.
    pub fn of_rounds(rounds: &[Samples]) -> Result<Summary, StatsError> {
        Ok(Summary::of(&Samples::round_means(rounds)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(values: &[f64]) -> Samples {
        Samples::new(values.to_vec()).unwrap()
    }

    #[test]
    fn known_sample() {
        // 3..=7: mean 5, SD sqrt(2.5).
        let summary = Summary::of(&s(&[7.0, 3.0, 5.0, 4.0, 6.0]));
        assert_eq!(summary.n, 5);
        assert_eq!(summary.mean, 5.0);
        assert_eq!(summary.median, 5.0);
        let sd = 2.5f64.sqrt();
        assert!((summary.sd.unwrap() - sd).abs() < 1e-12);
        assert!((summary.cv.unwrap() - sd / 5.0).abs() < 1e-12);
        // t(0.975, 4) = 2.776445.
        let half = 2.776445 * sd / 5f64.sqrt();
        assert!((summary.ci.ci_high - 5.0 - half).abs() < 1e-5);
        assert!((summary.ci.ci_low - 5.0 + half).abs() < 1e-5);
        assert_eq!((summary.min, summary.max), (3.0, 7.0));
    }

    #[test]
    fn one_value_has_an_unbounded_interval() {
        let summary = Summary::of(&s(&[42.0]));
        assert_eq!(summary.sd, None);
        assert_eq!(summary.cv, None);
        assert_eq!(summary.ci.ci_low, f64::NEG_INFINITY);
        assert_eq!(summary.ci.ci_high, f64::INFINITY);
        assert_eq!(summary.ci.relative_half_width(), f64::INFINITY);
    }

    #[test]
    fn constant_samples_have_an_exact_interval() {
        let summary = Summary::of(&s(&[3.0, 3.0, 3.0]));
        assert_eq!(summary.sd, Some(0.0));
        assert_eq!((summary.ci.ci_low, summary.ci.ci_high), (3.0, 3.0));
        assert_eq!(summary.ci.relative_half_width(), 0.0);
    }

    #[test]
    fn rounds_summarize_round_means() {
        let rounds = [s(&[1.0, 1.0, 1.0]), s(&[3.0])];
        let summary = Summary::of_rounds(&rounds).unwrap();
        assert_eq!(summary.n, 2);
        assert_eq!(summary.mean, 2.0);
    }
}
