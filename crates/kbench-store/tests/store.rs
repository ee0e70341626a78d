//! The store through its role traits, as kbench uses them, on SQLite and
//! on PostgreSQL (when `KBENCH_TEST_POSTGRES_URL` is set; see common/mod.rs):
//! the same calls must give the same answers and the same errors.

#[macro_use]
mod common;

use common::{
    SCHEMA_VERSION, TestDb, UNDO_V6, UNDO_V7, UNDO_V9, UNDO_V11, UNDO_V12, info, job, outcome,
    sample, spec,
};
use kbench_model::{Direction, Sample, TestKey};
use kbench_store::exchange::stream;
use kbench_store::{
    Location, Recorder, ResultSetData, RunId, RunStatus, Scope, StoreError, TestOutcomeKind,
};
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

on_both_backends!(
    round_trip_returns_what_was_written,
    unfinished_run_is_found_and_resumed,
    samples_survive_a_store_that_is_never_closed,
    samples_survive_sigkill,
    newer_schema_is_too_new,
    version_1_databases_are_migrated_keeping_their_data,
    version_3_databases_are_migrated_keeping_their_data,
    version_4_databases_are_migrated_keeping_what_tokens_could_do,
    version_7_databases_are_migrated_keeping_their_data,
    version_8_databases_are_migrated_counting_samples,
    version_9_databases_are_migrated_packing_samples_exactly,
    names_are_validated,
    names_holding_sql_or_html_are_kept_as_text,
    unit_or_direction_mismatch_is_a_conflict,
    missing_set_names_the_existing_ones,
    import_round_trips_and_is_all_or_nothing,
    streamed_import_is_all_or_nothing,
    large_import_keeps_order_and_runs,
    many_tests_import_in_order_after_the_stored_ones,
    samples_stay_in_their_run_whatever_their_clock,
    sample_of_another_sets_test_is_refused,
    bisect_state_is_saved_replaced_and_forgotten,
    campaign_states_are_kept_apart_from_bisections,
    an_aborted_run_is_kept_but_left_out_of_the_set,
    concurrent_writers_share_sets_and_tests,
    a_push_id_stores_its_samples_once,
    tokens_are_created_found_by_hash_and_revoked,
);

fn round_trip_returns_what_was_written(db: &TestDb) {
    let mut store = db.open();
    let lat = spec("pipe-lat[placement=cross]", "us", Direction::Lower);
    let thr = spec(
        "futex1[mode=thread,tasks=2]:per_task",
        "ops/s",
        Direction::Higher,
    );

    // Identifiers and tests in an order that is not alphabetical.
    let mut expected_samples = Vec::new();
    for (n, identifier) in ["6.18 stock", "6.17 patched"].into_iter().enumerate() {
        let run = store
            .begin_run("sched", identifier, &info(identifier, 1000 * n as i64))
            .unwrap();
        let mut per_test = Vec::new();
        for test in [&lat, &thr] {
            let id = store.test_id("sched", test).unwrap();
            let samples: Vec<Sample> = (0..5)
                .map(|i| sample(1.5 + i as f64 / 3.0, 1000 * n as i64 + i, 0))
                .collect();
            for s in &samples {
                store.add_sample(run, id, s).unwrap();
            }
            store
                .end_test(run, id, &outcome(test, TestOutcomeKind::TargetMet))
                .unwrap();
            per_test.push((test.key.clone(), samples));
        }
        store.end_run(run, RunStatus::Complete, None).unwrap();
        expected_samples.push(per_test);
    }

    let data = store.load("sched").unwrap();
    assert_eq!(data.name, "sched");
    assert_eq!(data.tests, vec![lat.clone(), thr.clone()]);
    let names: Vec<&str> = data.identifiers.iter().map(|i| i.name.as_str()).collect();
    assert_eq!(names, ["6.18 stock", "6.17 patched"]);
    for (identifier, expected) in data.identifiers.iter().zip(&expected_samples) {
        assert_eq!(identifier.runs.len(), 1);
        let run = &identifier.runs[0];
        assert_eq!(run.status, RunStatus::Complete);
        assert!(run.ended_at_ms.is_some());
        assert_eq!(run.info, info(&identifier.name, run.info.started_at_ms));
        assert_eq!(
            run.outcomes,
            vec![
                outcome(&lat, TestOutcomeKind::TargetMet),
                outcome(&thr, TestOutcomeKind::TargetMet)
            ]
        );
        assert_eq!(identifier.samples.len(), 2);
        for (key, samples) in expected {
            assert_eq!(&identifier.samples[key], samples);
        }
    }

    let sets = store.result_sets().unwrap();
    assert_eq!(sets.len(), 1);
    assert_eq!(sets[0].identifiers, ["6.18 stock", "6.17 patched"]);
    assert_eq!((sets[0].tests, sets[0].samples), (2, 20));
    assert_eq!(store.last_round("sched", "6.18 stock").unwrap(), Some(0));
    assert_eq!(store.last_round("sched", "nobody").unwrap(), None);

    // Reopening (a fresh process) sees the same.
    drop(store);
    assert_eq!(db.open().load("sched").unwrap(), data);
}

