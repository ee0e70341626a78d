//! Adaptive rounds (`kbench run` without `--rounds`): the decision uses
//! the round means (the round is compare's unit of replication), so the
//! sampling targets their precision. Rounds are short and numerous; a test
//! gets no more rounds once the CI of the mean of its round means is
//! within the target, or once its rounds used its time budget, and never
//! before its minimum of rounds. Skipped and failed tests get no more.

use crate::error::{Result, invalid};
use crate::plan::{SHORT_ROUND, SamplingPlan};
use crate::sampler::relative_ci;
use kbench_model::TestKey;
use kbench_store::{TestOutcome, TestOutcomeKind};
use std::collections::HashMap;
use std::time::Duration;

/// When a test has had rounds enough.
#[derive(Debug, Clone, PartialEq)]
pub struct AdaptiveRounds {
    pub min_rounds: u32,
    /// CI half-width of the mean of the round means, a fraction of it.
    pub target_ci: f64,
    /// Time per test, all its rounds together.
    pub budget: Duration,
}

/// Adaptive rounds are short ([`SHORT_ROUND`], unless the user chose
/// `--max-time`), at least 5 (Welch on round means needs a few degrees of
/// freedom)...
pub const MIN_ROUNDS: u32 = 5;
/// ...and at most this many per test...
pub const MAX_ROUNDS: u32 = 100;
/// ...within this many seconds per test once the minimum is done, unless
/// chosen (`--budget`; variants' blocks too): the quick suite then takes
/// about a minute per identifier.
pub const BUDGET_SECONDS: f64 = 3.5;

impl AdaptiveRounds {
    /// Adaptive rounds of `plan` within `budget_seconds` per test; the
    /// plan's rounds become short unless their time was chosen.
    pub fn for_plan(plan: &mut SamplingPlan, budget_seconds: f64) -> Result<AdaptiveRounds> {
        if !plan.max_time_chosen {
            plan.max_time = SHORT_ROUND;
        }
        Ok(AdaptiveRounds {
            min_rounds: MIN_ROUNDS,
            target_ci: plan.target_ci,
            budget: budget(budget_seconds)?,
        })
    }
}

/// `--budget` as a duration, checked.
pub fn budget(seconds: f64) -> Result<Duration> {
    if !(seconds.is_finite() && seconds > 0.0 && seconds <= 86_400.0) {
        invalid!("--budget {seconds} must be a number of seconds above 0 (at most a day)");
    }
    Ok(Duration::from_secs_f64(seconds))
}

/// What each test's rounds so far gave.
#[derive(Debug, Default)]
pub(crate) struct RoundsSoFar {
    tests: HashMap<TestKey, TestRounds>,
}

#[derive(Debug, Default)]
struct TestRounds {
    means: Vec<f64>,
    spent: Duration,
    ended: bool,
}

impl RoundsSoFar {
    /// Records one round of `test`: its outcome, main-metric values and time.
    pub(crate) fn record(&mut self, outcome: &TestOutcome, values: &[f64], took: Duration) {
        let rounds = self.tests.entry(outcome.test.clone()).or_default();
        rounds.spent += took;
        if !values.is_empty() {
            rounds
                .means
                .push(values.iter().sum::<f64>() / values.len() as f64);
        }
        rounds.ended |= matches!(
            outcome.kind,
            TestOutcomeKind::Skipped | TestOutcomeKind::Failed
        );
    }

    /// Whether `test` needs no more rounds under `plan`.
    pub(crate) fn settled(&self, test: &TestKey, plan: &AdaptiveRounds) -> bool {
        let Some(rounds) = self.tests.get(test) else {
            return false;
        };
        rounds.ended
            || rounds.means.len() >= plan.min_rounds as usize
                && (relative_ci(&rounds.means) <= plan.target_ci || rounds.spent >= plan.budget)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(kind: TestOutcomeKind) -> TestOutcome {
        TestOutcome {
            test: TestKey::new("t"),
            kind,
            detail: String::new(),
        }
    }

    const PLAN: AdaptiveRounds = AdaptiveRounds {
        min_rounds: 3,
        target_ci: 0.01,
        budget: Duration::from_secs(1),
    };

    #[test]
    fn a_test_settles_on_precision_or_budget_after_its_minimum() {
        let key = TestKey::new("t");
        let mut quiet = RoundsSoFar::default();
        for _ in 0..2 {
            quiet.record(
                &outcome(TestOutcomeKind::TargetMet),
                &[100.0],
                Duration::ZERO,
            );
        }
        assert!(!quiet.settled(&key, &PLAN), "minimum not reached");
        quiet.record(
            &outcome(TestOutcomeKind::TargetMet),
            &[100.1],
            Duration::ZERO,
        );
        assert!(quiet.settled(&key, &PLAN), "within 1 %");

        let mut noisy = RoundsSoFar::default();
        let ms = Duration::from_millis(300);
        for value in [100.0, 130.0, 90.0] {
            noisy.record(&outcome(TestOutcomeKind::BudgetHit), &[value], ms);
        }
        assert!(!noisy.settled(&key, &PLAN), "noisy and within budget");
        noisy.record(&outcome(TestOutcomeKind::BudgetHit), &[120.0], ms);
        assert!(noisy.settled(&key, &PLAN), "budget spent");
    }

    #[test]
    fn skipped_tests_settle_at_once() {
        let mut rounds = RoundsSoFar::default();
        rounds.record(&outcome(TestOutcomeKind::Skipped), &[], Duration::ZERO);
        assert!(rounds.settled(&TestKey::new("t"), &PLAN));
        assert!(!rounds.settled(&TestKey::new("other"), &PLAN));
    }
}
