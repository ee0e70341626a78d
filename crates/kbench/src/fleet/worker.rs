//! `kbench worker`: leases jobs from the server and runs each as a child
//! process of this binary, `kbench run ... --upload` (or `kbench kernel
//! fetch` then `kbench vm run ... --upload` for a kernel job), on a fresh
//! local store per job.
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

use super::api::{Api, message, retry};
use anyhow::{Context, bail};
use kbench_lab::profile::Profiles;
use kbench_server::client::encode_segment;
use kbench_store::{Exchange, Job, JobLease, JobSpec, exchange};
use serde_json::json;
use std::collections::VecDeque;
use std::ffi::OsString;
use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Lines of a child's stderr kept for the job's message.
const TAIL_LINES: usize = 12;

/// The job lease a worker runs its child under, as `JOB:WORKER` (e.g.
/// `12:lab-box-1`), set in the child's environment (an environment
/// variable rather than an option: every child gets it, `kbench run`,
/// `kbench vm run` or `kbench kernel fetch`, and users never type it).
/// `--upload` puts it into every live batch ([`LiveBatch::lease`]), which
/// the server then stores only while this worker holds the job.
///
/// [`LiveBatch::lease`]: kbench_store::LiveBatch::lease
pub const LEASE_ENV: &str = "KBENCH_JOB_LEASE";

/// The lease in [`LEASE_ENV`], `None` when it is unset (not under a worker).
pub fn lease_from_env() -> anyhow::Result<Option<JobLease>> {
    std::env::var_os(LEASE_ENV)
        .map(|text| parse_lease(&text.to_string_lossy()))
        .transpose()
}

