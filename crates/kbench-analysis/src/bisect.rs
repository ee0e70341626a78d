//! The report of a bisection (`kbench bisect`, kbench-bisect), the model
//! its renderer lays out and `--json` writes as `kbench.bisect/3`; and the
//! words of its log. The log is the model's too: kbench-bisect writes each
//! [`LogEntry`] (its `detail` in [`change_text`]'s words) into its saved
//! state as it goes, prints [`LogEntry::line`] as progress, and hands the
//! whole log to the report. Its types are kbench-stats' (a
//! [`BlockedChange`] per comparison), which is why it lives here and not
//! in kbench-model.

use crate::number::{self, Unbounded};
use kbench_model::Direction;
use kbench_stats::Estimate;
use kbench_stats::bisection::{BlockedChange, DecidedBy, Position, State};
use serde::{Deserialize, Serialize};

/// Version 3: merges searched, the build method, the builds, the A/A
/// rebuild, the diffstat and the wall time; no `undecided` (an undecided
/// step stops the bisection). Version 2: blocked analyses.
pub const SCHEMA: &str = "kbench.bisect/3";

/// A commit as reports name it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CommitRef {
    pub hash: String,
    pub subject: String,
    pub identifier: String,
}

/// A commit that failed to build or run, and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SkippedCommit {
    pub commit: CommitRef,
    pub reason: String,
}

/// How a bisection ended (`kbench.bisect/3`).
#[derive(Debug, Clone, Serialize)]
pub struct BisectReport {
    pub schema: &'static str,
    pub result_set: String,
    pub metric: String,
    pub unit: String,
    pub better: Direction,
    pub good: CommitRef,
    pub bad: CommitRef,
    /// Commits after good up to and including bad.
    pub commits: usize,
    /// Bad against good in the endpoints' blocks: the reference effect.
    pub reference: BlockedChange,
    /// The first commit like bad (with skipped commits right before it,
    /// one of `candidates`).
    pub first_bad: CommitRef,
    /// The last commit like good before it (its parent unless skipped
    /// commits lie between).
    pub parent: CommitRef,
    /// `first_bad` and the skipped commits between `parent` and it: the
    /// change is in one of them.
    pub candidates: Vec<CommitRef>,
    /// `first_bad` against `parent`, in fresh blocks of their own.
    pub change: BlockedChange,
    /// The fresh blocks show the endpoints' verdict again.
    pub confirmed: bool,
    pub skipped: Vec<SkippedCommit>,
    /// Blocks measured, all steps together.
    pub blocks: usize,
    /// Seed of the order of the commits in every block.
    pub seed: u64,
    /// Measurements the bisection used, all commits together: runs of the
    /// `--run` command (one sample each) or boots (a round of samples).
    pub measurements: usize,
    /// Of them, taken by this invocation (the rest came from the store).
    pub measurements_now: usize,
    /// Raw samples the bisection used, and of them taken now.
    pub samples: usize,
    pub samples_now: usize,
    pub builds_now: usize,
    /// Commits that got measured (of `commits + 1`).
    pub commits_measured: usize,
    /// What the same design would take for every commit at the starting
    /// block count: each commit between in blocks with both endpoints, and
    /// the endpoints' own blocks.
    pub every_commit_measurements: usize,
    pub resumed: bool,
    /// How commits were built and measured, and what one measurement is.
    pub method: Method,
    /// The builds of this invocation (kbench's own kernel builds).
    pub builds: Vec<BuildRecord>,
    /// The A/A rebuild of good: what builds alone move.
    pub rebuild: Option<RebuildCheck>,
    /// `git show --stat` of the culprit.
    pub diffstat: String,
    /// Wall time of this invocation.
    pub elapsed_s: f64,
    pub notes: Vec<String>,
    pub log: Vec<LogEntry>,
}

/// How a bisection built and measured its commits.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Method {
    /// What one measurement is, and so the level its decisions compare
    /// ("one boot of the commit's kernel: a round of samples").
    pub measurement: String,
    /// How kernels were built (`--kernel-config`): base, fragment,
    /// function alignment, ccache.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub build: Option<String>,
}

