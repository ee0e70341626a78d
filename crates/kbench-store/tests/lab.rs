//! What the shared lab needs of the store, on SQLite and on PostgreSQL
//! (see common/mod.rs): runs uploaded while they go on and found by uid,
//! uids across export and import, and the job queue with its workers.

#[macro_use]
mod common;

use common::{SAMPLES_IN_BLOCK, TestDb, info, job, outcome, sample, spec};
use kbench_model::{Direction, Sample, TestSpec};
use kbench_store::{
    Database, Job, JobLease, JobState, LiveBatch, LiveOutcome, LiveSamples, MAX_JOB_ATTEMPTS, Push,
    PushOutcome, Results, RunId, RunInfo, RunStatus, StoreError, TestOutcomeKind,
};
use std::collections::BTreeSet;
use std::time::Duration;

on_both_backends!(
    live_batches_store_each_sample_once,
    a_gap_is_a_conflict_and_writes_nothing,
    a_resumed_run_is_running_again,
    a_uid_belongs_to_one_identifier,
    live_batches_name_known_tests_only,
    run_contents_round_trip,
    uids_ride_along_export_and_import,
    sample_counts_stay_exact_through_every_write,
    jobs_are_submitted_leased_renewed_and_finished,
    job_specs_and_leases_are_validated,
    jobs_go_to_workers_with_their_tags,
    expired_leases_are_leased_again_then_failed,
    an_expired_lease_not_taken_is_still_renewed,
    concurrent_workers_never_share_a_job,
    a_jobs_live_batches_are_stored_only_for_its_worker,
    live_batches_are_checked_as_every_write_path,
    a_lease_belongs_to_its_worker_and_token,
);

fn lat() -> TestSpec {
    spec("pipe-lat[placement=cross]", "us", Direction::Lower)
}

fn thr() -> TestSpec {
    spec("futex1:per_task", "ops/s", Direction::Higher)
}

fn run_info(uid: &str) -> RunInfo {
    RunInfo {
        uid: Some(uid.into()),
        ..info("6.18", 1000)
    }
}

/// Samples `from..to` of a test, as the runner measured them.
fn samples(from: u64, to: u64) -> Vec<Sample> {
    (from..to)
        .map(|i| sample(10.0 + i as f64, 1000 + i as i64, (i / 4) as u32))
        .collect()
}

fn part(test: &TestSpec, from: u64, to: u64) -> LiveSamples {
    LiveSamples {
        test: test.key.clone(),
        first: from,
        samples: samples(from, to),
    }
}

/// A batch of run `uid` of identifier "6.18" declaring both tests.
fn batch(uid: &str, parts: Vec<LiveSamples>) -> LiveBatch {
    LiveBatch {
        identifier: "6.18".into(),
        run_uid: uid.into(),
        info: run_info(uid),
        status: RunStatus::Running,
        ended_at_ms: None,
        steal_percent: None,
        tests: vec![lat(), thr()],
        samples: parts,
        outcomes: vec![],
        lease: None,
    }
}

fn live(stored: u64, skipped: u64) -> LiveOutcome {
    LiveOutcome { stored, skipped }
}

/// The id of the only run of the set's first identifier.
fn only_run(store: &mut dyn Results, set: &str) -> RunId {
    let data = store.load(set).unwrap();
    assert_eq!(data.identifiers[0].runs.len(), 1);
    data.identifiers[0].runs[0].id
}

fn live_batches_store_each_sample_once(db: &TestDb) {
    let mut store = db.open();
    let first = batch("u1", vec![part(&lat(), 0, 5), part(&thr(), 0, 3)]);
    assert_eq!(store.append_live("lab", &first, "t1").unwrap(), live(8, 0));
    // The same batch again (a retry after a lost answer) stores nothing.
    assert_eq!(store.append_live("lab", &first, "t1").unwrap(), live(0, 8));
    // Overlapping the stored samples: only those past them go in.
    let next = batch("u1", vec![part(&lat(), 3, 9)]);
    assert_eq!(store.append_live("lab", &next, "t1").unwrap(), live(4, 2));
    // A batch without samples, only the tests' outcomes and the run's end.
    let mut end = batch("u1", vec![]);
    end.tests.clear();
    end.outcomes = vec![
        outcome(&lat(), TestOutcomeKind::TargetMet),
        outcome(&thr(), TestOutcomeKind::BudgetHit),
    ];
    end.status = RunStatus::Complete;
    end.ended_at_ms = Some(5000);
    end.steal_percent = Some(0.5);
    assert_eq!(store.append_live("lab", &end, "t1").unwrap(), live(0, 0));

    let data = store.load("lab").unwrap();
    assert_eq!(data.tests, vec![lat(), thr()]);
    assert_eq!(data.identifiers.len(), 1);
    let identifier = &data.identifiers[0];
    assert_eq!(identifier.name, "6.18");
    assert_eq!(identifier.samples[&lat().key], samples(0, 9));
    assert_eq!(identifier.samples[&thr().key], samples(0, 3));
    let run = &identifier.runs[0];
    assert_eq!(identifier.runs.len(), 1);
    assert_eq!(run.info.uid.as_deref(), Some("u1"));
    assert_eq!(
        (run.status, run.ended_at_ms, run.info.snapshot.steal_percent),
        (RunStatus::Complete, Some(5000), Some(0.5))
    );
    assert_eq!(run.outcomes, end.outcomes);
    assert_eq!(store.result_sets().unwrap()[0].samples, 12);
}

