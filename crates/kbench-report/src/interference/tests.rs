//! Disturbed rounds, replacements and the speed note on hand-built data:
//! one test, one run per round, each round with its monitors.

use super::*;
use kbench_model::results::{RunId, RunInfo, RunRecord, RunStatus};
use kbench_model::{Sample, SystemSnapshot};

/// One round's monitors: steal %, other runnable tasks, controls (ns).
struct Round {
    steal: f64,
    runnable: f64,
    control: [f64; 2],
    value: f64,
    redo: bool,
}

fn quiet(control: f64) -> Round {
    Round {
        steal: 0.0,
        runnable: 0.1,
        control: [control, control],
        value: 100.0,
        redo: false,
    }
}

fn test() -> TestKey {
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
fn identifier(name: &str, cpus: u32, rounds: &[Round]) -> IdentifierData {
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
        runs,
        samples,
        sample_runs,
    }
}

#[test]
fn quiet_rounds_are_not_disturbed() {
    let id = identifier("a", 2, &[quiet(1.04), quiet(1.05), quiet(1.03)]);
    assert_eq!(disturbed_rounds(&id), vec![]);
    assert_eq!(notes(std::slice::from_ref(&id)), Vec::<String>::new());
    assert_eq!(median_control(&id), Some(1.04));
}

#[test]
fn steal_runnable_tasks_and_a_slow_control_each_disturb_a_round() {
    let id = identifier(
        "a",
        2,
        &[
            quiet(1.0),
            Round {
                steal: 7.5,
                ..quiet(1.0)
            },
            Round {
                runnable: 1.0,
                ..quiet(1.0)
            },
            Round {
                control: [1.0, 1.09],
                ..quiet(1.0)
            },
            quiet(1.0),
            // Just under every limit.
            Round {
                steal: 5.0,
                runnable: 0.45,
                control: [1.0, 1.049],
                ..quiet(1.0)
            },
        ],
    );
    let disturbed = disturbed_rounds(&id);
    let found: Vec<(usize, u32)> = disturbed.iter().map(|d| (d.run, d.round)).collect();
    assert_eq!(found, [(1, 1), (2, 2), (3, 3)]);
    assert!(disturbed.iter().all(|d| d.test == test()));
    assert_eq!(disturbed[0].reasons, [Disturbance::Steal { percent: 7.5 }]);
    assert_eq!(
        disturbed[1].reasons,
        [Disturbance::Runnable {
            mean: 1.0,
            limit: 0.5
        }]
    );
    match disturbed[2].reasons[..] {
        [Disturbance::SlowControl { slower_pct }] => assert!((slower_pct - 9.0).abs() < 1e-9),
        ref other => panic!("{other:?}"),
    }
    let notes = notes(std::slice::from_ref(&id));
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0].starts_with("'a': 3 of 6 round(s) ran disturbed"),
        "{}",
        notes[0]
    );
    assert!(notes[0].contains("--redo-disturbed"), "{}", notes[0]);
}

#[test]
fn the_runnable_limit_follows_the_cpu_count() {
    assert_eq!(runnable_limit(0), 0.5);
    assert_eq!(runnable_limit(1), 0.5);
    assert_eq!(runnable_limit(2), 0.5);
    assert_eq!(runnable_limit(8), 3.5);
    // 2 other runnable tasks disturb a 2-CPU machine, not a 16-CPU one.
    let busy = || Round {
        runnable: 2.0,
        ..quiet(1.0)
    };
    assert_eq!(disturbed_rounds(&identifier("a", 2, &[busy()])).len(), 1);
    assert_eq!(disturbed_rounds(&identifier("a", 16, &[busy()])).len(), 0);
}

