//! `--redo-disturbed` on a scripted launcher: each test launch sends a few
//! samples and monitors whose steal time comes from a script, so which
//! rounds are disturbed is known.

use super::*;
use crate::agent::AgentJob;
use crate::launcher::{AgentStream, Replay};
use crate::plan::SamplingPlan;
use kbench_model::{AgentEvent, Direction, MONITOR_CONTROL, MONITOR_STEAL, SystemSnapshot};
use kbench_store::testing::temp_store;
use kbench_store::{Recorder, Results};
use std::cell::RefCell;
use std::collections::{BTreeMap, VecDeque};

/// Steal time per test launch, in order, per benchmark; 0 once used up.
struct Scripted {
    steal: RefCell<BTreeMap<String, VecDeque<f64>>>,
    /// The tests of every test launch, in order.
    launched: RefCell<Vec<String>>,
}

impl Scripted {
    fn new(script: &[(&str, &[f64])]) -> Scripted {
        Scripted {
            steal: RefCell::new(
                script
                    .iter()
                    .map(|(name, steal)| (name.to_string(), steal.iter().copied().collect()))
                    .collect(),
            ),
            launched: RefCell::new(vec![]),
        }
    }
}

fn sample(metric: &str, value: f64) -> AgentEvent {
    AgentEvent::Sample {
        metric: metric.into(),
        value,
        iterations: 1,
        at_ms: kbench_model::now_ms(),
    }
}

impl Launcher for Scripted {
    fn launch(&self, job: &AgentJob) -> crate::Result<Box<dyn AgentStream>> {
        let mut events = VecDeque::new();
        if job.snapshot {
            let snapshot = SystemSnapshot {
                cpus_online: 2,
                ..SystemSnapshot::default()
            };
            events.push_back(AgentEvent::Snapshot {
                snapshot: Box::new(snapshot),
            });
        }
        for test in &job.tests {
            self.launched.borrow_mut().push(test.to_string());
            let steal = self
                .steal
                .borrow_mut()
                .get_mut(&test.benchmark)
                .and_then(VecDeque::pop_front)
                .unwrap_or(0.0);
            events.push_back(AgentEvent::TestStart {
                test: test.clone(),
                unit: "ns".into(),
                direction: Direction::Lower,
                iterations: 1,
            });
            events.extend([100.0, 101.0, 102.0].map(|v| sample("value", v)));
            // As the agent sends them: no steal sample when there was none.
            let monitors = [(MONITOR_STEAL, "%", steal), (MONITOR_CONTROL, "ns", 1.0)];
            for (metric, unit, value) in monitors.into_iter().filter(|m| m.2 > 0.0) {
                events.push_back(AgentEvent::Metric {
                    metric: metric.into(),
                    unit: unit.into(),
                    direction: Direction::Lower,
                });
                events.push_back(sample(metric, value));
            }
            events.push_back(AgentEvent::TestEnd {
                target_met: true,
                stop: "CI within 1.0 %".into(),
            });
        }
        Ok(Box::new(Replay::new(events)))
    }
}

fn request(tests: &[&str], rounds: u32) -> RunRequest {
    RunRequest {
        set: "s".into(),
        identifier: "a".into(),
        tests: tests.iter().map(|t| TestKey::new(*t)).collect(),
        plan: SamplingPlan::default(),
        rounds,
        adaptive: None,
        wrapper: None,
        notes: vec![],
        host: None,
        keep_going: false,
        replayed: None,
    }
}

/// Runs `request` then redoes; returns the summary, what was redone and
/// the tests of every launch.
fn run_and_redo(
    store: &mut dyn Recorder,
    launcher: &Scripted,
    request: &RunRequest,
) -> (RunSummary, Vec<DisturbedRound>) {
    let stop = AtomicBool::new(false);
    let mut summary = runner::execute(store, launcher, request, &mut |_| {}, &stop).unwrap();
    let stored = store.load(&request.set).unwrap();
    let redone = redo_disturbed(
        store,
        launcher,
        request,
        &stored,
        &mut |_| {},
        &stop,
        &mut summary,
    )
    .unwrap();
    (summary, redone)
}

#[test]
fn a_disturbed_round_is_run_again_and_replaced_in_compare() {
    let (_dir, mut store) = temp_store();
    // b's second round is stolen from; a is quiet.
    let launcher = Scripted::new(&[("b", &[0.0, 30.0, 0.0])]);
    let (summary, redone) = run_and_redo(&mut store, &launcher, &request(&["a", "b"], 3));
    assert_eq!(redone.len(), 1);
    assert_eq!(
        (redone[0].test.to_string(), redone[0].round),
        ("b".into(), 1)
    );
    assert_eq!(summary.runs.len(), 4, "three rounds and one redo");
    assert_eq!(
        launcher.launched.borrow().as_slice(),
        ["a", "b", "a", "b", "a", "b", "b"]
    );
    let data = store.load("s").unwrap();
    let id = &data.identifiers[0];
    let redo_runs: Vec<usize> = (0..id.runs.len())
        .filter(|&r| id.runs[r].info.notes.iter().any(|n| n == REDO_NOTE))
        .collect();
    assert_eq!(redo_runs, [3]);
    // Every round stays stored; compare leaves out the replaced one.
    assert_eq!(id.samples[&TestKey::new("b")].len(), 12);
    let kept = kbench_analysis::interference::without_replaced_rounds(&data);
    let rounds: std::collections::BTreeSet<u32> = kept.identifiers[0].samples[&TestKey::new("b")]
        .iter()
        .map(|s| s.round)
        .collect();
    assert_eq!(rounds, [0, 2, 3].into());
}

#[test]
fn redo_rounds_are_bounded_per_test_and_not_redone_themselves() {
    let (_dir, mut store) = temp_store();
    // Every launch of b is stolen from, redo rounds included.
    let launcher = Scripted::new(&[("b", &[30.0; 10])]);
    let (summary, redone) = run_and_redo(&mut store, &launcher, &request(&["b"], 3));
    assert_eq!(redone.len(), MAX_REDO_PER_TEST);
    assert_eq!(summary.runs.len(), 3 + MAX_REDO_PER_TEST);
    assert_eq!(launcher.launched.borrow().len(), 3 + MAX_REDO_PER_TEST);
    // No replacement was quiet: every disturbed round stays in compare.
    let data = store.load("s").unwrap();
    assert_eq!(
        kbench_analysis::interference::replaced_rounds(&data.identifiers[0]),
        vec![]
    );
}

#[test]
fn quiet_rounds_and_earlier_invocations_are_not_run_again() {
    let (_dir, mut store) = temp_store();
    // The first invocation's round is stolen from, then all is quiet.
    let launcher = Scripted::new(&[("b", &[30.0])]);
    let stop = AtomicBool::new(false);
    runner::execute(
        &mut store,
        &launcher,
        &request(&["b"], 1),
        &mut |_| {},
        &stop,
    )
    .unwrap();
    let (summary, redone) = run_and_redo(&mut store, &launcher, &request(&["b"], 2));
    assert_eq!(redone, vec![]);
    assert_eq!(summary.runs.len(), 2);
}
