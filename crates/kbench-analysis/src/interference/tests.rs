//! Disturbed rounds, replacements and the speed note on hand-built data:
//! one test, one run per round, each round with its monitors.

use super::*;
use crate::fixtures::{Round, identifier, quiet, test};

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
        title: None,
        description: None,
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
        title: None,
        description: None,
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

#[test]
fn the_redone_rounds_are_told_one_a_line_with_their_reasons() {
    assert_eq!(redone_text(&[]), "");
    let round = DisturbedRound {
        test: test(),
        run: 1,
        round: 4,
        reasons: vec![Disturbance::Steal { percent: 7.5 }],
    };
    assert_eq!(
        redone_text(&[round]),
        format!(
            "Ran 1 disturbed round(s) again:\n  {}, stored round 4: steal 7.5 %\n",
            test()
        )
    );
}
