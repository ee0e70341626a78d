//! One side of an A/B comparison and the observations its test uses.
//!
//! With several rounds (fresh invocations) the round is the unit of
//! replication: each round contributes its mean, so the test sees the
//! between-round variance (Kalibera and Jones, "Rigorous Benchmarking in
//! Reasonable Time", 2013). With one round the raw samples are used and
//! drift between invocations goes unseen.

use crate::{Samples, StatsError};

/// Positive observations of one identifier for one metric.
#[derive(Debug, Clone, PartialEq)]
pub struct Side {
    observations: Samples,
    logs: Samples,
    rounds: usize,
}

impl Side {
    /// One round of raw samples. Values must be positive (ratios are
    /// differences of logs); a value <= 0 is an error, not a fallback.
    pub fn new(samples: Samples) -> Result<Side, StatsError> {
        let logs = samples.ln()?;
        Ok(Side {
            observations: samples,
            logs,
            rounds: 1,
        })
    }

    /// Several rounds: the per-round means become the observations. One
    /// round is the same as [`Side::new`].
    pub fn from_rounds(rounds: &[Samples]) -> Result<Side, StatsError> {
        match rounds {
            [] => Err(StatsError::NoRounds),
            [single] => Side::new(single.clone()),
            _ => {
                for round in rounds {
                    round.ln()?;
                }
                let mut side = Side::new(Samples::round_means(rounds)?)?;
                side.rounds = rounds.len();
                Ok(side)
            }
        }
    }

    /// Raw samples (one round) or per-round means (several).
    pub fn observations(&self) -> &Samples {
        &self.observations
    }

    /// Natural logs of the observations.
    pub fn logs(&self) -> &Samples {
        &self.logs
    }

    pub fn rounds(&self) -> usize {
        self.rounds
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(values: &[f64]) -> Samples {
        Samples::new(values.to_vec()).unwrap()
    }

    #[test]
    fn one_round_keeps_raw_samples() {
        let side = Side::from_rounds(&[s(&[1.0, 2.0, 4.0])]).unwrap();
        assert_eq!(side.rounds(), 1);
        assert_eq!(side.observations().len(), 3);
    }

    #[test]
    fn rounds_become_round_means() {
        let side = Side::from_rounds(&[s(&[1.0, 3.0]), s(&[4.0, 4.0, 4.0])]).unwrap();
        assert_eq!(side.rounds(), 2);
        assert_eq!(side.observations().as_slice(), &[2.0, 4.0]);
    }

    #[test]
    fn non_positive_values_are_rejected() {
        assert!(matches!(
            Side::new(s(&[1.0, -1.0])),
            Err(StatsError::NonPositive { index: 1, .. })
        ));
        // A zero hidden inside a round whose mean is positive.
        assert!(Side::from_rounds(&[s(&[0.0, 2.0]), s(&[1.0])]).is_err());
        assert_eq!(Side::from_rounds(&[]), Err(StatsError::NoRounds));
    }
}
