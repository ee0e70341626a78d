//! The uploader thread of a live upload (`kbench run --server`): it takes
//! the changes the [`Mirror`](crate::mirror::Mirror) queues, gathers them
//! into live batches ([`Batcher`]) and sends them to the server while the
//! run goes on. A slow or unreachable server never holds up a measurement:
//! connection failures and 503 are retried with backoff for as long as the
//! run goes on, and at the end the upload gets a bounded time to catch up
//! ([`DRAIN_TIME`]). Any other refusal (401, 400, 409) stops the upload for
//! good, the local samples kept; under a worker, 409 is also the answer
//! once the worker's job lease went to another worker
//! (`LiveBatch::lease`), which uploads the run from then on.

use crate::FleetError;
use crate::api::{Api, message, retry};
use crate::batch::{Batcher, Change};
use crate::client::encode_segment;
use crate::lease::lease_from_env;
use kbench_store::{JobLease, LiveBatch, LiveOutcome, Scope};
use std::collections::BTreeSet;
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

/// Where `--server` sends the runs, and for which lab job.
#[derive(Debug, Clone)]
pub struct Upload {
    pub api: Api,
    /// The job lease of the worker that started this process (read from
    /// [`LEASE_ENV`](crate::lease::LEASE_ENV)), carried by every batch: the
    /// server refuses them once the job went to another worker.
    pub lease: Option<JobLease>,
    /// The name of the token it uploads with.
    pub token_name: String,
}

impl Upload {
    /// The server at `url`, its `token` checked (`GET /api/v1/token`)
    /// before anything is measured: a lab job's run is its worker's to
    /// upload (scope `work`), any other is a push (scope `push`).
    pub fn connect(url: &str, token: Option<&str>) -> Result<Upload, FleetError> {
        let lease = lease_from_env()?;
        let api = Api::new(url, token)?.with_short_timeouts();
        let token_name = match &lease {
            Some(_) => api.check_token(Scope::Work, "uploading a job's run")?,
            None => api.check_token(Scope::Push, "uploading a run (--server)")?,
        };
        Ok(Upload {
            api,
            lease,
            token_name,
        })
    }

    /// The line to say before measuring: where the samples go.
    pub fn opening(&self) -> String {
        let job = self.lease.as_ref().map_or(String::new(), |lease| {
            format!(" for job {} of worker '{}'", lease.job, lease.worker)
        });
        format!(
            "Uploading to {} as token '{}'{job}; the local database keeps every sample too.",
            self.api.url, self.token_name
        )
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
    /// Says on stderr how the upload went (with `quiet`, only when it fell
    /// short); false when it fell short.
    pub fn tell(&self, quiet: bool) -> bool {
        let already = if self.skipped > 0 {
            format!(" ({} more the server had already)", self.skipped)
        } else {
            String::new()
        };
        if !quiet {
            eprintln!(
                "Uploaded {} sample(s) to {}{already}.",
                self.stored, self.url
            );
        }
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
                     local database; `kbench push {set} --server {}` can send them later (with --into \
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
            message(&response)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mirror::mirrored;
    use crate::test_support::FakeServer;
    use kbench_model::{Direction, Sample, TestKey, TestSpec};
    use kbench_store::{RunInfo, RunStatus, SqliteStore};

    const TOKEN: &str = "GET /api/v1/token";
    const LIVE: &str = "POST /api/v1/result-sets/s/live";

    /// A server whose token may push.
    fn server() -> FakeServer {
        let server = FakeServer::start();
        server.answer(TOKEN, 200, r#"{"name": "lab", "scopes": ["push"]}"#);
        server
    }

    /// Runs one complete run of three samples through the mirror into a
    /// fresh local store, uploading to `server`.
    fn upload_a_run(server: &FakeServer) -> Uploaded {
        let dir = tempfile::tempdir().unwrap();
        let mut local = SqliteStore::open(&dir.path().join("r.db")).unwrap();
        let upload = Upload::connect(&server.url, Some("secret")).unwrap();
        assert_eq!(
            upload.opening(),
            format!(
                "Uploading to {} as token 'lab'; the local database keeps every sample too.",
                upload.api.url
            )
        );
        let spec = TestSpec {
            key: TestKey::parse("syscall-null").unwrap(),
            unit: "ns".into(),
            direction: Direction::Lower,
        };
        let info = RunInfo {
            started_at_ms: kbench_model::now_ms() - 10,
            ..RunInfo::default()
        };
        let (stored, uploaded) = mirrored(&mut local, Some(&upload), |sink| {
            let run = sink.begin_run("s", "6.18", &info)?;
            let test = sink.test_id("s", &spec)?;
            for value in [1.0, 2.0, 3.0] {
                let at_ms = kbench_model::now_ms();
                let sample = Sample {
                    value,
                    iterations: 1,
                    at_ms,
                    round: 0,
                };
                sink.add_sample(run, test, &sample)?;
            }
            sink.end_run(run, RunStatus::Complete, None)
        });
        stored.unwrap();
        uploaded.expect("an upload")
    }

    /// The live batches the server was sent.
    fn batches(server: &FakeServer) -> Vec<LiveBatch> {
        server
            .seen()
            .into_iter()
            .filter(|seen| seen.route == LIVE)
            .map(|seen| serde_json::from_str(&seen.body).unwrap())
            .collect()
    }

    #[test]
    fn a_run_is_uploaded_as_it_is_stored_retrying_while_the_server_is_away() {
        let server = server();
        server
            .answer(LIVE, 503, r#"{"error": "the database is away"}"#)
            .answer(LIVE, 200, r#"{"stored": 3, "skipped": 0}"#);
        let uploaded = upload_a_run(&server);
        assert_eq!(
            (uploaded.stored, uploaded.skipped, uploaded.queued),
            (3, 0, 3)
        );
        assert_eq!(uploaded.error, None);
        assert_eq!(uploaded.sets, BTreeSet::from(["s".to_string()]));
        assert!(uploaded.tell(false));
        let sent = batches(&server);
        assert_eq!(sent.len(), 2, "the batch, and the same batch again");
        assert_eq!(sent[0], sent[1]);
        assert_eq!(sent[0].status, RunStatus::Complete);
        assert_eq!(sent[0].samples[0].samples.len(), 3);
        assert_eq!(sent[0].lease, None);
    }

    #[test]
    fn a_refused_batch_stops_the_upload_and_fails_the_command() {
        let server = server();
        server.answer(LIVE, 409, r#"{"error": "job 7 is no longer leased to w1"}"#);
        let uploaded = upload_a_run(&server);
        assert_eq!((uploaded.stored, uploaded.queued), (0, 3));
        assert_eq!(
            uploaded.error.as_deref(),
            Some(
                "the server refused a live batch of identifier '6.18' in result set 's' with \
                 409: job 7 is no longer leased to w1"
            )
        );
        assert!(
            !uploaded.tell(true),
            "an upload that fell short fails the command"
        );
        assert_eq!(batches(&server).len(), 1, "a refusal is not retried");
    }

    #[test]
    fn a_token_that_may_not_push_is_refused_before_anything_runs() {
        let server = FakeServer::start();
        server.answer(TOKEN, 200, r#"{"name": "reader", "scopes": ["read"]}"#);
        let error = Upload::connect(&server.url, Some("secret")).unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("token 'reader' has the scopes read on"),
            "{error}"
        );
        assert!(Upload::connect(&server.url, None).is_err(), "no token");
    }
}
