//! Hand-built result sets for tests, this crate's and kbench-report's
//! (the `fixtures` feature): mostly one test (`syscall-null`), one run per
//! round, each round with the interference monitors as kbench stores them.

use kbench_model::results::{IdentifierData, ResultSetData, RunId, RunInfo, RunRecord, RunStatus};
use kbench_model::{
    Direction, MAIN_METRIC, MONITOR_CONTROL, MONITOR_NIVCSW, MONITOR_RUNNING, MONITOR_STEAL,
    REDO_NOTE, Sample, SystemSnapshot, TestKey, TestSpec,
};
use std::collections::BTreeMap;

/// One round's monitors: steal %, other runnable tasks, controls (ns).
pub struct Round {
    pub steal: f64,
    pub runnable: f64,
    pub control: [f64; 2],
    pub value: f64,
    pub redo: bool,
}

pub fn quiet(control: f64) -> Round {
    Round {
        steal: 0.0,
        runnable: 0.1,
        control: [control, control],
        value: 100.0,
        redo: false,
    }
}

pub fn test() -> TestKey {
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

/// Round `i` is run `i` (round number `i`) on a machine of `cpus` CPUs,
/// each run an invocation of its own (process `i + 1`, starting at second
/// `i`): compared with another identifier, its runs are the units.
pub fn identifier(name: &str, cpus: u32, rounds: &[Round]) -> IdentifierData {
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
                pid: i as u32 + 1,
                started_at_ms: i as i64 * 1000,
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

/// An identifier whose stored run `i` measured `key` in the two samples
/// `samples[i]`: runs of a unit test on units (invocations, boots).
pub fn of_runs(
    name: &str,
    runs: Vec<RunRecord>,
    key: TestKey,
    samples: &[[f64; 2]],
) -> IdentifierData {
    let sample_runs = (0..samples.len()).flat_map(|i| [i, i]).collect();
    let samples = samples
        .iter()
        .flatten()
        .map(|&value| Sample {
            value,
            iterations: 1,
            at_ms: 0,
            round: 0,
        })
        .collect();
    IdentifierData {
        name: name.into(),
        factors: Default::default(),
        runs,
        samples: BTreeMap::from([(key.clone(), samples)]),
        sample_runs: BTreeMap::from([(key, sample_runs)]),
    }
}

/// A set of `identifiers` declaring the test's main metric and monitors.
pub fn set(identifiers: Vec<IdentifierData>) -> ResultSetData {
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
pub fn disturbed() -> ResultSetData {
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

/// A secondary metric of `pipe-lat`, unit "x", lower is better.
pub fn secondary_spec(metric: &str) -> TestSpec {
    TestSpec {
        key: TestKey::new("pipe-lat").with_metric(metric),
        unit: "x".into(),
        direction: Direction::Lower,
    }
}

/// An identifier with 4 rounds of `pipe-lat` about `level` (a few
/// samples a round), and per round the given values of each secondary
/// metric (0 is not stored).
pub fn with_secondaries(name: &str, level: f64, secondary: &[(&str, [f64; 4])]) -> IdentifierData {
    let run = RunRecord {
        id: RunId(1),
        status: RunStatus::Complete,
        info: RunInfo::default(),
        ended_at_ms: None,
        outcomes: vec![],
    };
    let sample = |value: f64, round: u32| Sample {
        value,
        iterations: 1,
        at_ms: 0,
        round,
    };
    let mut samples = BTreeMap::new();
    let result = (0..4)
        .flat_map(|r| {
            [0.99, 1.0, 1.01].map(|f| sample(level * f * (1.0 + f64::from(r) / 1000.0), r))
        })
        .collect::<Vec<_>>();
    samples.insert(TestKey::new("pipe-lat"), result);
    for (metric, values) in secondary {
        let stored: Vec<Sample> = (0..4)
            .filter(|&r| values[r as usize] > 0.0)
            .map(|r| sample(values[r as usize], r))
            .collect();
        if !stored.is_empty() {
            samples.insert(TestKey::new("pipe-lat").with_metric(metric), stored);
        }
    }
    let sample_runs = samples
        .iter()
        .map(|(k, v)| (k.clone(), vec![0; v.len()]))
        .collect();
    IdentifierData {
        name: name.into(),
        factors: Default::default(),
        runs: vec![run],
        samples,
        sample_runs,
    }
}

/// A 20 % slower `pipe-lat` (in us) with one more context switch per
/// operation: a regression its counters explain.
pub fn explained_regression() -> ResultSetData {
    let switches = "perf.context_switches_per_op";
    // The task clock is always counted: it says the family was on.
    let clock = ("perf.task_clock_per_op", [5.0, 5.1, 4.9, 5.0]);
    let a = with_secondaries("a", 10.0, &[clock, (switches, [0.0; 4])]);
    let b = with_secondaries("b", 12.0, &[clock, (switches, [1.0, 1.01, 0.99, 1.0])]);
    let mut data = ResultSetData {
        name: "s".into(),
        title: None,
        description: None,
        tests: vec![
            secondary_spec("value"),
            secondary_spec(clock.0),
            secondary_spec(switches),
        ],
        identifiers: vec![a, b],
    };
    data.tests[0].unit = "us".into();
    data
}

/// A 2 x 2 design: patched is 10 % slower (a lower-is-better ns time)
/// at both cgroup levels, plus an identifier without factors.
pub fn factor_design() -> ResultSetData {
    let rounds = |base: f64| -> Vec<Round> {
        (0..5)
            .map(|i| Round {
                value: base + f64::from(i) * 0.1,
                ..quiet(1.0)
            })
            .collect()
    };
    let cell = |name: &str, kernel: &str, cgroup: &str, base: f64| {
        let mut id = identifier(name, 2, &rounds(base));
        id.factors = [("kernel", kernel), ("cgroup", cgroup)]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        id
    };
    set(vec![
        cell("stock", "stock", "no", 100.0),
        cell("patched", "patched", "no", 110.0),
        cell("stock-cg", "stock", "yes", 200.0),
        cell("patched-cg", "patched", "yes", 220.0),
        identifier("loose", 2, &rounds(100.0)),
    ])
}

/// A result set with `pipe-lat` (lower is better) stepping +10 % at
/// version 3 of 6, and `bw` (higher is better) flat; 8 samples per
/// version with a fixed +-0.5 % pattern; `bw` missing in v5. A history
/// over it ([`history_request`]) finds the one step.
pub fn history_data() -> ResultSetData {
    let pattern = [0.0, 0.5, -0.5, 0.3, -0.3, 0.1, -0.1, 0.2];
    let samples = |level: f64| -> Vec<Sample> {
        pattern
            .iter()
            .enumerate()
            .map(|(i, p)| Sample {
                value: level * (1.0 + p / 100.0),
                iterations: 1,
                at_ms: i as i64,
                round: 0,
            })
            .collect()
    };
    let lat = TestKey::new("pipe-lat");
    let bw = TestKey::new("bw");
    ResultSetData {
        name: "series".into(),
        title: None,
        description: None,
        tests: vec![
            TestSpec {
                key: lat.clone(),
                unit: "us".into(),
                direction: Direction::Lower,
            },
            TestSpec {
                key: bw.clone(),
                unit: "MB/s".into(),
                direction: Direction::Higher,
            },
        ],
        identifiers: (0..6)
            .map(|v| {
                let mut map = BTreeMap::new();
                map.insert(lat.clone(), samples(if v >= 3 { 4.4 } else { 4.0 }));
                if v != 5 {
                    map.insert(bw.clone(), samples(1000.0));
                }
                IdentifierData {
                    sample_runs: Default::default(),
                    name: format!("v{v}"),
                    factors: Default::default(),
                    runs: vec![],
                    samples: map,
                }
            })
            .collect(),
    }
}

/// The history of every metric at the 1 % threshold, in stored order.
pub fn history_request() -> crate::history::HistoryRequest {
    crate::history::HistoryRequest {
        order: vec![],
        metric_filter: None,
        threshold: 0.01,
    }
}
