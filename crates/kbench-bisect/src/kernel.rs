//! The `--kernel` workbench: each commit's kernel is built (the user's
//! `--build` command in the tree, or kbench's own out-of-tree build with
//! `--kernel-config`, [`LinuxBuild`]); each measurement boots it in a VM
//! (`kbench vm`'s launcher, or any [`Launcher`]) with kbench as init, runs
//! one built-in test there and returns that boot's samples of its metric
//! as the guest measured them (their iterations, and their times on
//! arrival): one round, so the boot is the unit of replication. A kernel
//! that does not build or boot, or a test that fails in it, skips the
//! commit.

use super::bench::{MeasureError, Workbench, shell};
use super::error::{BisectError, Result};
use super::git::{Commit, Worktree};
use super::linux::LinuxBuild;
use super::progress::Progress;
use kbench_analysis::bisect::BuildRecord;
use kbench_measure::agent::AgentJob;
use kbench_measure::events::{self, TestEvents};
use kbench_measure::launcher::Launcher;
use kbench_measure::plan::SamplingPlan;
use kbench_model::{MAIN_METRIC, Sample, TestKey};
use kbench_store::TestOutcomeKind;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// A launcher for a kernel image, saying what it does on the way (a probe
/// boot); `Err` when it cannot be booted at all (not a kernel image), which
/// skips the commit.
pub type Boot = Box<dyn FnMut(&Path, &mut dyn FnMut(Progress<'_>)) -> Result<Box<dyn Launcher>>>;

/// How a commit's kernel is built.
#[derive(Debug, Clone)]
pub enum KernelBuild {
    /// `--build CMD` run in the tree, leaving the image at `image` in it
    /// (`--kernel arch/x86/boot/bzImage`).
    Command { command: String, image: PathBuf },
    /// `--kernel-config BASE`: kbench's own build, out of tree.
    Linux(LinuxBuild),
}

impl KernelBuild {
    /// What the state's fingerprint and the report say of it.
    pub fn describe(&self) -> String {
        match self {
            KernelBuild::Command { command, .. } => command.clone(),
            KernelBuild::Linux(linux) => linux.describe(),
        }
    }
}

pub struct KernelBench {
    pub worktree: Worktree,
    pub build: KernelBuild,
    /// The bisection's directory: the worktree's and the build
    /// directories' parent (ccache's base).
    pub root: PathBuf,
    /// Where each commit's image is copied to boot it.
    pub image_dir: PathBuf,
    pub boot: Boot,
    /// The test to run, with the metric to take.
    pub test: TestKey,
    pub plan: SamplingPlan,
    pub stop: Arc<AtomicBool>,
    /// A launcher per commit built, and the commit selected.
    pub launchers: HashMap<String, Box<dyn Launcher>>,
    pub current: Option<String>,
    /// The image copied for each commit built.
    pub images: HashMap<String, PathBuf>,
    pub records: Vec<BuildRecord>,
}

impl KernelBench {
    fn interrupted(&self) -> Result<()> {
        if self.stop.load(Ordering::SeqCst) {
            return Err(BisectError::Interrupted);
        }
        Ok(())
    }

    /// Builds the commit checked out into `out` (kbench's build) or runs
    /// the build command; the image, or why there is none.
    fn build_image(
        &mut self,
        name: &str,
        out: &Path,
        progress: &mut dyn FnMut(Progress<'_>),
    ) -> Result<std::result::Result<PathBuf, String>> {
        let tree = self.worktree.path().to_path_buf();
        match &self.build {
            KernelBuild::Command { command, image } => {
                let built = shell(command, &tree, name)?;
                self.interrupted()?;
                if let Err(log) = built {
                    return Ok(Err(log));
                }
                let image = tree.join(image);
                if !image.is_file() {
                    return Ok(Err(format!(
                        "the build left no kernel image at {} (--kernel is relative to the tree)",
                        image.strip_prefix(&tree).unwrap_or(&image).display()
                    )));
                }
                Ok(Ok(image))
            }
            KernelBuild::Linux(linux) => {
                let (record, built) = linux.build(&tree, out, &self.root, name)?;
                self.interrupted()?;
                let cache = record
                    .ccache
                    .map(|c| format!("; {}", c.text()))
                    .unwrap_or_default();
                progress(Progress::Step(&format!(
                    "{} {name} in {:.0} s{cache}",
                    if record.ok {
                        "built"
                    } else {
                        "FAILED to build"
                    },
                    record.seconds
                )));
                self.records.push(record);
                Ok(built)
            }
        }
    }

    /// Copies `image` as `name`'s and boots it: the launcher is kept
    /// under `hash`.
    fn install(
        &mut self,
        hash: &str,
        name: &str,
        image: &Path,
        progress: &mut dyn FnMut(Progress<'_>),
    ) -> Result<std::result::Result<(), String>> {
        std::fs::create_dir_all(&self.image_dir).map_err(BisectError::os(format!(
            "creating {}",
            self.image_dir.display()
        )))?;
        let copy = self.image_dir.join(format!("{name}-image"));
        std::fs::copy(image, &copy).map_err(BisectError::os(format!(
            "copying {} to {}",
            image.display(),
            copy.display()
        )))?;
        match (self.boot)(&copy, progress) {
            Ok(launcher) => {
                self.launchers.insert(hash.to_string(), launcher);
                self.images.insert(hash.to_string(), copy);
                Ok(Ok(()))
            }
            Err(error) => Ok(Err(format!("{error:#}"))),
        }
    }
}

impl Drop for KernelBench {
    /// The copied images go with the workbench.
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.image_dir);
    }
}

impl Workbench for KernelBench {
    fn has_build(&self, commit: &Commit) -> bool {
        self.launchers.contains_key(&commit.hash)
    }

    fn build(
        &mut self,
        commit: &Commit,
        progress: &mut dyn FnMut(Progress<'_>),
    ) -> Result<Result<(), String>> {
        self.current = None;
        if !self.launchers.contains_key(&commit.hash) {
            self.worktree.checkout(&commit.hash)?;
            let out = self.root.join("build");
            let name = format!("{}-build", commit.short());
            let image = match self.build_image(&name, &out, progress)? {
                Ok(image) => image,
                Err(log) => return Ok(Err(log)),
            };
            if let Err(log) = self.install(&commit.hash, commit.short(), &image, progress)? {
                return Ok(Err(log));
            }
        }
        self.current = Some(commit.hash.clone());
        Ok(Ok(()))
    }

    fn measurement(&self) -> String {
        format!(
            "one boot of the commit's kernel in a VM running {}, one round of samples: the \
             unit is the boot, and decisions compare boots (each its round's mean) in blocks, \
             never samples pooled across boots",
            self.test
        )
    }

    fn build_method(&self) -> Option<String> {
        match &self.build {
            KernelBuild::Linux(linux) => Some(linux.describe()),
            KernelBuild::Command { .. } => None,
        }
    }

    fn build_records(&self) -> Vec<BuildRecord> {
        self.records.clone()
    }

    fn rebuild(
        &mut self,
        commit: &Commit,
        twin: &Commit,
        progress: &mut dyn FnMut(Progress<'_>),
    ) -> Result<Option<Result<bool, String>>> {
        if !matches!(self.build, KernelBuild::Linux(_)) {
            return Ok(None);
        }
        let Some(first) = self.images.get(&commit.hash).cloned() else {
            return Ok(Some(Err(format!(
                "{} was not built before",
                commit.short()
            ))));
        };
        self.worktree.checkout(&commit.hash)?;
        let out = self.root.join("build-rebuild");
        let _ = std::fs::remove_dir_all(&out);
        let name = format!("{}-rebuild", commit.short());
        let built = self.build_image(&name, &out, progress)?;
        let result = match built {
            Ok(image) => {
                let read = |path: &Path| {
                    std::fs::read(path)
                        .map_err(BisectError::os(format!("reading {}", path.display())))
                };
                let identical = read(&image)? == read(&first)?;
                self.install(&twin.hash, &name, &image, progress)?
                    .map(|()| identical)
            }
            Err(log) => Err(log),
        };
        let _ = std::fs::remove_dir_all(&out);
        Ok(Some(result))
    }

    fn measure(&mut self, round: u32) -> Result<Result<Vec<Sample>, MeasureError>> {
        let launcher = self
            .current
            .as_ref()
            .and_then(|hash| self.launchers.get(hash))
            .ok_or_else(|| BisectError::Invalid("no kernel built to boot".to_string()))?;
        let test = self.test.with_metric(MAIN_METRIC);
        let job = AgentJob {
            snapshot: false,
            tests: vec![test.clone()],
            plan: self.plan.clone(),
            tools: vec![],
        };
        let mut stream = launcher.launch(&job)?;
        let mut samples = Vec::new();
        let mut metrics: Vec<String> = Vec::new();
        let read = events::read_test(stream.as_mut(), &test, round, &self.stop, &mut |arrived| {
            let metric = arrived.metric.key.metric;
            if metric == self.test.metric {
                samples.push(arrived.sample);
            } else if !metrics.contains(&metric) {
                metrics.push(metric);
            }
            Ok(())
        });
        // Nothing follows the test's end; whatever might is not this test's.
        while stream.next_event().is_some() {}
        let finished = stream.finish();
        self.interrupted()?;
        if let Err(error) = finished {
            return Ok(Err(MeasureError::Failed(format!(
                "the kernel did not boot or the guest failed: {error:#}"
            ))));
        }
        let failed = match read {
            Err(error) => Some(format!("{error:#}")),
            Ok(TestEvents {
                ended: Some(outcome),
                ..
            }) => match outcome.kind {
                TestOutcomeKind::Skipped => Some(format!(
                    "{} was skipped in the guest: {}",
                    self.test, outcome.detail
                )),
                TestOutcomeKind::Failed => Some(format!(
                    "{} failed in the guest: {}",
                    self.test, outcome.detail
                )),
                TestOutcomeKind::TargetMet | TestOutcomeKind::BudgetHit => None,
            },
            Ok(_) => None,
        };
        if let Some(reason) = failed {
            return Ok(Err(MeasureError::Failed(reason)));
        }
        if samples.is_empty() {
            return Ok(Err(MeasureError::MissingMetric {
                metric: self.test.metric.clone(),
                found: metrics,
            }));
        }
        Ok(Ok(samples))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kbench_measure::launcher::AgentStream;
    use kbench_model::AgentEvent;
    use std::collections::VecDeque;

    /// Streams canned events.
    struct Canned(VecDeque<AgentEvent>, bool);

    impl AgentStream for Canned {
        fn next_event(&mut self) -> Option<kbench_measure::Result<AgentEvent>> {
            self.0.pop_front().map(Ok)
        }

        fn finish(self: Box<Self>) -> kbench_measure::Result<()> {
            if self.1 {
                Ok(())
            } else {
                Err(kbench_measure::MeasureError::Agent(
                    "qemu ended with exit status: 1; Kernel panic".to_string(),
                ))
            }
        }
    }

    struct FakeVm {
        events: Vec<AgentEvent>,
        boots: bool,
    }

    impl Launcher for FakeVm {
        fn launch(&self, job: &AgentJob) -> kbench_measure::Result<Box<dyn AgentStream>> {
            assert_eq!(job.tests, vec![TestKey::new("syscall-null")]);
            Ok(Box::new(Canned(self.events.clone().into(), self.boots)))
        }
    }

    /// The guest's sample of `metric`, of 1000 iterations, arrived at
    /// `at_ms`.
    fn sample(metric: &str, value: f64, at_ms: i64) -> AgentEvent {
        AgentEvent::Sample {
            metric: metric.into(),
            value,
            iterations: 1000,
            at_ms,
        }
    }

    /// A guest's events of syscall-null: its start, `samples`, its end.
    fn test_events(samples: Vec<AgentEvent>) -> Vec<AgentEvent> {
        let start = AgentEvent::TestStart {
            test: TestKey::new("syscall-null"),
            unit: "ns".into(),
            direction: kbench_model::Direction::Lower,
            iterations: 1000,
        };
        let end = AgentEvent::TestEnd {
            target_met: true,
            stop: "target".into(),
        };
        std::iter::once(start)
            .chain(samples)
            .chain(std::iter::once(end))
            .collect()
    }

    fn repo() -> (tempfile::TempDir, super::super::git::Repo, String) {
        let dir = tempfile::tempdir().unwrap();
        let git = |args: &[&str]| {
            let out = std::process::Command::new("git")
                .arg("-C")
                .arg(dir.path())
                .args([
                    "-c",
                    "user.name=t",
                    "-c",
                    "user.email=t@t",
                    "-c",
                    "commit.gpgsign=false",
                ])
                .args(args)
                .output()
                .unwrap();
            assert!(out.status.success(), "{out:?}");
            String::from_utf8_lossy(&out.stdout).trim().to_string()
        };
        git(&["init", "-q"]);
        std::fs::write(dir.path().join("Makefile"), "x").unwrap();
        git(&["add", "-A"]);
        git(&["commit", "-q", "-m", "one"]);
        let head = git(&["rev-parse", "HEAD"]);
        let repo = super::super::git::Repo::open(dir.path()).unwrap();
        (dir, repo, head)
    }

    fn bench(
        events: Vec<AgentEvent>,
        boots: bool,
        build: &str,
    ) -> (tempfile::TempDir, KernelBench, Commit) {
        let (dir, repo, head) = repo();
        let worktree = Worktree::add(&repo, &dir.path().join("wt"), &head).unwrap();
        let bench = KernelBench {
            worktree,
            build: KernelBuild::Command {
                command: build.into(),
                image: "bzImage".into(),
            },
            root: dir.path().to_path_buf(),
            image_dir: dir.path().join("images"),
            boot: Box::new(move |path: &Path, _: &mut dyn FnMut(Progress<'_>)| {
                if !path.ends_with(format!("{}-image", &head[..12])) {
                    return Err(BisectError::Invalid(format!("{path:?}")));
                }
                Ok(Box::new(FakeVm {
                    events: events.clone(),
                    boots,
                }) as Box<dyn Launcher>)
            }),
            test: TestKey::new("syscall-null"),
            plan: SamplingPlan::default(),
            stop: Arc::default(),
            launchers: HashMap::new(),
            current: None,
            images: HashMap::new(),
            records: Vec::new(),
        };
        let commit = Commit {
            hash: repo_head(&bench),
            subject: "one".into(),
            parents: vec![],
        };
        (dir, bench, commit)
    }

    fn repo_head(bench: &KernelBench) -> String {
        let out = std::process::Command::new("git")
            .arg("-C")
            .arg(bench.worktree.path())
            .args(["rev-parse", "HEAD"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    #[test]
    fn a_boot_is_one_round_of_the_metric_as_the_guest_measured_it() {
        let events = test_events(vec![
            sample("value", 100.0, 1_700_000_000_001),
            sample("other", 1.0, 1_700_000_000_002),
            sample("value", 102.0, 1_700_000_000_003),
        ]);
        let (_dir, mut bench, commit) = bench(events, true, "echo kernel > bzImage");
        assert_eq!(bench.build(&commit, &mut |_| {}).unwrap(), Ok(()));
        let guest = |value, at_ms| Sample {
            value,
            iterations: 1000,
            at_ms,
            round: 2,
        };
        assert_eq!(
            bench.measure(2).unwrap(),
            Ok(vec![
                guest(100.0, 1_700_000_000_001),
                guest(102.0, 1_700_000_000_003)
            ])
        );
    }

    #[test]
    fn a_test_skipped_in_the_guest_or_without_the_metric_skips_the_commit() {
        let skipped = vec![AgentEvent::Skip {
            test: TestKey::new("syscall-null"),
            reason: "no such syscall".into(),
        }];
        let no_metric = test_events(vec![sample("other", 1.0, 1)]);
        let mut failures = Vec::new();
        for events in [skipped, no_metric] {
            let (_dir, mut bench, commit) = bench(events, true, "echo kernel > bzImage");
            assert_eq!(bench.build(&commit, &mut |_| {}).unwrap(), Ok(()));
            failures.push(bench.measure(0).unwrap().unwrap_err());
        }
        assert_eq!(
            failures,
            [
                MeasureError::Failed(
                    "syscall-null was skipped in the guest: no such syscall".to_string()
                ),
                MeasureError::MissingMetric {
                    metric: "value".to_string(),
                    found: vec!["other".to_string()]
                }
            ]
        );
    }

    #[test]
    fn no_image_or_no_boot_skips() {
        let (_dir, mut bench, commit) = bench(vec![], true, "true");
        let error = bench.build(&commit, &mut |_| {}).unwrap().unwrap_err();
        assert!(error.contains("no kernel image at bzImage"), "{error}");
        let (_dir, mut bench, commit) = bench_panics();
        assert_eq!(bench.build(&commit, &mut |_| {}).unwrap(), Ok(()));
        let error = bench.measure(0).unwrap().unwrap_err().to_string();
        assert!(
            error.contains("did not boot") && error.contains("Kernel panic"),
            "{error}"
        );
    }

    fn bench_panics() -> (tempfile::TempDir, KernelBench, Commit) {
        bench(vec![], false, "echo kernel > bzImage")
    }
}
