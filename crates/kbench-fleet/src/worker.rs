//! `kbench worker`: leases jobs from the server and runs each as a child
//! process of the kbench binary ([`Worker::exe`]), `kbench run ...
//! --server` (or `kbench kernel fetch` then `kbench vm run ... --server`
//! for a kernel job), on a fresh local store per job.
//!
//! That store is first seeded with what the server has of the job's
//! identifier, so a job leased again after its worker died finds the dead
//! worker's unfinished run and resumes it (ended tests are not measured
//! again, rounds go on) instead of starting over; the resumed upload sends
//! the run again from its start and the server skips what it has.
//!
//! While the child runs, the lease is renewed every third of its length;
//! a lost lease (another worker has the job) kills the child. The child
//! dies with the worker (parent-death signal), so a worker that is killed
//! leaves no measurement going on; its job is leased again once the lease
//! expires. A worker cut off from the server past its lease lives on,
//! though, and its job goes to another, which resumes the same run: the
//! child's upload names the lease ([`LEASE_ENV`]), so the server refuses
//! its batches from then on, before the next renewal kills it.

use crate::FleetError;
use crate::api::{Api, message, retry};
use crate::client::{Response, encode_segment};
use crate::lease::{LEASE_ENV, lease_text};
use kbench_store::{Exchange, Job, JobLease, JobSpec, SqliteStore, exchange};
use serde_json::json;
use std::collections::VecDeque;
use std::ffi::OsString;
use std::io::{self, BufRead, BufReader, Read};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Lines of a child's stderr kept for the job's message.
const TAIL_LINES: usize = 12;

/// Checks a leased job before anything of it runs, as the server does
/// before it queues one (the binary passes kbench-catalog's `job::checker`):
/// the error says what is wrong.
pub type JobCheck = Box<dyn Fn(&JobSpec) -> Result<(), String>>;

/// The command line of the child that measures a job: `kbench run` (or
/// `kbench vm run` on a kernel) of the job, on the kernel release it runs
/// on if any, into the job's store, uploading to the server. The binary
/// passes kbench-cli's `job_run_args`, which spells each flag from its
/// definition.
pub type RunArgs = fn(&JobSpec, Option<&str>, &Path, &str) -> Vec<OsString>;

/// What a worker needs.
pub struct Worker {
    pub api: Api,
    pub name: String,
    pub tags: Vec<String>,
    pub lease: Duration,
    pub exit_when_idle: bool,
    /// Time between asking for a job while none is waiting.
    pub poll: Duration,
    /// Where the per-job stores go.
    pub work_dir: PathBuf,
    /// Whether the store of a failed job stays (else it is removed too).
    pub keep_failed: bool,
    /// The kbench binary, which runs the jobs.
    pub exe: PathBuf,
    /// Options given to every child before its command (`--profiles`).
    pub child_options: Vec<OsString>,
    /// The command line of a job's measuring child.
    pub run_args: RunArgs,
    /// The check of a job against what this machine's children can run
    /// (its suites, benchmarks and profiles).
    pub check_job: JobCheck,
    /// Set by SIGINT / SIGTERM.
    pub stop: Arc<AtomicBool>,
}

/// How a child process ended.
enum Ended {
    /// On its own (or after the worker was stopped and passed it a SIGINT).
    Exited {
        status: ExitStatus,
        stdout: String,
        tail: Vec<String>,
    },
    /// The lease was lost; the child was killed.
    LeaseLost,
}

impl Worker {
    /// Takes and runs jobs until stopped (or idle, with `exit_when_idle`).
    /// An error is one the worker cannot go on after (a refused token).
    pub fn work(&self) -> Result<(), FleetError> {
        self.log(format!(
            "asking {} for jobs (tags: {}; lease {} s)",
            self.api.url,
            if self.tags.is_empty() {
                "none".to_string()
            } else {
                self.tags.join(",")
            },
            self.lease.as_secs()
        ));
        while !self.stopped() {
            match self.lease_job()? {
                Some(job) => self.run(&job)?,
                None if self.exit_when_idle => {
                    self.log("no job waiting; exiting (--exit-when-idle)".to_string());
                    return Ok(());
                }
                None => self.sleep(self.poll),
            }
        }
        Ok(())
    }

