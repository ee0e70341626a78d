//! Direction-aware verdicts from a ratio's CI and its q-value
//! (docs/statistics.md, "The verdict"):
//! - REGRESSION / IMPROVEMENT: q < alpha and the whole CI lies beyond the
//!   threshold delta on the worse / better side;
//! - NO CHANGE: the whole CI lies within 1 +- delta (equivalence);
//! - INCONCLUSIVE: anything else.
//!
//! CANNOT DECIDE is not decided here: it is the verdict when no test can be
//! made at all (see `undecided`), and it has no q-value.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::Estimate;
use kbench_model::Direction;

/// The outcome of comparing one metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Regression,
    Improvement,
    NoChange,
    Inconclusive,
    /// No test can be made (a side with one observation, no spread on
    /// either side, or rounds against one round); a warning says why.
    CannotDecide,
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Verdict::Regression => "REGRESSION",
            Verdict::Improvement => "IMPROVEMENT",
            Verdict::NoChange => "NO CHANGE",
            Verdict::Inconclusive => "INCONCLUSIVE",
            Verdict::CannotDecide => "CANNOT DECIDE",
        })
    }
}

/// Decides from the CI of a ratio current / baseline, its q-value, the
/// significance level and the threshold (0.01 for 1 %).
pub(crate) fn decide(
    ratio: &Estimate,
    q_value: f64,
    better: Direction,
    alpha: f64,
    threshold: f64,
) -> Verdict {
    let above = ratio.ci_low > 1.0 + threshold;
    let below = ratio.ci_high < 1.0 - threshold;
    let (worse, improved) = match better {
        Direction::Lower => (above, below),
        Direction::Higher => (below, above),
    };
    let significant = q_value < alpha;
    if significant && worse {
        Verdict::Regression
    } else if significant && improved {
        Verdict::Improvement
    } else if ratio.ci_low >= 1.0 - threshold && ratio.ci_high <= 1.0 + threshold {
        Verdict::NoChange
    } else {
        Verdict::Inconclusive
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ratio(ci_low: f64, ci_high: f64) -> Estimate {
        Estimate {
            point: (ci_low + ci_high) / 2.0,
            ci_low,
            ci_high,
            n: 20,
        }
    }

    #[test]
    fn direction_flips_the_sign() {
        let slower = ratio(1.02, 1.04);
        assert_eq!(
            decide(&slower, 0.001, Direction::Lower, 0.05, 0.01),
            Verdict::Regression
        );
        assert_eq!(
            decide(&slower, 0.001, Direction::Higher, 0.05, 0.01),
            Verdict::Improvement
        );
        let faster = ratio(0.96, 0.98);
        assert_eq!(
            decide(&faster, 0.001, Direction::Lower, 0.05, 0.01),
            Verdict::Improvement
        );
        assert_eq!(
            decide(&faster, 0.001, Direction::Higher, 0.05, 0.01),
            Verdict::Regression
        );
    }

    #[test]
    fn needs_both_significance_and_the_whole_ci_beyond_delta() {
        // Significant but the CI reaches into the threshold band.
        let small = ratio(1.005, 1.03);
        assert_eq!(
            decide(&small, 0.001, Direction::Lower, 0.05, 0.01),
            Verdict::Inconclusive
        );
        // Beyond delta but not significant after FDR.
        let big = ratio(1.02, 1.04);
        assert_eq!(
            decide(&big, 0.2, Direction::Lower, 0.05, 0.01),
            Verdict::Inconclusive
        );
    }

    #[test]
    fn equivalence_is_no_change_even_when_significant() {
        let tiny = ratio(1.001, 1.004);
        assert_eq!(
            decide(&tiny, 0.001, Direction::Lower, 0.05, 0.01),
            Verdict::NoChange
        );
        let exact = ratio(1.0, 1.0);
        assert_eq!(
            decide(&exact, 1.0, Direction::Lower, 0.05, 0.0),
            Verdict::NoChange
        );
    }

    #[test]
    fn unbounded_ci_is_inconclusive() {
        let unknown = ratio(0.0, f64::INFINITY);
        assert_eq!(
            decide(&unknown, 1.0, Direction::Higher, 0.05, 0.01),
            Verdict::Inconclusive
        );
    }

    #[test]
    fn display_is_the_report_form() {
        assert_eq!(Verdict::NoChange.to_string(), "NO CHANGE");
        assert_eq!(Verdict::CannotDecide.to_string(), "CANNOT DECIDE");
    }
}
