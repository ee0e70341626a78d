//! Automatic bisection to the commit that changed a metric
//! (docs/statistics.md, "How `kbench bisect` decides"; the decisions themselves are
//! kbench-stats' `bisection`).
//!
//! 1. [`Plan::new`] checks the repository (it exists, is a git work tree,
//!    has no uncommitted changes to tracked files), resolves the endpoints,
//!    checks that good is an ancestor of bad, and lists the commits between,
//!    merged branches included (searched as a [`graph::Graph`]). Nothing is
//!    written.
//! 2. [`Session::open`] loads or starts the state kept in the store under
//!    the result set's name; a rerun of the same request continues it.
//! 3. [`Session::run`] measures the endpoints until they differ (or stops
//!    and says so), bisects the commits with the three-state
//!    decision and its doubling of blocks, skips commits that fail to build
//!    or run, then re-measures the culprit and its last good ancestor afresh
//!    to confirm. A failed confirmation has the bracket's ends measured
//!    again, and the search goes on from there (`search`). Every sample is
//!    stored the moment it is measured, under the commit's identifier; the
//!    state and its log after every step. Measuring is delegated to a
//!    [`bench::Workbench`].
//!
//! [`Bisection`] does the three from a [`Setup`] (the user's request) for
//! the binary, with the worktrees and the workbench, `--kernel`'s VM
//! included.
//!
//! Nothing is compared across time: every decision is made on *blocks*,
//! short groups of one fresh measurement of each commit involved (good and
//! bad; good, bad and the commit under test; parent and culprit), in an
//! order drawn per block from the state's seed. Drift and slow spells of
//! the machine that cover a block cancel in its ratios.

pub mod bench;
mod error;
pub mod git;
mod graph;
pub mod kernel;
pub mod linux;
pub mod order;
mod progress;
mod rebuild;
mod search;
mod setup;
pub mod state;
mod vm;

use bench::{MeasureError, Workbench};
use error::invalid;
use git::{Commit, Repo};
use kbench_analysis::bisect::{
    BisectReport, CommitRef, LogEntry, Method, Phase, SCHEMA, SkippedCommit, StepCosts, change_text,
};
use kbench_model::{Direction, TestKey, TestSpec};
use kbench_stats::bisection::{BisectionOptions, EndpointCheck, check_endpoints};
use kbench_store::{Database, Results, RunId, RunInfo, RunStatus, StoreError, TestId};
use state::{Fingerprint, STATE_SCHEMA, SavedState};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

pub use error::{BisectError, Result};
pub use kernel::KernelBuild;
pub use linux::LinuxBuild;
pub use progress::Progress;
pub use setup::{Bisection, Measure, Setup};
pub use vm::KernelMeasure;

/// What to bisect.
#[derive(Debug, Clone)]
pub struct BisectRequest {
    pub repo: PathBuf,
    pub good: String,
    pub bad: String,
    pub build: String,
    /// What measures: the `--run` command, or the kernel image and
    /// benchmarks (part of the state's fingerprint).
    pub measure: String,
    /// The metric's name in the output, and the stored test's name.
    pub metric: String,
    pub unit: String,
    pub better: Direction,
    /// Result set of the samples; also names the saved state.
    pub set: String,
    pub options: BisectionOptions,
    /// Bisect even with uncommitted changes in the repository (they are
    /// not part of any commit built).
    pub allow_dirty: bool,
    /// The seed of the blocks' orders for a new bisection (`None`: drawn
    /// from the kernel's generator; a continued one keeps its own).
    pub seed: Option<u64>,
    /// Rebuild good from scratch and measure it against its first build
    /// (A/A), where the workbench can.
    pub rebuild: bool,
}

/// The commits of a bisection: `commits[0]` good, the last one bad,
/// parents before children.
#[derive(Debug, Clone)]
pub struct Plan {
    pub repo: Option<Repo>,
    pub commits: Vec<Commit>,
    graph: graph::Graph,
}

