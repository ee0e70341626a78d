//! `kbench run --upload`: the local store stays the source of truth (every
//! sample is committed there first, as without an upload), and a [`Mirror`]
//! wrapped around it, a [`RunSink`] decorator, queues each change of a run
//! for an uploader thread, which sends them to the server as live batches
//! while the run goes on.
//!
//! The thread runs in the kbench process that stores, never in the
//! measuring agent, and the mirror only queues: a slow or unreachable
//! server never holds up a measurement. Connection failures and 503 are
//! retried with backoff for as long as the run goes on; at the end the
//! upload gets a bounded time to catch up. Any other refusal (401, 400,
//! 409) stops the upload for good and fails the command at its end, the
//! local samples kept. Under a worker, 409 is also the answer once the
//! worker's job lease went to another worker (`LiveBatch::lease`), which
//! uploads the run from then on.

use super::Upload;
use super::api::{Api, retry};
use super::batch::{Batcher, Change};
use kbench_model::{Sample, TestKey, TestSpec};
use kbench_server::client::encode_segment;
use kbench_store::{
    JobLease, LiveBatch, LiveOutcome, Recorder, ResultSetData, ResultSetSummary, Results,
    RunContents, RunId, RunInfo, RunRecord, RunSink, RunStatus, StoreError, TestId, TestOutcome,
};
use std::collections::{BTreeSet, HashMap};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, TryRecvError, channel};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A batch is sent when its oldest change is this old ...
const FLUSH_INTERVAL: Duration = Duration::from_secs(1);
/// ... or when this many samples wait (or when a run ends).
const FLUSH_SAMPLES: usize = 2_000;
/// The most samples in one request (a backlog after an outage is split).
const MAX_BATCH_SAMPLES: usize = 5_000;
/// How long the end of a run waits for the upload to catch up.
pub const DRAIN_TIME: Duration = Duration::from_secs(60);

/// Runs `body` on `store`, mirrored to `upload` when given, then waits
/// (at most [`DRAIN_TIME`]) for the upload to end and says how it went.
pub fn mirrored<T>(
    store: &mut dyn Recorder,
    upload: Option<&Upload>,
    body: impl FnOnce(&mut dyn Recorder) -> T,
) -> (T, Option<Uploaded>) {
    match upload {
        None => (body(store), None),
        Some(upload) => {
            let (queue, uploader) = Uploader::start(upload.clone());
            let mut mirror = Mirror::new(store, queue);
            let result = body(&mut mirror);
            let (queued, sets) = (mirror.queued, std::mem::take(&mut mirror.sets));
            drop(mirror);
            (result, Some(uploader.finish(queued, sets, DRAIN_TIME)))
        }
    }
}

/// A [`RunSink`] that keeps everything in `local` and queues the changes of
/// the runs it begins or resumes for the uploader; what it reads comes
/// from `local` unchanged.
pub struct Mirror<'a> {
    local: &'a mut dyn Recorder,
    queue: Sender<Change>,
    /// The specs of tests by local id (`add_sample` names a test by id).
    specs: HashMap<TestId, TestSpec>,
    /// Samples so far per run and test: the next sample's index.
    counts: HashMap<(RunId, TestKey), u64>,
    /// Samples queued (re-sent ones of a resumed run included).
    queued: u64,
    /// The result sets of the runs mirrored.
    sets: BTreeSet<String>,
}

