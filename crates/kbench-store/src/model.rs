//! The records the store reads and writes.

use kbench_model::{Sample, SystemSnapshot, TestKey, TestSpec};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A run's row id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct RunId(pub i64);

/// A test's row id within the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct TestId(pub i64);

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    /// Started and not ended: still going, or killed (no end time).
    Running,
    Complete,
    /// Stopped by SIGINT; samples so far are kept.
    Interrupted,
    Failed,
}

impl RunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Complete => "complete",
            RunStatus::Interrupted => "interrupted",
            RunStatus::Failed => "failed",
        }
    }

    pub fn parse(text: &str) -> Option<RunStatus> {
        [
            RunStatus::Running,
            RunStatus::Complete,
            RunStatus::Interrupted,
            RunStatus::Failed,
        ]
        .into_iter()
        .find(|s| s.as_str() == text)
    }
}

/// What is known of a run when it starts.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RunInfo {
    /// The measuring process's system snapshot (the guest's, for a VM run).
    pub snapshot: SystemSnapshot,
    /// The host's snapshot when the measuring system is a VM guest.
    pub host: Option<SystemSnapshot>,
    /// The wrapper command the measuring process ran under, if any.
    pub wrapper: Option<String>,
    pub tool_version: String,
    /// Free-form warnings that belong with the numbers (e.g. "emulated").
    pub notes: Vec<String>,
    pub started_at_ms: i64,
    /// The process writing the run, to tell a live run from a killed one.
    pub pid: u32,
}

/// A run as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    pub id: RunId,
    pub status: RunStatus,
    pub info: RunInfo,
    pub ended_at_ms: Option<i64>,
    pub outcomes: Vec<TestOutcome>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TestOutcomeKind {
    /// Sampling stopped with the CI target met.
    TargetMet,
    /// Sampling stopped at the time or sample budget first.
    BudgetHit,
    Skipped,
    Failed,
}

impl TestOutcomeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            TestOutcomeKind::TargetMet => "target_met",
            TestOutcomeKind::BudgetHit => "budget_hit",
            TestOutcomeKind::Skipped => "skipped",
            TestOutcomeKind::Failed => "failed",
        }
    }

    pub fn parse(text: &str) -> Option<TestOutcomeKind> {
        [
            Self::TargetMet,
            Self::BudgetHit,
            Self::Skipped,
            Self::Failed,
        ]
        .into_iter()
        .find(|k| k.as_str() == text)
    }
}

/// How one test ended in one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestOutcome {
    pub test: TestKey,
    pub kind: TestOutcomeKind,
    /// Why it stopped, was skipped or failed.
    pub detail: String,
}

/// One identifier of a result set with its runs and raw samples.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IdentifierData {
    pub name: String,
    pub runs: Vec<RunRecord>,
    /// Raw samples per test, in measurement order, all runs together.
    pub samples: BTreeMap<TestKey, Vec<Sample>>,
}

/// A whole result set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResultSetData {
    pub name: String,
    /// Tests in the order they were first stored.
    pub tests: Vec<TestSpec>,
    /// Identifiers in the order they were first stored.
    pub identifiers: Vec<IdentifierData>,
}

/// A line of the result set listing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResultSetSummary {
    pub name: String,
    pub identifiers: Vec<String>,
    pub tests: usize,
    pub samples: u64,
    pub created_at_ms: i64,
}

/// A document pushed to `kbench serve`, identified by the client's push id
/// so that a retry stores nothing twice ([`crate::Store::push`]).
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

/// What [`crate::Store::push`] did.
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

/// An API token as listed (its secret is never stored, only its hash).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenInfo {
    pub name: String,
    pub created_at_ms: i64,
    pub revoked_at_ms: Option<i64>,
}
