//! The read model of results: runs, their outcomes and samples, grouped by
//! identifier into a result set, as a store returns them and reports read
//! them.

use crate::{Sample, SystemSnapshot, TestKey, TestSpec};
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
    /// Cut short by the machine going down (a crash or power loss
    /// mid-invocation) and found so afterwards by `kbench campaign`, which
    /// measures that boot again. Its samples are kept in the store; result
    /// sets as reports read them leave it out.
    Aborted,
}

impl RunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Complete => "complete",
            RunStatus::Interrupted => "interrupted",
            RunStatus::Failed => "failed",
            RunStatus::Aborted => "aborted",
        }
    }

    pub fn parse(text: &str) -> Option<RunStatus> {
        [
            RunStatus::Running,
            RunStatus::Complete,
            RunStatus::Interrupted,
            RunStatus::Failed,
            RunStatus::Aborted,
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
    /// A run's id across stores (random, given by `kbench run --server`):
    /// the server finds a live-uploaded or resumed run by it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
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

impl TestOutcome {
    /// How it ended, as the progress line says: "done (CI ±0.8%)",
    /// "done, CI target missed (...)", "SKIPPED: ...", "FAILED: ...".
    pub fn ended(&self) -> String {
        let detail = &self.detail;
        match self.kind {
            TestOutcomeKind::TargetMet => format!("done ({detail})"),
            TestOutcomeKind::BudgetHit => format!("done, CI target missed ({detail})"),
            TestOutcomeKind::Skipped => format!("SKIPPED: {detail}"),
            TestOutcomeKind::Failed => format!("FAILED: {detail}"),
        }
    }
}

/// One identifier of a result set with its runs and raw samples.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IdentifierData {
    pub name: String,
    pub runs: Vec<RunRecord>,
    /// Raw samples per test, in measurement order, all runs together.
    pub samples: BTreeMap<TestKey, Vec<Sample>>,
    /// Per test, the index in `runs` of the run each sample was measured
    /// in (parallel to `samples`). Empty for a test when unknown (data
    /// built by hand): its samples then go with the newest run started at
    /// or before them, which a guest clock behind the host's gets wrong.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub sample_runs: BTreeMap<TestKey, Vec<usize>>,
    /// The identifier's place in a designed experiment, factor -> level
    /// (`kernel` -> `patched`, `cgroup` -> `yes`): what `compare --by`
    /// groups by. Empty when none was given.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub factors: BTreeMap<String, String>,
}

impl IdentifierData {
    /// How many samples it has, of all tests.
    pub fn sample_count(&self) -> usize {
        self.samples.values().map(Vec::len).sum()
    }

    /// The samples of `key` by round. A round is one invocation: the
    /// samples of one run (its index in `runs`) with one round number, so
    /// two runs never merge into one round even when their numbers are the
    /// same (runs measured at once on two machines, or imported).
    pub fn rounds(&self, key: &TestKey) -> BTreeMap<(usize, u32), Vec<&Sample>> {
        let mut rounds: BTreeMap<(usize, u32), Vec<&Sample>> = BTreeMap::new();
        let samples = self.samples.get(key).map_or(&[][..], Vec::as_slice);
        for (sample, run) in samples.iter().zip(self.runs_of_samples(key)) {
            rounds.entry((run, sample.round)).or_default().push(sample);
        }
        rounds
    }

    /// The index in `runs` of each sample of `key`: the recorded one, or
    /// by time when none is recorded.
    pub fn runs_of_samples(&self, key: &TestKey) -> Vec<usize> {
        let samples = self.samples.get(key).map_or(&[][..], Vec::as_slice);
        match self.sample_runs.get(key) {
            Some(runs) if runs.len() == samples.len() => runs.clone(),
            _ => samples
                .iter()
                .map(|sample| {
                    self.runs
                        .iter()
                        .rposition(|run| run.info.started_at_ms <= sample.at_ms)
                        .unwrap_or(0)
                })
                .collect(),
        }
    }
}

/// A whole result set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResultSetData {
    pub name: String,
    /// The author's title of the set, shown atop its reports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The author's description: what was measured and why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Tests in the order they were first stored.
    pub tests: Vec<TestSpec>,
    /// Identifiers in the order they were first stored.
    pub identifiers: Vec<IdentifierData>,
}

impl ResultSetData {
    /// How many samples it has, of all identifiers and tests.
    pub fn sample_count(&self) -> usize {
        self.identifiers
            .iter()
            .map(IdentifierData::sample_count)
            .sum()
    }
}

/// The part of a result set a report needs (`Results::load_part` in
/// kbench-store): a comparison of two identifiers reads those two, a
/// `--metric` filter the tests it matches, so that a lab-sized set is not
/// read whole to answer a narrow question.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SetPart {
    /// The identifiers read with their runs and samples, by name; `None`
    /// reads all. The others are still listed, in order, with their names
    /// and factors but no runs and no samples, so that a report knows the
    /// stored order and can name every identifier in an error. Names the
    /// set does not have are left for the report to refuse.
    pub identifiers: Option<Vec<String>>,
    /// Also read the first identifier stored (the default baseline).
    pub first: bool,
    /// Only the tests whose name contains this text ([`test_matches`]).
    pub metric_filter: Option<String>,
}

impl SetPart {
    /// The whole set.
    pub fn all() -> SetPart {
        SetPart::default()
    }

    /// Whether identifier `name`, stored at `position`, is read whole.
    pub fn reads(&self, name: &str, position: usize) -> bool {
        match &self.identifiers {
            None => true,
            Some(names) => (self.first && position == 0) || names.iter().any(|n| n == name),
        }
    }
}

/// Whether a test's name (`bench[opts]:metric`) contains `filter` (always
/// without one): what `--metric` selects.
pub fn test_matches(key: &TestKey, filter: Option<&str>) -> bool {
    filter.is_none_or(|f| key.to_string().contains(f))
}

/// A line of the result set listing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResultSetSummary {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    pub identifiers: Vec<String>,
    pub tests: usize,
    pub samples: u64,
    pub created_at_ms: i64,
}

/// Everything stored of one run, to upload it again (`kbench run --server`
/// resuming a run re-sends it; the server keeps what it already has).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunContents {
    pub set: String,
    pub identifier: String,
    pub record: RunRecord,
    /// The specs of the tests with samples or outcomes in this run.
    pub tests: Vec<TestSpec>,
    /// This run's samples per test, in measurement order.
    pub samples: BTreeMap<TestKey, Vec<Sample>>,
}