fn a_gap_is_a_conflict_and_writes_nothing(db: &TestDb) {
    let mut store = db.open();
    store
        .append_live("lab", &batch("u1", vec![part(&lat(), 0, 5)]), "t1")
        .unwrap();
    let before = store.load("lab").unwrap();
    // lat continues where it stopped, but thr starts at 2 of 0 stored; the
    // run would end and a new test appear: none of it may be written.
    let mut gap = batch("u1", vec![part(&lat(), 5, 8), part(&thr(), 2, 4)]);
    let extra = spec("new-test", "ns", Direction::Lower);
    gap.tests.push(extra.clone());
    gap.outcomes = vec![outcome(&lat(), TestOutcomeKind::TargetMet)];
    gap.status = RunStatus::Complete;
    gap.ended_at_ms = Some(9000);
    let err = store.append_live("lab", &gap, "t1").unwrap_err();
    let StoreError::Conflict(msg) = &err else {
        panic!("{err:?}")
    };
    assert!(
        msg.contains("gap") && msg.contains(&thr().key.to_string()) && msg.contains("u1"),
        "{msg}"
    );
    assert!(msg.contains("Resend from sample 0"), "{msg}");
    assert_eq!(store.load("lab").unwrap(), before);

    // A gap in a new run of a new set leaves no set behind.
    let err = store
        .append_live("fresh", &batch("u2", vec![part(&lat(), 1, 3)]), "t1")
        .unwrap_err();
    assert!(matches!(err, StoreError::Conflict(_)), "{err:?}");
    assert!(matches!(store.load("fresh"), Err(StoreError::NotFound(_))));
}

fn a_resumed_run_is_running_again(db: &TestDb) {
    let mut store = db.open();
    let mut interrupted = batch("u1", vec![part(&lat(), 0, 4)]);
    interrupted.status = RunStatus::Interrupted;
    interrupted.ended_at_ms = Some(2000);
    interrupted.steal_percent = Some(1.5);
    store.append_live("lab", &interrupted, "t1").unwrap();
    let run = only_run(store.as_mut(), "lab");
    let record = store.run_contents(run).unwrap().record;
    assert_eq!(
        (record.status, record.ended_at_ms, record.info.pid),
        (RunStatus::Interrupted, Some(2000), 4242)
    );

    // The runner resumes it in a new process: running, not ended, its pid.
    let mut resumed = batch("u1", vec![part(&lat(), 4, 6)]);
    resumed.info.pid = 777;
    assert_eq!(
        store.append_live("lab", &resumed, "t1").unwrap(),
        live(2, 0)
    );
    let record = store.run_contents(run).unwrap().record;
    assert_eq!(
        (record.status, record.ended_at_ms, record.info.pid),
        (RunStatus::Running, None, 777)
    );
    assert_eq!(
        store.unfinished_run("lab", "6.18").unwrap().map(|r| r.id),
        Some(run)
    );
    assert_eq!(
        store.load("lab").unwrap().identifiers[0].samples[&lat().key],
        samples(0, 6)
    );
}

fn a_uid_belongs_to_one_identifier(db: &TestDb) {
    let mut store = db.open();
    store
        .append_live("lab", &batch("u1", vec![part(&lat(), 0, 2)]), "t1")
        .unwrap();
    let before = store.load("lab").unwrap();

    let mut elsewhere = batch("u1", vec![part(&lat(), 2, 4)]);
    elsewhere.identifier = "6.19".into();
    let err = store.append_live("lab", &elsewhere, "t1").unwrap_err();
    let StoreError::Conflict(msg) = &err else {
        panic!("{err:?}")
    };
    assert!(
        msg.contains("u1") && msg.contains("\"6.18\"") && msg.contains("\"6.19\""),
        "{msg}"
    );
    assert_eq!(store.load("lab").unwrap(), before, "6.19 was created");

    // The same identifier name in another set is another identifier.
    let err = store
        .append_live("other", &batch("u1", vec![part(&lat(), 2, 4)]), "t1")
        .unwrap_err();
    assert!(matches!(err, StoreError::Conflict(_)), "{err:?}");
    assert!(matches!(store.load("other"), Err(StoreError::NotFound(_))));
    assert_eq!(store.result_sets().unwrap().len(), 1);
}

fn live_batches_name_known_tests_only(db: &TestDb) {
    let mut store = db.open();
    store
        .append_live("lab", &batch("u1", vec![part(&lat(), 0, 2)]), "t1")
        .unwrap();
    // Tests stored in the set need not be declared again.
    let mut undeclared = batch("u1", vec![part(&lat(), 2, 3)]);
    undeclared.tests.clear();
    assert_eq!(
        store.append_live("lab", &undeclared, "t1").unwrap(),
        live(1, 0)
    );

    // A test neither declared nor stored.
    let unknown = spec("unknown", "ns", Direction::Lower);
    let mut bad = batch("u1", vec![part(&unknown, 0, 1)]);
    bad.tests.clear();
    let err = store.append_live("lab", &bad, "t1").unwrap_err();
    let StoreError::Invalid(msg) = &err else {
        panic!("{err:?}")
    };
    assert!(msg.contains("unknown") && msg.contains("tests"), "{msg}");
    bad.samples.clear();
    bad.outcomes = vec![outcome(&unknown, TestOutcomeKind::Skipped)];
    assert!(matches!(
        store.append_live("lab", &bad, "t1"),
        Err(StoreError::Invalid(_))
    ));

    // A stored test in another unit.
    let mut other_unit = batch("u1", vec![]);
    other_unit.tests = vec![spec("pipe-lat[placement=cross]", "ns", Direction::Lower)];
    assert!(matches!(
        store.append_live("lab", &other_unit, "t1"),
        Err(StoreError::Conflict(_))
    ));

    // The run info naming another run, a uid that is not an id, bad names.
    let mut mismatch = batch("u1", vec![]);
    mismatch.info.uid = Some("u2".into());
    let mut spaced = batch("a b", vec![]);
    spaced.info.uid = None;
    let mut unnamed = batch("u1", vec![]);
    unnamed.identifier = String::new();
    for wrong in [mismatch, spaced, unnamed] {
        let err = store.append_live("lab", &wrong, "t1").unwrap_err();
        assert!(matches!(err, StoreError::Invalid(_)), "{err:?}");
    }
    assert!(matches!(
        store.append_live("", &batch("u9", vec![]), "t1"),
        Err(StoreError::Invalid(_))
    ));
    assert_eq!(
        store.load("lab").unwrap().identifiers[0].samples[&lat().key],
        samples(0, 3)
    );
}