    fn stopped(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }

    fn log(&self, text: String) {
        eprintln!("kbench worker {}: {text}", self.name);
    }

    /// Sleeps `time`, waking early when stopped.
    fn sleep(&self, time: Duration) {
        let end = Instant::now() + time;
        while !self.stopped() && Instant::now() < end {
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Retries `request` while the server is unreachable (saying so
    /// once), until it answers or the worker is stopped.
    fn patiently(
        &self,
        what: &str,
        request: impl FnMut() -> io::Result<Response>,
    ) -> Result<Response, FleetError> {
        let mut told = false;
        let response = retry(request, |_, failure, _| {
            if !told {
                self.log(format!(
                    "{what}: {} {failure}; retrying until it answers",
                    self.api.url
                ));
                told = true;
            }
            !self.stopped()
        })
        .map_err(|gave_up| FleetError::Unreachable(format!("{what}: {gave_up}; stopped")))?;
        if told {
            self.log(format!("{what}: {} answers again", self.api.url));
        }
        Ok(response)
    }

    /// A job leased to this worker, or `None` when none is waiting.
    fn lease_job(&self) -> Result<Option<Job>, FleetError> {
        let body = json!({
            "worker": self.name,
            "tags": self.tags,
            "lease_seconds": self.lease.as_secs(),
        });
        let response = match self.patiently("asking for a job", || {
            self.api.post_json("/jobs/lease", &body)
        }) {
            Ok(response) => response,
            Err(_) if self.stopped() => return Ok(None),
            Err(error) => return Err(error),
        };
        match response.status {
            200 => Ok(Some(serde_json::from_str(&response.body).map_err(
                FleetError::answer(format!(
                    "{}: POST /api/v1/jobs/lease answered no Job",
                    self.api.url
                )),
            )?)),
            204 => Ok(None),
            status => Err(FleetError::Refused(format!(
                "{} refused to lease a job ({status}: {})",
                self.api.url,
                message(&response)
            ))),
        }
    }

    /// Runs one leased job and reports how it ended.
    fn run(&self, job: &Job) -> Result<(), FleetError> {
        let spec = &job.spec;
        self.log(format!(
            "job {} (attempt {}): {} as '{}' into '{}'{}, {} round(s)",
            job.id,
            job.attempts,
            spec.names.join(" "),
            spec.identifier,
            spec.set,
            spec.kernel
                .as_ref()
                .map_or(String::new(), |k| format!(" on kernel {k}")),
            spec.rounds
        ));
        let dir = self
            .work_dir
            .join(format!("job-{}-{}", job.id, job.attempts));
        let ended = self.measure(job, &dir);
        let (ok, text) = match ended {
            Ok(Ended::LeaseLost) => {
                self.log(format!(
                    "job {}: the lease was lost (another worker has the job); its child was killed",
                    job.id
                ));
                return Ok(());
            }
            Ok(Ended::Exited { status, tail, .. }) if status.success() => {
                let last: Vec<&str> = tail
                    .iter()
                    .rev()
                    .take(2)
                    .rev()
                    .map(String::as_str)
                    .collect();
                (true, last.join(" "))
            }
            Ok(Ended::Exited { .. }) if self.stopped() => (false, "worker stopped".to_string()),
            Ok(Ended::Exited { status, tail, .. }) => {
                (false, format!("kbench {status}: {}", tail.join("\n")))
            }
            Err(error) => (false, error.to_string()),
        };
        self.finish(job, ok, &text)?;
        if ok || !self.keep_failed {
            let _ = std::fs::remove_dir_all(&dir);
        } else {
            self.log(format!(
                "job {}: its local store is kept in {}",
                job.id,
                dir.display()
            ));
        }
        Ok(())
    }

    /// Checks the job as the server should have (a job queued by an older
    /// server, or written into its database by hand, is not trusted),
    /// seeds its store and runs its children in turn.
    fn measure(&self, job: &Job, dir: &Path) -> Result<Ended, FleetError> {
        let spec = &job.spec;
        (self.check_job)(spec).map_err(FleetError::JobRefused)?;
        std::fs::create_dir_all(dir).map_err(|cause| FleetError::Io {
            doing: format!("cannot make the job's directory {}", dir.display()),
            cause,
        })?;
        let db = dir.join("results.db");
        self.seed(job, &db)?;
        let kernel = match spec.kernel.as_deref() {
            Some(kernel) if kernel.starts_with("debian:") => {
                match self.supervise(job, &fetch_args(kernel), true)? {
                    Ended::Exited { status, stdout, .. } if status.success() => Some(
                        stdout
                            .split_whitespace()
                            .next()
                            .ok_or_else(|| {
                                FleetError::Child(format!(
                                    "`kbench kernel fetch {kernel}` named no kernel"
                                ))
                            })?
                            .to_string(),
                    ),
                    other => return Ok(other),
                }
            }
            other => other.map(str::to_string),
        };
        let command = (self.run_args)(spec, kernel.as_deref(), &db, &self.api.url);
        self.supervise(job, &command, false)
    }

    /// Imports what the server has of the job's identifier into the job's
    /// store (an earlier attempt's runs, its unfinished one to resume).
    fn seed(&self, job: &Job, db: &Path) -> Result<(), FleetError> {
        let spec = &job.spec;
        let path = format!(
            "/result-sets/{}/export?identifier={}",
            encode_segment(&spec.set),
            encode_segment(&spec.identifier)
        );
        let response =
            self.patiently("reading the job's earlier samples", || self.api.get(&path))?;
        let text = match response.status {
            200 => response.body,
            404 => return Ok(()), // no such result set yet
            status => {
                return Err(FleetError::Refused(format!(
                    "{} answered {status} to GET {path}: {}",
                    self.api.url,
                    message(&response)
                )));
            }
        };
        let data = exchange::parse(&text, Some(&spec.set)).map_err(|e| {
            FleetError::Refused(format!(
                "the server's export of '{}' cannot be read: {e}",
                spec.set
            ))
        })?;
        if data.identifiers.is_empty() {
            return Ok(());
        }
        let runs: usize = data.identifiers.iter().map(|i| i.runs.len()).sum();
        SqliteStore::open(db)?
            .import(&data)
            .map_err(FleetError::Seed)?;
        self.log(format!(
            "job {}: the server has {runs} run(s) of '{}' already; an unfinished one is resumed",
            job.id, spec.identifier
        ));
        Ok(())
    }

    /// Runs `kbench ARGS` as a child that dies with this worker, renewing
    /// the lease while it runs, passing it a SIGINT when the worker is
    /// stopped, and killing it when the lease is lost. Its output goes to
    /// this worker's stderr (stdout kept instead when `keep_stdout`).
    fn supervise(
        &self,
        job: &Job,
        args: &[OsString],
        keep_stdout: bool,
    ) -> Result<Ended, FleetError> {
        let mut command = Command::new(&self.exe);
        command
            .args(&self.child_options)
            .args(args)
            .env("KBENCH_TOKEN", self.api.token().unwrap_or_default())
            .env(
                LEASE_ENV,
                lease_text(&JobLease {
                    job: job.id,
                    worker: self.name.clone(),
                }),
            )
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        die_with_parent(&mut command);
        let mut child = command.spawn().map_err(|cause| FleetError::Io {
            doing: format!("cannot start {} for job {}", self.exe.display(), job.id),
            cause,
        })?;
        let prefix = format!("[job {}] ", job.id);
        let tail = Arc::new(Mutex::new(VecDeque::new()));
        let stderr = read_lines(
            child.stderr.take().expect("piped"),
            &prefix,
            false,
            Some(tail.clone()),
        );
        let stdout = read_lines(
            child.stdout.take().expect("piped"),
            &prefix,
            keep_stdout,
            None,
        );
        let renew_every = self.lease / 3;
        let mut next_renewal = Instant::now() + renew_every;
        let mut interrupted = false;
        let mut told_unreachable = false;
        let status = loop {
            let exited = child.try_wait().map_err(|cause| FleetError::Io {
                doing: format!("cannot wait for the child of job {}", job.id),
                cause,
            })?;
            if let Some(status) = exited {
                break status;
            }
            if self.stopped() && !interrupted {
                self.log(format!("stopping job {} (SIGINT to its kbench)", job.id));
                // SAFETY: signals our own child, not yet reaped.
                unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
                interrupted = true;
            }
            if Instant::now() >= next_renewal {
                match self.renew(job) {
                    Renewal::Renewed => {
                        next_renewal = Instant::now() + renew_every;
                        told_unreachable = false;
                    }
                    Renewal::Lost => {
                        let _ = child.kill();
                        let _ = child.wait();
                        return Ok(Ended::LeaseLost);
                    }
                    Renewal::Failed(why) => {
                        if !told_unreachable {
                            self.log(format!(
                                "job {}: cannot renew the lease ({why}); retrying",
                                job.id
                            ));
                            told_unreachable = true;
                        }
                        next_renewal = Instant::now() + Duration::from_secs(1).min(renew_every);
                    }
                }
            }
            std::thread::sleep(Duration::from_millis(100));
        };
        let _ = stderr.join();
        let stdout = stdout.join().unwrap_or_default();
        let tail = tail.lock().expect("tail lock").iter().cloned().collect();
        Ok(Ended::Exited {
            status,
            stdout,
            tail,
        })
    }

    fn renew(&self, job: &Job) -> Renewal {
        let body = json!({"worker": self.name, "lease_seconds": self.lease.as_secs()});
        match self
            .api
            .post_json(&format!("/jobs/{}/renew", job.id), &body)
        {
            Ok(response) if response.status == 200 => Renewal::Renewed,
            Ok(response) if matches!(response.status, 404 | 409) => Renewal::Lost,
            Ok(response) => Renewal::Failed(format!("{}: {}", response.status, message(&response))),
            Err(error) => Renewal::Failed(error.to_string()),
        }
    }

    /// Reports the job's end (retried while the server is unreachable).
    fn finish(&self, job: &Job, ok: bool, text: &str) -> Result<(), FleetError> {
        let body = json!({"worker": self.name, "ok": ok, "message": text});
        let path = format!("/jobs/{}/finish", job.id);
        let mut told = false;
        // Even once stopped, the end is worth a few attempts.
        let answer = retry(
            || self.api.post_json(&path, &body),
            |attempts, failure, _| {
                if !told {
                    self.log(format!(
                        "job {}: reporting its end: {failure}; retrying",
                        job.id
                    ));
                    told = true;
                }
                !self.stopped() || attempts < 5
            },
        );
        let how = if ok { "done" } else { "FAILED" };
        match answer {
            Ok(response) if response.status == 200 => {
                self.log(format!("job {} {how}: {}", job.id, first_line(text)));
            }
            Ok(response) if response.status == 409 => self.log(format!(
                "job {} ended ({how}) after its lease was lost; the server keeps the other worker's result",
                job.id
            )),
            Ok(response) => {
                return Err(FleetError::Refused(format!(
                    "{} refused the end of job {} ({}: {})",
                    self.api.url,
                    job.id,
                    response.status,
                    message(&response)
                )));
            }
            Err(gave_up) => self.log(format!(
                "job {} ended ({how}) but the server was not told ({gave_up}); its lease will expire",
                job.id
            )),
        }
        Ok(())
    }
}

/// `kernel fetch -- KERNEL`: the job's kernel can only be an operand.
fn fetch_args(kernel: &str) -> Vec<OsString> {
    ["kernel", "fetch", "--", kernel]
        .into_iter()
        .map(OsString::from)
        .collect()
}

/// What a lease renewal said.
enum Renewal {
    Renewed,
    /// 409 (or 404): the job is no longer this worker's.
    Lost,
    /// No answer, or an unexpected one: try again soon.
    Failed(String),
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("")
}

/// Makes the child die (SIGKILL) when this process dies, killed included:
/// a dead worker's job must not go on measuring (and uploading) while the
/// job is leased again. (The measuring agent under the child dies with it
/// in turn: `kbench agent` sets its own parent-death signal.)
fn die_with_parent(command: &mut Command) {
    let parent = std::process::id();
    // SAFETY: prctl and getppid are async-signal-safe; nothing allocates.
    unsafe {
        command.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // The worker died between fork and prctl: do not start.
            if libc::getppid() as u32 != parent {
                libc::_exit(1);
            }
            Ok(())
        });
    }
}

/// Reads the lines of `from`: kept and returned when `keep`, else copied
/// to stderr after `prefix`; the last ones also go to `tail` when given.
fn read_lines(
    from: impl Read + Send + 'static,
    prefix: &str,
    keep: bool,
    tail: Option<Arc<Mutex<VecDeque<String>>>>,
) -> JoinHandle<String> {
    let prefix = prefix.to_string();
    std::thread::spawn(move || {
        let mut kept = String::new();
        for line in BufReader::new(from).lines().map_while(Result::ok) {
            if keep {
                kept.push_str(&line);
                kept.push('\n');
            } else {
                eprintln!("{prefix}{line}");
            }
            if let Some(tail) = &tail
                && !line.trim().is_empty()
            {
                let mut tail = tail.lock().expect("tail lock");
                if tail.len() == TAIL_LINES {
                    tail.pop_front();
                }
                tail.push_back(line);
            }
        }
        kept
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{self, FakeServer};
    use kbench_store::JobState;
    use serde_json::Value;

    const LEASE: &str = "POST /api/v1/jobs/lease";
    const EXPORT: &str = "GET /api/v1/result-sets/lab/export";
    const FINISH: &str = "POST /api/v1/jobs/7/finish";
    const RENEW: &str = "POST /api/v1/jobs/7/renew";

    /// A server that leases job 7, gives the answers `between` in turn,
    /// then has no job left.
    fn one_job(between: &[(&str, u16, &str)]) -> FakeServer {
        let server = FakeServer::start();
        let job = serde_json::to_string(&test_support::job(7, JobState::Running)).unwrap();
        server.answer(LEASE, 200, &job);
        for (route, status, body) in between {
            server.answer(route, *status, body);
        }
        server.answer(LEASE, 204, "");
        server
    }

    /// A worker of `server` whose children are `sh -c script` (the job's
    /// arguments become the script's `$@`), leasing for 3 s (renewing
    /// every second), exiting once no job waits.
    fn worker(server: &FakeServer, dir: &Path, script: &str, check_job: JobCheck) -> Worker {
        Worker {
            api: Api::new(&server.url, Some("secret")).unwrap(),
            name: "w1".into(),
            tags: vec![],
            lease: Duration::from_secs(3),
            exit_when_idle: true,
            poll: Duration::from_millis(100),
            work_dir: dir.to_path_buf(),
            keep_failed: false,
            exe: "/bin/sh".into(),
            child_options: vec!["-c".into(), script.into(), "sh".into()],
            run_args: job_words,
            check_job,
            stop: Arc::new(AtomicBool::new(false)),
        }
    }

    /// The job, its kernel, store and server as words (the binary gives
    /// kbench-cli's command line instead).
    fn job_words(spec: &JobSpec, kernel: Option<&str>, db: &Path, server: &str) -> Vec<OsString> {
        let mut words: Vec<OsString> = vec![
            spec.identifier.clone().into(),
            spec.set.clone().into(),
            spec.rounds.to_string().into(),
            kernel.unwrap_or("host").into(),
            db.into(),
            server.into(),
        ];
        words.extend(spec.names.iter().map(OsString::from));
        words
    }

    fn accept_all() -> JobCheck {
        Box::new(|_| Ok(()))
    }

    fn routes(server: &FakeServer) -> Vec<String> {
        server.seen().into_iter().map(|seen| seen.route).collect()
    }

    /// What the worker reported as the job's end.
    fn finished(server: &FakeServer) -> Value {
        let seen = server.seen();
        let finish = seen.iter().find(|s| s.route == FINISH).expect("a finish");
        serde_json::from_str(&finish.body).unwrap()
    }

    #[test]
    fn a_leased_job_runs_as_a_child_under_its_lease_and_its_end_is_reported() {
        let server = one_job(&[(EXPORT, 404, "{}"), (FINISH, 200, "{}")]);
        let dir = tempfile::tempdir().unwrap();
        let script =
            r#"echo "lease $KBENCH_JOB_LEASE token $KBENCH_TOKEN" >&2; echo "args $*" >&2"#;
        worker(&server, dir.path(), script, accept_all())
            .work()
            .unwrap();
        assert_eq!(
            routes(&server),
            [
                LEASE.to_string(),
                format!("{EXPORT}?identifier=6.18"),
                FINISH.to_string(),
                LEASE.to_string()
            ]
        );
        let end = finished(&server);
        assert_eq!((&end["worker"], &end["ok"]), (&"w1".into(), &true.into()));
        let message = end["message"].as_str().unwrap();
        let db = dir.path().join("job-7-1").join("results.db");
        assert_eq!(
            message,
            format!(
                "lease 7:w1 token secret args 6.18 lab 2 host {} {} quick",
                db.display(),
                server.url
            )
        );
        assert!(
            !dir.path().join("job-7-1").exists(),
            "a done job's store goes"
        );
    }

    #[test]
    fn a_failing_child_fails_the_job_with_its_last_words() {
        let server = one_job(&[(EXPORT, 404, "{}"), (FINISH, 200, "{}")]);
        let dir = tempfile::tempdir().unwrap();
        let mut worker = worker(
            &server,
            dir.path(),
            "echo no such test >&2; exit 3",
            accept_all(),
        );
        worker.keep_failed = true;
        worker.work().unwrap();
        let end = finished(&server);
        assert_eq!(end["ok"], false);
        assert_eq!(end["message"], "kbench exit status: 3: no such test");
        assert!(dir.path().join("job-7-1").exists(), "kept with keep_failed");
    }

    #[test]
    fn a_job_this_worker_refuses_fails_before_anything_of_it_runs() {
        let server = one_job(&[(FINISH, 200, "{}")]);
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("ran");
        let script = format!("touch {}", marker.display());
        let refuse: JobCheck =
            Box::new(|spec| Err(format!("names[0] {:?} is unknown", spec.names[0])));
        worker(&server, dir.path(), &script, refuse).work().unwrap();
        assert_eq!(routes(&server), [LEASE, FINISH, LEASE]);
        let end = finished(&server);
        assert_eq!(end["ok"], false);
        assert_eq!(
            end["message"],
            "the job was refused by this worker and nothing of it ran: names[0] \"quick\" is unknown"
        );
        assert!(!marker.exists(), "the child never ran");
    }

    #[test]
    fn a_lost_lease_kills_the_child_and_reports_nothing() {
        let server = one_job(&[
            (EXPORT, 404, "{}"),
            (
                RENEW,
                409,
                r#"{"error": "job 7 is leased by another worker"}"#,
            ),
        ]);
        let dir = tempfile::tempdir().unwrap();
        let start = Instant::now();
        worker(&server, dir.path(), "sleep 30", accept_all())
            .work()
            .unwrap();
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the child was killed"
        );
        assert_eq!(
            routes(&server),
            [
                LEASE.to_string(),
                format!("{EXPORT}?identifier=6.18"),
                RENEW.to_string(),
                LEASE.to_string()
            ]
        );
    }

    #[test]
    fn a_refused_lease_request_stops_the_worker() {
        let server = FakeServer::start();
        server.answer(LEASE, 403, r#"{"error": "token 'x' has the scopes push"}"#);
        let dir = tempfile::tempdir().unwrap();
        let error = worker(&server, dir.path(), "true", accept_all())
            .work()
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            format!(
                "{} refused to lease a job (403: token 'x' has the scopes push)",
                server.url
            )
        );
    }

    /// The job's kernel is an operand of `kernel fetch`; its measuring
    /// child's command line is kbench-cli's to test (tests/job_run.rs).
    #[test]
    fn the_kernel_to_fetch_is_never_an_option() {
        assert_eq!(fetch_args("--help"), ["kernel", "fetch", "--", "--help"]);
    }
}