impl<'a> Mirror<'a> {
    pub fn new(local: &'a mut dyn Recorder, queue: Sender<Change>) -> Mirror<'a> {
        Mirror {
            local,
            queue,
            specs: HashMap::new(),
            counts: HashMap::new(),
            queued: 0,
            sets: BTreeSet::new(),
        }
    }

    /// Queues a change. A stopped uploader (it failed, and said so) takes
    /// no more: the change stays in the local store only.
    fn send(&mut self, change: Change) {
        match &change {
            Change::Samples { samples, .. } => self.queued += samples.len() as u64,
            Change::Run { set, .. } => {
                self.sets.insert(set.clone());
            }
            _ => {}
        }
        let _ = self.queue.send(change);
    }

    fn spec(&self, test: TestId) -> Result<TestSpec, StoreError> {
        self.specs.get(&test).cloned().ok_or_else(|| {
            StoreError::NotFound(format!(
                "test id {} was not made through the upload mirror (call test_id first)",
                test.0
            ))
        })
    }

    /// Queues everything stored of a resumed run from its start: the
    /// server keeps what it has and adds the rest.
    fn resend(&mut self, contents: RunContents) {
        let spec_of = |key: &TestKey| contents.tests.iter().find(|t| &t.key == key).cloned();
        let run = contents.record.id;
        let info = with_uid(contents.record.info.clone());
        self.send(Change::Run {
            run,
            set: contents.set.clone(),
            identifier: contents.identifier.clone(),
            info: Box::new(info),
        });
        for (key, samples) in &contents.samples {
            self.counts.insert((run, key.clone()), samples.len() as u64);
            if let Some(spec) = spec_of(key) {
                self.send(Change::Samples {
                    run,
                    spec,
                    first: 0,
                    samples: samples.clone(),
                });
            }
        }
        for outcome in &contents.record.outcomes {
            if let Some(spec) = spec_of(&outcome.test) {
                self.send(Change::Outcome {
                    run,
                    spec,
                    outcome: outcome.clone(),
                });
            }
        }
    }
}

/// A run's info with a uid (the runner gives every run one; a run stored
/// by an older kbench gets one for this upload).
fn with_uid(mut info: RunInfo) -> RunInfo {
    if info.uid.is_none() {
        info.uid = kbench_model::random_id().ok();
    }
    info
}

impl RunSink for Mirror<'_> {
    fn begin_run(
        &mut self,
        set: &str,
        identifier: &str,
        info: &RunInfo,
    ) -> kbench_store::Result<RunId> {
        let info = with_uid(info.clone());
        let run = self.local.begin_run(set, identifier, &info)?;
        self.send(Change::Run {
            run,
            set: set.to_string(),
            identifier: identifier.to_string(),
            info: Box::new(info),
        });
        Ok(run)
    }

    fn lock_identifier(&mut self, set: &str, identifier: &str) -> kbench_store::Result<()> {
        self.local.lock_identifier(set, identifier)
    }

    fn unfinished_run(
        &mut self,
        set: &str,
        identifier: &str,
    ) -> kbench_store::Result<Option<RunRecord>> {
        self.local.unfinished_run(set, identifier)
    }

    fn resume_run(&mut self, run: RunId, pid: u32) -> kbench_store::Result<()> {
        self.local.resume_run(run, pid)?;
        let contents = self.local.run_contents(run)?;
        self.resend(contents);
        Ok(())
    }

    fn test_id(&mut self, set: &str, spec: &TestSpec) -> kbench_store::Result<TestId> {
        let id = self.local.test_id(set, spec)?;
        self.specs.insert(id, spec.clone());
        Ok(id)
    }

    fn add_sample(
        &mut self,
        run: RunId,
        test: TestId,
        sample: &Sample,
    ) -> kbench_store::Result<()> {
        self.local.add_sample(run, test, sample)?;
        let spec = self.spec(test)?;
        let count = self.counts.entry((run, spec.key.clone())).or_insert(0);
        let first = *count;
        *count += 1;
        self.send(Change::Samples {
            run,
            spec,
            first,
            samples: vec![*sample],
        });
        Ok(())
    }

    fn end_test(
        &mut self,
        run: RunId,
        test: TestId,
        outcome: &TestOutcome,
    ) -> kbench_store::Result<()> {
        self.local.end_test(run, test, outcome)?;
        let spec = self.spec(test)?;
        self.send(Change::Outcome {
            run,
            spec,
            outcome: outcome.clone(),
        });
        Ok(())
    }

    fn end_run(
        &mut self,
        run: RunId,
        status: RunStatus,
        steal_percent: Option<f64>,
    ) -> kbench_store::Result<()> {
        self.local.end_run(run, status, steal_percent)?;
        self.send(Change::Ended {
            run,
            status,
            ended_at_ms: kbench_model::now_ms(),
            steal_percent,
        });
        Ok(())
    }

    fn last_round(&mut self, set: &str, identifier: &str) -> kbench_store::Result<Option<u32>> {
        self.local.last_round(set, identifier)
    }

    fn ended_tests(&mut self, run: RunId) -> kbench_store::Result<Vec<TestKey>> {
        self.local.ended_tests(run)
    }
}

/// Reads pass through: a run measured with `--redo-disturbed` (or in a
/// VM) reads its result set back between its runs.
impl Results for Mirror<'_> {
    fn result_sets(&mut self) -> kbench_store::Result<Vec<ResultSetSummary>> {
        self.local.result_sets()
    }

    fn load(&mut self, set: &str) -> kbench_store::Result<ResultSetData> {
        self.local.load(set)
    }

    fn run_contents(&mut self, run: RunId) -> kbench_store::Result<RunContents> {
        self.local.run_contents(run)
    }
}

/// The uploader thread.
pub struct Uploader {
    thread: JoinHandle<Uploaded>,
    /// When the uploader must give up retrying (set at the end of the run).
    deadline: Arc<Mutex<Option<Instant>>>,
    url: String,
}