fn run_contents_round_trip(db: &TestDb) {
    let mut store = db.open();
    let unused = spec("unused", "ns", Direction::Lower);
    store.test_id("lab", &unused).unwrap();
    // Another run of the same identifier, whose samples must not show.
    let earlier = store.begin_run("lab", "6.18", &info("k", 1)).unwrap();
    let lat_id = store.test_id("lab", &lat()).unwrap();
    store
        .add_sample(earlier, lat_id, &sample(99.0, 1, 0))
        .unwrap();

    let run = store.begin_run("lab", "6.18", &run_info("u1")).unwrap();
    let thr_id = store.test_id("lab", &thr()).unwrap();
    for s in samples(0, 4) {
        store.add_sample(run, thr_id, &s).unwrap();
        store.add_sample(run, lat_id, &s).unwrap();
    }
    // A test with an outcome and no sample is listed too.
    let skipped = spec("skipped", "ns", Direction::Lower);
    let skipped_id = store.test_id("lab", &skipped).unwrap();
    store
        .end_test(
            run,
            skipped_id,
            &outcome(&skipped, TestOutcomeKind::Skipped),
        )
        .unwrap();
    store
        .end_test(run, lat_id, &outcome(&lat(), TestOutcomeKind::TargetMet))
        .unwrap();

    let contents = store.run_contents(run).unwrap();
    assert_eq!(
        (contents.set.as_str(), contents.identifier.as_str()),
        ("lab", "6.18")
    );
    assert_eq!(contents.record.id, run);
    assert_eq!(contents.record.info, run_info("u1"));
    assert_eq!(contents.record.status, RunStatus::Running);
    assert_eq!(
        contents.record.outcomes,
        vec![
            outcome(&lat(), TestOutcomeKind::TargetMet),
            outcome(&skipped, TestOutcomeKind::Skipped)
        ]
    );
    // In the set's order: lat was stored before thr and skipped.
    assert_eq!(contents.tests, vec![lat(), thr(), skipped.clone()]);
    assert_eq!(contents.samples.len(), 2);
    assert_eq!(contents.samples[&lat().key], samples(0, 4));
    assert_eq!(contents.samples[&thr().key], samples(0, 4));

    // Re-sent as one batch (a resumed upload) into another database, it
    // is the same run there.
    let Some(server_db) = db.another() else {
        return;
    };
    let mut server = server_db.open();
    let resend = LiveBatch {
        identifier: contents.identifier.clone(),
        run_uid: "u1".into(),
        info: contents.record.info.clone(),
        status: contents.record.status,
        ended_at_ms: contents.record.ended_at_ms,
        steal_percent: None,
        tests: contents.tests.clone(),
        samples: contents
            .samples
            .iter()
            .map(|(key, list)| LiveSamples {
                test: key.clone(),
                first: 0,
                samples: list.clone(),
            })
            .collect(),
        outcomes: contents.record.outcomes.clone(),
        lease: None,
    };
    assert_eq!(
        server.append_live("lab", &resend, "t1").unwrap(),
        live(8, 0)
    );
    let copied_run = only_run(server.as_mut(), "lab");
    let copied = server.run_contents(copied_run).unwrap();
    assert_eq!(
        (&copied.tests, &copied.samples, &copied.record.outcomes),
        (
            &contents.tests,
            &contents.samples,
            &contents.record.outcomes
        )
    );
    assert_eq!(copied.record.info, contents.record.info);

    assert!(matches!(
        store.run_contents(RunId(9999)),
        Err(StoreError::NotFound(_))
    ));
}

/// Run "u1" of identifier 6.18 in set "lab": 3 samples of `lat`, complete.
fn complete_run_u1(store: &mut dyn Database) {
    let run = store.begin_run("lab", "6.18", &run_info("u1")).unwrap();
    let test = store.test_id("lab", &lat()).unwrap();
    for s in samples(0, 3) {
        store.add_sample(run, test, &s).unwrap();
    }
    store.end_run(run, RunStatus::Complete, None).unwrap();
}

