//! The lab's records: pushes, API tokens and scopes, live uploads, jobs,
//! workers and saved bisections, as the store keeps them and the lab API
//! carries them.

use crate::results::{RunInfo, RunStatus, TestOutcome};
use crate::{Sample, TestKey, TestSpec};
use serde::{Deserialize, Serialize};

/// A document pushed to `kbench serve`, identified by the client's push id
/// so that a retry stores nothing twice (the store's `push`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Push<'a> {
    /// The client's id for this push (1 to 128 of `A-Z a-z 0-9 - _ .`).
    pub id: &'a str,
    /// SHA-256 of the pushed document (hex): a push id reused for other
    /// content is refused.
    pub digest: &'a str,
    /// The API token that pushed it.
    pub token: &'a str,
}

/// What the store's `push` did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "status")]
pub enum PushOutcome {
    /// The samples were stored now.
    Stored { samples: u64 },
    /// This push id was stored before (a retry): nothing was written.
    AlreadyStored {
        result_set: String,
        samples: u64,
        pushed_at_ms: i64,
    },
}

/// What an API token may do on the lab server. Reading is open unless the
/// server is `--private`; `admin` holds every other scope.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// Read result sets, jobs and workers (needed only on a private server).
    Read,
    /// Push documents and upload runs as they go (`kbench push`, `run --server`).
    Push,
    /// Queue jobs (`kbench job submit`).
    Submit,
    /// Lease, renew and finish jobs, and upload the runs of its own jobs
    /// (`kbench worker`).
    Work,
    /// Everything above.
    Admin,
}

impl Scope {
    pub const ALL: [Scope; 5] = [
        Scope::Read,
        Scope::Push,
        Scope::Submit,
        Scope::Work,
        Scope::Admin,
    ];

    /// What a token made before scopes existed may do: all it could then
    /// (read, push, submit, work), not admin.
    pub const BEFORE_SCOPES: [Scope; 4] = [Scope::Read, Scope::Push, Scope::Submit, Scope::Work];

    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Read => "read",
            Scope::Push => "push",
            Scope::Submit => "submit",
            Scope::Work => "work",
            Scope::Admin => "admin",
        }
    }

    pub fn parse(text: &str) -> Option<Scope> {
        Scope::ALL.into_iter().find(|s| s.as_str() == text)
    }

    /// Scopes written `read,push`; an unknown one is an error naming the known.
    pub fn parse_list(text: &str) -> Result<Vec<Scope>, String> {
        let mut scopes: Vec<Scope> = Vec::new();
        for word in text.split(',').map(str::trim).filter(|w| !w.is_empty()) {
            let scope = Scope::parse(word).ok_or_else(|| {
                format!(
                    "unknown scope {word:?}; the scopes are {}",
                    Scope::list_text(&Scope::ALL)
                )
            })?;
            if !scopes.contains(&scope) {
                scopes.push(scope);
            }
        }
        scopes.sort();
        Ok(scopes)
    }

    /// `read,push`.
    pub fn list_text(scopes: &[Scope]) -> String {
        scopes
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join(",")
    }
}

/// An API token as listed (its secret is never stored, only its hash).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenInfo {
    pub name: String,
    pub created_at_ms: i64,
    pub revoked_at_ms: Option<i64>,
    /// What it may do, sorted.
    pub scopes: Vec<Scope>,
}

impl TokenInfo {
    /// Whether it may act in `scope` (admin may in every scope).
    pub fn allows(&self, scope: Scope) -> bool {
        self.scopes.contains(&scope) || self.scopes.contains(&Scope::Admin)
    }
}

/// A part of a run uploaded while it goes on (`POST .../live`), found on
/// the server by `run_uid` (created from `info` the first time). Idempotent:
/// each test's samples say where they start in the run (`first`), and the
/// server stores only those past what it has. That holds for one writer
/// per run; `lease` keeps it so when a lab job's run changes workers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LiveBatch {
    pub identifier: String,
    pub run_uid: String,
    /// The run as it started (its snapshot); used when the run is new.
    pub info: RunInfo,
    /// The run's state now: status, end time and steal once ended.
    pub status: RunStatus,
    #[serde(default)]
    pub ended_at_ms: Option<i64>,
    #[serde(default)]
    pub steal_percent: Option<f64>,
    /// Specs of every test named in `samples` and `outcomes`.
    #[serde(default)]
    pub tests: Vec<TestSpec>,
    #[serde(default)]
    pub samples: Vec<LiveSamples>,
    #[serde(default)]
    pub outcomes: Vec<TestOutcome>,
    /// The lab job this run is measured for, when a worker runs it: the
    /// batch is stored only while that worker still holds the job's lease.
    /// A worker cut off from the server past its lease loses the job to
    /// another, which resumes the same run; without this, the first
    /// worker's uploader, reconnecting before its renewal is refused, would
    /// interleave its samples with the new worker's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease: Option<JobLease>,
}

/// Who uploads a lab job's run ([`LiveBatch::lease`]): the job and the
/// worker its lease was given to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JobLease {
    pub job: i64,
    pub worker: String,
}

/// Consecutive samples of one test in one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LiveSamples {
    pub test: TestKey,
    /// Index of the first of `samples` among this run's samples of `test`
    /// (0-based). Past what is stored is a `Conflict` (a gap).
    pub first: u64,
    pub samples: Vec<Sample>,
}

