//! What a bisection keeps in the store between invocations (`Bisects::
//! save_bisect`, one JSON document per result set), and its log.
//!
//! Samples are not in the state: they are in the result set, one
//! identifier per commit (a measurement is a round), and every decision is
//! a function of them. A rerun replays the bisection on the stored
//! measurements, block by block in the same sequence (each block takes
//! every member's next measurement), and measures only what is missing.
//! The state holds what samples cannot tell: the request it belongs to,
//! the seed of the blocks' orders, the commits skipped (and why), the
//! worktrees a killed run may have left, and the log.

use kbench_stats::bisection::{DecidedBy, Position, State};
use kbench_stats::{Better, Estimate};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Version 2: blocked measurements (version 1 measured commits apart).
pub const STATE_SCHEMA: &str = "kbench.bisect-state/2";

/// The request a state belongs to; a rerun must match it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fingerprint {
    pub repo: PathBuf,
    pub good: String,
    pub bad: String,
    pub build: String,
    /// The `--run` command, or the kernel image and benchmarks.
    pub measure: String,
    pub metric: String,
    pub better: Better,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedState {
    pub schema: String,
    pub fingerprint: Fingerprint,
    /// The directory of the worktrees of the running (or killed)
    /// invocation.
    pub worktree: Option<PathBuf>,
    /// Seeds the order of the commits in every block
    /// ([`super::order::block_order`]).
    pub seed: u64,
    /// Commits skipped, by hash, with the reason.
    pub skipped: BTreeMap<String, String>,
    pub log: Vec<LogEntry>,
    /// Set once a bisection has ended with a result.
    pub finished: bool,
}

impl SavedState {
    pub fn new(fingerprint: Fingerprint, seed: u64) -> SavedState {
        SavedState {
            schema: STATE_SCHEMA.to_string(),
            fingerprint,
            worktree: None,
            seed,
            skipped: BTreeMap::new(),
            log: Vec::new(),
            finished: false,
        }
    }
}

/// The phase a step belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    Endpoints,
    Search,
    /// A bracket end measured again after a failed confirmation.
    Recheck,
    Confirm,
}

impl std::fmt::Display for Phase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Phase::Endpoints => "endpoints",
            Phase::Search => "search",
            Phase::Recheck => "recheck",
            Phase::Confirm => "confirm",
        })
    }
}

/// One step of the log: a decision (or a skip) at a commit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LogEntry {
    pub step: usize,
    pub phase: Phase,
    pub commit: String,
    pub identifier: String,
    /// Measurements of the commit so far (runs of the command, or boots).
    pub measurements: usize,
    /// Blocks the decision used (each one measurement of every member).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blocks: Option<usize>,
    /// Of them, taken by this invocation (0: all from the store).
    pub measured_now: usize,
    /// What was decided: "like-good", "like-bad", "unknown: more samples",
    /// "skipped", "endpoints differ", "confirmed", ...
    pub event: String,
    /// The state, for a search step that decided one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<State>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decided_by: Option<DecidedBy>,
    /// The commit's position between good (0) and bad (1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub position: Option<Position>,
    /// Change in percent against the commit compared with in the same
    /// blocks (good for the endpoints and the search, the parent for the
    /// confirmation).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub change_pct: Option<Estimate>,
    /// Reasons, p-values and the like, for people.
    pub detail: String,
}

impl LogEntry {
    /// One line of text.
    pub fn line(&self) -> String {
        let now = if self.measured_now == 0 {
            " (from the store)".to_string()
        } else {
            format!(", {} measured now", self.measured_now)
        };
        let detail = if self.detail.is_empty() {
            String::new()
        } else {
            format!(": {}", self.detail)
        };
        let blocks = self
            .blocks
            .map_or_else(String::new, |b| format!("{b} blocks, "));
        format!(
            "[{:>2}] {:<9} {}: {} [{blocks}{} measurements{now}]{detail}",
            self.step, self.phase, self.identifier, self.event, self.measurements
        )
    }
}