fn uids_ride_along_export_and_import(db: &TestDb) {
    let mut store = db.open();
    complete_run_u1(store.as_mut());
    let text = serde_json::to_string(&kbench_store::exchange::export(&store.load("lab").unwrap()))
        .unwrap();
    assert!(text.contains("\"uid\":\"u1\""), "{text}");

    // Into another database: the run keeps its uid.
    if let Some(other_db) = db.another() {
        let mut other = other_db.open();
        other
            .import(&kbench_store::exchange::parse(&text, None).unwrap())
            .unwrap();
        let data = other.load("lab").unwrap();
        assert_eq!(data.identifiers[0].runs[0].info.uid.as_deref(), Some("u1"));
        assert_eq!(data.identifiers[0].samples[&lat().key], samples(0, 3));
    }

    // Into the same database, under another set name: the run is there.
    let sets = store.result_sets().unwrap();
    let copy = kbench_store::exchange::parse(&text, Some("copy")).unwrap();
    let err = store.import(&copy).unwrap_err();
    let StoreError::Conflict(msg) = &err else {
        panic!("{err:?}")
    };
    assert!(
        msg.contains("u1") && msg.contains("\"lab\"") && msg.contains("nothing was imported"),
        "{msg}"
    );
    for leak in ["UNIQUE", "unique", "duplicate", "constraint"] {
        assert!(!msg.contains(leak), "{msg}");
    }
    let push = |id| Push {
        id,
        digest: "d1",
        token: "runner-1",
    };
    let err = store.push(&push("p-1"), &copy).unwrap_err();
    assert!(matches!(err, StoreError::Conflict(_)), "{err:?}");
    assert_eq!(store.result_sets().unwrap(), sets);
    // The refused push claimed no id.
    let mut fixed = copy.clone();
    fixed.identifiers[0].runs[0].info.uid = Some("u2".into());
    assert!(matches!(
        store.push(&push("p-1"), &fixed).unwrap(),
        PushOutcome::Stored { samples: 3 }
    ));

    // A new run may not take a stored uid either, nor an odd one.
    let err = store.begin_run("lab", "6.19", &run_info("u1")).unwrap_err();
    assert!(matches!(err, StoreError::Conflict(_)), "{err:?}");
    let err = store
        .begin_run("lab", "6.19", &run_info("no/slash"))
        .unwrap_err();
    assert!(matches!(err, StoreError::Invalid(_)), "{err:?}");
}

/// The samples the set listing reports for `set`, after checking that
/// every run's stored count (schema version 9) is what its samples number.
fn listed_samples(db: &TestDb, store: &mut dyn Database, set: &str) -> u64 {
    let wrong = db.count(&format!(
        "SELECT COUNT(*) FROM runs r WHERE r.sample_count <> \
         (SELECT COALESCE(SUM({SAMPLES_IN_BLOCK}), 0) FROM sample_blocks x WHERE x.run_id = r.id)"
    ));
    assert_eq!(wrong, 0, "runs whose sample_count is off");
    let sets = store.result_sets().unwrap();
    sets.iter().find(|s| s.name == set).map_or(0, |s| s.samples)
}

/// The per-run counts the set listing sums stay exact through a run's own
/// samples, live batches (with a retry), import, push and removal.
fn sample_counts_stay_exact_through_every_write(db: &TestDb) {
    let mut store = db.open();
    complete_run_u1(store.as_mut());
    assert_eq!(listed_samples(db, store.as_mut(), "lab"), 3);

    let mut live_run = batch("u2", vec![part(&lat(), 0, 5), part(&thr(), 0, 3)]);
    live_run.identifier = "6.19".into();
    store.append_live("lab", &live_run, "t1").unwrap();
    store.append_live("lab", &live_run, "t1").unwrap();
    live_run.samples = vec![part(&lat(), 3, 9)];
    live_run.status = RunStatus::Complete;
    live_run.ended_at_ms = Some(5000);
    store.append_live("lab", &live_run, "t1").unwrap();
    assert_eq!(listed_samples(db, store.as_mut(), "lab"), 3 + 9 + 3);

    let mut copy = store.load("lab").unwrap();
    copy.name = "copy".into();
    for (n, identifier) in copy.identifiers.iter_mut().enumerate() {
        for run in &mut identifier.runs {
            run.info.uid = Some(format!("import-{n}"));
        }
    }
    store.import(&copy).unwrap();
    assert_eq!(listed_samples(db, store.as_mut(), "copy"), 15);

    copy.name = "pushed".into();
    for (n, identifier) in copy.identifiers.iter_mut().enumerate() {
        for run in &mut identifier.runs {
            run.info.uid = Some(format!("push-{n}"));
        }
    }
    let push = Push {
        id: "p-1",
        digest: "d1",
        token: "runner-1",
    };
    store.push(&push, &copy).unwrap();
    assert_eq!(listed_samples(db, store.as_mut(), "pushed"), 15);

    store.remove_identifier("lab", "6.19").unwrap();
    assert_eq!(listed_samples(db, store.as_mut(), "lab"), 3);
    assert_eq!(listed_samples(db, store.as_mut(), "copy"), 15);
}

fn tags(list: &[&str]) -> Vec<String> {
    list.iter().map(|t| t.to_string()).collect()
}

const MINUTE: i64 = 60_000;

