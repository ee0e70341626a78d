//! How the units were laid out in time decides the test:
//!
//! - **alternating** (by start time, consecutive pairs each hold one unit
//!   of either side: A B A B ..., or counterbalanced A B B A A B B A ...):
//!   each unit is paired with its neighbour of the other side (the odd one
//!   out dropped), and the one-sample t-test on d = current - baseline
//!   (K - 1 df) decides. Drift that grows with the time between units
//!   cancels in d, and in the counterbalanced order a steady trend and an
//!   effect of going first cancel too;
//! - **independent units** (two or more per side, not taking turns):
//!   Welch's test on the unit means, Welch-Satterthwaite df;
//! - **one unit on a side**: the data cannot tell drift from a change, so
//!   SE^2 = sigma^2_round (sum(1/r) / n^2 per side) + 2 sigma^2_drift, the
//!   drift from the host's prior or the other side's units, whichever is
//!   larger, and Satterthwaite's df with each term's own.

use serde::{Deserialize, Serialize};

use super::components::Noise;
use super::drift::{self, DriftTerm};
use super::units::Levelled;
use crate::Samples;
use crate::compare::warning::{Sides, Warning};
use crate::compare::welch::{satterthwaite, welch_error};

/// The layout of the units, which chooses the test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Design {
    /// Consecutive units pair up across the sides (A B A B, or A B B A),
    /// at least two units each: paired neighbours.
    Alternating,
    /// At least two units per side, not taking turns: Welch on unit means.
    Independent,
    /// One unit on a side (either): the host's drift widens the CI.
    OneEach,
}

impl Design {
    /// The design of `units`' layout.
    pub(crate) fn of(units: &Levelled, noise: &Noise) -> Design {
        let [a, b] = units.counts();
        if a.min(b) == 1 {
            Design::OneEach
        } else if take_turns(&time_order(units, noise)) {
            Design::Alternating
        } else {
            Design::Independent
        }
    }

    /// The difference this design tests, or why it cannot be tested.
    pub(crate) fn difference(self, units: &Levelled, noise: &Noise) -> Result<Difference, Warning> {
        match self {
            Design::Alternating => Ok(alternating(units, noise)),
            Design::Independent => Ok(independent(noise)),
            Design::OneEach => one_each(units, noise),
        }
    }
}

/// Every unit of both sides in order of start: (its side, its mean).
fn time_order(units: &Levelled, noise: &Noise) -> Vec<(usize, f64)> {
    let mut order: Vec<(i64, usize, f64)> = (0..2)
        .flat_map(|side| {
            let means = noise.means(side).as_slice();
            units.sides[side]
                .iter()
                .zip(means)
                .map(move |(unit, &mean)| (unit.start_ms, side, mean))
        })
        .collect();
    order.sort_by_key(|&(start, _, _)| start);
    order
        .into_iter()
        .map(|(_, side, mean)| (side, mean))
        .collect()
}

/// Whether the units, in time order (see `time_order`), pair up: each
/// consecutive pair (1st and 2nd, 3rd and 4th, ...; an odd last one left
/// out) holds one unit of each side. A B A B does, and so does the
/// counterbalanced A B B A A B B A, which also cancels a steady trend and
/// an effect of going first.
fn take_turns(order: &[(usize, f64)]) -> bool {
    order.chunks_exact(2).all(|pair| pair[0].0 != pair[1].0)
}

/// Neighbours paired: d = current - baseline per consecutive pair.
fn alternating(units: &Levelled, noise: &Noise) -> Difference {
    let d: Vec<f64> = time_order(units, noise)
        .chunks_exact(2)
        .map(|pair| match pair {
            [(0, baseline), (_, current)] | [(_, current), (0, baseline)] => current - baseline,
            _ => unreachable!("the sides take turns"),
        })
        .collect();
    let k = d.len();
    let d = Samples::new(d).expect("two units per side give two pairs");
    let variance = d.variance().expect("two pairs or more");
    Difference {
        point: d.mean(),
        se: (variance / k as f64).sqrt(),
        df: (k - 1) as f64,
        n: 2 * k,
        // Var(d) = 2 (sigma^2_unit + sigma^2_round / r).
        unit_variance: (variance / 2.0 - noise.round_share()).max(0.0),
        drift: None,
    }
}

