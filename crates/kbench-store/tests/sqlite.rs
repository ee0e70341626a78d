//! The SQLite store through the `Store` trait, as kbench uses it.

use kbench_model::{Direction, Sample, SystemSnapshot, TestKey, TestSpec};
use kbench_store::{
    ResultSetData, RunInfo, RunStatus, SqliteStore, Store, StoreError, TestOutcome, TestOutcomeKind,
};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn snapshot(kernel: &str) -> SystemSnapshot {
    SystemSnapshot {
        hostname: "bench1".into(),
        kernel_release: kernel.into(),
        kernel_cmdline: "quiet mitigations=auto".into(),
        vulnerabilities: [(
            "spectre_v2".to_string(),
            "Mitigation: Retpolines".to_string(),
        )]
        .into(),
        cpu_model: "AMD EPYC 7B13".into(),
        cpus_online: 2,
        threads_per_core: 2,
        cpu_mhz: 2994.3720000001,
        steal_percent: Some(0.1 + 0.2),
        memory_total_kib: 24 * 1024 * 1024,
        ..SystemSnapshot::default()
    }
}

fn info(kernel: &str, started_at_ms: i64) -> RunInfo {
    RunInfo {
        snapshot: snapshot(kernel),
        host: Some(snapshot("host-6.1")),
        wrapper: Some("taskset -c 1".into()),
        tool_version: "0.1.0".into(),
        notes: vec!["emulated".into()],
        started_at_ms,
        pid: 4242,
    }
}

fn spec(text: &str, unit: &str, direction: Direction) -> TestSpec {
    TestSpec {
        key: TestKey::parse(text).unwrap(),
        unit: unit.into(),
        direction,
    }
}

fn sample(value: f64, at_ms: i64, round: u32) -> Sample {
    Sample {
        value,
        iterations: 1000,
        at_ms,
        round,
    }
}

fn outcome(spec: &TestSpec, kind: TestOutcomeKind) -> TestOutcome {
    TestOutcome {
        test: spec.key.clone(),
        kind,
        detail: format!("{} stopped", spec.key),
    }
}

fn temp_db() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nested/dir/results.db");
    (dir, path)
}

#[test]
fn round_trip_returns_what_was_written() {
    let (_dir, path) = temp_db();
    let mut store = SqliteStore::open(&path).unwrap();
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
    assert_eq!(
        SqliteStore::open(&path).unwrap().load("sched").unwrap(),
        data
    );
}

#[test]
fn unfinished_run_is_found_and_resumed() {
    let (_dir, path) = temp_db();
    let mut store = SqliteStore::open(&path).unwrap();
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

    let mut store = SqliteStore::open(&path).unwrap();
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
    store.end_run(run, RunStatus::Interrupted, None).unwrap();
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
    store.end_run(new, RunStatus::Complete, None).unwrap();
    assert_eq!(store.unfinished_run("set", "id2").unwrap(), None);

    assert!(matches!(
        store.resume_run(kbench_store::RunId(9999), 1),
        Err(StoreError::NotFound(_))
    ));
}

#[test]
fn samples_survive_a_store_that_is_never_closed() {
    let (_dir, path) = temp_db();
    let mut store = SqliteStore::open(&path).unwrap();
    let t = spec("a", "ns", Direction::Lower);
    let run = store.begin_run("set", "id", &info("k", 1)).unwrap();
    let test = store.test_id("set", &t).unwrap();
    for i in 0..100 {
        store
            .add_sample(run, test, &sample(i as f64, i, 0))
            .unwrap();
    }
    std::mem::forget(store);

    let mut reopened = SqliteStore::open(&path).unwrap();
    let data = reopened.load("set").unwrap();
    assert_eq!(data.identifiers[0].samples[&t.key].len(), 100);
}

/// With `KBENCH_KILL_DB` set, stores samples forever, printing each count
/// after its `add_sample` returned; `samples_survive_sigkill` kills it.
#[test]
#[ignore = "helper process of samples_survive_sigkill"]
fn kill_child_writer() {
    let Some(path) = std::env::var_os("KBENCH_KILL_DB") else {
        return;
    };
    let mut store = SqliteStore::open(Path::new(&path)).unwrap();
    let run = store.begin_run("set", "id", &info("k", 1)).unwrap();
    let test = store
        .test_id("set", &spec("a", "ns", Direction::Lower))
        .unwrap();
    for i in 1.. {
        store
            .add_sample(run, test, &sample(i as f64, i, 0))
            .unwrap();
        println!("stored {i}");
    }
}

