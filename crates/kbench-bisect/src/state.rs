//! What a bisection keeps in the store between invocations (`Bisects::
//! save_bisect`, one JSON document per result set), its log included
//! (kbench-analysis' `LogEntry`, as the report shows it).
//!
//! Samples are not in the state: they are in the result set, one
//! identifier per commit (a measurement is a round), and every decision is
//! a function of them. A rerun replays the bisection on the stored
//! measurements, block by block in the same sequence (each block takes
//! every member's next measurement), and measures only what is missing.
//! The state holds what samples cannot tell: the request it belongs to,
//! the seed of the blocks' orders, the commits skipped (and why), the
//! worktrees a killed run may have left, and the log.

use kbench_analysis::bisect::LogEntry;
use kbench_model::Direction;
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
    pub better: Direction,
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
    /// Whether good's A/A rebuild was byte-identical to its first build,
    /// once it was built.
    #[serde(default)]
    pub rebuild_identical: Option<bool>,
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
            rebuild_identical: None,
        }
    }
}
