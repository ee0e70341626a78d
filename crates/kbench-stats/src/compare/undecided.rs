//! When no test can decide a metric. Such a metric is CANNOT DECIDE, has
//! no p- or q-value, and stays out of the Benjamini-Hochberg family: a
//! made-up p (1, or 0) would move every other metric's q.
//!
//! - Rounds against one round: per-round means and the raw samples of one
//!   round are different units (the spread between invocations is not the
//!   spread within one). On their common unit, the round, the one-round
//!   side has a single observation: so they are refused, not mixed.
//! - A side with one observation: Welch's standard error needs a variance
//!   on each side.
//! - No spread on either side: the standard error is zero, so any
//!   difference would be infinitely significant (a REGRESSION from 2 + 2
//!   equal values) and any equality certain. One constant side against a
//!   noisy one is decidable: Welch takes the variance from the other side.

use super::side::Side;
use super::warning::{Sides, Warning};

/// The reason no test can decide `current` against `baseline`, if any.
pub(crate) fn reason(baseline: &Side, current: &Side) -> Option<Warning> {
    let (rounds_a, rounds_b) = (baseline.rounds(), current.rounds());
    if (rounds_a > 1) != (rounds_b > 1) {
        return Some(Warning::MixedRounds {
            baseline_rounds: rounds_a,
            current_rounds: rounds_b,
        });
    }
    let (a, b) = (baseline.logs(), current.logs());
    if let Some(sides) = Sides::of(a.len() == 1, b.len() == 1) {
        return Some(Warning::SingleObservation { sides });
    }
    (a.variance() == Some(0.0) && b.variance() == Some(0.0)).then_some(Warning::NoSpread)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Samples;

    fn s(values: &[f64]) -> Samples {
        Samples::new(values.to_vec()).unwrap()
    }

    fn side(values: &[f64]) -> Side {
        Side::new(s(values)).unwrap()
    }

    #[test]
    fn reasons() {
        assert_eq!(
            reason(&side(&[5.0]), &side(&[5.0, 6.0])),
            Some(Warning::SingleObservation {
                sides: Sides::Baseline
            })
        );
        assert_eq!(
            reason(&side(&[5.0, 5.0]), &side(&[6.0, 6.0])),
            Some(Warning::NoSpread)
        );
        let rounds = Side::from_rounds(&[s(&[5.0, 5.1]), s(&[5.2]), s(&[5.0])]).unwrap();
        assert_eq!(
            reason(&side(&[5.0, 5.1, 4.9]), &rounds),
            Some(Warning::MixedRounds {
                baseline_rounds: 1,
                current_rounds: 3
            })
        );
    }

    #[test]
    fn one_constant_side_is_decidable() {
        assert_eq!(
            reason(&side(&[5.0, 5.0, 5.0]), &side(&[5.0, 5.1, 4.9])),
            None
        );
        let rounds = |v: f64| Side::from_rounds(&[s(&[v]), s(&[v * 1.01])]).unwrap();
        assert_eq!(reason(&rounds(5.0), &rounds(6.0)), None);
    }
}