#[test]
fn samples_survive_sigkill() {
    let (_dir, path) = temp_db();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "kill_child_writer",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("KBENCH_KILL_DB", &path)
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

    let mut store = SqliteStore::open(&path).unwrap();
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

/// Side files SQLite would make next to `path`.
fn side_files(path: &Path) -> Vec<PathBuf> {
    ["-wal", "-shm", "-journal"]
        .iter()
        .map(|suffix| {
            let mut name = path.as_os_str().to_owned();
            name.push(suffix);
            PathBuf::from(name)
        })
        .filter(|p| p.exists())
        .collect()
}

fn assert_rejected_untouched(path: &Path, expect_corrupt: bool) -> StoreError {
    let before = std::fs::read(path).unwrap();
    let err = SqliteStore::open(path).expect_err("must not open");
    assert_eq!(
        std::fs::read(path).unwrap(),
        before,
        "the file was modified"
    );
    assert_eq!(
        side_files(path),
        Vec::<PathBuf>::new(),
        "side files appeared"
    );
    if expect_corrupt {
        assert!(
            matches!(&err, StoreError::Corrupt { path: p, .. } if p == path),
            "{err:?}"
        );
        assert!(
            err.to_string().contains(&path.display().to_string()),
            "{err}"
        );
    }
    err
}

#[test]
fn foreign_or_damaged_files_are_left_untouched() {
    let dir = tempfile::tempdir().unwrap();

    let random = dir.path().join("random.db");
    let bytes: Vec<u8> = (0..8192u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    std::fs::write(&random, bytes).unwrap();
    assert_rejected_untouched(&random, true);

    let text = dir.path().join("notes.txt");
    std::fs::write(&text, "these are my notes, not a database\n".repeat(200)).unwrap();
    let err = assert_rejected_untouched(&text, true);
    assert!(err.to_string().contains("not a SQLite database"), "{err}");

    let short = dir.path().join("short.db");
    std::fs::write(&short, b"SQLite format 3\0abc").unwrap();
    assert_rejected_untouched(&short, true);

    for wal in [false, true] {
        let foreign = dir.path().join(format!("foreign-{wal}.db"));
        let conn = rusqlite::Connection::open(&foreign).unwrap();
        if wal {
            conn.pragma_update(None, "journal_mode", "WAL").unwrap();
        }
        conn.execute_batch(
            "CREATE TABLE bookmarks (url TEXT); INSERT INTO bookmarks VALUES ('x');",
        )
        .unwrap();
        drop(conn);
        let err = assert_rejected_untouched(&foreign, true);
        assert!(err.to_string().contains("bookmarks"), "{err}");
    }

    // A kbench database with a page overwritten by garbage.
    let damaged = dir.path().join("damaged.db");
    {
        let mut store = SqliteStore::open(&damaged).unwrap();
        let run = store.begin_run("s", "i", &info("k", 1)).unwrap();
        let test = store
            .test_id("s", &spec("a", "ns", Direction::Lower))
            .unwrap();
        for i in 0..2000 {
            store
                .add_sample(run, test, &sample(i as f64, i, 0))
                .unwrap();
        }
    }
    let mut bytes = std::fs::read(&damaged).unwrap();
    let page = 4096;
    assert!(bytes.len() > 8 * page);
    bytes[3 * page..4 * page].fill(0xA5);
    std::fs::write(&damaged, bytes).unwrap();
    let err = assert_rejected_untouched(&damaged, true);
    let text = err.to_string();
    assert!(
        text.contains("integrity check failed") || text.contains("malformed"),
        "{text}"
    );
}

#[test]
fn newer_schema_is_too_new_and_untouched() {
    let (_dir, path) = temp_db();
    drop(SqliteStore::open(&path).unwrap());
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.pragma_update(None, "user_version", 99).unwrap();
    drop(conn);
    let err = assert_rejected_untouched(&path, false);
    assert!(
        matches!(
            err,
            StoreError::TooNew {
                found: 99,
                supported: 2,
                ..
            }
        ),
        "{err:?}"
    );
}

#[test]
fn empty_file_becomes_a_database() {
    let file = tempfile::NamedTempFile::new().unwrap();
    let mut store = SqliteStore::open(file.path()).unwrap();
    assert_eq!(store.result_sets().unwrap(), vec![]);
}

#[test]
fn unwritable_locations_are_open_errors() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("plain-file");
    std::fs::write(&file, "x").unwrap();
    for path in [
        PathBuf::from("/proc/kbench-test/results.db"),
        file.join("results.db"),
        dir.path().to_path_buf(),
    ] {
        match SqliteStore::open(&path) {
            Err(StoreError::Open { path: p, reason }) => assert_eq!(p, path, "{reason}"),
            other => panic!("{}: {other:?}", path.display()),
        }
    }
}

#[test]
fn names_are_validated() {
    let (_dir, path) = temp_db();
    let mut store = SqliteStore::open(&path).unwrap();
    let long = "x".repeat(129);
    for (set, identifier) in [
        ("", "id"),
        ("set", ""),
        ("  ", "id"),
        (long.as_str(), "id"),
        ("set", long.as_str()),
    ] {
        let err = store.begin_run(set, identifier, &info("k", 1)).unwrap_err();
        assert!(matches!(err, StoreError::InvalidName(_)), "{err:?}");
    }
    let err = store
        .test_id("", &spec("a", "ns", Direction::Lower))
        .unwrap_err();
    assert!(matches!(err, StoreError::InvalidName(_)), "{err:?}");
    store
        .begin_run(&"x".repeat(128), "fine", &info("k", 1))
        .unwrap();
}

#[test]
fn unit_or_direction_mismatch_is_a_conflict() {
    let (_dir, path) = temp_db();
    let mut store = SqliteStore::open(&path).unwrap();
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

#[test]
fn missing_set_names_the_existing_ones() {
    let (_dir, path) = temp_db();
    let mut store = SqliteStore::open(&path).unwrap();
    store.begin_run("alpha", "id", &info("k", 1)).unwrap();
    store.begin_run("beta", "id", &info("k", 1)).unwrap();
    let err = store.load("gamma").unwrap_err();
    let StoreError::NotFound(msg) = &err else {
        panic!("{err:?}")
    };
    assert!(
        msg.contains("gamma") && msg.contains("alpha") && msg.contains("beta"),
        "{msg}"
    );
}

/// A set with two identifiers, one run each, written through the store.
fn written_set(store: &mut SqliteStore, set: &str) -> ResultSetData {
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
                    .add_sample(run, id, &sample(i as f64, start + i, 0))
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

#[test]
fn import_round_trips_and_is_all_or_nothing() {
    let (_dir, path) = temp_db();
    let mut store = SqliteStore::open(&path).unwrap();
    let original = written_set(&mut store, "orig");

    let mut copy = original.clone();
    copy.name = "copy".into();
    store.import(&copy).unwrap();
    let mut loaded = store.load("copy").unwrap();
    // Run ids are the store's own; everything else comes back as given.
    for (got, want) in loaded.identifiers.iter_mut().zip(&copy.identifiers) {
        for (run, want) in got.runs.iter_mut().zip(&want.runs) {
            run.id = want.id;
        }
    }
    assert_eq!(loaded, copy);

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

    let mut bad_name = original;
    bad_name.identifiers[0].name = String::new();
    assert!(matches!(
        store.import(&bad_name),
        Err(StoreError::InvalidName(_))
    ));
}

#[test]
fn sample_of_another_sets_test_is_refused() {
    let (_dir, path) = temp_db();
    let mut store = SqliteStore::open(&path).unwrap();
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
    assert!(store.add_sample(run, own, &nan).is_err());
    store
        .add_sample(run, own, &sample(f64::INFINITY, 1, 0))
        .unwrap();
    assert_eq!(
        store.load("one").unwrap().identifiers[0].samples[&TestKey::new("a")].len(),
        1
    );
}