/// What the store's `append_live` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LiveOutcome {
    /// Samples stored now.
    pub stored: u64,
    /// Samples the store had already (a retry or a resumed upload).
    pub skipped: u64,
}

/// A job for the lab's workers (`kbench job submit`): one `kbench run` (or
/// `kbench vm run` when `kernel` is given) into `set` as `identifier`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JobSpec {
    pub set: String,
    pub identifier: String,
    /// Suites, benchmark ids or tests, as `kbench run` takes them.
    pub names: Vec<String>,
    /// A kernel to boot in a VM: `debian:VERSION` or a cached release.
    #[serde(default)]
    pub kernel: Option<String>,
    #[serde(default = "three")]
    pub rounds: u32,
    /// Seconds per test and round (`--max-time`), when not the default.
    #[serde(default)]
    pub max_time: Option<f64>,
    /// A worker takes the job only if it has every one of these tags.
    #[serde(default)]
    pub tags: Vec<String>,
}

fn three() -> u32 {
    3
}

/// The most rounds a job may ask for (as `kbench run --rounds`).
pub const MAX_JOB_ROUNDS: u32 = 100;

/// The longest time budget per test and round a job may ask for: a day.
pub const MAX_JOB_SECONDS: f64 = 86_400.0;

impl JobSpec {
    /// What every side checks of a job before it takes it (submitter,
    /// server, store, worker), as far as the job alone tells: names for its
    /// set and identifier, something to run, 1 to [`MAX_JOB_ROUNDS`]
    /// rounds, a time limit above 0 and at most [`MAX_JOB_SECONDS`], plain
    /// tags. Whether the names are benchmarks is kbench-catalog's
    /// `job::check_spec`.
    pub fn check(&self) -> Result<(), String> {
        crate::validate_name("result set", &self.set)?;
        crate::validate_name("identifier", &self.identifier)?;
        if self.names.is_empty() || self.names.iter().any(|name| name.trim().is_empty()) {
            return Err(format!(
                "the job's names are {:?}; give the suites, benchmark ids or tests to run, as \
                 `kbench run` takes them (e.g. [\"quick\"])",
                self.names
            ));
        }
        if !(1..=MAX_JOB_ROUNDS).contains(&self.rounds) {
            return Err(format!(
                "the job asks for {} rounds; give 1 to {MAX_JOB_ROUNDS}",
                self.rounds
            ));
        }
        if let Some(max_time) = self
            .max_time
            .filter(|t| !(t.is_finite() && *t > 0.0 && *t <= MAX_JOB_SECONDS))
        {
            return Err(format!(
                "the job's max_time {max_time} is not a number of seconds above 0 and at most \
                 {MAX_JOB_SECONDS}; give one, or leave it out for kbench run's default"
            ));
        }
        self.tags
            .iter()
            .try_for_each(|tag| crate::validate_id("tag", tag))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum JobState {
    /// Waiting for a worker (or again, after its worker's lease expired).
    Queued,
    /// Leased by a worker until `lease_expires_at_ms`.
    Running,
    Done,
    Failed,
}

impl JobState {
    pub fn as_str(self) -> &'static str {
        match self {
            JobState::Queued => "queued",
            JobState::Running => "running",
            JobState::Done => "done",
            JobState::Failed => "failed",
        }
    }

    pub fn parse(text: &str) -> Option<JobState> {
        [
            JobState::Queued,
            JobState::Running,
            JobState::Done,
            JobState::Failed,
        ]
        .into_iter()
        .find(|s| s.as_str() == text)
    }
}

/// A job as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Job {
    pub id: i64,
    pub spec: JobSpec,
    pub state: JobState,
    /// Leases taken so far (a job whose worker died is leased again).
    pub attempts: u32,
    /// The worker holding or last holding the lease.
    pub worker: Option<String>,
    /// The API token that worker leased it with: only that token renews
    /// and finishes the lease, and uploads the job's run.
    #[serde(default)]
    pub token: Option<String>,
    pub lease_expires_at_ms: Option<i64>,
    pub submitted_at_ms: i64,
    pub started_at_ms: Option<i64>,
    pub finished_at_ms: Option<i64>,
    /// How it ended (the worker's message), or why it was failed.
    pub message: Option<String>,
}

/// A worker as the server last saw it (it asks for jobs and renews leases).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkerInfo {
    pub name: String,
    /// The API token its name belongs to (the first that leased with it).
    #[serde(default)]
    pub token: Option<String>,
    pub tags: Vec<String>,
    pub last_seen_ms: i64,
    /// The job it holds a lease on, if any.
    pub job: Option<i64>,
}

/// A saved bisection or campaign: its name, and the state `kbench bisect`
/// or `kbench campaign` keeps as JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedState {
    pub name: String,
    pub state_json: String,
    pub updated_at_ms: i64,
}

/// A name as one segment of a lab API path (`/result-sets/{set}/...`):
/// percent-encoded but for RFC 3986's unreserved characters. The client
/// builds its request paths with it, the server's dashboard its links.
pub fn encode_segment(text: &str) -> String {
    let mut out = String::new();
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.' | b'~') {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_segments_keep_only_unreserved_characters() {
        assert_eq!(encode_segment("a b/<'>"), "a%20b%2F%3C%27%3E");
        assert_eq!(encode_segment("6.18-rc1_x~"), "6.18-rc1_x~");
    }
}
