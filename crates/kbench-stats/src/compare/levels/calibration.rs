//! The host's drift measured: A/A units of one unchanged system, in turn
//! (`kbench calibrate`).

use super::drift::{Drift, DriftSource};
use super::units::Unit;
use crate::{Samples, StatsError};

impl Drift {
    /// The drift of identical units measured in turn (A/A: one system,
    /// unchanged), in time order: consecutive units pair up (1st with 2nd,
    /// 3rd with 4th; an odd last one is left out), d is each pair's
    /// difference of unit means, sigma^2 = Var(d) / 2 on pairs - 1 df.
    /// The rounds' share of a unit mean stays in: a comparison of one unit
    /// per side adds the rounds again, so the prior errs wide. At least two
    /// pairs.
    pub fn calibrated(units: &[Unit], at_ms: i64) -> Result<Drift, StatsError> {
        let differences: Vec<f64> = units
            .chunks_exact(2)
            .map(|pair| pair[1].round_logs.mean() - pair[0].round_logs.mean())
            .collect();
        let pairs = differences.len();
        let variance = Samples::new(differences)
            .ok()
            .and_then(|d| d.variance())
            .ok_or(StatsError::TooFewPairs { pairs })?;
        Ok(Drift {
            variance: variance / 2.0,
            df: (pairs - 1) as f64,
            source: DriftSource::Calibrated { pairs, at_ms },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(mean: f64) -> Unit {
        Unit {
            start_ms: 0,
            round_logs: Samples::new(vec![mean - 0.01, mean + 0.01]).unwrap(),
        }
    }

    /// Pairs (0, 0.02), (0.01, 0.01), (0.03, -0.01): d = 0.02, 0, -0.04,
    /// Var(d) = 0.00093..., sigma^2 half of it, on 2 df; the fifth unit has
    /// no partner.
    #[test]
    fn calibrated_from_consecutive_pairs() {
        let units: Vec<Unit> = [0.0, 0.02, 0.01, 0.01, 0.03, -0.01, 0.5]
            .into_iter()
            .map(unit)
            .collect();
        let drift = Drift::calibrated(&units[..7], 42).unwrap();
        let d = [0.02f64, 0.0, -0.04];
        let mean = d.iter().sum::<f64>() / 3.0;
        let var = d.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / 2.0;
        assert!((drift.variance - var / 2.0).abs() < 1e-15, "{drift:?}");
        assert_eq!(drift.df, 2.0);
        assert_eq!(
            drift.source,
            DriftSource::Calibrated {
                pairs: 3,
                at_ms: 42
            }
        );
        assert_eq!(
            Drift::calibrated(&units[..3], 0),
            Err(StatsError::TooFewPairs { pairs: 1 })
        );
    }
}