impl Plan {
    /// The plan of `commits` (good first, bad last, parents before
    /// children).
    pub fn of(repo: Option<Repo>, commits: Vec<Commit>) -> Plan {
        let graph = graph::Graph::new(&commits);
        Plan {
            repo,
            commits,
            graph,
        }
    }

    /// Checks the repository and the endpoints; reads only.
    pub fn new(request: &BisectRequest) -> Result<Plan> {
        let repo = Repo::open(&request.repo)?;
        if !request.allow_dirty {
            let changes = repo.uncommitted()?;
            if !changes.is_empty() {
                let shown: Vec<&str> = changes.iter().take(5).map(String::as_str).collect();
                invalid!(
                    "the repository {} has uncommitted changes ({}{}); bisect builds committed \
                     trees only, in a worktree of its own, so they would not be measured: commit or \
                     stash them, or pass --allow-dirty",
                    repo.root.display(),
                    shown.join("; ").trim(),
                    if changes.len() > 5 { "; ..." } else { "" }
                );
            }
        }
        let good = repo.resolve(&request.good, "--good")?;
        let bad = repo.resolve(&request.bad, "--bad")?;
        if good == bad {
            invalid!(
                "--good and --bad are the same commit ({}); give two different commits",
                &good[..12]
            );
        }
        if !repo.is_ancestor(&good, &bad)? {
            let reverse = if repo.is_ancestor(&bad, &good)? {
                " (it is the other way round: swap --good and --bad; to find an improvement, \
                 --good is still the older commit)"
            } else {
                " (they are on different branches)"
            };
            invalid!(
                "--good {} is not an ancestor of --bad {}{reverse}; bisection needs the good \
                 commit in the bad one's history",
                request.good,
                request.bad
            );
        }
        let mut commits = vec![repo.commit(&good)?];
        commits.extend(repo.range(&good, &bad)?);
        if commits.last().map(|c| c.hash.as_str()) != Some(bad.as_str()) {
            return Err(BisectError::Git(
                "git listed no commits from --good to --bad".to_string(),
            ));
        }
        Ok(Plan::of(Some(repo), commits))
    }
}

/// A commit as reports name it.
impl From<&Commit> for CommitRef {
    fn from(c: &Commit) -> CommitRef {
        CommitRef {
            hash: c.hash.clone(),
            subject: c.subject.clone(),
            identifier: c.identifier(),
        }
    }
}

/// A bisection bound to its state in the store.
pub struct Session<'a> {
    store: &'a mut dyn Database,
    request: BisectRequest,
    plan: Plan,
    state: SavedState,
    resumed: bool,
    /// Measurements per commit hash, in order: each one run of the
    /// command (one sample) or one boot (a round of samples).
    samples: HashMap<String, Vec<Vec<f64>>>,
    /// Measurements of each commit taken into blocks so far; the next
    /// block takes the next one (stored, or measured then).
    used: HashMap<String, usize>,
    /// Blocks taken so far: the next block's number for its order.
    blocks: u64,
    /// Measurements taken by this invocation, per commit hash.
    measured_now: HashMap<String, usize>,
    samples_now: usize,
    builds_now: usize,
    /// The commit selected in the workbench.
    built: Option<String>,
    /// The open run of each commit measured in the current step.
    runs: HashMap<String, RunId>,
    test: Option<TestId>,
    spec: TestSpec,
    /// Where the first bad commit is, for a step that stops undecided.
    range_left: String,
    /// What the current step's builds and measurements took so far.
    costs: StepCosts,
    started: std::time::Instant,
}

/// Which of a block's members failed, and why.
type BlockFailure = (usize, Failure);