#[test]
fn an_undisturbed_redo_round_replaces_the_oldest_disturbed_one() {
    let stolen = || Round {
        steal: 20.0,
        ..quiet(1.0)
    };
    let redo = |steal| Round {
        steal,
        redo: true,
        value: 50.0,
        ..quiet(1.0)
    };
    // Rounds 1 and 2 disturbed; redo 3 disturbed too, redo 4 quiet.
    let id = identifier(
        "a",
        2,
        &[quiet(1.0), stolen(), stolen(), redo(30.0), redo(0.0)],
    );
    let replaced: Vec<(usize, u32)> = replaced_rounds(&id)
        .iter()
        .map(|d| (d.run, d.round))
        .collect();
    assert_eq!(replaced, [(1, 1)]);
    // Without the quiet redo round, nothing is replaced, and the note says why.
    let mut all_disturbed = id.clone();
    all_disturbed.runs.pop();
    all_disturbed
        .samples
        .values_mut()
        .for_each(|s| s.retain(|x| x.round != 4));
    all_disturbed
        .sample_runs
        .values_mut()
        .for_each(|r| r.retain(|&run| run != 4));
    assert_eq!(replaced_rounds(&all_disturbed), vec![]);
    let note = &notes(std::slice::from_ref(&all_disturbed))[0];
    assert!(
        note.contains("ran disturbed too, so every round stays in"),
        "{note}"
    );
    let data = ResultSetData {
        name: "s".into(),
        tests: vec![],
        identifiers: vec![id],
    };
    let kept = without_replaced_rounds(&data);
    let id = &kept.identifiers[0];
    let runs: BTreeSet<usize> = id.runs_of_samples(&test()).into_iter().collect();
    assert_eq!(runs, BTreeSet::from([0, 2, 3, 4]));
    assert_eq!(id.samples[&test()].len(), 12);
    // Monitors stay, so the note still counts the replaced round.
    let control = test().with_metric(MONITOR_CONTROL);
    assert_eq!(id.samples[&control].len(), 10);
    let notes = notes(&kept.identifiers);
    assert!(
        notes[0].contains("3 of 5 round(s) ran disturbed")
            && notes[0].contains("1 of them were run again"),
        "{notes:?}"
    );
}

#[test]
fn a_disturbed_round_without_a_redo_stays_in() {
    let id = identifier(
        "a",
        2,
        &[
            quiet(1.0),
            Round {
                steal: 20.0,
                ..quiet(1.0)
            },
        ],
    );
    assert_eq!(replaced_rounds(&id), vec![]);
    let data = ResultSetData {
        name: "s".into(),
        tests: vec![],
        identifiers: vec![id.clone()],
    };
    assert_eq!(without_replaced_rounds(&data).identifiers[0], id);
}

#[test]
fn a_machine_slower_by_more_than_the_limit_is_named_with_its_size() {
    let base = identifier("a", 2, &[quiet(1.0), quiet(1.0), quiet(1.0)]);
    let slow = identifier("b", 2, &[quiet(1.05), quiet(1.05), quiet(1.05)]);
    let fast = identifier("c", 2, &[quiet(0.9), quiet(0.9), quiet(0.9)]);
    let near = identifier("d", 2, &[quiet(1.02), quiet(1.02), quiet(1.02)]);
    let notes = notes(&[base, slow, fast, near]);
    assert_eq!(notes.len(), 2, "{notes:?}");
    assert!(
        notes[0].starts_with(
            "The machine itself ran 5.0 % slower while 'b' was measured than while 'a' was"
        ),
        "{}",
        notes[0]
    );
    assert!(notes[0].contains("may be the machine, not the change"));
    assert!(notes[1].contains("10.0 % faster while 'c'"), "{}", notes[1]);
}

#[test]
fn a_control_that_differs_within_one_session_is_the_identifiers_not_the_machines() {
    let in_session = |mut id: IdentifierData| {
        for run in &mut id.runs {
            run.info.snapshot.variant = Some(kbench_model::VariantRecord {
                session: "s1".into(),
                ..Default::default()
            });
        }
        id
    };
    let base = in_session(identifier("a", 2, &[quiet(1.0), quiet(1.0), quiet(1.0)]));
    let slow = in_session(identifier("b", 2, &[quiet(1.2), quiet(1.2), quiet(1.2)]));
    let notes = notes(&[base, slow]);
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0].starts_with("The control loop ran 20.0 % slower in 'b' than in 'a'")
            && notes[0].contains("measured in the same blocks"),
        "{}",
        notes[0]
    );
}

