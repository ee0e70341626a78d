//! Warnings that qualify an A/B verdict: reasons to distrust or re-measure.
//!
//! - too few samples (n < 5 on a side; docs/statistics.md's minimum);
//! - one round: drift between invocations cannot be ruled out (Kalibera
//!   and Jones 2013);
//! - outliers: beyond Tukey's 3 IQR fences and the MAD rule (see
//!   `outliers::severe_outliers`);
//! - bimodal: two separated modes (see `bimodal`);
//! - variance-only change: the spread of the logs differs at 0.01 while the
//!   means do not. Tested by Brown and Forsythe ("Robust Tests for the
//!   Equality of Variances", JASA 69, 1974): a t-test (Welch's here) on the
//!   absolute deviations from each side's median. Unlike the F-test of the
//!   variances (Box 1953), one outlier does not make it fire;
//! - Welch's t-test and the Mann-Whitney cross-check disagree clearly;
//! - why a metric is CANNOT DECIDE (see `undecided`).

use std::fmt;

use serde::{Deserialize, Serialize};

use super::side::Side;
use super::welch::welch;
use crate::Samples;
use crate::bimodal::is_bimodal;
use crate::outliers::severe_outliers;

/// Fewer observations than this on a side is too few.
pub const MIN_SAMPLES: usize = 5;
/// Level of the test for a variance-only change.
const VARIANCE_ALPHA: f64 = 0.01;
/// The cross-check clearly disagrees when one p is below alpha and the
/// other at least this many times alpha (0.2 at alpha 0.05).
const DISAGREEMENT: f64 = 4.0;

/// Which side of a comparison a warning is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Sides {
    Baseline,
    Current,
    Both,
}

impl Sides {
    pub(crate) fn of(baseline: bool, current: bool) -> Option<Sides> {
        match (baseline, current) {
            (true, true) => Some(Sides::Both),
            (true, false) => Some(Sides::Baseline),
            (false, true) => Some(Sides::Current),
            (false, false) => None,
        }
    }
}

/// A reason to distrust or re-measure a comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Warning {
    /// Fewer than [`MIN_SAMPLES`] observations on a side.
    TooFewSamples { baseline: usize, current: usize },
    /// Measured in a single invocation.
    OneRound { sides: Sides },
    /// Observations beyond the severe Tukey fences and the MAD rule.
    OutliersPresent { baseline: usize, current: usize },
    /// Two separated modes: the mean describes neither.
    Bimodal { sides: Sides },
    /// Spread changed (current SD / baseline SD of logs) but not the mean.
    VarianceOnlyChange { sd_ratio: f64, p_value: f64 },
    /// Welch's t-test (which decides) and the Mann-Whitney cross-check
    /// disagree: one is significant, the other clearly not.
    TestsDisagree { p_welch: f64, p_mwu: f64 },
    /// CANNOT DECIDE: a side has one observation, so no spread to test with.
    SingleObservation { sides: Sides },
    /// CANNOT DECIDE: all observations are equal within each side.
    NoSpread,
    /// CANNOT DECIDE: one side's observations are round means, the other's
    /// the raw samples of a single round.
    MixedRounds {
        baseline_rounds: usize,
        current_rounds: usize,
    },
    /// CANNOT DECIDE: one unit on a side (measured apart) cannot tell the
    /// host's drift from a change, and no drift prior was given.
    NoDriftPrior { sides: Sides },
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Warning::TooFewSamples { baseline, current } => write!(
                f,
                "too few samples: {baseline} vs {current}, at least {MIN_SAMPLES} needed"
            ),
            Warning::OneRound { sides } => write!(
                f,
                "one round ({}): drift between invocations cannot be ruled out",
                sides.name()
            ),
            Warning::OutliersPresent { baseline, current } => {
                write!(f, "outliers: {baseline} in baseline, {current} in current")
            }
            Warning::Bimodal { sides } => write!(f, "bimodal samples ({})", sides.name()),
            Warning::VarianceOnlyChange { sd_ratio, p_value } => write!(
                f,
                "variance changed (SD x{sd_ratio:.2}, p = {p_value:.2e}) but not the mean"
            ),
            Warning::TestsDisagree { p_welch, p_mwu } => write!(
                f,
                "Welch's t-test (p = {p_welch:.2e}, decides) and the Mann-Whitney cross-check \
                 (p = {p_mwu:.2e}) disagree: look at the distributions (skew, outliers, modes)"
            ),
            Warning::SingleObservation { sides } => write!(
                f,
                "cannot decide: one observation ({}) has no spread to test with; \
                 measure more samples or rounds",
                sides.name()
            ),
            Warning::NoSpread => f.write_str(
                "cannot decide: all observations are equal within each side, so no test can \
                 tell a change from noise; measure more, or with a finer clock",
            ),
            Warning::MixedRounds {
                baseline_rounds,
                current_rounds,
            } => {
                let (rounds, (single, other)) = if baseline_rounds > current_rounds {
                    (baseline_rounds, ("current", "baseline"))
                } else {
                    (current_rounds, ("baseline", "current"))
                };
                write!(
                    f,
                    "cannot decide: the {other} was measured in {rounds} rounds, the {single} in \
                     one; round means and one round's samples are different units, so they are \
                     not compared; measure the {single} with `kbench run --rounds {rounds}`"
                )
            }
            Warning::NoDriftPrior { sides } => write!(
                f,
                "cannot decide: one unit ({}) cannot tell the host's drift from a change, and \
                 no drift prior was given; calibrate the host or measure more units",
                sides.name()
            ),
        }
    }
}