fn jobs_are_submitted_leased_renewed_and_finished(db: &TestDb) {
    let mut store = db.open();
    let before = kbench_model::now_ms();
    let first = store.submit_job(&job("a", &[])).unwrap();
    let second = store.submit_job(&job("b", &[])).unwrap();
    let listed: Vec<(i64, JobState)> = store
        .jobs()
        .unwrap()
        .iter()
        .map(|j| (j.id, j.state))
        .collect();
    assert_eq!(
        listed,
        [(second, JobState::Queued), (first, JobState::Queued)]
    );
    let queued = store.job(first).unwrap();
    assert_eq!(
        (
            &queued.spec,
            queued.attempts,
            &queued.worker,
            queued.started_at_ms
        ),
        (&job("a", &[]), 0, &None, None)
    );
    assert!(queued.submitted_at_ms >= before);
    let err = store.job(second + 100).unwrap_err();
    let StoreError::NotFound(msg) = &err else {
        panic!("{err:?}")
    };
    assert!(
        msg.contains(&format!("no job {}", second + 100)) && msg.contains("numbered"),
        "{msg}"
    );

    // The oldest job goes first.
    let leased = store.lease_job("w1", "t1", &[], MINUTE).unwrap().unwrap();
    assert_eq!(
        (
            leased.id,
            leased.state,
            leased.attempts,
            leased.worker.as_deref()
        ),
        (first, JobState::Running, 1, Some("w1"))
    );
    let expires = leased.lease_expires_at_ms.unwrap();
    assert!(expires >= before + MINUTE, "{leased:?}");
    assert!(leased.started_at_ms.is_some());
    let workers = store.workers().unwrap();
    assert_eq!(workers.len(), 1);
    assert_eq!(
        (workers[0].name.as_str(), workers[0].job),
        ("w1", Some(first))
    );

    // Only its worker renews or finishes it.
    assert!(!store.renew_lease(first, "w2", "t1", MINUTE).unwrap());
    assert!(!store.finish_job(first, "w2", "t1", true, "stolen").unwrap());
    std::thread::sleep(Duration::from_millis(5));
    assert!(store.renew_lease(first, "w1", "t1", 2 * MINUTE).unwrap());
    let renewed = store.job(first).unwrap();
    assert!(
        renewed.lease_expires_at_ms.unwrap() > expires,
        "{renewed:?}"
    );
    assert!(store.workers().unwrap()[0].last_seen_ms > workers[0].last_seen_ms);

    assert!(
        store
            .finish_job(first, "w1", "t1", true, "stored 42 samples")
            .unwrap()
    );
    let done = store.job(first).unwrap();
    assert_eq!(
        (done.state, done.message.as_deref(), done.worker.as_deref()),
        (JobState::Done, Some("stored 42 samples"), Some("w1"))
    );
    assert!(done.finished_at_ms.is_some());
    assert_eq!(store.workers().unwrap()[0].job, None);
    // Over: no renewal, no second end.
    assert!(!store.renew_lease(first, "w1", "t1", MINUTE).unwrap());
    assert!(!store.finish_job(first, "w1", "t1", false, "again").unwrap());

    // A failed job says why.
    let next = store.lease_job("w2", "t1", &[], MINUTE).unwrap().unwrap();
    assert_eq!(next.id, second);
    assert!(
        store
            .finish_job(second, "w2", "t1", false, "build failed")
            .unwrap()
    );
    let failed = store.job(second).unwrap();
    assert_eq!(
        (failed.state, failed.message.as_deref()),
        (JobState::Failed, Some("build failed"))
    );
    // Most recently seen first (not by name).
    std::thread::sleep(Duration::from_millis(5));
    assert_eq!(store.lease_job("w2", "t1", &[], MINUTE).unwrap(), None);
    let names: Vec<String> = store
        .workers()
        .unwrap()
        .into_iter()
        .map(|w| w.name)
        .collect();
    assert_eq!(names, ["w2", "w1"]);
}

fn job_specs_and_leases_are_validated(db: &TestDb) {
    let mut store = db.open();
    let mut cases = Vec::new();
    let mut no_names = job("a", &[]);
    no_names.names.clear();
    cases.push((no_names, "names"));
    let mut blank_name = job("a", &[]);
    blank_name.names.push(" ".into());
    cases.push((blank_name, "names"));
    for rounds in [0, 101] {
        let mut wrong = job("a", &[]);
        wrong.rounds = rounds;
        cases.push((wrong, "rounds"));
    }
    for max_time in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        let mut wrong = job("a", &[]);
        wrong.max_time = Some(max_time);
        cases.push((wrong, "max_time"));
    }
    for tag in ["", "a,b", "x y"] {
        cases.push((job("a", &[tag]), "tag"));
    }
    cases.push((job("", &[]), "result set"));
    let mut no_identifier = job("a", &[]);
    no_identifier.identifier = "\t".into();
    cases.push((no_identifier, "identifier"));
    for (spec, needle) in cases {
        let err = store.submit_job(&spec).unwrap_err();
        let StoreError::Invalid(msg) = &err else {
            panic!("{spec:?}: {err:?}")
        };
        assert!(msg.contains(needle), "{needle:?} not in {msg:?}");
    }
    assert_eq!(store.jobs().unwrap(), vec![]);
    let mut fine = job("a", &["tcg", "x86_64", "v1.2-rc"]);
    fine.kernel = None;
    fine.max_time = None;
    fine.rounds = 100;
    store.submit_job(&fine).unwrap();

    for (worker, worker_tags, lease_ms) in [
        ("w1", tags(&[]), 0),
        ("w1", tags(&[]), -5),
        ("", tags(&[]), MINUTE),
        ("w1", tags(&["a,b"]), MINUTE),
    ] {
        let err = store
            .lease_job(worker, "t1", &worker_tags, lease_ms)
            .unwrap_err();
        assert!(matches!(err, StoreError::Invalid(_)), "{err:?}");
    }
    assert!(matches!(
        store.renew_lease(1, "w1", "t1", 0),
        Err(StoreError::Invalid(_))
    ));
    assert_eq!(store.workers().unwrap(), vec![]);
}

