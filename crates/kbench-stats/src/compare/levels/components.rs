//! The noise at each level, on logs: within a unit (between its rounds)
//! and between units (each unit's own level), by the method of moments.
//!
//! - A unit's mean is the mean of its round logs.
//! - sigma^2_round: the within-unit variance of round logs, pooled over
//!   every unit of both sides (df = sum(r_i - 1)); unknown when every unit
//!   has one round.
//! - sigma^2_unit: the variance of unit means within each side, pooled
//!   over the sides, less the rounds' share sigma^2_round / r (r the
//!   harmonic mean of rounds per unit), floored at 0.

use serde::{Deserialize, Serialize};

use super::drift::DriftTerm;
use super::pooled::Pooled;
use super::units::Levelled;
use crate::Samples;

/// The noise behind a levelled comparison, as SDs on logs (about relative
/// SDs: 0.03 is about 3 %).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Components {
    /// SD of one unit's level as the deciding test saw it: between the
    /// units of each side (independent units), between neighbouring units
    /// (alternating: what pairing leaves of slow drift), or the host's
    /// drift (one unit on a side, see `drift`).
    pub unit_sd: f64,
    /// SD of one round's log within its unit; `None` (JSON `null`) when
    /// every unit had one round (the unit level then carries it all).
    pub round_sd: Option<f64>,
    /// Rounds per unit: the harmonic mean over the units of both sides.
    pub rounds_per_unit: f64,
    /// Degrees of freedom of the test that decided.
    pub df: f64,
    /// The host's drift the test assumed: one unit on a side only.
    pub drift: Option<DriftTerm>,
}

impl Components {
    /// sigma^2 of a unit's level.
    pub(crate) fn unit_variance(&self) -> f64 {
        self.unit_sd * self.unit_sd
    }

    /// sigma^2 of a round within its unit; 0 when unknown.
    pub(crate) fn round_variance(&self) -> f64 {
        self.round_sd.map_or(0.0, |sd| sd * sd)
    }
}

/// What the units of one comparison show, for the designs' tests.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Noise {
    /// Each side's unit means in the order given: [baseline, current].
    means: [Samples; 2],
    /// Per side, the sum over its units of 1 / rounds.
    inverse_rounds: [f64; 2],
    round: Option<Pooled>,
    rounds_per_unit: f64,
}

impl Noise {
    pub(crate) fn of(units: &Levelled) -> Noise {
        let means = units.sides.each_ref().map(|side| {
            let means = side.iter().map(|u| u.round_logs.mean()).collect();
            Samples::new(means).expect("a side has units of finite logs")
        });
        let inverse_rounds = units
            .sides
            .each_ref()
            .map(|side| side.iter().map(|u| 1.0 / u.round_logs.len() as f64).sum());
        let all = units.sides.iter().flatten();
        let count = all.clone().count() as f64;
        Noise {
            means,
            round: Pooled::of(all.map(|u| &u.round_logs)),
            rounds_per_unit: count / (inverse_rounds[0] + inverse_rounds[1]),
            inverse_rounds,
        }
    }

    /// One side's unit means (0 baseline, 1 current), in the order given.
    pub(crate) fn means(&self, side: usize) -> &Samples {
        &self.means[side]
    }

    /// The mean of current's unit means less the baseline's.
    pub(crate) fn mean_difference(&self) -> f64 {
        self.means[1].mean() - self.means[0].mean()
    }

    /// sigma^2_round pooled over both sides; `None` with one round per unit.
    pub(crate) fn round(&self) -> Option<Pooled> {
        self.round
    }

    /// Harmonic mean of rounds per unit, both sides.
    pub(crate) fn rounds_per_unit(&self) -> f64 {
        self.rounds_per_unit
    }

    /// The rounds' share of the variance of one unit mean:
    /// sigma^2_round / r (0 when unknown).
    pub(crate) fn round_share(&self) -> f64 {
        self.round
            .map_or(0.0, |r| r.variance / self.rounds_per_unit)
    }