impl<'a> Session<'a> {
    /// Loads the state of `request.set`, or starts one. A state of another
    /// request is an error; a worktree a killed run left is removed.
    pub fn open(
        store: &'a mut dyn Database,
        request: BisectRequest,
        plan: Plan,
    ) -> Result<Session<'a>> {
        kbench_model::validate_name("result set", &request.set).map_err(BisectError::Invalid)?;
        let fingerprint = Fingerprint {
            repo: plan
                .repo
                .as_ref()
                .map_or_else(|| request.repo.clone(), |r| r.root.clone()),
            good: plan.commits[0].hash.clone(),
            bad: plan.commits[plan.commits.len() - 1].hash.clone(),
            build: request.build.clone(),
            measure: request.measure.clone(),
            metric: request.metric.clone(),
            better: request.better,
        };
        let spec = TestSpec {
            key: TestKey::new(request.metric.clone()),
            unit: request.unit.clone(),
            direction: request.better,
        };
        let samples = stored_samples(store, &request.set, &plan, &spec.key)?;
        let saved = match store.load_bisect(&request.set)? {
            Some(text) => saved_state(&text, &request.set, samples.is_empty(), &plan)?,
            None => None,
        };
        let fresh = |fingerprint| -> Result<SavedState> {
            let seed = match request.seed {
                Some(seed) => seed,
                None => order::new_seed()
                    .map_err(BisectError::os("drawing the seed of the blocks' orders"))?,
            };
            Ok(SavedState::new(fingerprint, seed))
        };
        let (state, resumed) = match saved {
            Some(state) if state.fingerprint == fingerprint => (state, true),
            // Another request that never stored a sample (it failed at the
            // start: a build or metric to fix) makes way.
            Some(state) if samples.is_empty() => {
                if let (Some(repo), Some(path)) = (&plan.repo, &state.worktree) {
                    git::Worktree::remove_stale(repo, path);
                }
                (fresh(fingerprint)?, false)
            }
            Some(state) => invalid!(
                "result set '{}' holds samples of another bisection (good {}, bad {}, metric \
                 '{}', build '{}', measured by '{}'); give this one its own --into",
                request.set,
                &state.fingerprint.good[..12.min(state.fingerprint.good.len())],
                &state.fingerprint.bad[..12.min(state.fingerprint.bad.len())],
                state.fingerprint.metric,
                state.fingerprint.build,
                state.fingerprint.measure
            ),
            None if !samples.is_empty() => invalid!(
                "result set '{}' already holds samples of these commits that no bisection \
                 state describes; give this bisection its own --into",
                request.set
            ),
            None => (fresh(fingerprint)?, false),
        };
        if let (Some(repo), Some(path)) = (&plan.repo, &state.worktree) {
            git::Worktree::remove_stale(repo, path);
        }
        Ok(Session {
            store,
            request,
            plan,
            state,
            resumed,
            samples,
            used: HashMap::new(),
            blocks: 0,
            measured_now: HashMap::new(),
            samples_now: 0,
            builds_now: 0,
            built: None,
            runs: HashMap::new(),
            test: None,
            spec,
            range_left: String::new(),
            costs: StepCosts::default(),
            started: std::time::Instant::now(),
        })
    }

    /// Whether a state was found (this run continues it).
    pub fn resumed(&self) -> bool {
        self.resumed
    }

    /// A fresh directory for the worktrees, recorded in the state first so
    /// that a killed run's worktrees are found and removed next time.
    pub fn worktree_path(&mut self) -> Result<PathBuf> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let path =
            std::env::temp_dir().join(format!("kbench-bisect-{}-{nanos:08x}", std::process::id()));
        self.state.worktree = Some(path.clone());
        self.save()?;
        Ok(path)
    }

    fn save(&mut self) -> Result<()> {
        let text = serde_json::to_string(&self.state).map_err(BisectError::State)?;
        self.store.save_bisect(&self.request.set, &text)?;
        Ok(())
    }

    fn good(&self) -> &Commit {
        &self.plan.commits[0]
    }

    fn bad(&self) -> &Commit {
        &self.plan.commits[self.plan.commits.len() - 1]
    }

    /// Measurements of a commit so far.
    fn count(&self, commit: &Commit) -> usize {
        self.samples.get(&commit.hash).map_or(0, Vec::len)
    }

    fn used(&self, commit: &Commit) -> usize {
        self.used.get(&commit.hash).copied().unwrap_or(0)
    }

    /// Selects `commit` in the workbench, building it unless its build is
    /// kept.
    fn select(
        &mut self,
        bench: &mut dyn Workbench,
        commit: &Commit,
        observer: &mut dyn FnMut(Progress<'_>),
    ) -> Result<Result<(), Failure>> {
        if self.built.as_deref() == Some(commit.hash.as_str()) {
            return Ok(Ok(()));
        }
        let building = !bench.has_build(commit);
        if building {
            observer(Progress::Step(&format!("building {}", commit.identifier())));
            self.builds_now += 1;
        }
        self.built = None;
        let started = std::time::Instant::now();
        let built = bench.build(commit, observer)?;
        if building {
            self.costs.builds_s.push(started.elapsed().as_secs_f64());
        }
        if let Err(log) = built {
            return Ok(Err(Failure::Build(log)));
        }
        self.built = Some(commit.hash.clone());
        Ok(Ok(()))
    }

    /// The run of `commit` in this step, begun on its first measurement.
    fn run_of(&mut self, commit: &Commit) -> Result<RunId> {
        if let Some(run) = self.runs.get(&commit.hash) {
            return Ok(*run);
        }
        let snapshot = kbench_measure::snapshot(Path::new("."));
        let info = RunInfo {
            tool_version: snapshot.kbench_version.clone(),
            snapshot,
            host: None,
            wrapper: None,
            notes: vec![format!(
                "kbench bisect: commit {}, blocks seeded {}",
                commit.hash, self.state.seed
            )],
            started_at_ms: kbench_model::now_ms(),
            pid: std::process::id(),
            uid: Some(kbench_model::random_id().map_err(BisectError::os("making the run's uid"))?),
        };
        let run = self
            .store
            .begin_run(&self.request.set, &commit.identifier(), &info)?;
        self.runs.insert(commit.hash.clone(), run);
        Ok(run)
    }

    /// Ends the runs of the step with `status`.
    fn end_runs(&mut self, status: RunStatus) -> Result<()> {
        for (_, run) in self.runs.drain() {
            self.store.end_run(run, status, None)?;
        }
        Ok(())
    }

    /// One fresh measurement of the selected `commit`, stored at once.
    fn measure(
        &mut self,
        bench: &mut dyn Workbench,
        commit: &Commit,
        stop: &AtomicBool,
    ) -> Result<Result<(), Failure>> {
        if stop.load(Ordering::SeqCst) {
            return Err(BisectError::Interrupted);
        }
        let run = self.run_of(commit)?;
        let test = match self.test {
            Some(test) => test,
            None => *self
                .test
                .insert(self.store.test_id(&self.request.set, &self.spec)?),
        };
        let round = self.count(commit) as u32;
        let started = std::time::Instant::now();
        let measured = bench.measure(round)?;
        self.costs
            .measurements_s
            .push(started.elapsed().as_secs_f64());
        let failure = match measured {
            Ok(samples) if !samples.is_empty() => {
                for sample in &samples {
                    self.store.add_sample(run, test, sample)?;
                }
                let values: Vec<f64> = samples.iter().map(|s| s.value).collect();
                self.samples_now += values.len();
                self.samples
                    .entry(commit.hash.clone())
                    .or_default()
                    .push(values);
                *self.measured_now.entry(commit.hash.clone()).or_default() += 1;
                return Ok(Ok(()));
            }
            Ok(_) => MeasureError::Failed("the measurement gave no sample".to_string()),
            Err(error) => error,
        };
        self.runs.remove(&commit.hash);
        self.store.end_run(run, RunStatus::Failed, None)?;
        Ok(Err(Failure::Measure(failure)))
    }

    /// One block of `members`: each member's next measurement, stored or
    /// measured now (builds first, in member order, so that no build splits
    /// the block; then the measurements in the block's seeded order). The
    /// logs of each member's mean, in member order; on a failure, which
    /// member failed (the block is then not counted, and what it measured
    /// goes to the next block).
    fn block(
        &mut self,
        bench: &mut dyn Workbench,
        members: &[&Commit],
        observer: &mut dyn FnMut(Progress<'_>),
        stop: &AtomicBool,
    ) -> Result<Result<Vec<f64>, BlockFailure>> {
        let missing = |i: &usize| self.count(members[*i]) <= self.used(members[*i]);
        let to_build: Vec<usize> = (0..members.len()).filter(missing).collect();
        let to_measure: Vec<usize> =
            order::block_order(self.state.seed, self.blocks, members.len())
                .into_iter()
                .filter(missing)
                .collect();
        for i in to_build {
            if let Err(failure) = self.select(bench, members[i], observer)? {
                return Ok(Err((i, failure)));
            }
        }
        for i in to_measure {
            if let Err(failure) = self.select(bench, members[i], observer)? {
                return Ok(Err((i, failure)));
            }
            if let Err(failure) = self.measure(bench, members[i], stop)? {
                return Ok(Err((i, failure)));
            }
        }
        let mut logs = Vec::with_capacity(members.len());
        for commit in members {
            let at = self.used(commit);
            let values = &self.samples[&commit.hash][at];
            logs.push((values.iter().sum::<f64>() / values.len() as f64).ln());
            self.used.insert(commit.hash.clone(), at + 1);
        }
        self.blocks += 1;
        Ok(Ok(logs))
    }

    fn log(&mut self, mut entry: LogEntry, observer: &mut dyn FnMut(Progress<'_>)) -> Result<()> {
        entry.step = self.state.log.len() + 1;
        let costs = std::mem::take(&mut self.costs);
        if costs != StepCosts::default() {
            entry.costs = Some(costs);
        }
        observer(Progress::Step(&entry.line()));
        self.state.log.push(entry);
        self.save()
    }

    fn entry(
        &self,
        phase: Phase,
        commit: &Commit,
        blocks: Option<usize>,
        event: &str,
        detail: String,
    ) -> LogEntry {
        LogEntry {
            step: 0,
            phase,
            commit: commit.hash.clone(),
            identifier: commit.identifier(),
            measurements: self.count(commit),
            blocks,
            measured_now: self.measured_now.get(&commit.hash).copied().unwrap_or(0),
            event: event.to_string(),
            state: None,
            decided_by: None,
            position: None,
            change_pct: None,
            detail,
            costs: None,
        }
    }

    /// Runs (or continues) the bisection to its end.
    pub fn run(
        mut self,
        bench: &mut dyn Workbench,
        observer: &mut dyn FnMut(Progress<'_>),
        stop: &AtomicBool,
    ) -> Result<BisectReport> {
        let result = self.bisect(bench, observer, stop);
        let status = match &result {
            Ok(_) => RunStatus::Complete,
            Err(_) if stop.load(Ordering::SeqCst) => RunStatus::Interrupted,
            Err(_) => RunStatus::Failed,
        };
        let ended = self.end_runs(status);
        let report = result?;
        ended?;
        Ok(report)
    }

    fn bisect(
        &mut self,
        bench: &mut dyn Workbench,
        observer: &mut dyn FnMut(Progress<'_>),
        stop: &AtomicBool,
    ) -> Result<BisectReport> {
        // The log is rebuilt by replaying on the stored samples.
        self.state.log.clear();
        self.state.finished = false;
        let stored: usize = self.samples.values().map(Vec::len).sum();
        if self.resumed {
            observer(Progress::Step(&format!(
                "continuing the bisection of result set '{}': {stored} measurements already stored",
                self.request.set
            )));
        }
        let options = self.request.options;
        let better = self.request.better;
        let (good, bad) = (self.good().clone(), self.bad().clone());

        // 1. The endpoints must differ, in blocks of (good, bad).
        let mut pairs: Vec<[f64; 2]> = Vec::new();
        let mut target = options.initial_blocks;
        let reference = loop {
            observer(Progress::Step(&format!(
                "measuring the endpoints: blocks {} to {target} of good and bad",
                pairs.len() + 1
            )));
            while pairs.len() < target {
                match self.block(bench, &[&good, &bad], observer, stop)? {
                    Ok(logs) => pairs.push([logs[0], logs[1]]),
                    Err((i, failure)) => {
                        let (name, commit) = if i == 0 {
                            ("good", &good)
                        } else {
                            ("bad", &bad)
                        };
                        invalid!(
                            "the {name} commit {} {}; bisection needs both endpoints measured",
                            commit.identifier(),
                            failure.describe(&self.request.metric)
                        );
                    }
                }
            }
            self.end_runs(RunStatus::Complete)?;
            let blocks = Some(pairs.len());
            match check_endpoints(&pairs, better, &options) {
                EndpointCheck::Differ { change } => {
                    let mut entry = self.entry(
                        Phase::Endpoints,
                        &bad,
                        blocks,
                        &format!("endpoints differ: {}", change.verdict),
                        change_text(&change, "against good"),
                    );
                    entry.change_pct = Some(change.change_pct);
                    self.log(entry, observer)?;
                    break change;
                }
                EndpointCheck::MoreBlocks {
                    blocks: more,
                    change,
                } => {
                    let entry = self.entry(
                        Phase::Endpoints,
                        &bad,
                        blocks,
                        "endpoints unclear: more blocks",
                        format!(
                            "{}; measuring up to {more} blocks",
                            change_text(&change, "against good")
                        ),
                    );
                    self.log(entry, observer)?;
                    target = more;
                }
                EndpointCheck::DoNotDiffer { change } => {
                    let how = if change.verdict == kbench_stats::Verdict::NoChange {
                        "do not differ"
                    } else {
                        "could not be told apart (at the --max-blocks cap)"
                    };
                    let entry = self.entry(
                        Phase::Endpoints,
                        &bad,
                        blocks,
                        &format!("endpoints {how}"),
                        change_text(&change, "against good"),
                    );
                    self.log(entry, observer)?;
                    invalid!(
                        "the endpoints {how} in '{}': bad {} against good {}: {} (threshold \
                         {:.2} %); there is nothing to bisect. Check the endpoints, or measure \
                         more (--max-blocks) or with less noise",
                        self.request.metric,
                        bad.identifier(),
                        good.identifier(),
                        change_text(&change, ""),
                        options.threshold * 100.0
                    );
                }
            }
        };
        // What a rebuild alone moves the metric by (A/A).
        let rebuild = self.rebuild_check(bench, observer, stop)?;
        // 2. and 3. Search, confirm, and recheck a failed confirmation.
        let search::Found {
            lo,
            hi,
            candidates,
            confirmation,
            rechecks,
        } = self.search_and_confirm(bench, &reference, observer, stop)?;
        let (parent, culprit) = (self.plan.commits[lo].clone(), self.plan.commits[hi].clone());

        self.state.finished = true;
        self.save()?;
        let mut notes = Vec::new();
        if culprit.is_merge() {
            notes.push(format!(
                "{} is a merge: the change came with the branch it merged. To find the commit \
                 on that branch, bisect again with --good $(git merge-base {h}^1 {h}^2) --bad {h}^2",
                culprit.short(),
                h = culprit.short()
            ));
        }
        if candidates.len() > 1 {
            notes.push(format!(
                "{} commits before {} were skipped (they failed to build or run) and could not \
                 be ruled out: the change is in one of the candidates",
                candidates.len() - 1,
                culprit.short()
            ));
        }
        if !rechecks.is_empty() {
            notes.push(format!(
                "a confirmation failed, so the bracket's ends were measured again ({}) and the \
                 search went on from there",
                rechecks.join(", ")
            ));
        }
        if !confirmation.confirmed {
            notes.push(
                "the fresh blocks of the culprit and its parent did not show the endpoints' \
                 change again: the change may be spread over several commits, or noise misled \
                 the search; look at the log"
                    .to_string(),
            );
        }
        let commits_measured = self
            .plan
            .commits
            .iter()
            .filter(|c| self.count(c) > 0)
            .count();
        let between = self.plan.commits.len().saturating_sub(2);
        Ok(BisectReport {
            schema: SCHEMA,
            result_set: self.request.set.clone(),
            metric: self.request.metric.clone(),
            unit: self.request.unit.clone(),
            better,
            good: (&good).into(),
            bad: (&bad).into(),
            commits: self.plan.commits.len() - 1,
            reference,
            first_bad: (&culprit).into(),
            parent: (&parent).into(),
            candidates: candidates
                .iter()
                .map(|&c| CommitRef::from(&self.plan.commits[c]))
                .collect(),
            change: confirmation.change,
            confirmed: confirmation.confirmed,
            skipped: self
                .plan
                .commits
                .iter()
                .filter_map(|c| {
                    self.state.skipped.get(&c.hash).map(|reason| SkippedCommit {
                        commit: c.into(),
                        reason: reason.clone(),
                    })
                })
                .collect(),
            blocks: self.blocks as usize,
            seed: self.state.seed,
            measurements: self.samples.values().map(Vec::len).sum(),
            measurements_now: self.measured_now.values().sum(),
            samples: self
                .samples
                .values()
                .flat_map(|rounds| rounds.iter().map(Vec::len))
                .sum(),
            samples_now: self.samples_now,
            builds_now: self.builds_now,
            commits_measured,
            every_commit_measurements: options.initial_blocks * (2 + 3 * between),
            resumed: self.resumed,
            method: Method {
                measurement: bench.measurement(),
                build: bench.build_method(),
            },
            builds: bench.build_records(),
            rebuild,
            diffstat: match &self.plan.repo {
                Some(repo) => repo.diffstat(&culprit.hash)?,
                None => String::new(),
            },
            elapsed_s: self.started.elapsed().as_secs_f64(),
            notes,
            log: self.state.log.clone(),
        })
    }
}

/// The saved state in `text`: `None` when it is of an older kbench
/// (measured unblocked) and the result set holds none of its samples.
fn saved_state(text: &str, set: &str, no_samples: bool, plan: &Plan) -> Result<Option<SavedState>> {
    let unreadable = |cause| {
        BisectError::State(cause).at(format!(
            "the bisection state of result set '{set}' is not readable"
        ))
    };
    let value: serde_json::Value = serde_json::from_str(text).map_err(unreadable)?;
    if value["schema"] == STATE_SCHEMA {
        return Ok(Some(serde_json::from_value(value).map_err(unreadable)?));
    }
    if !no_samples {
        invalid!(
            "result set '{set}' holds a bisection of another kbench version ({}; this one \
             keeps {STATE_SCHEMA}, measured in blocks), which it cannot continue; give this \
             bisection its own --into",
            value["schema"]
        );
    }
    if let (Some(repo), Some(path)) = (&plan.repo, value["worktree"].as_str()) {
        git::Worktree::remove_stale(repo, Path::new(path));
    }
    Ok(None)
}

/// Why a commit could not be measured.
enum Failure {
    Build(String),
    Measure(MeasureError),
}

impl Failure {
    fn describe(&self, metric: &str) -> String {
        match self {
            Failure::Build(log) => format!("fails to build: {log}"),
            Failure::Measure(
                error @ (MeasureError::MissingMetric { .. } | MeasureError::BadValue { .. }),
            ) => format!("cannot be measured: {error} (--metric {metric})"),
            Failure::Measure(error) => format!("cannot be measured: {error}"),
        }
    }
}

/// The measurements the result set already holds for the plan's commits
/// (a measurement is a round).
fn stored_samples(
    store: &mut dyn Results,
    set: &str,
    plan: &Plan,
    key: &TestKey,
) -> Result<HashMap<String, Vec<Vec<f64>>>> {
    let data = match store.load(set) {
        Ok(data) => data,
        Err(StoreError::NotFound(_)) => return Ok(HashMap::new()),
        Err(error) => return Err(error.into()),
    };
    let mut samples = HashMap::new();
    let twin = rebuild::twin(&plan.commits[0]);
    for commit in plan.commits.iter().chain([&twin]) {
        let name = commit.identifier();
        if let Some(id) = data.identifiers.iter().find(|i| i.name == name)
            && let Some(values) = id.samples.get(key)
        {
            let mut rounds: std::collections::BTreeMap<u32, Vec<f64>> = Default::default();
            for sample in values {
                rounds.entry(sample.round).or_default().push(sample.value);
            }
            samples.insert(commit.hash.clone(), rounds.into_values().collect());
        }
    }
    Ok(samples)
}

#[cfg(test)]
mod tests;