fn jobs_go_to_workers_with_their_tags(db: &TestDb) {
    let mut store = db.open();
    let tcg = store.submit_job(&job("a", &["tcg"])).unwrap();
    let any = store.submit_job(&job("b", &[])).unwrap();
    let both = store.submit_job(&job("c", &["kvm", "x86"])).unwrap();
    let leased = |store: &mut Box<dyn Database>, worker: &str, have: &[&str]| {
        store
            .lease_job(worker, "t1", &tags(have), MINUTE)
            .unwrap()
            .map(|j| j.id)
    };
    // Untagged workers take untagged jobs only, even when older ones wait.
    assert_eq!(leased(&mut store, "plain", &[]), Some(any));
    assert_eq!(leased(&mut store, "half", &["kvm"]), None);
    assert_eq!(leased(&mut store, "tcg-box", &["other", "tcg"]), Some(tcg));
    assert_eq!(
        leased(&mut store, "kvm-box", &["x86", "kvm", "big"]),
        Some(both)
    );
    assert_eq!(leased(&mut store, "late", &["tcg", "kvm", "x86"]), None);
    let workers = store.workers().unwrap();
    let of = |name: &str| workers.iter().find(|w| w.name == name).unwrap();
    assert_eq!(of("kvm-box").tags, ["x86", "kvm", "big"]);
    assert_eq!((of("half").job, of("tcg-box").job), (None, Some(tcg)));
}

/// Lets leases of 1 ms run out.
fn outlive_leases() {
    std::thread::sleep(Duration::from_millis(10));
}

fn expired_leases_are_leased_again_then_failed(db: &TestDb) {
    let mut store = db.open();
    let id = store.submit_job(&job("a", &[])).unwrap();
    let mut holders = Vec::new();
    for attempt in 1..=MAX_JOB_ATTEMPTS {
        let worker = format!("w{attempt}");
        let leased: Job = store.lease_job(&worker, "t1", &[], 1).unwrap().unwrap();
        assert_eq!((leased.id, leased.attempts), (id, attempt));
        holders.push(worker);
        outlive_leases();
    }
    // The first workers lost the job to the next: they can neither renew
    // nor finish it, and hold nothing.
    assert!(!store.renew_lease(id, "w1", "t1", MINUTE).unwrap());
    assert!(!store.finish_job(id, "w2", "t1", true, "late").unwrap());
    let mut holding: Vec<(String, Option<i64>)> = store
        .workers()
        .unwrap()
        .into_iter()
        .map(|w| (w.name, w.job))
        .collect();
    holding.sort();
    assert_eq!(
        holding,
        [
            ("w1".to_string(), None),
            ("w2".to_string(), None),
            ("w3".to_string(), Some(id))
        ]
    );

    // The last lease ran out too: the job fails instead of going out again.
    assert_eq!(store.lease_job("w4", "t1", &[], MINUTE).unwrap(), None);
    let failed = store.job(id).unwrap();
    assert_eq!(failed.state, JobState::Failed);
    assert_eq!(
        failed.message.as_deref(),
        Some(format!("lost its worker {MAX_JOB_ATTEMPTS} times; last worker w3").as_str())
    );
    assert!(failed.finished_at_ms.is_some());
    assert!(
        store.workers().unwrap().iter().all(|w| w.job.is_none()),
        "a worker still holds the failed job"
    );
    assert!(!store.finish_job(id, "w3", "t1", true, "too late").unwrap());
}

fn an_expired_lease_not_taken_is_still_renewed(db: &TestDb) {
    let mut store = db.open();
    let id = store.submit_job(&job("a", &[])).unwrap();
    store.lease_job("w1", "t1", &[], 1).unwrap().unwrap();
    outlive_leases();
    // Nobody took it meanwhile: w1 was only slow, the job is still its own.
    assert!(store.renew_lease(id, "w1", "t1", MINUTE).unwrap());
    assert_eq!(store.lease_job("w2", "t1", &[], MINUTE).unwrap(), None);
    assert!(store.finish_job(id, "w1", "t1", true, "ok").unwrap());
    assert_eq!(store.job(id).unwrap().attempts, 1);
}