fn unfinished_run_is_found_and_resumed(db: &TestDb) {
    let mut store = db.open();
    let a = spec("a", "ns", Direction::Lower);
    let b = spec("b", "ns", Direction::Lower);
    let run = store.begin_run("set", "id", &info("k", 1)).unwrap();
    let (ta, tb) = (
        store.test_id("set", &a).unwrap(),
        store.test_id("set", &b).unwrap(),
    );
    store.add_sample(run, ta, &sample(1.0, 2, 0)).unwrap();
    store
        .end_test(run, ta, &outcome(&a, TestOutcomeKind::BudgetHit))
        .unwrap();
    store.add_sample(run, tb, &sample(2.0, 3, 0)).unwrap();
    drop(store); // killed: no end_test for b, no end_run

    let mut store = db.open();
    let found = store
        .unfinished_run("set", "id")
        .unwrap()
        .expect("the killed run");
    assert_eq!(
        (found.id, found.status, found.ended_at_ms),
        (run, RunStatus::Running, None)
    );
    assert_eq!(
        found.outcomes,
        vec![outcome(&a, TestOutcomeKind::BudgetHit)]
    );
    assert_eq!(store.ended_tests(run).unwrap(), vec![a.key.clone()]);
    assert_eq!(store.unfinished_run("set", "other").unwrap(), None);

    store.resume_run(run, 777).unwrap();
    store.add_sample(run, tb, &sample(3.0, 4, 1)).unwrap();
    store
        .end_test(run, tb, &outcome(&b, TestOutcomeKind::TargetMet))
        .unwrap();
    store
        .end_run(run, RunStatus::Interrupted, Some(1.5))
        .unwrap();
    // Interrupted is resumable too.
    assert_eq!(
        store.unfinished_run("set", "id").unwrap().map(|r| r.id),
        Some(run)
    );
    store.resume_run(run, 778).unwrap();
    store.end_run(run, RunStatus::Complete, None).unwrap();
    assert_eq!(store.unfinished_run("set", "id").unwrap(), None);

    let data = store.load("set").unwrap();
    let identifier = &data.identifiers[0];
    assert_eq!(
        identifier.runs.len(),
        1,
        "resumed samples land in the same run"
    );
    assert_eq!(identifier.runs[0].info.pid, 778);
    assert_eq!(
        identifier.samples[&b.key],
        vec![sample(2.0, 3, 0), sample(3.0, 4, 1)]
    );
    assert_eq!(store.last_round("set", "id").unwrap(), Some(1));
    assert_eq!(
        store.ended_tests(run).unwrap(),
        vec![a.key.clone(), b.key.clone()]
    );

    // An older unfinished run is not offered once a newer run completed.
    let old = store.begin_run("set", "id2", &info("k", 5)).unwrap();
    store.end_run(old, RunStatus::Interrupted, None).unwrap();
    let new = store.begin_run("set", "id2", &info("k", 6)).unwrap();
    store.end_run(new, RunStatus::Complete, Some(2.5)).unwrap();
    assert_eq!(store.unfinished_run("set", "id2").unwrap(), None);
    let data = store.load("set").unwrap();
    assert_eq!(
        data.identifiers[1].runs[1].info.snapshot.steal_percent,
        Some(2.5)
    );

    assert!(matches!(
        store.resume_run(RunId(9999), 1),
        Err(StoreError::NotFound(_))
    ));
    assert!(matches!(
        store.end_run(RunId(9999), RunStatus::Complete, None),
        Err(StoreError::NotFound(_))
    ));
}

fn samples_survive_a_store_that_is_never_closed(db: &TestDb) {
    let mut store = db.open();
    let t = spec("a", "ns", Direction::Lower);
    let run = store.begin_run("set", "id", &info("k", 1)).unwrap();
    let test = store.test_id("set", &t).unwrap();
    for i in 0..100 {
        store
            .add_sample(run, test, &sample(1.0 + i as f64, i, 0))
            .unwrap();
    }
    std::mem::forget(store);

    let data = db.open().load("set").unwrap();
    assert_eq!(data.identifiers[0].samples[&t.key].len(), 100);
}

/// With `KBENCH_KILL_DB` set (a path or URL), stores samples forever,
/// printing each count after its `add_sample` returned;
/// `samples_survive_sigkill` kills it.
#[test]
#[ignore = "helper process of samples_survive_sigkill"]
fn kill_child_writer() {
    let Some(location) = std::env::var_os("KBENCH_KILL_DB") else {
        return;
    };
    let mut store = Location::parse(location).unwrap().open().unwrap();
    let run = store.begin_run("set", "id", &info("k", 1)).unwrap();
    let test = store
        .test_id("set", &spec("a", "ns", Direction::Lower))
        .unwrap();
    for i in 1.. {
        store
            .add_sample(run, test, &sample(1.0 + i as f64, i, 0))
            .unwrap();
        println!("stored {i}");
    }
}

fn samples_survive_sigkill(db: &TestDb) {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "kill_child_writer",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("KBENCH_KILL_DB", &db.location)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut acknowledged = 0;
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        if let Some(n) = line.unwrap().strip_prefix("stored ") {
            acknowledged = n.parse().unwrap();
            if acknowledged >= 300 {
                break;
            }
        }
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    assert!(acknowledged >= 300, "the writer stopped at {acknowledged}");

    let mut store = db.open();
    let data = store.load("set").unwrap();
    let stored = data.identifiers[0].samples[&TestKey::new("a")].len();
    assert!(
        stored >= acknowledged,
        "{stored} samples stored, {acknowledged} acknowledged"
    );
    assert_eq!(
        store.unfinished_run("set", "id").unwrap().map(|r| r.status),
        Some(RunStatus::Running)
    );
}