/// Welch on the unit means of two sides of at least two units each.
fn independent(noise: &Noise) -> Difference {
    let [a, b] = [noise.means(0), noise.means(1)];
    let spread = |s: &Samples| (s.variance().expect("two units"), s.len());
    let (se, df) = welch_error(spread(a), spread(b));
    Difference {
        point: noise.mean_difference(),
        se,
        df,
        n: a.len() + b.len(),
        unit_variance: noise.unit_variance().map_or(0.0, |u| u.variance),
        drift: None,
    }
}

/// One unit on a side: the rounds' share plus twice the drift.
fn one_each(units: &Levelled, noise: &Noise) -> Result<Difference, Warning> {
    let [a, b] = units.counts();
    let drift = drift::larger(units.drift, noise.unit_variance(), a.max(b)).ok_or(
        Warning::NoDriftPrior {
            sides: Sides::of(a == 1, b == 1).expect("a side has one unit"),
        },
    )?;
    let drift_share = 2.0 * drift.sd * drift.sd;
    let round_share = noise.round_share_of_difference();
    let mut terms = vec![(drift_share, drift.df)];
    terms.extend(noise.round().map(|r| (round_share, r.df)));
    let se = (drift_share + round_share).sqrt();
    Ok(Difference {
        point: noise.mean_difference(),
        se,
        df: if se == 0.0 {
            drift.df
        } else {
            satterthwaite(&terms)
        },
        n: a + b,
        unit_variance: drift.sd * drift.sd,
        drift: Some(drift),
    })
}

/// The difference current - baseline of the unit levels that the design's
/// test reads, before its t-test: `se` its standard error on `df` degrees
/// of freedom, from `n` units.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Difference {
    pub(crate) point: f64,
    pub(crate) se: f64,
    pub(crate) df: f64,
    pub(crate) n: usize,
    /// The variance of one unit's level behind `se` (what the plan uses).
    pub(crate) unit_variance: f64,
    /// The drift prior or estimate in `se` (one unit on a side only).
    pub(crate) drift: Option<DriftTerm>,
}

#[cfg(test)]
mod tests {
    use super::super::{Costs, Unit, UnitKind};
    use super::*;

    fn units(layout: &str) -> Levelled {
        let mut sides = [Vec::new(), Vec::new()];
        for (i, c) in layout.chars().enumerate() {
            let side = usize::from(c == 'B');
            sides[side].push(Unit {
                start_ms: 1000 * i as i64,
                round_logs: Samples::new(vec![i as f64, i as f64 + 0.5]).unwrap(),
            });
        }
        let [a, b] = sides;
        let costs = Costs {
            unit_s: 1.0,
            round_s: 1.0,
        };
        Levelled::new(UnitKind::Boot, a, b, None, costs).unwrap()
    }

    #[test]
    fn designs_by_layout() {
        for (layout, design) in [
            ("ABAB", Design::Alternating),
            ("BABA", Design::Alternating),
            ("ABABA", Design::Alternating),
            ("AABB", Design::Independent),
            ("ABBA", Design::Alternating),
            ("ABBAAB", Design::Alternating),
            ("ABAABB", Design::Independent),
            ("AB", Design::OneEach),
            ("ABA", Design::OneEach),
            ("AAAB", Design::OneEach),
        ] {
            let units = units(layout);
            assert_eq!(Design::of(&units, &Noise::of(&units)), design, "{layout}");
        }
    }

    /// Time, not the order given, decides: B's unit listed first but
    /// started between A's two.
    #[test]
    fn turns_are_judged_by_start_time() {
        let unit = |start_ms| Unit {
            start_ms,
            round_logs: Samples::new(vec![0.0]).unwrap(),
        };
        let costs = Costs {
            unit_s: 1.0,
            round_s: 1.0,
        };
        let a = vec![unit(30), unit(10)];
        let b = vec![unit(40), unit(20)];
        let levelled = Levelled::new(UnitKind::Run, a, b, None, costs).unwrap();
        let noise = Noise::of(&levelled);
        assert_eq!(Design::of(&levelled, &noise), Design::Alternating);
    }

    /// A B A B A: unit i's level is i + 0.25, so every pair (A, B) differs
    /// by +1 and the last A is dropped.
    #[test]
    fn neighbours_are_paired_in_time_order() {
        let levelled = units("ABABA");
        let d = alternating(&levelled, &Noise::of(&levelled));
        assert_eq!((d.point, d.se, d.df, d.n), (1.0, 0.0, 1.0, 4));
        let levelled = units("BABA");
        let d = alternating(&levelled, &Noise::of(&levelled));
        assert_eq!(d.point, -1.0);
    }
}