/// One build of a commit by kbench (`--kernel-config`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BuildRecord {
    pub identifier: String,
    pub seconds: f64,
    pub ok: bool,
    /// What ccache answered, when the build used it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ccache: Option<CacheUse>,
    /// The build's whole output.
    pub log: String,
}

/// Compilations ccache served from its cache (`hits`) and ran (`misses`)
/// during one build.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct CacheUse {
    pub hits: u64,
    pub misses: u64,
}

impl CacheUse {
    /// Hits in percent of the compilations; `None` without any.
    pub fn hit_pct(&self) -> Option<f64> {
        let all = self.hits + self.misses;
        (all > 0).then(|| 100.0 * self.hits as f64 / all as f64)
    }

    /// "812 of 830 compilations from ccache (97.8 %)", or "no compilation".
    pub fn text(&self) -> String {
        match self.hit_pct() {
            Some(pct) => format!(
                "{} of {} compilations from ccache ({pct:.1} %)",
                self.hits,
                self.hits + self.misses
            ),
            None => "no compilation".to_string(),
        }
    }
}

/// Good built a second time from scratch, and measured in blocks against
/// its first build: what a rebuild alone moves the metric by (code
/// alignment, link order), the floor under any commit's effect.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RebuildCheck {
    /// The two images are byte for byte the same (a reproducible build):
    /// the change is then boots alone.
    pub identical: bool,
    /// The rebuild against the first build.
    pub change: BlockedChange,
}

/// What a step cost: its builds and its measurements, in seconds of wall
/// time (a measurement of a kernel is a boot).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StepCosts {
    pub builds_s: Vec<f64>,
    pub measurements_s: Vec<f64>,
}

impl StepCosts {
    /// "built in 43 s; 24 measured, median 6.1 s each", or "" when the
    /// step measured and built nothing (all from the store).
    pub fn text(&self) -> String {
        let mut parts = Vec::new();
        if !self.builds_s.is_empty() {
            let total: f64 = self.builds_s.iter().sum();
            parts.push(format!("{} built in {total:.0} s", self.builds_s.len()));
        }
        if !self.measurements_s.is_empty() {
            let mut sorted = self.measurements_s.clone();
            sorted.sort_by(f64::total_cmp);
            parts.push(format!(
                "{} measured, median {:.1} s each",
                sorted.len(),
                sorted[sorted.len() / 2]
            ));
        }
        parts.join("; ")
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
    /// Good rebuilt from scratch against its first build.
    Rebuild,
}

impl std::fmt::Display for Phase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Phase::Endpoints => "endpoints",
            Phase::Search => "search",
            Phase::Recheck => "recheck",
            Phase::Confirm => "confirm",
            Phase::Rebuild => "rebuild",
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
    /// What the step's builds and measurements took.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub costs: Option<StepCosts>,
}

impl LogEntry {
    /// One line of text: the progress line, and the report's log line.
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
        let costs = match self.costs.as_ref().map(StepCosts::text) {
            Some(text) if !text.is_empty() => format!("; {text}"),
            _ => String::new(),
        };
        format!(
            "[{:>2}] {:<9} {}: {} [{blocks}{} measurements{now}{costs}]{detail}",
            self.step, self.phase, self.identifier, self.event, self.measurements
        )
    }
}

/// A blocked change in words: "+4.87 % [95 % CI +3.90, +5.80] against good,
/// p = 7.81e-3, REGRESSION (8 blocks)".
pub fn change_text(c: &BlockedChange, against: &str) -> String {
    let bound = |v: f64| number::signed(v, 2, "", Unbounded::NotAvailable);
    format!(
        "{} % [95 % CI {}, {}]{}{}, p = {:.2e}, {} ({} blocks)",
        bound(c.change_pct.point),
        bound(c.change_pct.ci_low),
        bound(c.change_pct.ci_high),
        if against.is_empty() { "" } else { " " },
        against,
        c.p_value,
        c.verdict,
        c.blocks
    )
}