fn parse_lease(text: &str) -> anyhow::Result<JobLease> {
    text.split_once(':')
        .and_then(|(job, worker)| {
            Some(JobLease {
                job: job.parse().ok()?,
                worker: Some(worker).filter(|w| !w.is_empty())?.to_string(),
            })
        })
        .with_context(|| {
            format!(
                "{LEASE_ENV} is {text:?}, not JOB:WORKER (e.g. 12:lab-box-1); `kbench worker` \
                 sets it for the jobs it runs: unset it to upload a run of your own"
            )
        })
}

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
    /// This binary, which runs the jobs.
    pub exe: PathBuf,
    /// Options given to every child before its command (`--profiles`).
    pub child_options: Vec<OsString>,
    /// The profiles the children resolve names with: a job is checked
    /// against them before anything of it runs.
    pub profiles: Profiles,
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
    pub fn work(&self) -> anyhow::Result<()> {
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
        request: impl FnMut() -> std::io::Result<kbench_server::client::Response>,
    ) -> anyhow::Result<kbench_server::client::Response> {
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
        .map_err(|gave_up| anyhow::anyhow!("{what}: {gave_up}; stopped"))?;
        if told {
            self.log(format!("{what}: {} answers again", self.api.url));
        }
        Ok(response)
    }

    /// A job leased to this worker, or `None` when none is waiting.
    fn lease_job(&self) -> anyhow::Result<Option<Job>> {
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
            200 => Ok(Some(serde_json::from_str(&response.body).with_context(
                || format!("{}: POST /api/v1/jobs/lease answered no Job", self.api.url),
            )?)),
            204 => Ok(None),
            status => bail!(
                "{} refused to lease a job ({status}: {})",
                self.api.url,
                message(&response)
            ),
        }
    }

    /// Runs one leased job and reports how it ended.
    fn run(&self, job: &Job) -> anyhow::Result<()> {
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
            Err(error) => (false, format!("{error:#}")),
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
    fn measure(&self, job: &Job, dir: &Path) -> anyhow::Result<Ended> {
        let spec = &job.spec;
        kbench_lab::job::check_spec(spec, &self.profiles)
            .context("the job was refused by this worker and nothing of it ran")?;
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot make the job's directory {}", dir.display()))?;
        let db = dir.join("results.db");
        self.seed(job, &db)?;
        let kernel = match spec.kernel.as_deref() {
            Some(kernel) if kernel.starts_with("debian:") => {
                match self.supervise(job, &fetch_args(kernel), true)? {
                    Ended::Exited { status, stdout, .. } if status.success() => Some(
                        stdout
                            .split_whitespace()
                            .next()
                            .with_context(|| {
                                format!("`kbench kernel fetch {kernel}` named no kernel")
                            })?
                            .to_string(),
                    ),
                    other => return Ok(other),
                }
            }
            other => other.map(str::to_string),
        };
        let command = run_args(spec, kernel.as_deref(), &db, &self.api.url);
        self.supervise(job, &command, false)
    }

    /// Imports what the server has of the job's identifier into the job's
    /// store (an earlier attempt's runs, its unfinished one to resume).
    fn seed(&self, job: &Job, db: &Path) -> anyhow::Result<()> {
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
            status => bail!(
                "{} answered {status} to GET {path}: {}",
                self.api.url,
                message(&response)
            ),
        };
        let data = exchange::parse(&text, Some(&spec.set)).map_err(|e| {
            anyhow::anyhow!("the server's export of '{}' cannot be read: {e}", spec.set)
        })?;
        if data.identifiers.is_empty() {
            return Ok(());
        }
        let runs: usize = data.identifiers.iter().map(|i| i.runs.len()).sum();
        kbench_store::SqliteStore::open(db)?
            .import(&data)
            .context("importing the server's samples of the job into its local store")?;
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
    fn supervise(&self, job: &Job, args: &[OsString], keep_stdout: bool) -> anyhow::Result<Ended> {
        let mut command = Command::new(&self.exe);
        command
            .args(&self.child_options)
            .args(args)
            .env("KBENCH_TOKEN", self.api.token().unwrap_or_default())
            .env(LEASE_ENV, format!("{}:{}", job.id, self.name))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        die_with_parent(&mut command);
        let mut child = command
            .spawn()
            .with_context(|| format!("cannot start {} for job {}", self.exe.display(), job.id))?;
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
            if let Some(status) = child.try_wait()? {
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
    fn finish(&self, job: &Job, ok: bool, text: &str) -> anyhow::Result<()> {
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
            Ok(response) => bail!(
                "{} refused the end of job {} ({}: {})",
                self.api.url,
                job.id,
                response.status,
                message(&response)
            ),
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

/// The child's `kbench run` (or `vm run --kernel=RELEASE`) of a job into
/// `db`, uploading to `server`. No field of the job can become an option:
/// every value is joined to its option (`--as=ID`), and the names come
/// after `--`, as operands only.
fn run_args(spec: &JobSpec, kernel: Option<&str>, db: &Path, server: &str) -> Vec<OsString> {
    let mut args: Vec<OsString> = match kernel {
        Some(release) => vec![
            "vm".into(),
            "run".into(),
            format!("--kernel={release}").into(),
        ],
        None => vec!["run".into()],
    };
    args.extend([
        format!("--as={}", spec.identifier).into(),
        format!("--into={}", spec.set).into(),
        format!("--rounds={}", spec.rounds).into(),
    ]);
    let mut db_option = OsString::from("--db=");
    db_option.push(db);
    args.push(db_option);
    args.push(format!("--upload={server}").into());
    if let Some(max_time) = spec.max_time {
        args.push(format!("--max-time={max_time}").into());
    }
    args.push("--".into());
    args.extend(spec.names.iter().map(OsString::from));
    args
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

    #[test]
    fn job_fields_are_never_options_of_the_child() {
        let spec = JobSpec {
            set: "--help".into(),
            identifier: "-x".into(),
            names: vec!["--wrap=sh -c touch /tmp/pwned".into(), "quick".into()],
            kernel: None,
            rounds: 3,
            max_time: Some(0.5),
            tags: vec![],
        };
        let args = run_args(&spec, Some("--help"), Path::new("/w/r.db"), "http://h:1");
        let args: Vec<&str> = args.iter().map(|a| a.to_str().unwrap()).collect();
        assert_eq!(
            args,
            [
                "vm",
                "run",
                "--kernel=--help",
                "--as=-x",
                "--into=--help",
                "--rounds=3",
                "--db=/w/r.db",
                "--upload=http://h:1",
                "--max-time=0.5",
                "--",
                "--wrap=sh -c touch /tmp/pwned",
                "quick"
            ]
        );
        assert_eq!(fetch_args("--help")[2], "--");
    }

    #[test]
    fn a_lease_is_job_colon_worker() {
        let lease = parse_lease("12:lab:box").unwrap();
        assert_eq!((lease.job, lease.worker.as_str()), (12, "lab:box"));
        for bad in ["", "12", "12:", "x:w1", ":w1"] {
            let err = format!("{:#}", parse_lease(bad).unwrap_err());
            assert!(err.contains("not JOB:WORKER"), "{bad:?}: {err}");
        }
    }
}