impl Sides {
    fn name(self) -> &'static str {
        match self {
            Sides::Baseline => "baseline",
            Sides::Current => "current",
            Sides::Both => "both sides",
        }
    }
}

/// The warnings for one comparison; `test_variance` asks for the
/// variance-only check (for a decided metric whose means do not differ).
pub(crate) fn warnings(baseline: &Side, current: &Side, test_variance: bool) -> Vec<Warning> {
    let (a, b) = (baseline.observations(), current.observations());
    let mut warnings = Vec::new();
    if a.len().min(b.len()) < MIN_SAMPLES {
        warnings.push(Warning::TooFewSamples {
            baseline: a.len(),
            current: b.len(),
        });
    }
    if let Some(sides) = Sides::of(baseline.rounds() == 1, current.rounds() == 1) {
        warnings.push(Warning::OneRound { sides });
    }
    let outliers = (severe_outliers(a).len(), severe_outliers(b).len());
    if outliers != (0, 0) {
        warnings.push(Warning::OutliersPresent {
            baseline: outliers.0,
            current: outliers.1,
        });
    }
    if let Some(sides) = Sides::of(is_bimodal(a), is_bimodal(b)) {
        warnings.push(Warning::Bimodal { sides });
    }
    if test_variance {
        warnings.extend(variance_only_change(baseline, current));
    }
    warnings
}

/// The cross-check: a warning when exactly one of Welch's p and
/// Mann-Whitney's is below `alpha` and the other at least
/// [`DISAGREEMENT`] times it. The verdict still follows Welch.
pub(crate) fn cross_check(p_welch: f64, p_mwu: f64, alpha: f64) -> Option<Warning> {
    let clearly = |significant: f64, not: f64| significant < alpha && not >= DISAGREEMENT * alpha;
    (clearly(p_welch, p_mwu) || clearly(p_mwu, p_welch))
        .then_some(Warning::TestsDisagree { p_welch, p_mwu })
}

/// Brown-Forsythe on the logs; silent when a side has a single value or
/// no spread (the SD ratio is then undefined).
fn variance_only_change(baseline: &Side, current: &Side) -> Option<Warning> {
    let (a, b) = (baseline.logs(), current.logs());
    let (sa, sb) = (a.sd()?, b.sd()?);
    if sa == 0.0 || sb == 0.0 {
        return None;
    }
    let test = welch(&deviations(a), &deviations(b), 1.0 - VARIANCE_ALPHA)?;
    (test.p_value < VARIANCE_ALPHA).then_some(Warning::VarianceOnlyChange {
        sd_ratio: sb / sa,
        p_value: test.p_value,
    })
}