/// Workers leasing at once, each through its own connection, take every
/// job exactly once. On PostgreSQL a job another transaction has locked is
/// passed over, not waited for.
fn concurrent_workers_never_share_a_job(db: &TestDb) {
    let mut store = db.open();
    let submitted: BTreeSet<i64> = (0..20)
        .map(|n| store.submit_job(&job(&format!("s{n}"), &[])).unwrap())
        .collect();
    let taken: Vec<Vec<i64>> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..4)
            .map(|w| {
                scope.spawn(move || {
                    let mut store = db.open();
                    let mut mine = Vec::new();
                    while let Some(job) = store
                        .lease_job(&format!("w{w}"), "t1", &[], MINUTE)
                        .unwrap()
                    {
                        assert_eq!(job.worker.as_deref(), Some(format!("w{w}").as_str()));
                        mine.push(job.id);
                    }
                    mine
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    let all: Vec<i64> = taken.iter().flatten().copied().collect();
    assert_eq!(all.len(), 20, "a job was leased twice: {taken:?}");
    assert_eq!(all.iter().copied().collect::<BTreeSet<_>>(), submitted);
    assert!(store.jobs().unwrap().iter().all(|j| j.attempts == 1));

    if db.is_postgres() {
        // Another transaction holds the oldest queued job's row: a lease
        // passes over it at once rather than waiting for that transaction.
        let old = store.submit_job(&job("locked", &[])).unwrap();
        let free = store.submit_job(&job("free", &[])).unwrap();
        let mut holder = common::client(&db.location);
        let mut tx = holder.transaction().unwrap();
        tx.execute("SELECT id FROM jobs WHERE id = $1 FOR UPDATE", &[&old])
            .unwrap();
        let answer = on_another_connection(db, |store| {
            store
                .lease_job("w9", "t1", &[], MINUTE)
                .unwrap()
                .map(|j| j.id)
        });
        let leased = answer.recv_timeout(Duration::from_secs(10));
        tx.rollback().unwrap();
        assert_eq!(leased, Ok(Some(free)), "the lease waited for the lock");
        assert_eq!(store.job(old).unwrap().state, JobState::Queued);
    }
}

/// A batch of run "u1" with samples `from..to` of `lat`, sent for `job`
/// by `worker`.
fn leased_batch(job: i64, worker: &str, from: u64, to: u64) -> LiveBatch {
    LiveBatch {
        lease: Some(JobLease {
            job,
            worker: worker.into(),
        }),
        ..batch("u1", vec![part(&lat(), from, to)])
    }
}

/// A run measured for a job changes workers when the job does (its lease
/// expired): from then on only the new worker's batches are stored, so the
/// run never has two writers.
fn a_jobs_live_batches_are_stored_only_for_its_worker(db: &TestDb) {
    let mut store = db.open();
    let id = store.submit_job(&job("a", &[])).unwrap();
    store.lease_job("w1", "t1", &[], 1).unwrap().unwrap();
    outlive_leases();
    // Expired but taken by no one: the job, and its run, are still w1's.
    let first = leased_batch(id, "w1", 0, 3);
    assert_eq!(store.append_live("lab", &first, "t1").unwrap(), live(3, 0));
    // A batch without a lease is stored as before.
    let unleased = batch("u1", vec![part(&lat(), 3, 5)]);
    assert_eq!(
        store.append_live("lab", &unleased, "t1").unwrap(),
        live(2, 0)
    );

    // w2 takes the job over and resumes the run; w1 comes back.
    store.lease_job("w2", "t1", &[], MINUTE).unwrap().unwrap();
    let before = store.load("lab").unwrap();
    let mut late = leased_batch(id, "w1", 5, 8);
    late.status = RunStatus::Interrupted;
    let err = store.append_live("lab", &late, "t1").unwrap_err();
    let StoreError::Conflict(msg) = &err else {
        panic!("{err:?}")
    };
    assert!(
        msg.contains(&format!("job {id} is no longer leased to worker \"w1\""))
            && msg.contains("nothing of this batch was stored"),
        "{msg}"
    );
    assert_eq!(store.load("lab").unwrap(), before, "w1's batch wrote");
    assert_eq!(
        store
            .append_live("lab", &leased_batch(id, "w2", 0, 6), "t1")
            .unwrap(),
        live(1, 5)
    );

    // An ended job takes no more batches, not even from its last worker.
    assert!(store.finish_job(id, "w2", "t1", true, "ok").unwrap());
    let err = store
        .append_live("lab", &leased_batch(id, "w2", 6, 7), "t1")
        .unwrap_err();
    assert!(matches!(err, StoreError::Conflict(_)), "{err:?}");
    assert_eq!(store.result_sets().unwrap()[0].samples, 6);

    if db.is_postgres() {
        // A lease being taken holds the job's row: w2's batch waits for it
        // rather than interleaving, then finds the job gone to w3.
        let id = store.submit_job(&job("b", &[])).unwrap();
        store.lease_job("w2", "t1", &[], MINUTE).unwrap().unwrap();
        let mut holder = common::client(&db.location);
        let mut tx = holder.transaction().unwrap();
        tx.execute("UPDATE jobs SET worker = 'w3' WHERE id = $1", &[&id])
            .unwrap();
        let answer = on_another_connection(db, move |store| {
            store.append_live("lab", &leased_batch(id, "w2", 6, 9), "t1")
        });
        let early = answer.recv_timeout(Duration::from_millis(300));
        assert!(early.is_err(), "the batch did not wait: {early:?}");
        tx.commit().unwrap();
        let late = answer.recv_timeout(Duration::from_secs(10)).unwrap();
        assert!(matches!(late, Err(StoreError::Conflict(_))), "{late:?}");
        assert_eq!(store.result_sets().unwrap()[0].samples, 6);
    }
}

/// Runs `call` on a store of its own (another connection) on a thread; its
/// answer arrives on the returned channel.
fn on_another_connection<T: Send + 'static>(
    db: &TestDb,
    call: impl FnOnce(&mut dyn Database) -> T + Send + 'static,
) -> std::sync::mpsc::Receiver<T> {
    let (done, answer) = std::sync::mpsc::channel();
    let location = db.location.clone();
    std::thread::spawn(move || {
        let mut store = kbench_store::Location::parse(&location)
            .unwrap()
            .open()
            .unwrap();
        let _ = done.send(call(store.as_mut()));
    });
    answer
}

/// The live route once stored values -5, 0 and -1e308, iterations 0, at_ms
/// -7 and an end before the start: compare then showed "(no samples)" and
/// the export could not be imported. Now each is refused, nothing of it is
/// stored, and what is stored exports and imports back.
fn live_batches_are_checked_as_every_write_path(db: &TestDb) {
    let mut store = db.open();
    store
        .append_live("lab", &batch("u1", vec![part(&lat(), 0, 3)]), "t1")
        .unwrap();
    let before = store.load("lab").unwrap();
    let with_sample = |change: &dyn Fn(&mut Sample)| {
        let mut bad = batch("u1", vec![part(&lat(), 3, 5)]);
        change(&mut bad.samples[0].samples[1]);
        bad
    };
    let mut cases: Vec<(LiveBatch, &str)> = vec![
        (
            with_sample(&|s| s.value = -5.0),
            "not a positive finite number",
        ),
        (
            with_sample(&|s| s.value = 0.0),
            "not a positive finite number",
        ),
        (
            with_sample(&|s| s.value = -1e308),
            "not a positive finite number",
        ),
        (with_sample(&|s| s.iterations = 0), "iterations is 0"),
        (with_sample(&|s| s.at_ms = -7), "before 1970"),
    ];
    let mut ended = batch("u1", vec![]);
    ended.status = RunStatus::Complete;
    ended.ended_at_ms = Some(999);
    cases.push((ended, "before it starts"));
    let mut steal = batch("u1", vec![]);
    steal.steal_percent = Some(250.0);
    cases.push((steal, "not a percentage"));
    let long = spec(&"b".repeat(129), "us", Direction::Lower);
    let mut named = batch("u2", vec![part(&long, 0, 1)]);
    named.tests.push(long);
    cases.push((named, "the limit is 128"));
    for (bad, needle) in cases {
        let err = store.append_live("lab", &bad, "t1").unwrap_err();
        let StoreError::Invalid(message) = &err else {
            panic!("{needle}: {err:?}");
        };
        assert!(message.contains(needle), "{needle:?} not in {message:?}");
        assert!(message.contains("nothing was stored"), "{message}");
        assert_eq!(
            store.load("lab").unwrap(),
            before,
            "{needle}: something was stored"
        );
    }
    let export = serde_json::to_string(&kbench_store::exchange::export(&before)).unwrap();
    let copy = kbench_store::exchange::parse(&export, Some("copy")).unwrap();
    store.import(&copy).unwrap_err(); // the same run uid is stored once
    let mut fresh = copy.clone();
    fresh.identifiers[0].runs[0].info.uid = Some("u9".into());
    store.import(&fresh).unwrap();
    assert_eq!(store.load("copy").unwrap().sample_count(), 3);
}

/// Token B once finished, as failed, a job that token A's worker leased.
/// Now a lease belongs to the worker and the token that took it: another
/// token can neither renew it, finish it, upload for it, nor lease under
/// that worker's name; nothing changes when it tries.
fn a_lease_belongs_to_its_worker_and_token(db: &TestDb) {
    let mut store = db.open();
    let id = store.submit_job(&job("lab", &[])).unwrap();
    let leased = store.lease_job("w1", "A", &[], MINUTE).unwrap().unwrap();
    assert_eq!((leased.id, leased.token.as_deref()), (id, Some("A")));
    let forbidden = |err: StoreError| {
        let StoreError::Forbidden(message) = &err else {
            panic!("{err:?}");
        };
        assert!(message.contains("another API token"), "{message}");
    };
    forbidden(
        store
            .finish_job(id, "w1", "B", false, "stolen")
            .unwrap_err(),
    );
    forbidden(store.renew_lease(id, "w1", "B", MINUTE).unwrap_err());
    forbidden(
        store
            .append_live("lab", &leased_batch(id, "w1", 0, 3), "B")
            .unwrap_err(),
    );
    forbidden(store.lease_job("w1", "B", &[], MINUTE).unwrap_err());
    let job = store.job(id).unwrap();
    assert_eq!((job.state, job.message), (JobState::Running, None));
    assert!(matches!(store.load("lab"), Err(StoreError::NotFound(_))));
    // Its own token does all of it.
    assert!(store.renew_lease(id, "w1", "A", MINUTE).unwrap());
    assert_eq!(
        store
            .append_live("lab", &leased_batch(id, "w1", 0, 3), "A")
            .unwrap(),
        live(3, 0)
    );
    assert!(store.finish_job(id, "w1", "A", true, "ok").unwrap());
    let workers = store.workers().unwrap();
    assert_eq!(workers[0].token.as_deref(), Some("A"));
}

/// A batch for a run that another transaction is deleting waits for it,
/// then stores nothing (the samples table has no foreign key to refuse
/// them: the batch's lock on the run's row finds it gone).
#[test]
fn a_live_batch_for_a_run_being_removed_stores_nothing() {
    let Some(db) = TestDb::postgres() else { return };
    let mut store = db.open();
    let first = batch("u1", vec![part(&lat(), 0, 3)]);
    store.append_live("lab", &first, "t1").unwrap();
    let mut deleter = common::client(&db.location);
    let mut tx = deleter.transaction().unwrap();
    tx.batch_execute(
        "DELETE FROM test_outcomes WHERE run_id IN (SELECT id FROM runs WHERE uid = 'u1'); \
         DELETE FROM sample_blocks WHERE run_id IN (SELECT id FROM runs WHERE uid = 'u1'); \
         DELETE FROM runs WHERE uid = 'u1'",
    )
    .unwrap();
    let next = batch("u1", vec![part(&lat(), 3, 5)]);
    let appending = common::on_thread(&db.location, move |store| {
        store.append_live("lab", &next, "t1")
    });
    assert!(
        common::still_waiting(&appending),
        "the batch did not wait for the delete"
    );
    tx.commit().unwrap();
    let err = appending.join().unwrap().unwrap_err();
    assert!(matches!(err, StoreError::Conflict(_)), "{err:?}");
    assert!(err.to_string().contains("removed"), "{err}");
    assert_eq!(db.orphan_samples(), 0);
    assert_eq!(db.stored_samples(), 0);
}
