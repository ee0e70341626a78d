//! Why a result moved: the secondary metrics of its test (the measuring
//! task's counters, the system monitors, an external tool's rusage;
//! [`kbench_model::secondary_family`]) compared between the baseline and
//! an identifier.
//!
//! Each secondary metric is one value per round, 0 in a round whose family
//! was recorded but which has no sample of it (the store keeps positive
//! values only). The change is the difference of the per-round means with
//! Welch's 95 % CI, since counts per operation are often 0 and have no
//! ratio. Its q-value is Benjamini-Hochberg over the test's secondary
//! metrics of its family (`perf`, `vmstat`, ...) for that pair: the
//! results' q-values, verdicts and geometric mean never see them.

use kbench_model::results::{IdentifierData, ResultSetData, RunRecord};
use kbench_model::{COUNTER_PREFIX, TestKey, TestSpec, secondary_family, secondary_label};
use kbench_stats::compare::{benjamini_hochberg, welch};
use kbench_stats::{Estimate, Samples, Verdict};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// The significance level of a secondary change (after FDR).
const ALPHA: f64 = 0.05;

/// What changed beside one result of one identifier.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Explanation {
    /// Every secondary metric both sides recorded, the largest relative
    /// change first.
    pub changes: Vec<SecondaryChange>,
    /// What could not be recorded on either side ("instructions/op n/a
    /// (no PMU)").
    pub unavailable: Vec<String>,
}

/// One secondary metric, baseline against identifier.
#[derive(Debug, Clone, Serialize)]
pub struct SecondaryChange {
    /// `perf.context_switches_per_op`.
    pub metric: String,
    /// "context switches/op".
    pub label: String,
    pub unit: String,
    pub baseline_mean: f64,
    pub current_mean: f64,
    /// Identifier minus baseline, per round, with its 95 % CI.
    pub difference: Estimate,
    pub p_value: f64,
    pub q_value: f64,
    /// q below 0.05 and a CI that excludes 0.
    pub significant: bool,
}

impl SecondaryChange {
    /// The change relative to the larger of the two means (0 when both
    /// are 0): what "largest first" orders by.
    fn relative(&self) -> f64 {
        let scale = self.baseline_mean.abs().max(self.current_mean.abs());
        if scale > 0.0 {
            self.difference.point.abs() / scale
        } else {
            0.0
        }
    }
}

impl Explanation {
    /// The significant changes that go the way of `verdict`: up for a
    /// REGRESSION (more counted per operation is worse), down for an
    /// IMPROVEMENT; none for any other verdict. Largest first.
    pub fn why(&self, verdict: Verdict) -> Vec<&SecondaryChange> {
        let sign = match verdict {
            Verdict::Regression => 1.0,
            Verdict::Improvement => -1.0,
            _ => return vec![],
        };
        self.changes
            .iter()
            .filter(|c| c.significant && c.difference.point * sign > 0.0)
            .collect()
    }
}

/// The secondary metrics of each test (benchmark and options), in the
/// set's order of tests: made once per report, so that finding a test's
/// secondary metrics is a lookup and not a scan of every test (a set of
/// 10,000 tests would otherwise compare 10,000^2 keys).
pub(crate) struct Secondaries<'a> {
    /// Keyed by the test's key without its metric ([`test_of`]).
    by_test: BTreeMap<TestKey, Vec<&'a TestSpec>>,
}