#[test]
fn data_without_monitors_says_nothing() {
    let mut id = identifier("a", 2, &[quiet(1.0)]);
    id.samples.retain(|key, _| !is_monitor_metric(&key.metric));
    id.sample_runs
        .retain(|key, _| !is_monitor_metric(&key.metric));
    assert_eq!(disturbed_rounds(&id), vec![]);
    assert_eq!(summary_line(&id), None);
    assert_eq!(notes(&[id.clone(), id]), Vec::<String>::new());
}

/// A set of `identifiers` declaring the test's main metric and monitors.
fn set(identifiers: Vec<IdentifierData>) -> ResultSetData {
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
        tests,
        identifiers,
    }
}

/// Monitors that changed a lot (the control doubled, steal appeared) are
/// no result: no verdict, no geometric-mean ratio, not in the FDR family
/// (the main metric's q is what it is without them), not in history.
#[test]
fn monitors_get_no_verdict_and_stay_out_of_the_family_and_history() {
    let rounds = |control: f64, steal: f64, value: f64| -> Vec<Round> {
        (0..4)
            .map(|i| Round {
                steal,
                value: value + f64::from(i) * 0.5,
                ..quiet(control + f64::from(i) * 0.001)
            })
            .collect()
    };
    let data = set(vec![
        identifier("a", 2, &rounds(1.0, 0.0, 100.0)),
        identifier("b", 2, &rounds(2.0, 9.0, 103.0)),
    ]);
    let request = crate::comparison::CompareRequest {
        baseline: None,
        identifiers: vec![],
        threshold: 0.01,
        metric_filter: None,
    };
    let report = crate::comparison::build(&data, &request).unwrap();
    let tests: Vec<&str> = report.metrics.iter().map(|m| m.test.as_str()).collect();
    assert_eq!(tests, ["syscall-null"]);
    let summary = &report.summaries[0];
    assert_eq!(summary.metrics_used, 1);
    let decided = summary.regressions + summary.improvements + summary.no_change;
    assert_eq!(decided + summary.inconclusive, 1);
    // The same comparison with no monitor stored at all: the same q.
    let mut bare = data.clone();
    bare.tests.retain(|t| !is_monitor_metric(&t.key.metric));
    for id in &mut bare.identifiers {
        id.samples.retain(|k, _| !is_monitor_metric(&k.metric));
        id.sample_runs.retain(|k, _| !is_monitor_metric(&k.metric));
    }
    let plain = crate::comparison::build(&bare, &request).unwrap();
    let q = |r: &crate::comparison::ComparisonReport| {
        r.metrics[0].results[1].comparison.as_ref().unwrap().q_value
    };
    assert_eq!(q(&report), q(&plain));
    // The notes name the slower machine and b's stolen rounds.
    assert!(
        report
            .notes
            .iter()
            .any(|n| n.contains("ran 99.9 % slower while 'b'")),
        "{:?}",
        report.notes
    );
    assert!(
        report
            .notes
            .iter()
            .any(|n| n.starts_with("'b': 4 of 4 round(s) ran disturbed")),
        "{:?}",
        report.notes
    );
    let history = crate::history::build(
        &data,
        &crate::history::HistoryRequest {
            order: vec![],
            metric_filter: None,
            threshold: 0.01,
        },
    )
    .unwrap();
    let tests: Vec<&str> = history.metrics.iter().map(|m| m.test.as_str()).collect();
    assert_eq!(tests, ["syscall-null"]);
}

/// `show` lists the measured metric as a test and the monitors as lines
/// of their own.
#[test]
fn show_lists_monitors_apart_from_tests() {
    let data = set(vec![identifier("a", 2, &[quiet(1.0), quiet(1.0)])]);
    let doc = crate::show::document(&data);
    let tests: Vec<&str> = doc.tests.iter().map(|t| t.test.as_str()).collect();
    assert_eq!(tests, ["syscall-null"]);
    assert_eq!(doc.interference.len(), 1, "{:?}", doc.interference);
    assert!(
        doc.interference[0].contains("control loop 1.000 ns/iteration; 0 round(s) disturbed"),
        "{}",
        doc.interference[0]
    );
    let text = crate::show::text(&data, &doc);
    assert!(
        text.contains("'a' monitors (medians over 2 round(s))"),
        "{text}"
    );
}
