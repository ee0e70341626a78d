//! Hand-built result sets for the crate's tests: one test
//! (`syscall-null`), one run per round, each round with the interference
//! monitors as kbench stores them.

use kbench_model::results::{IdentifierData, ResultSetData, RunId, RunInfo, RunRecord, RunStatus};
use kbench_model::{
    MAIN_METRIC, MONITOR_CONTROL, MONITOR_NIVCSW, MONITOR_RUNNING, MONITOR_STEAL, REDO_NOTE,
    Sample, SystemSnapshot, TestKey,
};
use std::collections::BTreeMap;

/// One round's monitors: steal %, other runnable tasks, controls (ns).
pub(crate) struct Round {
    pub(crate) steal: f64,
    pub(crate) runnable: f64,
    pub(crate) control: [f64; 2],
    pub(crate) value: f64,
    pub(crate) redo: bool,
}

pub(crate) fn quiet(control: f64) -> Round {
    Round {
        steal: 0.0,
        runnable: 0.1,
        control: [control, control],
        value: 100.0,
        redo: false,
    }
}

pub(crate) fn test() -> TestKey {
    TestKey::new("syscall-null")
}

fn sample(value: f64, round: u32) -> Sample {
    Sample {
        value,
        iterations: 1,
        at_ms: 0,
        round,
    }
}

/// Round `i` is run `i` (round number `i`) on a machine of `cpus` CPUs.
pub(crate) fn identifier(name: &str, cpus: u32, rounds: &[Round]) -> IdentifierData {
    let mut samples: BTreeMap<TestKey, Vec<Sample>> = BTreeMap::new();
    let mut sample_runs: BTreeMap<TestKey, Vec<usize>> = BTreeMap::new();
    let mut add = |metric: &str, value: f64, run: usize| {
        let key = test().with_metric(metric);
        samples
            .entry(key.clone())
            .or_default()
            .push(sample(value, run as u32));
        sample_runs.entry(key).or_default().push(run);
    };
    for (run, r) in rounds.iter().enumerate() {
        for i in 0..3 {
            add(MAIN_METRIC, r.value + f64::from(i), run);
        }
        // As stored: steal only when above 0, the agent among the running.
        if r.steal > 0.0 {
            add(MONITOR_STEAL, r.steal, run);
        }
        add(MONITOR_RUNNING, r.runnable + 1.0, run);
        add(MONITOR_NIVCSW, 2.0, run);
        for control in r.control {
            add(MONITOR_CONTROL, control, run);
        }
    }
    let runs = rounds
        .iter()
        .enumerate()
        .map(|(i, r)| RunRecord {
            id: RunId(i as i64 + 1),
            status: RunStatus::Complete,
            info: RunInfo {
                snapshot: SystemSnapshot {
                    cpus_online: cpus,
                    ..SystemSnapshot::default()
                },
                notes: if r.redo {
                    vec![REDO_NOTE.to_string()]
                } else {
                    vec![]
                },
                ..RunInfo::default()
            },
            ended_at_ms: None,
            outcomes: vec![],
        })
        .collect();
    IdentifierData {
        name: name.into(),
        factors: Default::default(),
        runs,
        samples,
        sample_runs,
    }
}

/// A set of `identifiers` declaring the test's main metric and monitors.
pub(crate) fn set(identifiers: Vec<IdentifierData>) -> ResultSetData {
    let spec = |metric: &str, unit: &str| kbench_model::TestSpec {
        key: test().with_metric(metric),
        unit: unit.into(),
        direction: kbench_model::Direction::Lower,
    };
    let mut tests = vec![spec(MAIN_METRIC, "ns")];
    tests.extend(
        kbench_model::MONITORS
            .iter()
            .map(|(name, unit)| spec(name, unit)),
    );
    ResultSetData {
        name: "s".into(),
        title: None,
        description: None,
        tests,
        identifiers,
    }
}

/// Two identifiers whose monitors changed a lot: the control doubled, and
/// steal appeared in the second.
pub(crate) fn disturbed() -> ResultSetData {
    let rounds = |control: f64, steal: f64, value: f64| -> Vec<Round> {
        (0..4)
            .map(|i| Round {
                steal,
                value: value + f64::from(i) * 0.5,
                ..quiet(control + f64::from(i) * 0.001)
            })
            .collect()
    };
    set(vec![
        identifier("a", 2, &rounds(1.0, 0.0, 100.0)),
        identifier("b", 2, &rounds(2.0, 9.0, 103.0)),
    ])
}