/// How an upload went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Uploaded {
    pub url: String,
    /// Samples the server stored.
    pub stored: u64,
    /// Samples the server had already (a resumed run sent again).
    pub skipped: u64,
    /// Samples queued, re-sent ones included.
    pub queued: u64,
    /// The result sets uploaded into.
    pub sets: BTreeSet<String>,
    /// Why the upload stopped early, if it did.
    pub error: Option<String>,
}

impl Uploaded {
    /// Says on stderr how the upload went; false when it fell short.
    pub fn tell(&self) -> bool {
        let already = if self.skipped > 0 {
            format!(" ({} more the server had already)", self.skipped)
        } else {
            String::new()
        };
        eprintln!(
            "Uploaded {} sample(s) to {}{already}.",
            self.stored, self.url
        );
        let missing = self.queued.saturating_sub(self.stored + self.skipped);
        match &self.error {
            None if missing == 0 => true,
            error => {
                let set = match self.sets.iter().next() {
                    Some(set) if self.sets.len() == 1 => set.as_str(),
                    _ => "SET",
                };
                eprintln!(
                    "kbench: error: {missing} sample(s) did not reach {}{}. They are kept in the \
                     local database; `kbench push {set} --to {}` can send them later (with --into \
                     another result set if the server holds this identifier already).",
                    self.url,
                    error.as_ref().map_or(String::new(), |e| format!(": {e}")),
                    self.url
                );
                false
            }
        }
    }
}

impl Uploader {
    /// Starts the thread; changes go into the returned queue.
    pub fn start(to: Upload) -> (Sender<Change>, Uploader) {
        let (queue, changes) = channel();
        let deadline = Arc::new(Mutex::new(None));
        let url = to.api.url.clone();
        let thread = {
            let deadline = deadline.clone();
            std::thread::spawn(move || upload(&to.api, to.lease, &changes, &deadline))
        };
        (
            queue,
            Uploader {
                thread,
                deadline,
                url,
            },
        )
    }