impl<'a> Secondaries<'a> {
    pub(crate) fn of(data: &'a ResultSetData) -> Secondaries<'a> {
        let mut by_test: BTreeMap<TestKey, Vec<&TestSpec>> = BTreeMap::new();
        for spec in &data.tests {
            if secondary_family(&spec.key.metric).is_some() {
                by_test.entry(test_of(&spec.key)).or_default().push(spec);
            }
        }
        Secondaries { by_test }
    }

    /// The secondary metrics of `key`'s test; none when it has none.
    pub(crate) fn of_test(&self, key: &TestKey) -> &[&'a TestSpec] {
        self.by_test.get(&test_of(key)).map_or(&[], Vec::as_slice)
    }
}

/// `key`'s test: its key with the empty metric, which orders before every
/// other key of the test (keys order by benchmark, options, metric).
fn test_of(key: &TestKey) -> TestKey {
    key.with_metric("")
}

/// The secondary metrics of `result`'s test, `current` against `baseline`;
/// `None` when neither side recorded any.
pub(crate) fn explain(
    secondaries: &Secondaries,
    baseline: &IdentifierData,
    current: &IdentifierData,
    result: &TestKey,
) -> Option<Explanation> {
    let specs = secondaries.of_test(result);
    if specs.is_empty() {
        return None;
    }
    let (a_rounds, b_rounds) = (
        TestRounds::of(baseline, result),
        TestRounds::of(current, result),
    );
    let mut compared: Vec<(&TestSpec, Welch2)> = specs
        .iter()
        .filter_map(|spec| {
            let a = a_rounds.values(&spec.key)?;
            let b = b_rounds.values(&spec.key)?;
            Some((*spec, Welch2::of(&a, &b)?))
        })
        .collect();
    let q_values = family_q_values(&compared);
    let mut changes: Vec<SecondaryChange> = compared
        .drain(..)
        .zip(q_values)
        .map(|((spec, w), q_value)| SecondaryChange {
            metric: spec.key.metric.clone(),
            label: secondary_label(&spec.key.metric),
            unit: spec.unit.clone(),
            baseline_mean: w.baseline_mean,
            current_mean: w.current_mean,
            significant: q_value < ALPHA
                && (w.difference.ci_low > 0.0 || w.difference.ci_high < 0.0),
            difference: w.difference,
            p_value: w.p_value,
            q_value,
        })
        .collect();
    changes.sort_by(|a, b| b.relative().total_cmp(&a.relative()));
    Some(Explanation {
        changes,
        unavailable: unavailable(&[baseline, current]),
    })
}

/// Benjamini-Hochberg within each family (the task's counters, vmstat,
/// interrupts, ...): each family asks one question of its own, and the
/// twenty-odd system monitors do not dilute the five counters.
fn family_q_values(compared: &[(&TestSpec, Welch2)]) -> Vec<f64> {
    let mut q_values = vec![f64::NAN; compared.len()];
    let families: BTreeSet<Option<&str>> = compared
        .iter()
        .map(|(spec, _)| secondary_family(&spec.key.metric))
        .collect();
    for family in families {
        let members: Vec<usize> = (0..compared.len())
            .filter(|&i| secondary_family(&compared[i].0.key.metric) == family)
            .collect();
        let p: Vec<f64> = members.iter().map(|&i| compared[i].1.p_value).collect();
        for (&i, q) in members.iter().zip(benjamini_hochberg(&p)) {
            q_values[i] = q;
        }
    }
    q_values
}

/// The counters the identifiers' runs could not open, said the way `perf
/// stat` does: only when a snapshot records which it had.
pub(crate) fn unavailable(identifiers: &[&IdentifierData]) -> Vec<String> {
    let lacks = |id: &&IdentifierData| {
        crate::header::snapshot_of(&id.runs).is_some_and(|s| {
            !s.counters.is_empty() && !s.counters.iter().any(|c| c == "instructions")
        })
    };
    if identifiers.iter().any(lacks) {
        vec!["instructions/op n/a (no PMU)".to_string()]
    } else {
        vec![]
    }
}

/// One identifier's rounds of one test: where its result was measured and,
/// per secondary family, where the family was recorded. Made once for all
/// of the test's secondary metrics.
pub(crate) struct TestRounds<'a> {
    identifier: &'a IdentifierData,
    measured: BTreeSet<(usize, u32)>,
    recorded: BTreeMap<&'static str, BTreeSet<(usize, u32)>>,
}

