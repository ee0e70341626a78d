//! Automatic bisection to the commit that changed a metric
//! (statistics.md, "Bisection decision"; the decisions themselves are
//! kbench-stats' `bisection`).
//!
//! 1. [`Plan::new`] checks the repository (it exists, is a git work tree,
//!    has no uncommitted changes to tracked files), resolves the endpoints,
//!    checks that good is an ancestor of bad, and lists the commits between
//!    along bad's first-parent chain. Nothing is written.
//! 2. [`Session::open`] loads or starts the state kept in the store under
//!    the result set's name; a rerun of the same request continues it.
//! 3. [`Session::run`] measures the endpoints until they differ (or stops
//!    and says so), binary-searches the commits with the three-state
//!    decision and its adaptive doubling, skips commits that fail to build
//!    or run, then re-measures the culprit and its last good ancestor
//!    afresh to confirm. Every sample is stored the moment it is measured,
//!    under the commit's identifier; the state and its log after every
//!    step. Measuring is delegated to a [`bench::Workbench`].
//!
//! Two commits measured together (the endpoints, the confirmation) are
//! interleaved A B A B when the workbench keeps every build (kernel images
//! booted in a VM); with one worktree to build in they are measured in
//! blocks, good before bad, and doubling alternates the blocks.

pub mod bench;
pub mod git;
pub mod kernel;
pub mod state;

use anyhow::{Context, bail};
use bench::{MeasureError, Workbench};
use git::{Commit, Repo};
use kbench_model::{Direction, Sample, TestKey, TestSpec};
use kbench_stats::bisection::{
    BisectionOptions, EndpointCheck, State, check_endpoints, classify, confirm,
};
use kbench_stats::{Better, Comparison, Samples, Side};
use kbench_store::{RunInfo, RunStatus, Store, StoreError};
use serde::Serialize;
use state::{Fingerprint, LogEntry, Phase, SavedState};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// The error text of an interrupted bisection (the CLI exits 130 on it).
pub const INTERRUPTED: &str =
    "interrupted; every sample so far is stored: run the same command again to continue";

pub const SCHEMA: &str = "kbench.bisect/1";

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
    pub better: Better,
    /// Result set of the samples; also names the saved state.
    pub set: String,
    pub options: BisectionOptions,
    /// Bisect even with uncommitted changes in the repository (they are
    /// not part of any commit built).
    pub allow_dirty: bool,
}

/// The commits of a bisection: `commits[0]` good, the last one bad.
#[derive(Debug, Clone)]
pub struct Plan {
    pub repo: Option<Repo>,
    pub commits: Vec<Commit>,
}