    /// Waits, at most `time` once the queue is closed (every sender
    /// dropped), for the upload to send what is left.
    pub fn finish(self, queued: u64, sets: BTreeSet<String>, time: Duration) -> Uploaded {
        let start = Instant::now();
        *self.deadline.lock().expect("deadline lock") = Some(start + time);
        let mut told = false;
        while !self.thread.is_finished() {
            if !told && start.elapsed() > Duration::from_secs(2) {
                eprintln!(
                    "Waiting up to {} s for the upload to {} to catch up ...",
                    time.as_secs(),
                    self.url
                );
                told = true;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let mut uploaded = self.thread.join().unwrap_or_else(|_| Uploaded {
            url: self.url.clone(),
            stored: 0,
            skipped: 0,
            queued: 0,
            sets: BTreeSet::new(),
            error: Some("the upload thread panicked".to_string()),
        });
        (uploaded.queued, uploaded.sets) = (queued, sets);
        uploaded
    }
}

/// The uploader thread's loop: gathers changes, sends a batch (carrying
/// `lease`) when one is due, everything once the queue closes; ends there
/// or at a refusal.
fn upload(
    api: &Api,
    lease: Option<JobLease>,
    changes: &Receiver<Change>,
    deadline: &Mutex<Option<Instant>>,
) -> Uploaded {
    let mut batcher = Batcher::new(lease);
    let mut done = Uploaded {
        url: api.url.clone(),
        stored: 0,
        skipped: 0,
        queued: 0,
        sets: BTreeSet::new(),
        error: None,
    };
    let mut open = true;
    while open || !batcher.is_empty() {
        if open {
            match changes.recv_timeout(batcher.until_due(Instant::now(), FLUSH_INTERVAL)) {
                Ok(change) => batcher.apply(change, Instant::now()),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => open = false,
            }
            loop {
                match changes.try_recv() {
                    Ok(change) => batcher.apply(change, Instant::now()),
                    Err(TryRecvError::Empty) => break,
                    Err(TryRecvError::Disconnected) => {
                        open = false;
                        break;
                    }
                }
            }
            if open && !batcher.due(Instant::now(), FLUSH_INTERVAL, FLUSH_SAMPLES) {
                continue;
            }
        }
        while let Some((set, batch)) = batcher.take(MAX_BATCH_SAMPLES) {
            match send(api, &set, &batch, deadline) {
                Ok(outcome) => {
                    done.stored += outcome.stored;
                    done.skipped += outcome.skipped;
                }
                Err(error) => {
                    eprintln!(
                        "kbench: upload to {} stopped: {error}. The run goes on; every sample is \
                         kept in the local database.",
                        api.url
                    );
                    done.error = Some(error);
                    return done;
                }
            }
        }
    }
    done
}

/// Sends one batch, retrying connection failures and 503 until the
/// deadline (if one is set); the server's answer, or why it failed.
fn send(
    api: &Api,
    set: &str,
    batch: &LiveBatch,
    deadline: &Mutex<Option<Instant>>,
) -> Result<LiveOutcome, String> {
    let path = format!("/result-sets/{}/live", encode_segment(set));
    let mut warned = false;
    let answer = retry(
        || api.post_json(&path, batch),
        |_, failure, wait| {
            let limit = *deadline.lock().expect("deadline lock");
            if limit.is_some_and(|limit| Instant::now() + wait > limit) {
                return false;
            }
            if !warned {
                eprintln!(
                    "kbench: upload to {}: {failure}; retrying until it answers (the run goes on)",
                    api.url
                );
                warned = true;
            }
            true
        },
    );
    let response = answer.map_err(|gave_up| format!("no answer in time ({gave_up})"))?;
    if warned {
        eprintln!("kbench: upload to {}: reachable again", api.url);
    }
    match response.status {
        200 => serde_json::from_str(&response.body).map_err(|e| {
            format!("the answer to a live batch is not {{\"stored\", \"skipped\"}}: {e}")
        }),
        status => Err(format!(
            "the server refused a live batch of identifier '{}' in result set '{set}' with {status}: {}",
            batch.identifier,
            super::api::message(&response)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kbench_model::Direction;
    use kbench_store::{SqliteStore, TestOutcomeKind};

    fn spec() -> TestSpec {
        TestSpec {
            key: TestKey::parse("syscall-null").unwrap(),
            unit: "ns".into(),
            direction: Direction::Lower,
        }
    }

    fn sample(value: f64) -> Sample {
        Sample {
            value,
            iterations: 1,
            at_ms: kbench_model::now_ms(),
            round: 0,
        }
    }

    /// Everything queued, gathered into one batch.
    fn batch_of(changes: &Receiver<Change>) -> LiveBatch {
        let mut batcher = Batcher::default();
        for change in changes.try_iter() {
            batcher.apply(change, Instant::now());
        }
        let (_, batch) = batcher.take(usize::MAX).unwrap();
        assert!(batcher.take(usize::MAX).is_none());
        batch
    }

    #[test]
    fn a_mirrored_run_is_stored_locally_and_queued_with_sample_indexes() {
        let dir = tempfile::tempdir().unwrap();
        let mut local = SqliteStore::open(&dir.path().join("r.db")).unwrap();
        let (queue, changes) = channel();
        let info = RunInfo {
            started_at_ms: kbench_model::now_ms() - 10,
            ..RunInfo::default()
        };
        let run = {
            let mut mirror = Mirror::new(&mut local, queue.clone());
            let run = mirror.begin_run("s", "6.18", &info).unwrap();
            let test = mirror.test_id("s", &spec()).unwrap();
            for value in [1.0, 2.0] {
                mirror.add_sample(run, test, &sample(value)).unwrap();
            }
            run
        };
        let first = batch_of(&changes);
        assert!(first.run_uid.len() >= 16, "the mirror gives a run a uid");
        assert_eq!(
            (first.samples[0].first, first.samples[0].samples.len()),
            (0, 2)
        );
        assert_eq!(first.status, RunStatus::Running);
        assert_eq!(local.load("s").unwrap().identifiers[0].samples.len(), 1);

        // The run was killed; a new process resumes it and sends it again
        // from its start, then its new samples after those stored.
        let mut mirror = Mirror::new(&mut local, queue);
        mirror.resume_run(run, 42).unwrap();
        let test = mirror.test_id("s", &spec()).unwrap();
        mirror.add_sample(run, test, &sample(3.0)).unwrap();
        let outcome = TestOutcome {
            test: spec().key,
            kind: TestOutcomeKind::BudgetHit,
            detail: "time".into(),
        };
        mirror.end_test(run, test, &outcome).unwrap();
        mirror.end_run(run, RunStatus::Complete, None).unwrap();
        assert_eq!(mirror.queued, 3);
        let again = batch_of(&changes);
        assert_eq!(again.run_uid, first.run_uid);
        assert_eq!(
            (again.samples[0].first, again.samples[0].samples.len()),
            (0, 3)
        );
        assert_eq!(again.samples[0].samples[2].value, 3.0);
        assert_eq!(again.outcomes, [outcome]);
        assert_eq!(again.status, RunStatus::Complete);
        assert_eq!(again.tests, [spec()]);
    }
}