fn newer_schema_is_too_new(db: &TestDb) {
    db.open().begin_run("kept", "id", &info("k", 1)).unwrap();
    db.set_schema_version(99);
    let err = db.try_open().err().expect("a newer schema must be refused");
    assert!(
        matches!(
            err,
            StoreError::TooNew {
                found: 99,
                supported: SCHEMA_VERSION,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains("upgrade kbench"), "{err}");
    assert_eq!(db.schema_version(), 99, "the version was changed");
    db.set_schema_version(SCHEMA_VERSION);
    assert_eq!(db.open().result_sets().unwrap()[0].name, "kept");
}

/// A version-1 database (no bisection table) is migrated in place, its
/// data intact.
fn version_1_databases_are_migrated_keeping_their_data(db: &TestDb) {
    drop(db.open());
    db.raw(UNDO_V12);
    db.raw(UNDO_V11);
    db.undo_v10();
    db.raw(&format!(
        "{UNDO_V9} {} {UNDO_V7} {UNDO_V6} {UNDO_V5} {UNDO_V4} DROP TABLE bisects; DROP TABLE api_tokens; DROP TABLE pushes; \
         INSERT INTO result_sets (name, created_at_ms) VALUES ('old', 1)",
        db.undo_v8()
    ));
    db.set_schema_version(1);
    assert_eq!(db.schema_version(), 1);
    let mut store = db.open();
    assert_eq!(store.result_sets().unwrap()[0].name, "old");
    store.save_bisect("old", "{}").unwrap();
    drop(store);
    assert_eq!(db.schema_version(), SCHEMA_VERSION);
}

/// A version-7 database is migrated in place: its samples stay, in their
/// runs and order, and the samples table has no foreign key left.
fn version_7_databases_are_migrated_keeping_their_data(db: &TestDb) {
    let mut store = db.open();
    let t = spec("a", "ns", Direction::Lower);
    for name in ["stock", "patched"] {
        let run = store.begin_run("old", name, &info(name, 1)).unwrap();
        let test = store.test_id("old", &t).unwrap();
        for i in 0..4 {
            store
                .add_sample(run, test, &sample(1.0 + i as f64, i, 0))
                .unwrap();
        }
        store.end_run(run, RunStatus::Complete, None).unwrap();
    }
    let before = store.load("old").unwrap();
    drop(store);
    db.raw(UNDO_V12);
    db.raw(UNDO_V11);
    db.undo_v10();
    db.raw(&format!("{UNDO_V9} {}", db.undo_v8()));
    db.set_schema_version(7);
    assert_eq!(db.sample_foreign_keys(), 2, "undo_v8 did not restore them");

    let mut store = db.open();
    assert_eq!(db.schema_version(), SCHEMA_VERSION);
    assert_eq!(store.load("old").unwrap(), before);
    assert_eq!(db.sample_foreign_keys(), 0);
    store.remove_identifier("old", "stock").unwrap();
    assert_eq!(db.orphan_samples(), 0);
    assert_eq!(db.stored_samples(), 4);
}

/// A version-9 database's sample rows are packed into blocks (SQLite by
/// kbench, PostgreSQL in SQL): every value bit for bit, each test's samples
/// in measurement order across an identifier's runs, with two tests
/// measured in turn, and a long run's in parts of 128 as storing them one
/// by one made them.
fn version_9_databases_are_migrated_packing_samples_exactly(db: &TestDb) {
    let mut store = db.open();
    let tests = [
        spec("a", "ns", Direction::Lower),
        spec("b", "ops/s", Direction::Higher),
    ];
    let values = [0.1, 1e300, f64::MIN_POSITIVE / 4.0, 3.0, 1.0 / 3.0, 7e-9];
    for (round, name) in [(0, "stock"), (1, "stock"), (0, "patched")] {
        let run = store.begin_run("old", name, &info(name, 1)).unwrap();
        for (i, value) in values.iter().enumerate() {
            let test = store.test_id("old", &tests[i % 2]).unwrap();
            let sample = sample(value * (1.0 + f64::from(round)), i as i64 + 5, round);
            store.add_sample(run, test, &sample).unwrap();
        }
        store.end_run(run, RunStatus::Complete, None).unwrap();
    }
    // A long run: its samples, stored one by one, fill parts of 128.
    let run = store.begin_run("old", "long", &info("long", 1)).unwrap();
    let test = store.test_id("old", &tests[0]).unwrap();
    for i in 0..300 {
        store
            .add_sample(run, test, &sample(1.0 + f64::from(i) / 7.0, 10, 0))
            .unwrap();
    }
    store.end_run(run, RunStatus::Complete, None).unwrap();
    let parts = "SELECT COUNT(*) FROM sample_blocks";
    assert_eq!(db.count(parts), 3 * 2 + 3);
    let before = store.load("old").unwrap();
    let long: Vec<f64> = before.identifiers[2].samples[&tests[0].key]
        .iter()
        .map(|s| s.value)
        .collect();
    assert_eq!(
        long,
        (0..300)
            .map(|i| 1.0 + f64::from(i) / 7.0)
            .collect::<Vec<_>>()
    );
    drop(store);
    db.raw(UNDO_V12);
    db.raw(UNDO_V11);
    db.undo_v10();
    db.set_schema_version(9);
    assert_eq!(db.count("SELECT COUNT(*) FROM samples"), 18 + 300);

    let mut store = db.open();
    assert_eq!(db.schema_version(), SCHEMA_VERSION);
    assert_eq!(store.load("old").unwrap(), before);
    assert_eq!(db.count(parts), 3 * 2 + 3);
    assert_eq!(db.stored_samples(), 18 + 300);
    let stock = &before.identifiers[0];
    let a: Vec<u32> = stock.samples[&tests[0].key]
        .iter()
        .map(|s| s.round)
        .collect();
    assert_eq!(a, [0, 0, 0, 1, 1, 1], "runs in order");
}

/// A version-8 database gets each run's sample count, counted from the
/// samples it holds, and the set listing sums them.
fn version_8_databases_are_migrated_counting_samples(db: &TestDb) {
    let mut store = db.open();
    let t = spec("a", "ns", Direction::Lower);
    for (name, count) in [("stock", 3), ("patched", 5)] {
        let run = store.begin_run("old", name, &info(name, 1)).unwrap();
        let test = store.test_id("old", &t).unwrap();
        for i in 0..count {
            store.add_sample(run, test, &sample(1.0, i, 0)).unwrap();
        }
        store.end_run(run, RunStatus::Complete, None).unwrap();
    }
    drop(store);
    db.raw(UNDO_V12);
    db.raw(UNDO_V11);
    db.undo_v10();
    db.raw(UNDO_V9);
    db.set_schema_version(8);

    let mut store = db.open();
    assert_eq!(db.schema_version(), SCHEMA_VERSION);
    let counts =
        db.count("SELECT CAST(SUM(sample_count) * 10 + MAX(sample_count) AS BIGINT) FROM runs");
    assert_eq!(counts, 85, "8 samples, 5 in the larger run");
    assert_eq!(store.result_sets().unwrap()[0].samples, 8);
}

/// What schema version 5 added, dropped again: a database as version 4
/// left it.
const UNDO_V5: &str = "ALTER TABLE api_tokens DROP COLUMN scopes; \
                       ALTER TABLE jobs DROP COLUMN token_name; \
                       ALTER TABLE workers DROP COLUMN token_name;";

/// What schema version 4 added, dropped again: a database as version 3
/// left it (after [`UNDO_V5`]).
const UNDO_V4: &str = "DROP TABLE workers; DROP TABLE jobs; DROP INDEX runs_by_uid; \
                       ALTER TABLE runs DROP COLUMN uid;";

/// A version-3 database (runs without uids, no jobs) is migrated in place:
/// its runs keep their samples and have no uid, and what version 4 brings
/// works on it.
fn version_3_databases_are_migrated_keeping_their_data(db: &TestDb) {
    let mut store = db.open();
    let t = spec("a", "ns", Direction::Lower);
    let run = store.begin_run("old", "id", &info("k", 1)).unwrap();
    let test = store.test_id("old", &t).unwrap();
    for i in 0..3 {
        store.add_sample(run, test, &sample(1.0, i, 0)).unwrap();
    }
    store.end_run(run, RunStatus::Complete, None).unwrap();
    drop(store);
    db.raw(UNDO_V12);
    db.raw(UNDO_V11);
    db.undo_v10();
    db.raw(&format!(
        "{UNDO_V9} {} {UNDO_V7} {UNDO_V6} {UNDO_V5} {UNDO_V4}",
        db.undo_v8()
    ));
    db.set_schema_version(3);

    let mut store = db.open();
    assert_eq!(db.schema_version(), SCHEMA_VERSION);
    let data = store.load("old").unwrap();
    assert_eq!(data.identifiers[0].runs[0].info.uid, None);
    assert_eq!(data.identifiers[0].samples[&t.key].len(), 3);
    // Runs without a uid do not collide with each other; runs with one do.
    let mut with_uid = info("k", 2);
    with_uid.uid = Some("after-upgrade".into());
    store.begin_run("old", "id", &info("k", 2)).unwrap();
    store.begin_run("old", "id", &with_uid).unwrap();
    let err = store.begin_run("old", "id", &with_uid).unwrap_err();
    assert!(matches!(err, StoreError::Conflict(_)), "{err:?}");
    let job = job("old", &[]);
    let id = store.submit_job(&job).unwrap();
    assert_eq!(store.job(id).unwrap().spec, job);
}

/// A version-4 database (tokens without scopes, leases without owners) is
/// migrated in place: its tokens keep what they could do then (read, push,
/// submit, work; not admin), and a lease taken then may be ended by any
/// token, while new leases belong to their token.
fn version_4_databases_are_migrated_keeping_what_tokens_could_do(db: &TestDb) {
    let mut store = db.open();
    let job = job("lab", &[]);
    let old = store.submit_job(&job).unwrap();
    store
        .lease_job("w1", "t-old", &[], 60_000)
        .unwrap()
        .unwrap();
    drop(store);
    db.raw(UNDO_V12);
    db.raw(UNDO_V11);
    db.undo_v10();
    db.raw(&format!(
        "{UNDO_V9} {} {UNDO_V7} {UNDO_V6} {UNDO_V5} INSERT INTO api_tokens (name, secret_sha256, created_at_ms) \
         VALUES ('runner-1', 'aa', 1)",
        db.undo_v8()
    ));
    db.set_schema_version(4);

    let mut store = db.open();
    assert_eq!(db.schema_version(), SCHEMA_VERSION);
    let token = store.token_by_hash("aa").unwrap().unwrap();
    assert_eq!(token.scopes, Scope::BEFORE_SCOPES);
    assert!(!token.allows(Scope::Admin));
    // The lease from before owners were kept is ended by whoever has it.
    assert_eq!(store.job(old).unwrap().token, None);
    assert!(store.finish_job(old, "w1", "runner-1", true, "ok").unwrap());
    let new = store.submit_job(&job).unwrap();
    store
        .lease_job("w1", "runner-1", &[], 60_000)
        .unwrap()
        .unwrap();
    let err = store
        .finish_job(new, "w1", "t-other", true, "x")
        .unwrap_err();
    assert!(matches!(err, StoreError::Forbidden(_)), "{err:?}");
}

fn names_are_validated(db: &TestDb) {
    let mut store = db.open();
    let long = "x".repeat(129);
    for (set, identifier) in [
        ("", "id"),
        ("set", ""),
        ("  ", "id"),
        (long.as_str(), "id"),
        ("set", long.as_str()),
        ("set", "tab\there"),
    ] {
        let err = store.begin_run(set, identifier, &info("k", 1)).unwrap_err();
        assert!(matches!(err, StoreError::Invalid(_)), "{err:?}");
    }
    let err = store
        .test_id("", &spec("a", "ns", Direction::Lower))
        .unwrap_err();
    assert!(matches!(err, StoreError::Invalid(_)), "{err:?}");
    let mut commas = spec("a", "ns", Direction::Lower);
    commas.key.options.insert("cpus".into(), "0,1".into());
    let err = store.test_id("set", &commas).unwrap_err();
    assert!(matches!(err, StoreError::Invalid(_)), "{err:?}");
    store
        .begin_run(&"x".repeat(128), "fine", &info("k", 1))
        .unwrap();
}

fn names_holding_sql_or_html_are_kept_as_text(db: &TestDb) {
    let mut store = db.open();
    let set = "x'); DROP TABLE samples; --";
    let identifier = "<script>alert(\"é ✓\")</script> ?1 $1";
    let test = spec("b[k=v'v]:p\"99", "ops/s ' \\", Direction::Higher);
    let run = store.begin_run(set, identifier, &info("k", 1)).unwrap();
    let id = store.test_id(set, &test).unwrap();
    store.add_sample(run, id, &sample(1.0, 1, 0)).unwrap();
    let data = store.load(set).unwrap();
    assert_eq!(data.name, set);
    assert_eq!(data.identifiers[0].name, identifier);
    assert_eq!(data.tests, vec![test.clone()]);
    assert_eq!(store.last_round(set, identifier).unwrap(), Some(0));
    assert_eq!(store.result_sets().unwrap()[0].samples, 1);
}

fn unit_or_direction_mismatch_is_a_conflict(db: &TestDb) {
    let mut store = db.open();
    let id = store
        .test_id("set", &spec("a[x=1]", "ns", Direction::Lower))
        .unwrap();
    assert_eq!(
        store
            .test_id("set", &spec("a[x=1]", "ns", Direction::Lower))
            .unwrap(),
        id
    );
    let err = store
        .test_id("set", &spec("a[x=1]", "us", Direction::Lower))
        .unwrap_err();
    let StoreError::Conflict(msg) = &err else {
        panic!("{err:?}")
    };
    assert!(msg.contains("ns") && msg.contains("us"), "{msg}");
    let err = store
        .test_id("set", &spec("a[x=1]", "ns", Direction::Higher))
        .unwrap_err();
    assert!(matches!(err, StoreError::Conflict(_)), "{err:?}");
    // Same test in another set, or another metric, is independent.
    store
        .test_id("other", &spec("a[x=1]", "us", Direction::Lower))
        .unwrap();
    store
        .test_id("set", &spec("a[x=1]:p99", "us", Direction::Lower))
        .unwrap();
}

fn missing_set_names_the_existing_ones(db: &TestDb) {
    let mut store = db.open();
    let err = store.load("gamma").unwrap_err();
    assert!(
        err.to_string().contains("holds no result sets yet"),
        "{err}"
    );
    store.begin_run("alpha", "id", &info("k", 1)).unwrap();
    store.begin_run("beta", "id", &info("k", 1)).unwrap();
    let err = store.load("gamma").unwrap_err();
    let StoreError::NotFound(msg) = &err else {
        panic!("{err:?}")
    };
    assert!(
        msg.contains("gamma") && msg.contains("\"alpha\", \"beta\""),
        "{msg}"
    );
    assert!(msg.contains(&kbench_store::redact(&db.location)), "{msg}");
}

/// A set with two identifiers, one run each, written through the store.
fn written_set(store: &mut dyn Recorder, set: &str) -> ResultSetData {
    let t = spec("a", "ns", Direction::Lower);
    let u = spec("b[k=v]", "MiB/s", Direction::Higher);
    for (n, identifier) in ["one", "two"].into_iter().enumerate() {
        let start = 1000 * (n as i64 + 1);
        let run = store
            .begin_run(set, identifier, &info(identifier, start))
            .unwrap();
        for test in [&t, &u] {
            let id = store.test_id(set, test).unwrap();
            for i in 0..3 {
                store
                    .add_sample(run, id, &sample(1.0 + i as f64, start + i, 0))
                    .unwrap();
            }
            store
                .end_test(run, id, &outcome(test, TestOutcomeKind::Skipped))
                .unwrap();
        }
        store.end_run(run, RunStatus::Complete, None).unwrap();
    }
    store.load(set).unwrap()
}

/// `loaded` with the run ids of `expected` (ids are the store's own).
fn with_run_ids_of(mut loaded: ResultSetData, expected: &ResultSetData) -> ResultSetData {
    for (got, want) in loaded.identifiers.iter_mut().zip(&expected.identifiers) {
        for (run, want) in got.runs.iter_mut().zip(&want.runs) {
            run.id = want.id;
        }
    }
    loaded
}

fn import_round_trips_and_is_all_or_nothing(db: &TestDb) {
    let mut store = db.open();
    let original = written_set(store.as_mut(), "orig");

    let mut copy = original.clone();
    copy.name = "copy".into();
    store.import(&copy).unwrap();
    assert_eq!(with_run_ids_of(store.load("copy").unwrap(), &copy), copy);

    // "fresh" is new, but "two" exists in "copy": nothing may be written.
    let before = store.load("copy").unwrap();
    let sets_before = store.result_sets().unwrap();
    let mut clash = original.clone();
    clash.name = "copy".into();
    clash.identifiers[0].name = "fresh".into();
    clash.tests.push(spec("new-test", "ns", Direction::Lower));
    let err = store.import(&clash).unwrap_err();
    let StoreError::Conflict(msg) = &err else {
        panic!("{err:?}")
    };
    assert!(msg.contains("\"two\""), "{msg}");
    assert_eq!(store.load("copy").unwrap(), before);
    assert_eq!(store.result_sets().unwrap(), sets_before);

    // A whole new set that fails midway leaves no set behind.
    let mut broken = original.clone();
    broken.name = "broken".into();
    broken.identifiers[1]
        .samples
        .insert(TestKey::new("unknown"), vec![sample(1.0, 1, 0)]);
    assert!(matches!(
        store.import(&broken),
        Err(StoreError::NotFound(_))
    ));
    assert!(matches!(store.load("broken"), Err(StoreError::NotFound(_))));

    // A NaN late in a batch undoes the whole import.
    let mut nan = original.clone();
    nan.name = "nan".into();
    let samples = nan.identifiers[1].samples.values_mut().next().unwrap();
    samples.extend((0..600).map(|i| sample(1.0 + i as f64, 2000 + i, 0)));
    samples[500].value = f64::NAN;
    assert!(store.import(&nan).is_err());
    assert!(matches!(store.load("nan"), Err(StoreError::NotFound(_))));

    let mut bad_name = original;
    bad_name.identifiers[0].name = String::new();
    assert!(matches!(
        store.import(&bad_name),
        Err(StoreError::Invalid(_))
    ));
}

/// `kbench import` of a document as it is read
/// (`kbench_store::exchange::stream::import`): an export comes back the same, in
/// kbench export's order or another; a bad last sample, a file cut off
/// (even just before its last brace) or followed by garbage, and an
/// identifier the set has already leave the store as it was.
fn streamed_import_is_all_or_nothing(db: &TestDb) {
    use kbench_store::exchange::{
        self,
        stream::{self, ImportError, Stored},
    };
    let mut store = db.open();
    let original = written_set(store.as_mut(), "orig");
    let mut file = exchange::export(&original);
    for identifier in &mut file.identifiers {
        for run in &mut identifier.runs {
            // The runs are stored once already: these are copies.
            run.info.uid = None;
        }
    }
    let text = serde_json::to_string_pretty(&file).unwrap();
    let stored = stream::import(text.as_bytes(), Some("streamed"), store.as_mut()).unwrap();
    let expected = Stored {
        set: "streamed".into(),
        identifiers: 2,
        tests: 2,
        samples: 12,
        read_whole: false,
    };
    assert_eq!(stored, expected);
    let export_of = |store: &mut dyn kbench_store::Database, set: &str| {
        let mut export = exchange::export(&store.load(set).unwrap());
        export.result_set = None;
        for identifier in &mut export.identifiers {
            for run in &mut identifier.runs {
                run.info.uid = None;
            }
        }
        export
    };
    let mut want = file.clone();
    want.result_set = None;
    assert_eq!(export_of(store.as_mut(), "streamed"), want);

    // Identifiers before the tests: held in memory, then the same import.
    let late = format!(
        r#"{{"identifiers": {}, "schema": "kbench.samples/1", "tests": {}, "result_set": "late"}}"#,
        serde_json::to_string(&file.identifiers).unwrap(),
        serde_json::to_string(&file.tests).unwrap()
    );
    let stored = stream::import(late.as_bytes(), None, store.as_mut()).unwrap();
    assert_eq!(
        stored,
        Stored {
            set: "late".into(),
            read_whole: true,
            ..expected
        }
    );
    assert_eq!(export_of(store.as_mut(), "late"), want);

    let sets = store.result_sets().unwrap();
    let last = text.rfind("\"value\": ").unwrap() + "\"value\": ".len();
    let end = last + text[last..].find(',').unwrap();
    let bad_last = format!("{}-1{}", &text[..last], &text[end..]);
    let refused =
        |store: &mut dyn kbench_store::Database, text: &str, into: &str| match stream::import(
            text.as_bytes(),
            Some(into),
            store,
        ) {
            Err(ImportError::File(e)) => e.0,
            other => panic!("{other:?} for {text}"),
        };
    let why = refused(store.as_mut(), &bad_last, "bad");
    assert!(
        why.starts_with("identifiers[1].runs[0].samples[\"b[k=v]\"][2]: value -1"),
        "{why}"
    );
    for cut in [text.len() / 2, text.len() - 1] {
        let why = refused(store.as_mut(), &text[..cut], "cut");
        assert!(why.contains("EOF while parsing"), "{why}");
        assert_eq!(why.matches("line").count(), 1, "the position once: {why}");
    }
    let why = refused(store.as_mut(), &format!("{text} x"), "trailing");
    assert!(why.contains("trailing characters"), "{why}");
    assert_eq!(store.result_sets().unwrap(), sets);

    // "fresh" is new but "two" is in "streamed" already: "fresh" goes too.
    let clash = text.replace(r#""name": "one""#, r#""name": "fresh""#);
    let err = stream::import(clash.as_bytes(), Some("streamed"), store.as_mut()).unwrap_err();
    assert!(
        matches!(&err, ImportError::Store(StoreError::Conflict(msg)) if msg.contains("\"two\"")),
        "{err:?}"
    );
    assert_eq!(export_of(store.as_mut(), "streamed"), want);
    assert_eq!(store.result_sets().unwrap(), sets);
}

/// More samples than one multi-row INSERT holds, spread over two runs,
/// come back in order and in their runs.
fn large_import_keeps_order_and_runs(db: &TestDb) {
    let mut store = db.open();
    let mut data = written_set(store.as_mut(), "big");
    data.name = "big-copy".into();
    let identifier = &mut data.identifiers[0];
    let mut second = identifier.runs[0].clone();
    second.info.started_at_ms = 50_000;
    identifier.runs.push(second);
    let samples: Vec<Sample> = (0..1_000)
        .map(|i| sample(1.0 + (i % 7) as f64, 1000 + 100 * i, (i / 400) as u32))
        .collect();
    identifier
        .samples
        .insert(TestKey::new("a"), samples.clone());
    // No runs recorded for them: they go by time.
    identifier.sample_runs.remove(&TestKey::new("a"));
    store.import(&data).unwrap();
    let loaded = store.load("big-copy").unwrap();
    assert_eq!(loaded.identifiers[0].samples[&TestKey::new("a")], samples);
    let by_time = data.identifiers[0].runs_of_samples(&TestKey::new("a"));
    assert!(by_time.contains(&0) && by_time.contains(&1));
    data.identifiers[0]
        .sample_runs
        .insert(TestKey::new("a"), by_time);
    assert_eq!(with_run_ids_of(loaded, &data), data);
    assert_eq!(store.last_round("big-copy", "one").unwrap(), Some(2));
    // The export puts each sample back in the run it was measured in.
    let file = kbench_store::exchange::export(&store.load("big-copy").unwrap());
    let runs = &file.identifiers[0].runs;
    assert_eq!(runs.len(), 2);
    let in_run = |run: usize| runs[run].samples.get("a").map_or(0, Vec::len);
    assert_eq!(in_run(0) + in_run(1), 1000);
    assert_eq!(
        in_run(1),
        (0..1000).filter(|i| 1000 + 100 * i >= 50_000).count()
    );
}

/// An import of more tests than one INSERT of them holds keeps the
/// file's order; a second import into the set adds its new tests after
/// the stored ones, and refuses one stored in another unit.
fn many_tests_import_in_order_after_the_stored_ones(db: &TestDb) {
    let mut store = db.open();
    let document = |identifier: &str, tests: &[String], unit: &str| {
        let specs: Vec<String> = tests
            .iter()
            .map(|t| format!(r#"{{"test": "{t}", "unit": "{unit}", "direction": "lower"}}"#))
            .collect();
        let samples: Vec<String> = tests
            .iter()
            .map(|t| format!(r#""{t}": [{{"value": 1.5}}]"#))
            .collect();
        format!(
            r#"{{"schema": "kbench.samples/1", "result_set": "wide", "tests": [{}],
                "identifiers": [{{"name": "{identifier}", "samples": {{{}}}}}]}}"#,
            specs.join(", "),
            samples.join(", ")
        )
    };
    let first: Vec<String> = (0..600).rev().map(|i| format!("t{i:03}")).collect();
    stream::import(document("a", &first, "ns").as_bytes(), None, store.as_mut()).unwrap();
    let names = |store: &mut dyn kbench_store::Database| -> Vec<String> {
        let data = store.load("wide").unwrap();
        data.tests.iter().map(|t| t.key.to_string()).collect()
    };
    assert_eq!(names(store.as_mut()), first);

    let second: Vec<String> = ["new-1", "t005", "new-0"].map(String::from).to_vec();
    stream::import(
        document("b", &second, "ns").as_bytes(),
        None,
        store.as_mut(),
    )
    .unwrap();
    let mut expected = first.clone();
    expected.extend(["new-1", "new-0"].map(String::from));
    assert_eq!(names(store.as_mut()), expected);
    let data = store.load("wide").unwrap();
    assert_eq!(data.identifiers[1].samples.len(), 3);

    let err = stream::import(
        document("c", &second, "ms").as_bytes(),
        None,
        store.as_mut(),
    )
    .unwrap_err();
    assert!(err.to_string().contains("is stored in result set"), "{err}");
}

/// A VM guest's clock may be behind the host's: samples timed before their
/// run started still export, import and load in that run.
fn samples_stay_in_their_run_whatever_their_clock(db: &TestDb) {
    let mut store = db.open();
    let test = spec("a", "ns", Direction::Lower);
    for (n, started) in [10_000, 20_000].into_iter().enumerate() {
        let run = store
            .begin_run("clock", "guest", &info("k", started))
            .unwrap();
        let id = store.test_id("clock", &test).unwrap();
        // Timed 9 s before the run began (round n).
        for i in 0..3 {
            let at = started - 9_000 + i;
            store
                .add_sample(run, id, &sample(1.0 + n as f64, at, n as u32))
                .unwrap();
        }
        store.end_run(run, RunStatus::Complete, None).unwrap();
    }
    let file = kbench_store::exchange::export(&store.load("clock").unwrap());
    let runs = &file.identifiers[0].runs;
    let values =
        |run: usize| -> Vec<f64> { runs[run].samples["a"].iter().map(|s| s.value).collect() };
    assert_eq!((values(0), values(1)), (vec![1.0; 3], vec![2.0; 3]));
    assert!(file.identifiers[0].samples.is_empty());

    let text = serde_json::to_string(&file).unwrap();
    let mut copy = kbench_store::exchange::parse(&text, Some("clock-copy")).unwrap();
    for run in &mut copy.identifiers[0].runs {
        run.info.uid = None;
    }
    store.import(&copy).unwrap();
    let again = kbench_store::exchange::export(&store.load("clock-copy").unwrap());
    let runs = &again.identifiers[0].runs;
    assert_eq!(runs[0].samples["a"].len(), 3);
    assert!(runs[1].samples["a"].iter().all(|s| s.value == 2.0));
}

fn sample_of_another_sets_test_is_refused(db: &TestDb) {
    let mut store = db.open();
    let run = store.begin_run("one", "id", &info("k", 1)).unwrap();
    let foreign = store
        .test_id("two", &spec("a", "ns", Direction::Lower))
        .unwrap();
    let err = store
        .add_sample(run, foreign, &sample(1.0, 1, 0))
        .unwrap_err();
    assert!(matches!(err, StoreError::NotFound(_)), "{err:?}");
    let nan = sample(f64::NAN, 1, 0);
    let own = store
        .test_id("one", &spec("a", "ns", Direction::Lower))
        .unwrap();
    let err = store.add_sample(run, own, &nan).unwrap_err();
    assert!(err.to_string().contains("NaN"), "{err}");
    // Every write path refuses what import refuses (kbench_store::validate).
    for bad in [f64::INFINITY, 0.0, -1.0] {
        let err = store.add_sample(run, own, &sample(bad, 1, 0)).unwrap_err();
        assert!(matches!(err, StoreError::Invalid(_)), "{bad}: {err:?}");
    }
    store.add_sample(run, own, &sample(2.5, 1, 0)).unwrap();
    let data = store.load("one").unwrap();
    assert_eq!(
        data.identifiers[0].samples[&TestKey::new("a")],
        vec![sample(2.5, 1, 0)]
    );
}

fn bisect_state_is_saved_replaced_and_forgotten(db: &TestDb) {
    let mut store = db.open();
    assert_eq!(store.load_bisect("b").unwrap(), None);
    store.save_bisect("b", r#"{"step":1}"#).unwrap();
    store.save_bisect("b", r#"{"step":2}"#).unwrap();
    store.save_bisect("other", "{}").unwrap();
    drop(store);
    let mut store = db.open();
    assert_eq!(
        store.load_bisect("b").unwrap().as_deref(),
        Some(r#"{"step":2}"#)
    );
    store.delete_bisect("b").unwrap();
    store.delete_bisect("never-there").unwrap();
    assert_eq!(store.load_bisect("b").unwrap(), None);
    assert_eq!(store.load_bisect("other").unwrap().as_deref(), Some("{}"));
    assert!(store.save_bisect("", "{}").is_err());
    store.save_bisect("a-first", r#"{"step":3}"#).unwrap();
    let listed: Vec<(String, String)> = store
        .bisects()
        .unwrap()
        .into_iter()
        .map(|b| (b.name, b.state_json))
        .collect();
    assert_eq!(
        listed,
        [
            ("a-first".to_string(), r#"{"step":3}"#.to_string()),
            ("other".to_string(), "{}".to_string())
        ]
    );
}

/// Two processes' worth of writers on one database: each creates the same
/// new result set and tests and its own identifiers; none fails, nothing is
/// stored twice.
fn concurrent_writers_share_sets_and_tests(db: &TestDb) {
    drop(db.open()); // the schema, before the writers race
    let tests = [
        spec("a", "ns", Direction::Lower),
        spec("b", "ns", Direction::Lower),
    ];
    std::thread::scope(|scope| {
        for writer in 0..2 {
            let tests = &tests;
            scope.spawn(move || {
                let mut store = db.open();
                for n in 0..10 {
                    let identifier = format!("w{writer}-{n}");
                    let run = store
                        .begin_run("shared", &identifier, &info("k", n))
                        .unwrap();
                    for test in tests {
                        let id = store.test_id("shared", test).unwrap();
                        store.add_sample(run, id, &sample(1.0, n, 0)).unwrap();
                    }
                    store.end_run(run, RunStatus::Complete, None).unwrap();
                }
            });
        }
    });
    let mut store = db.open();
    let sets = store.result_sets().unwrap();
    assert_eq!(sets.len(), 1);
    assert_eq!(
        (sets[0].identifiers.len(), sets[0].tests, sets[0].samples),
        (20, 2, 40)
    );
    let data = store.load("shared").unwrap();
    assert_eq!(data.tests, tests);
}

fn pushed(set: &str, identifier: &str) -> ResultSetData {
    let text = format!(
        r#"{{"schema": "kbench.samples/1", "result_set": "{set}",
            "tests": [{{"test": "app", "unit": "ops/s", "direction": "higher"}}],
            "identifiers": [{{"name": "{identifier}", "samples": {{"app": [{{"value": 1.0}}, {{"value": 2.0}}]}}}}]}}"#
    );
    kbench_store::exchange::parse(&text, None).unwrap()
}

fn a_push_id_stores_its_samples_once(db: &TestDb) {
    let mut store = db.open();
    let push = |id, digest| kbench_store::Push {
        id,
        digest,
        token: "runner-1",
    };
    let data = pushed("lab", "6.18");
    assert_eq!(
        store.push(&push("p-1", "d1"), &data).unwrap(),
        kbench_store::PushOutcome::Stored { samples: 2 }
    );
    // A retry: nothing written, the first push described.
    let again = store.push(&push("p-1", "d1"), &data).unwrap();
    assert!(
        matches!(&again, kbench_store::PushOutcome::AlreadyStored { result_set, samples: 2, .. } if result_set == "lab"),
        "{again:?}"
    );
    // The same id for other content is refused.
    let err = store
        .push(&push("p-1", "d2"), &pushed("lab", "6.19"))
        .unwrap_err();
    assert!(matches!(err, StoreError::Conflict(_)), "{err:?}");
    // A failed import claims no id: the id is free for the fixed document.
    let err = store.push(&push("p-2", "d3"), &data).unwrap_err();
    assert!(matches!(err, StoreError::Conflict(_)), "{err:?}");
    store
        .push(&push("p-2", "d4"), &pushed("lab", "6.19"))
        .unwrap();
    assert!(store.push(&push("bad id!", "d"), &data).is_err());
    assert_eq!(store.result_sets().unwrap()[0].samples, 4);
}

fn tokens_are_created_found_by_hash_and_revoked(db: &TestDb) {
    let mut store = db.open();
    store
        .create_token("runner-1", "aa", &[Scope::Push])
        .unwrap();
    store
        .create_token("<b>'; --", "bb", &[Scope::Push])
        .unwrap();
    assert!(matches!(
        store.create_token("runner-1", "cc", &[Scope::Push]),
        Err(StoreError::Conflict(_))
    ));
    let found = store.token_by_hash("aa").unwrap().unwrap();
    assert_eq!(
        (found.name.as_str(), &found.scopes[..]),
        ("runner-1", &[Scope::Push][..])
    );
    assert_eq!(store.token_by_hash("zz").unwrap(), None);
    store.revoke_token("runner-1").unwrap();
    assert_eq!(store.token_by_hash("aa").unwrap(), None);
    assert!(matches!(
        store.revoke_token("nobody"),
        Err(StoreError::NotFound(_))
    ));
    let tokens = store.tokens().unwrap();
    assert_eq!(tokens.len(), 2);
    let revoked = |name: &str| {
        tokens
            .iter()
            .find(|t| t.name == name)
            .map(|t| t.revoked_at_ms.is_some())
    };
    assert_eq!(revoked("runner-1"), Some(true));
    assert_eq!(revoked("<b>'; --"), Some(false), "{tokens:?}");
}

fn campaign_states_are_kept_apart_from_bisections(db: &TestDb) {
    let mut store = db.open();
    store.save_bisect("same", r#"{"bisect":1}"#).unwrap();
    store.save_campaign("same", r#"{"campaign":1}"#).unwrap();
    store.save_campaign("same", r#"{"campaign":2}"#).unwrap();
    assert_eq!(
        store.load_campaign("same").unwrap().as_deref(),
        Some(r#"{"campaign":2}"#)
    );
    assert_eq!(
        store.load_bisect("same").unwrap().as_deref(),
        Some(r#"{"bisect":1}"#)
    );
    let names: Vec<String> = store
        .campaigns()
        .unwrap()
        .into_iter()
        .map(|c| c.name)
        .collect();
    assert_eq!(names, ["same"]);
    store.delete_campaign("same").unwrap();
    assert_eq!(store.load_campaign("same").unwrap(), None);
    assert!(store.load_bisect("same").unwrap().is_some());
    let refused = store.save_campaign("", "{}").unwrap_err().to_string();
    assert!(refused.contains("campaign"), "{refused}");
}

/// A run cut short by a crash, marked aborted: its samples stay stored
/// (the run reads back, aborted, with the reason among its notes), the
/// set as reports read it leaves it out, and a later run of the
/// identifier does not resume it.
fn an_aborted_run_is_kept_but_left_out_of_the_set(db: &TestDb) {
    let mut store = db.open();
    let a = spec("a", "ns", Direction::Lower);
    let kept = store.begin_run("set", "id", &info("k", 1)).unwrap();
    let test = store.test_id("set", &a).unwrap();
    store.add_sample(kept, test, &sample(1.0, 2, 0)).unwrap();
    store.end_run(kept, RunStatus::Complete, None).unwrap();
    let cut = store.begin_run("set", "id", &info("k", 2)).unwrap();
    store.add_sample(cut, test, &sample(9.0, 2, 1)).unwrap();
    drop(store); // the machine went down: no end_run
    let mut store = db.open();
    store
        .abort_run(cut, "aborted: the machine went down")
        .unwrap();
    assert!(store.abort_run(RunId(9999), "x").is_err());

    let contents = store.run_contents(cut).unwrap();
    assert_eq!(contents.record.status, RunStatus::Aborted);
    assert!(contents.record.ended_at_ms.is_some());
    assert_eq!(
        contents.record.info.notes.last().map(String::as_str),
        Some("aborted: the machine went down")
    );
    assert_eq!(contents.samples[&a.key].len(), 1);

    let data = store.load("set").unwrap();
    let id = &data.identifiers[0];
    assert_eq!(id.runs.iter().map(|r| r.id).collect::<Vec<_>>(), [kept]);
    assert_eq!(
        id.samples[&a.key]
            .iter()
            .map(|s| s.value)
            .collect::<Vec<_>>(),
        [1.0]
    );
    assert_eq!(store.unfinished_run("set", "id").unwrap(), None);
}