impl Plan {
    /// Checks the repository and the endpoints; reads only.
    pub fn new(request: &BisectRequest) -> anyhow::Result<Plan> {
        let repo = Repo::open(&request.repo)?;
        if !request.allow_dirty {
            let changes = repo.uncommitted()?;
            if !changes.is_empty() {
                let shown: Vec<&str> = changes.iter().take(5).map(String::as_str).collect();
                bail!(
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
            bail!(
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
            bail!(
                "--good {} is not an ancestor of --bad {}{reverse}; bisection needs the good \
                 commit in the bad one's history",
                request.good,
                request.bad
            );
        }
        let mut commits = vec![repo.commit(&good)?];
        commits.extend(repo.range(&good, &bad)?);
        if commits.last().map(|c| c.hash.as_str()) != Some(bad.as_str()) {
            bail!("git listed no commits from --good to --bad");
        }
        Ok(Plan {
            repo: Some(repo),
            commits,
        })
    }
}

/// A commit as reports name it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CommitRef {
    pub hash: String,
    pub subject: String,
    pub identifier: String,
}

impl From<&Commit> for CommitRef {
    fn from(c: &Commit) -> CommitRef {
        CommitRef {
            hash: c.hash.clone(),
            subject: c.subject.clone(),
            identifier: c.identifier(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SkippedCommit {
    pub commit: CommitRef,
    pub reason: String,
}

/// How a bisection ended (`kbench.bisect/1`).
#[derive(Debug, Clone, Serialize)]
pub struct BisectReport {
    pub schema: &'static str,
    pub result_set: String,
    pub metric: String,
    pub unit: String,
    pub better: Better,
    pub good: CommitRef,
    pub bad: CommitRef,
    /// Commits after good up to and including bad.
    pub commits: usize,
    /// Bad against good: the reference effect.
    pub reference: Comparison,
    /// The first commit like bad (with skipped commits right before it,
    /// one of `candidates`).
    pub first_bad: CommitRef,
    /// The last commit like good before it (its parent unless skipped
    /// commits lie between).
    pub parent: CommitRef,
    /// `first_bad` and the skipped commits between `parent` and it: the
    /// change is in one of them.
    pub candidates: Vec<CommitRef>,
    /// `first_bad` against `parent`, both measured afresh.
    pub change: Comparison,
    /// The fresh measurement shows the endpoints' verdict again.
    pub confirmed: bool,
    pub skipped: Vec<SkippedCommit>,
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
    /// What measuring every commit at the starting count would take:
    /// (commits + 1) x initial measurements.
    pub every_commit_measurements: usize,
    pub resumed: bool,
    pub notes: Vec<String>,
    pub log: Vec<LogEntry>,
}

/// A bisection bound to its state in the store.
pub struct Session<'a> {
    store: &'a mut dyn Store,
    request: BisectRequest,
    plan: Plan,
    state: SavedState,
    resumed: bool,
    /// Measurements per commit hash, in order: each one run of the
    /// command (one sample) or one boot (a round of samples).
    samples: HashMap<String, Vec<Vec<f64>>>,
    /// Measurements taken by this invocation, per commit hash.
    measured_now: HashMap<String, usize>,
    samples_now: usize,
    builds_now: usize,
    built: Option<String>,
    /// Commits built by this invocation.
    built_ever: std::collections::HashSet<String>,
    spec: TestSpec,
}

impl<'a> Session<'a> {
    /// Loads the state of `request.set`, or starts one. A state of another
    /// request is an error; a worktree a killed run left is removed.
    pub fn open(
        store: &'a mut dyn Store,
        request: BisectRequest,
        plan: Plan,
    ) -> anyhow::Result<Session<'a>> {
        kbench_model::validate_name("result set", &request.set).map_err(anyhow::Error::msg)?;
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
            direction: match request.better {
                Better::Lower => Direction::Lower,
                Better::Higher => Direction::Higher,
            },
        };
        let samples = stored_samples(store, &request.set, &plan, &spec.key)?;
        let saved = match store.load_bisect(&request.set)? {
            Some(text) => Some(serde_json::from_str::<SavedState>(&text).with_context(|| {
                format!(
                    "the bisection state of result set '{}' is not readable",
                    request.set
                )
            })?),
            None => None,
        };
        let (state, resumed) = match saved {
            Some(state) if state.fingerprint == fingerprint => (state, true),
            // Another request that never stored a sample (it failed at the
            // start: a build or metric to fix) makes way.
            Some(state) if samples.is_empty() => {
                if let (Some(repo), Some(path)) = (&plan.repo, &state.worktree) {
                    git::Worktree::remove_stale(repo, path);
                }
                (SavedState::new(fingerprint), false)
            }
            Some(state) => bail!(
                "result set '{}' holds samples of another bisection (good {}, bad {}, metric \
                 '{}', build '{}', measured by '{}'); give this one its own --into",
                request.set,
                &state.fingerprint.good[..12.min(state.fingerprint.good.len())],
                &state.fingerprint.bad[..12.min(state.fingerprint.bad.len())],
                state.fingerprint.metric,
                state.fingerprint.build,
                state.fingerprint.measure
            ),
            None if !samples.is_empty() => bail!(
                "result set '{}' already holds samples of these commits that no bisection \
                 state describes; give this bisection its own --into",
                request.set
            ),
            None => (SavedState::new(fingerprint), false),
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
            measured_now: HashMap::new(),
            samples_now: 0,
            builds_now: 0,
            built: None,
            built_ever: Default::default(),
            spec,
        })
    }

    /// Whether a state was found (this run continues it).
    pub fn resumed(&self) -> bool {
        self.resumed
    }

    /// A fresh directory for the worktree, recorded in the state first so
    /// that a killed run's worktree is found and removed next time.
    pub fn worktree_path(&mut self) -> anyhow::Result<PathBuf> {
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

    fn save(&mut self) -> anyhow::Result<()> {
        let text = serde_json::to_string(&self.state)?;
        self.store.save_bisect(&self.request.set, &text)?;
        Ok(())
    }

    fn good(&self) -> &Commit {
        &self.plan.commits[0]
    }

    fn bad(&self) -> &Commit {
        &self.plan.commits[self.plan.commits.len() - 1]
    }

    /// The search's measurements of a commit (before its confirmation's).
    fn search_side(&self, commit: &Commit) -> Option<Side> {
        let all = self.samples.get(&commit.hash)?;
        let end = self
            .state
            .confirm_from
            .get(&commit.hash)
            .copied()
            .unwrap_or(all.len())
            .min(all.len());
        side(&all[..end])
    }

    /// The confirmation's measurements of a commit.
    fn confirm_side(&self, commit: &Commit) -> Option<Side> {
        let all = self.samples.get(&commit.hash)?;
        let start = *self.state.confirm_from.get(&commit.hash)?;
        side(all.get(start..)?)
    }

    /// Measurements of a commit so far.
    fn count(&self, commit: &Commit) -> usize {
        self.samples.get(&commit.hash).map_or(0, Vec::len)
    }

    /// Measures `commit` until it has `target` measurements, building it
    /// first when it is not the commit built last. `Ok(Err(why))` when it
    /// cannot be built or measured.
    fn ensure(
        &mut self,
        bench: &mut dyn Workbench,
        commit: &Commit,
        target: usize,
        observer: &mut dyn FnMut(&str),
        stop: &AtomicBool,
    ) -> anyhow::Result<Result<(), Failure>> {
        if self.count(commit) >= target {
            return Ok(Ok(()));
        }
        if stop.load(Ordering::SeqCst) {
            bail!(INTERRUPTED);
        }
        if self.built.as_deref() != Some(commit.hash.as_str()) {
            let again = bench.keeps_builds() && self.built_ever.contains(&commit.hash);
            if !again {
                observer(&format!("building {}", commit.identifier()));
                self.builds_now += 1;
            }
            self.built = None;
            if let Err(log) = bench.build(commit)? {
                return Ok(Err(Failure::Build(log)));
            }
            self.built = Some(commit.hash.clone());
            self.built_ever.insert(commit.hash.clone());
        }
        let identifier = commit.identifier();
        let info = RunInfo {
            snapshot: crate::sysinfo::snapshot(Path::new(".")),
            host: None,
            wrapper: None,
            tool_version: env!("CARGO_PKG_VERSION").to_string(),
            notes: vec![format!("kbench bisect: commit {}", commit.hash)],
            started_at_ms: kbench_model::now_ms(),
            pid: std::process::id(),
            uid: Some(kbench_model::random_id()?),
        };
        let run = self
            .store
            .begin_run(&self.request.set, &identifier, &info)?;
        let test = self.store.test_id(&self.request.set, &self.spec)?;
        observer(&format!(
            "measuring {identifier}: {} -> {target} measurements",
            self.count(commit)
        ));
        while self.count(commit) < target {
            if stop.load(Ordering::SeqCst) {
                self.store.end_run(run, RunStatus::Interrupted, None)?;
                bail!(INTERRUPTED);
            }
            let values = match bench.measure() {
                Ok(Ok(values)) => values,
                Ok(Err(error)) => {
                    self.store.end_run(run, RunStatus::Failed, None)?;
                    return Ok(Err(Failure::Measure(error)));
                }
                Err(error) => {
                    let status = if stop.load(Ordering::SeqCst) {
                        RunStatus::Interrupted
                    } else {
                        RunStatus::Failed
                    };
                    self.store.end_run(run, status, None)?;
                    return Err(error);
                }
            };
            if values.is_empty() {
                self.store.end_run(run, RunStatus::Failed, None)?;
                return Ok(Err(Failure::Measure(MeasureError::Failed(
                    "the measurement gave no sample".to_string(),
                ))));
            }
            let round = self.count(commit) as u32;
            for &value in &values {
                let sample = Sample {
                    value,
                    iterations: 1,
                    at_ms: kbench_model::now_ms(),
                    round,
                };
                self.store.add_sample(run, test, &sample)?;
            }
            self.samples_now += values.len();
            self.samples
                .entry(commit.hash.clone())
                .or_default()
                .push(values);
            *self.measured_now.entry(commit.hash.clone()).or_default() += 1;
        }
        self.store.end_run(run, RunStatus::Complete, None)?;
        Ok(Ok(()))
    }

    /// Measures two commits up to their targets: interleaved one
    /// measurement at a time (A B A B) when the workbench keeps every build,
    /// else in blocks (a rebuild sits between commits). The first failure
    /// is returned with its commit.
    fn ensure_pair(
        &mut self,
        bench: &mut dyn Workbench,
        pair: [(&Commit, usize); 2],
        observer: &mut dyn FnMut(&str),
        stop: &AtomicBool,
    ) -> anyhow::Result<Result<(), (Commit, Failure)>> {
        if !bench.keeps_builds() {
            for (commit, target) in pair {
                if let Err(failure) = self.ensure(bench, commit, target, observer, stop)? {
                    return Ok(Err((commit.clone(), failure)));
                }
            }
            return Ok(Ok(()));
        }
        while pair.iter().any(|(c, target)| self.count(c) < *target) {
            for (commit, target) in pair {
                let next = (self.count(commit) + 1).min(target);
                if let Err(failure) = self.ensure(bench, commit, next, observer, stop)? {
                    return Ok(Err((commit.clone(), failure)));
                }
            }
        }
        Ok(Ok(()))
    }

    fn log(&mut self, mut entry: LogEntry, observer: &mut dyn FnMut(&str)) -> anyhow::Result<()> {
        entry.step = self.state.log.len() + 1;
        observer(&entry.line());
        self.state.log.push(entry);
        self.save()
    }

    fn entry(&self, phase: Phase, commit: &Commit, event: &str, detail: String) -> LogEntry {
        LogEntry {
            step: 0,
            phase,
            commit: commit.hash.clone(),
            identifier: commit.identifier(),
            measurements: self.count(commit),
            measured_now: self.measured_now.get(&commit.hash).copied().unwrap_or(0),
            event: event.to_string(),
            state: None,
            decided_by: None,
            position: None,
            change_pct: None,
            detail,
        }
    }

    /// Runs (or continues) the bisection to its end.
    pub fn run(
        mut self,
        bench: &mut dyn Workbench,
        observer: &mut dyn FnMut(&str),
        stop: &AtomicBool,
    ) -> anyhow::Result<BisectReport> {
        // The log is rebuilt by replaying on the stored samples.
        self.state.log.clear();
        self.state.finished = false;
        let stored: usize = self.samples.values().map(Vec::len).sum();
        if self.resumed {
            observer(&format!(
                "continuing the bisection of result set '{}': {stored} measurements already stored",
                self.request.set
            ));
        }
        let options = self.request.options;
        let better = self.request.better;
        let (good, bad) = (self.good().clone(), self.bad().clone());

        // 1. The endpoints must differ.
        let mut target = endpoint_samples(&options);
        let reference = loop {
            if let Err((commit, failure)) =
                self.ensure_pair(bench, [(&good, target), (&bad, target)], observer, stop)?
            {
                let name = if commit == good { "good" } else { "bad" };
                bail!(
                    "the {name} commit {} {}; bisection needs both endpoints measured",
                    commit.identifier(),
                    failure.describe(&self.request.metric)
                );
            }
            let (g, b) = (
                self.search_side(&good).context("good has samples")?,
                self.search_side(&bad).context("bad has samples")?,
            );
            match check_endpoints(&g, &b, better, &options) {
                EndpointCheck::Differ { comparison } => {
                    let mut entry = self.entry(
                        Phase::Endpoints,
                        &bad,
                        &format!("endpoints differ: {}", comparison.verdict),
                        comparison_text(&comparison, "against good"),
                    );
                    entry.change_pct = Some(comparison.change_pct);
                    self.log(entry, observer)?;
                    break comparison;
                }
                EndpointCheck::MoreSamples {
                    samples,
                    comparison,
                } => {
                    let entry = self.entry(
                        Phase::Endpoints,
                        &bad,
                        "endpoints unclear: more samples",
                        format!(
                            "{}; measuring both up to {samples}",
                            comparison_text(&comparison, "against good")
                        ),
                    );
                    self.log(entry, observer)?;
                    target = samples;
                }
                EndpointCheck::DoNotDiffer { comparison } => {
                    let how = if comparison.verdict == kbench_stats::Verdict::NoChange {
                        "do not differ"
                    } else {
                        "could not be told apart (at the --max-samples cap)"
                    };
                    let entry = self.entry(
                        Phase::Endpoints,
                        &bad,
                        &format!("endpoints {how}"),
                        comparison_text(&comparison, "against good"),
                    );
                    self.log(entry, observer)?;
                    bail!(
                        "the endpoints {how} in '{}': bad {} against good {}: {}, \
                         {} measurements each (threshold {:.2} %); there is nothing to bisect. \
                         Check the endpoints, or measure more (--max-samples) or with less noise",
                        self.request.metric,
                        bad.identifier(),
                        good.identifier(),
                        comparison_text(&comparison, ""),
                        comparison.baseline.n.min(comparison.current.n),
                        options.threshold * 100.0
                    );
                }
            }
        };

        // 2. Binary search with three states; failures are skipped.
        let (mut lo, mut hi) = (0, self.plan.commits.len() - 1);
        loop {
            let open: Vec<usize> = (lo + 1..hi)
                .filter(|i| !self.state.skipped.contains_key(&self.plan.commits[*i].hash))
                .collect();
            let Some(&mid) = open.iter().min_by_key(|&&i| (2 * i).abs_diff(lo + hi)) else {
                break;
            };
            let commit = self.plan.commits[mid].clone();
            let mut target = options.initial_samples;
            loop {
                if let Err(failure) = self.ensure(bench, &commit, target, observer, stop)? {
                    let reason = failure.describe(&self.request.metric);
                    self.state
                        .skipped
                        .insert(commit.hash.clone(), reason.clone());
                    let entry = self.entry(Phase::Search, &commit, "skipped", reason);
                    self.log(entry, observer)?;
                    break;
                }
                let c = self.search_side(&commit).context("measured")?;
                let (g, b) = (
                    self.search_side(&good).context("good")?,
                    self.search_side(&bad).context("bad")?,
                );
                let class = classify(&c, &g, &b, better, &options);
                let position = format!(
                    "position {:.2} [{:.2}, {:.2}] from good, {:.2} [{:.2}, {:.2}] from bad \
                     (0 = good, 1 = bad); p = {:.2e} against good, {:.2e} against bad",
                    class.from_good.point,
                    class.from_good.low,
                    class.from_good.high,
                    class.from_bad.point,
                    class.from_bad.low,
                    class.from_bad.high,
                    class.vs_good.p_value,
                    class.vs_bad.p_value
                );
                let mut entry = self.entry(Phase::Search, &commit, "", String::new());
                entry.position = Some(class.from_good);
                entry.change_pct = Some(class.vs_good.change_pct);
                if let Some(more) = class.more_samples {
                    entry.event = "unknown: more samples".to_string();
                    entry.state = Some(State::Unknown);
                    entry.detail = format!("{position}; measuring up to {more}");
                    self.log(entry, observer)?;
                    target = more;
                    continue;
                }
                entry.state = Some(class.state);
                entry.decided_by = class.decided_by;
                entry.event = match class.decided_by {
                    Some(kbench_stats::bisection::DecidedBy::Likelihood) => format!(
                        "{} by likelihood (still unknown at {} samples; log-likelihood ratio \
                         bad - good {:.2})",
                        class.state,
                        self.count(&commit),
                        class.log_likelihood_ratio.unwrap_or(0.0)
                    ),
                    _ => class.state.to_string(),
                };
                entry.detail = position;
                self.log(entry, observer)?;
                match class.state {
                    State::LikeBad => hi = mid,
                    _ => lo = mid,
                }
                break;
            }
        }

        // 3. Confirm on fresh samples of the culprit and its last good
        //    ancestor.
        let (parent, culprit) = (self.plan.commits[lo].clone(), self.plan.commits[hi].clone());
        for commit in [&parent, &culprit] {
            let count = self.count(commit);
            self.state
                .confirm_from
                .entry(commit.hash.clone())
                .or_insert(count);
        }
        self.save()?;
        let mut fresh = endpoint_samples(&options);
        let confirmation = loop {
            let targets = [
                (&parent, self.state.confirm_from[&parent.hash] + fresh),
                (&culprit, self.state.confirm_from[&culprit.hash] + fresh),
            ];
            if let Err((commit, failure)) = self.ensure_pair(bench, targets, observer, stop)? {
                bail!(
                    "re-measuring {} to confirm: it {}",
                    commit.identifier(),
                    failure.describe(&self.request.metric)
                );
            }
            let (p, c) = (
                self.confirm_side(&parent).context("parent")?,
                self.confirm_side(&culprit).context("culprit")?,
            );
            let result = confirm(&p, &c, better, reference.verdict, &options);
            let event = match (result.confirmed, result.more_samples) {
                (true, _) => format!("confirmed: {}", result.comparison.verdict),
                (false, Some(_)) => "unclear: more samples".to_string(),
                (false, None) => format!("NOT confirmed: {}", result.comparison.verdict),
            };
            let mut entry = self.entry(
                Phase::Confirm,
                &culprit,
                &event,
                format!(
                    "{} ({} fresh samples each)",
                    comparison_text(&result.comparison, &format!("against {}", parent.short())),
                    p.logs().len().min(c.logs().len())
                ),
            );
            entry.change_pct = Some(result.comparison.change_pct);
            self.log(entry, observer)?;
            match result.more_samples {
                Some(more) => fresh = more,
                None => break result,
            }
        };

        self.state.finished = true;
        self.save()?;
        let mut notes = Vec::new();
        if culprit.merge {
            notes.push(format!(
                "{} is a merge: the change came with the branch it merged. To find the commit \
                 on that branch, bisect again with --good $(git merge-base {h}^1 {h}^2) --bad {h}^2",
                culprit.short(),
                h = culprit.short()
            ));
        }
        if hi - lo > 1 {
            notes.push(format!(
                "{} commits between {} and {} were skipped (they failed to build or run): the \
                 change is in one of the candidates",
                hi - lo - 1,
                parent.short(),
                culprit.short()
            ));
        }
        if !confirmation.confirmed {
            notes.push(
                "the fresh measurement of the culprit and its parent did not show the endpoints' \
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
            candidates: self.plan.commits[lo + 1..=hi]
                .iter()
                .map(CommitRef::from)
                .collect(),
            change: confirmation.comparison,
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
            every_commit_measurements: self.plan.commits.len() * options.initial_samples,
            resumed: self.resumed,
            notes,
            log: self.state.log.clone(),
        })
    }
}

/// Samples per endpoint to start with: twice a commit's, at least 6.
fn endpoint_samples(options: &BisectionOptions) -> usize {
    (2 * options.initial_samples)
        .max(6)
        .min(options.max_samples.max(2))
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

/// Measurements as a comparison side: the samples themselves when each
/// measurement is one sample, else one observation per measurement (its
/// mean: the round is the unit of replication).
fn side(measurements: &[Vec<f64>]) -> Option<Side> {
    if measurements.iter().all(|m| m.len() == 1) {
        let values = measurements.iter().map(|m| m[0]).collect();
        return Side::new(Samples::new(values).ok()?).ok();
    }
    let rounds: Vec<Samples> = measurements
        .iter()
        .map(|m| Samples::new(m.clone()))
        .collect::<Result<_, _>>()
        .ok()?;
    Side::from_rounds(&rounds).ok()
}

/// "+4.87 % [+3.9, +5.8] against good, p = 1.2e-05, REGRESSION".
pub fn comparison_text(c: &Comparison, against: &str) -> String {
    let bound = |v: f64| {
        if v.is_finite() {
            format!("{v:+.2}")
        } else {
            "n/a".to_string()
        }
    };
    format!(
        "{} % [95 % CI {}, {}]{}{}, p = {:.2e}, {}",
        bound(c.change_pct.point),
        bound(c.change_pct.ci_low),
        bound(c.change_pct.ci_high),
        if against.is_empty() { "" } else { " " },
        against,
        c.p_value,
        c.verdict
    )
}

/// The measurements the result set already holds for the plan's commits
/// (a measurement is a round).
fn stored_samples(
    store: &mut dyn Store,
    set: &str,
    plan: &Plan,
    key: &TestKey,
) -> anyhow::Result<HashMap<String, Vec<Vec<f64>>>> {
    let data = match store.load(set) {
        Ok(data) => data,
        Err(StoreError::NotFound(_)) => return Ok(HashMap::new()),
        Err(error) => return Err(error.into()),
    };
    let mut samples = HashMap::new();
    for commit in &plan.commits {
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

/// Whether an error is the interruption of a bisection.
pub fn is_interrupted(error: &anyhow::Error) -> bool {
    error.to_string() == INTERRUPTED
}

#[cfg(test)]
mod tests;