/// |x - median| for each value.
fn deviations(samples: &Samples) -> Samples {
    let median = samples.median();
    let values = samples
        .as_slice()
        .iter()
        .map(|x| (x - median).abs())
        .collect();
    Samples::new(values).expect("finite values have finite deviations")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn side(values: &[f64]) -> Side {
        Side::new(Samples::new(values.to_vec()).unwrap()).unwrap()
    }

    #[test]
    fn small_single_round_sides() {
        let w = warnings(&side(&[1.0, 1.1]), &side(&[1.0, 1.2, 1.1, 1.0, 1.05]), true);
        assert_eq!(
            w[0],
            Warning::TooFewSamples {
                baseline: 2,
                current: 5
            }
        );
        assert_eq!(w[1], Warning::OneRound { sides: Sides::Both });
        assert_eq!(w.len(), 2);
    }

    #[test]
    fn rounds_silence_the_one_round_warning() {
        let rounds: Vec<Samples> = (0..5)
            .map(|i| Samples::new(vec![10.0 + i as f64 * 0.1]).unwrap())
            .collect();
        let a = Side::from_rounds(&rounds).unwrap();
        let w = warnings(&a, &side(&[10.0, 10.1, 10.2, 10.3, 10.4]), true);
        assert_eq!(
            w,
            vec![Warning::OneRound {
                sides: Sides::Current
            }]
        );
    }

    #[test]
    fn spread_alone_changed() {
        let tight = [100.0, 100.1, 99.9, 100.05, 99.95, 100.02, 99.98, 100.0];
        let loose = [100.0, 103.0, 97.0, 101.5, 98.5, 102.0, 98.0, 100.0];
        let w = warnings(&side(&tight), &side(&loose), true);
        let Some(Warning::VarianceOnlyChange { sd_ratio, p_value }) = w.last() else {
            panic!("{w:?}");
        };
        assert!(*sd_ratio > 10.0 && *p_value < 0.01);
        // Not a variance-only change when the means differ too.
        assert!(
            !warnings(&side(&tight), &side(&loose), false)
                .iter()
                .any(|w| matches!(w, Warning::VarianceOnlyChange { .. }))
        );
    }

    #[test]
    fn outliers_are_counted_per_side() {
        let clean = [10.0, 10.1, 9.9, 10.0, 10.2, 9.8];
        let dirty = [10.0, 10.1, 9.9, 10.0, 10.2, 99.0];
        let w = warnings(&side(&clean), &side(&dirty), true);
        assert!(w.contains(&Warning::OutliersPresent {
            baseline: 0,
            current: 1
        }));
    }

    #[test]
    fn cross_check_warns_only_on_a_clear_disagreement() {
        let disagree = |pw, pm| cross_check(pw, pm, 0.05).is_some();
        assert!(disagree(0.001, 0.3) && disagree(0.3, 0.001));
        assert!(!disagree(0.001, 0.002), "both significant");
        assert!(!disagree(0.3, 0.6), "neither");
        assert!(!disagree(0.04, 0.07), "borderline is not clear");
    }

    #[test]
    fn mixed_rounds_say_which_side_to_measure_how() {
        let w = Warning::MixedRounds {
            baseline_rounds: 1,
            current_rounds: 3,
        };
        let text = w.to_string();
        assert!(text.contains("the current was measured in 3 rounds, the baseline in one"));
        assert!(text.contains("measure the baseline with `kbench run --rounds 3`"));
    }

    #[test]
    fn messages() {
        let w = Warning::OneRound { sides: Sides::Both };
        assert_eq!(
            w.to_string(),
            "one round (both sides): drift between invocations cannot be ruled out"
        );
    }
}
