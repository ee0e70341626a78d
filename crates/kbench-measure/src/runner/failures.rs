//! A test that FAILED stops the run, or not with `keep_going`, on a
//! scripted launcher: every test sends three samples, except `bad`, which
//! fails; what was measured is stored either way.

use super::*;
use crate::launcher::Replay;
use kbench_model::Direction;
use kbench_store::Results;
use kbench_store::testing::temp_store;
use std::cell::RefCell;
use std::collections::VecDeque;

/// Each test launch in order; `bad` fails, the others measure.
#[derive(Default)]
struct Scripted {
    launched: RefCell<Vec<String>>,
}

impl Launcher for Scripted {
    fn launch(&self, job: &AgentJob) -> Result<Box<dyn AgentStream>> {
        let mut events = VecDeque::new();
        if job.snapshot {
            events.push_back(AgentEvent::Snapshot {
                snapshot: Box::default(),
            });
        }
        for test in &job.tests {
            self.launched.borrow_mut().push(test.benchmark.clone());
            if test.benchmark == "bad" {
                events.push_back(AgentEvent::Failed {
                    test: test.clone(),
                    reason: "the tool crashed".into(),
                });
                continue;
            }
            events.push_back(AgentEvent::TestStart {
                test: test.clone(),
                unit: "ns".into(),
                direction: Direction::Lower,
                iterations: 1,
            });
            events.extend([100.0, 101.0, 102.0].map(|value| AgentEvent::Sample {
                metric: MAIN_METRIC.into(),
                value,
                iterations: 1,
                at_ms: kbench_model::now_ms(),
            }));
            events.push_back(AgentEvent::TestEnd {
                target_met: true,
                stop: "CI within 1.0 %".into(),
            });
        }
        Ok(Box::new(Replay::new(events)))
    }
}

/// Two rounds of `good bad last` into a fresh store: the summary, the
/// tests launched, and each stored run's status.
fn run(keep_going: bool) -> (RunSummary, Vec<String>, Vec<RunStatus>) {
    let (_dir, mut store) = temp_store();
    let request = RunRequest {
        set: "s".into(),
        identifier: "a".into(),
        tests: ["good", "bad", "last"].map(TestKey::new).to_vec(),
        plan: SamplingPlan::default(),
        rounds: 2,
        adaptive: None,
        wrapper: None,
        notes: vec![],
        host: None,
        keep_going,
        replayed: None,
    };
    let launcher = Scripted::default();
    let stop = AtomicBool::new(false);
    let summary = execute(&mut store, &launcher, &request, &mut |_| {}, &stop).unwrap();
    let data = store.load("s").unwrap();
    let statuses = data.identifiers[0].runs.iter().map(|r| r.status).collect();
    (summary, launcher.launched.take(), statuses)
}

#[test]
fn the_first_failed_test_stops_the_run_and_what_it_measured_is_kept() {
    let (summary, launched, statuses) = run(false);
    assert_eq!(launched, ["good", "bad"]);
    assert!(summary.stopped_at_failure && summary.any_failed());
    assert_eq!((summary.samples, summary.outcomes.len()), (3, 2));
    assert_eq!(statuses, [RunStatus::Failed], "cut short, not resumed");
}

#[test]
fn keep_going_measures_the_other_tests_in_every_round() {
    let (summary, launched, statuses) = run(true);
    assert_eq!(launched, ["good", "bad", "last"].repeat(2));
    assert!(!summary.stopped_at_failure && summary.any_failed());
    assert_eq!((summary.samples, summary.outcomes.len()), (12, 6));
    assert_eq!(statuses, [RunStatus::Complete; 2]);
}