    /// The rounds' share of the variance of the difference of the side
    /// means: sigma^2_round sum(1 / r_i) / n^2 over each side's units.
    pub(crate) fn round_share_of_difference(&self) -> f64 {
        let share =
            |side: usize| self.inverse_rounds[side] / (self.means[side].len() as f64).powi(2);
        self.round
            .map_or(0.0, |r| r.variance * (share(0) + share(1)))
    }

    /// sigma^2_unit within the sides (method of moments, floored at 0) with
    /// the degrees of freedom of the unit means; `None` when no side has
    /// two units.
    pub(crate) fn unit_variance(&self) -> Option<Pooled> {
        let means = Pooled::of(self.means.iter())?;
        Some(Pooled {
            variance: (means.variance - self.round_share()).max(0.0),
            df: means.df,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Costs, Levelled, Unit, UnitKind};
    use super::*;

    fn unit(start_ms: i64, logs: &[f64]) -> Unit {
        Unit {
            start_ms,
            round_logs: Samples::new(logs.to_vec()).unwrap(),
        }
    }

    fn noise(baseline: Vec<Unit>, current: Vec<Unit>) -> Noise {
        let costs = Costs {
            unit_s: 1.0,
            round_s: 1.0,
        };
        Noise::of(&Levelled::new(UnitKind::Run, baseline, current, None, costs).unwrap())
    }

    /// By hand: units (0, 2), (10, 12, 14) | (1, 3, 5, 7).
    /// Within: squares 2 + 8 + 20 = 30 on 1 + 2 + 3 = 6 df: 5.
    /// Means 1, 12 | 4: baseline's variance 60.5 on 1 df (current has one
    /// unit): 60.5. Harmonic rounds 3 / (1/2 + 1/3 + 1/4) = 36 / 13.
    /// sigma^2_unit = 60.5 - 5 * 13 / 36.
    #[test]
    fn moments_by_hand() {
        let n = noise(
            vec![unit(0, &[0.0, 2.0]), unit(1, &[10.0, 12.0, 14.0])],
            vec![unit(2, &[1.0, 3.0, 5.0, 7.0])],
        );
        assert_eq!(
            n.round(),
            Some(Pooled {
                variance: 5.0,
                df: 6.0
            })
        );
        assert!((n.rounds_per_unit() - 36.0 / 13.0).abs() < 1e-12);
        let unit = n.unit_variance().unwrap();
        assert!((unit.variance - (60.5 - 5.0 * 13.0 / 36.0)).abs() < 1e-12);
        assert_eq!(unit.df, 1.0);
        assert_eq!(n.mean_difference(), 4.0 - 6.5);
        // 5 (1/2 + 1/3) / 4 + 5 (1/4) / 1.
        let share = 5.0 * (1.0 / 2.0 + 1.0 / 3.0) / 4.0 + 5.0 / 4.0;
        assert!((n.round_share_of_difference() - share).abs() < 1e-12);
    }

    /// Unit means closer together than their rounds allow: floored at 0.
    #[test]
    fn unit_variance_is_floored_at_zero() {
        let n = noise(
            vec![unit(0, &[0.0, 1.0]), unit(1, &[1.0, 0.0])],
            vec![unit(2, &[0.5, 0.6]), unit(3, &[0.6, 0.5])],
        );
        assert_eq!(n.unit_variance().unwrap().variance, 0.0);
    }

    /// One round per unit: no within-unit variance, no rounds' share.
    #[test]
    fn single_rounds_leave_the_round_level_unknown() {
        let n = noise(
            vec![unit(0, &[0.0]), unit(1, &[0.1])],
            vec![unit(2, &[0.3])],
        );
        assert_eq!(n.round(), None);
        assert_eq!((n.round_share(), n.round_share_of_difference()), (0.0, 0.0));
        assert!((n.unit_variance().unwrap().variance - 0.005).abs() < 1e-12);
        assert_eq!(n.rounds_per_unit(), 1.0);
    }
}