impl<'a> TestRounds<'a> {
    pub(crate) fn of(identifier: &'a IdentifierData, result: &TestKey) -> TestRounds<'a> {
        let mut recorded: BTreeMap<&'static str, BTreeSet<(usize, u32)>> = BTreeMap::new();
        // The keys of one test are adjacent in the map, from `test_of`.
        let keys = identifier.samples.range(test_of(result)..).map(|(k, _)| k);
        for key in keys.take_while(|k| k.same_test(result)) {
            if let Some(family) = secondary_family(&key.metric) {
                recorded
                    .entry(family)
                    .or_default()
                    .extend(identifier.rounds(key).into_keys());
            }
        }
        TestRounds {
            identifier,
            measured: identifier.rounds(result).into_keys().collect(),
            recorded,
        }
    }

    /// One value per round of `key` in the rounds where the result was
    /// measured and `key`'s family was recorded (0 where it has no sample);
    /// `None` with no such round.
    pub(crate) fn values(&self, key: &TestKey) -> Option<Samples> {
        let recorded = self.recorded.get(secondary_family(&key.metric)?)?;
        let values = crate::sides::rounds(self.identifier, key);
        let rounds: Vec<f64> = self
            .measured
            .intersection(recorded)
            .filter(|&&(run, _)| could_record(&self.identifier.runs[run], &key.metric))
            .map(|round| {
                values
                    .get(round)
                    .map_or(0.0, |v| v.iter().sum::<f64>() / v.len() as f64)
            })
            .collect();
        Samples::new(rounds).ok()
    }
}

/// Whether `run` could record `metric`: a perf counter its snapshot does
/// not list (no PMU) was never opened, so its absence is no 0. Runs stored
/// before snapshots listed counters could.
fn could_record(run: &RunRecord, metric: &str) -> bool {
    let event = metric
        .strip_prefix(COUNTER_PREFIX)
        .and_then(|m| m.strip_suffix("_per_op"));
    let listed = &run.info.snapshot.counters;
    event.is_none_or(|event| listed.is_empty() || listed.iter().any(|c| c == event))
}

/// Welch's difference of the two sides' round values.
struct Welch2 {
    baseline_mean: f64,
    current_mean: f64,
    difference: Estimate,
    p_value: f64,
}

impl Welch2 {
    /// `None` when a side has fewer than two rounds.
    fn of(baseline: &Samples, current: &Samples) -> Option<Welch2> {
        let test = welch(baseline, current, 0.95)?;
        Some(Welch2 {
            baseline_mean: baseline.mean(),
            current_mean: current.mean(),
            difference: test.diff,
            p_value: test.p_value,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{self, secondary_spec as spec};
    use crate::thresholds::Thresholds;

    /// An identifier with 4 rounds: the result (10 per sample), and per
    /// round the given values of each secondary metric (0 is not stored).
    fn identifier(name: &str, secondary: &[(&str, [f64; 4])]) -> IdentifierData {
        fixtures::with_secondaries(name, 10.0, secondary)
    }

    #[test]
    fn a_counter_that_went_up_explains_a_regression_and_absent_rounds_count_as_zero() {
        let clock = "perf.task_clock_per_op";
        let switches = "perf.context_switches_per_op";
        let faults = "perf.minor_faults_per_op";
        let a = identifier(
            "a",
            &[
                (clock, [5.0, 5.1, 4.9, 5.0]),
                (switches, [0.0; 4]),
                (faults, [1.0, 1.1, 0.9, 1.0]),
            ],
        );
        let b = identifier(
            "b",
            &[
                (clock, [6.0, 6.1, 5.9, 6.0]),
                (switches, [1.0, 1.01, 0.99, 1.0]),
                (faults, [1.0, 0.9, 1.1, 1.0]),
            ],
        );
        let data = ResultSetData {
            name: "s".into(),
            title: None,
            description: None,
            tests: vec![spec("value"), spec(clock), spec(switches), spec(faults)],
            identifiers: vec![a.clone(), b.clone()],
        };
        let explained =
            explain(&Secondaries::of(&data), &a, &b, &TestKey::new("pipe-lat")).unwrap();
        let why: Vec<&str> = explained
            .why(Verdict::Regression)
            .iter()
            .map(|c| c.metric.as_str())
            .collect();
        // Switches went from 0 (never stored) to 1: the largest change.
        assert_eq!(why, [switches, clock]);
        let switched = &explained.changes[0];
        assert_eq!((switched.baseline_mean, switched.difference.n), (0.0, 8));
        assert!(explained.why(Verdict::Improvement).is_empty());
        assert!(explained.why(Verdict::NoChange).is_empty());
        let same = explained
            .changes
            .iter()
            .find(|c| c.metric == faults)
            .unwrap();
        assert!(!same.significant, "{same:?}");
    }

    #[test]
    fn a_test_without_secondary_metrics_has_no_explanation() {
        let a = identifier("a", &[]);
        let data = ResultSetData {
            name: "s".into(),
            title: None,
            description: None,
            tests: vec![spec("value")],
            identifiers: vec![a.clone()],
        };
        let secondaries = Secondaries::of(&data);
        assert!(explain(&secondaries, &a, &a, &TestKey::new("pipe-lat")).is_none());
    }

    /// A 20 % slower result with one more switch per operation is a
    /// regression explained by the switches (kbench-report's formats show
    /// the same data's explanation).
    #[test]
    fn a_regression_with_more_switches_is_explained_by_them() {
        let report = crate::comparison::build(
            &fixtures::explained_regression(),
            &crate::comparison::CompareRequest {
                baseline: None,
                identifiers: vec![],
                threshold: Thresholds::uniform(0.01),
                metric_filter: None,
                calibrations: vec![],
            },
        )
        .unwrap();
        assert_eq!(report.metrics.len(), 1, "the counter is no result");
        let result = &report.metrics[0].results[1];
        assert_eq!(
            result.comparison.as_ref().unwrap().verdict,
            Verdict::Regression
        );
        let explanation = result.explanation.as_ref().expect("explained");
        assert_eq!(
            explanation.changes[0].metric,
            "perf.context_switches_per_op"
        );
        assert!(explanation.changes[0].significant);
    }

    /// A side without a PMU never recorded instructions: no 0 for it.
    #[test]
    fn a_counter_one_side_could_not_open_is_not_compared() {
        let clock = ("perf.task_clock_per_op", [5.0, 5.1, 4.9, 5.0]);
        let instructions = "perf.instructions_per_op";
        let mut a = identifier("a", &[clock]);
        let b = identifier("b", &[clock, (instructions, [900.0, 910.0, 890.0, 900.0])]);
        a.runs[0].info.snapshot.counters = vec!["task_clock".into()];
        let data = ResultSetData {
            name: "s".into(),
            title: None,
            description: None,
            tests: vec![spec("value"), spec(clock.0), spec(instructions)],
            identifiers: vec![a.clone(), b.clone()],
        };
        let explained =
            explain(&Secondaries::of(&data), &a, &b, &TestKey::new("pipe-lat")).unwrap();
        let compared: Vec<&str> = explained
            .changes
            .iter()
            .map(|c| c.metric.as_str())
            .collect();
        assert_eq!(compared, ["perf.task_clock_per_op"]);
    }
}
