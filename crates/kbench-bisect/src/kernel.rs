//! The `--kernel` workbench: the build command makes a kernel image in the
//! tree; each measurement boots it in a VM (`kbench vm`'s launcher, or any
//! [`Launcher`]) with kbench as init, runs one built-in test there and
//! returns that boot's samples of its metric: one round, so the boot is the
//! unit of replication. A kernel that does not boot, or a test that fails
//! in it, skips the commit.

use super::bench::{MeasureError, Workbench, shell};
use super::error::{BisectError, Result};
use super::git::{Commit, Worktree};
use super::progress::Progress;
use kbench_measure::agent::AgentJob;
use kbench_measure::launcher::Launcher;
use kbench_measure::plan::SamplingPlan;
use kbench_model::{AgentEvent, MAIN_METRIC, TestKey};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// A launcher for a kernel image, saying what it does on the way (a probe
/// boot); `Err` when it cannot be booted at all (not a kernel image), which
/// skips the commit.
pub type Boot = Box<dyn FnMut(&Path, &mut dyn FnMut(Progress<'_>)) -> Result<Box<dyn Launcher>>>;

pub struct KernelBench {
    pub worktree: Worktree,
    pub build: String,
    /// Where the build leaves the image, relative to the tree
    /// (`arch/x86/boot/bzImage`).
    pub image_in_tree: PathBuf,
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
}

impl KernelBench {
    fn interrupted(&self) -> Result<()> {
        if self.stop.load(Ordering::SeqCst) {
            return Err(BisectError::Interrupted);
        }
        Ok(())
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
        if self.launchers.contains_key(&commit.hash) {
            self.current = Some(commit.hash.clone());
            return Ok(Ok(()));
        }
        self.worktree.checkout(&commit.hash)?;
        let built = shell(&self.build, self.worktree.path(), &commit.hash)?;
        self.interrupted()?;
        if let Err(log) = built {
            return Ok(Err(log));
        }
        let image = self.worktree.path().join(&self.image_in_tree);
        if !image.is_file() {
            return Ok(Err(format!(
                "the build left no kernel image at {} (--kernel is relative to the tree)",
                self.image_in_tree.display()
            )));
        }
        std::fs::create_dir_all(&self.image_dir).map_err(BisectError::os(format!(
            "creating {}",
            self.image_dir.display()
        )))?;
        let copy = self.image_dir.join(format!("{}-bzImage", commit.short()));
        std::fs::copy(&image, &copy).map_err(BisectError::os(format!(
            "copying {} to {}",
            image.display(),
            copy.display()
        )))?;
        match (self.boot)(&copy, progress) {
            Ok(launcher) => {
                self.launchers.insert(commit.hash.clone(), launcher);
                self.current = Some(commit.hash.clone());
                Ok(Ok(()))
            }
            Err(error) => Ok(Err(format!("{error:#}"))),
        }
    }

    fn measure(&mut self) -> Result<Result<Vec<f64>, MeasureError>> {
        let launcher = self
            .current
            .as_ref()
            .and_then(|hash| self.launchers.get(hash))
            .ok_or_else(|| BisectError::Invalid("no kernel built to boot".to_string()))?;
        let job = AgentJob {
            snapshot: false,
            tests: vec![self.test.with_metric(MAIN_METRIC)],
            plan: self.plan.clone(),
            tools: vec![],
        };
        let mut stream = launcher.launch(&job)?;
        let mut values = Vec::new();
        let mut failed: Option<String> = None;
        let mut metrics: Vec<String> = Vec::new();
        while let Some(event) = stream.next_event() {
            match event {
                Ok(AgentEvent::Sample { metric, value, .. }) => {
                    if metric == self.test.metric {
                        values.push(value);
                    } else if !metrics.contains(&metric) {
                        metrics.push(metric);
                    }
                }
                Ok(AgentEvent::Skip { reason, .. }) => {
                    failed = Some(format!("{} was skipped in the guest: {reason}", self.test))
                }
                Ok(AgentEvent::Failed { reason, .. }) => {
                    failed = Some(format!("{} failed in the guest: {reason}", self.test))
                }
                Ok(_) => {}
                Err(error) => failed = Some(format!("{error:#}")),
            }
        }
        let finished = stream.finish();
        self.interrupted()?;
        if let Err(error) = finished {
            return Ok(Err(MeasureError::Failed(format!(
                "the kernel did not boot or the guest failed: {error:#}"
            ))));
        }
        if let Some(reason) = failed {
            return Ok(Err(MeasureError::Failed(reason)));
        }
        if values.is_empty() {
            return Ok(Err(MeasureError::MissingMetric {
                metric: self.test.metric.clone(),
                found: metrics,
            }));
        }
        Ok(Ok(values))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kbench_measure::launcher::AgentStream;
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

    fn sample(metric: &str, value: f64) -> AgentEvent {
        AgentEvent::Sample {
            metric: metric.into(),
            value,
            iterations: 1000,
            at_ms: 0,
        }
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
            build: build.into(),
            image_in_tree: "bzImage".into(),
            image_dir: dir.path().join("images"),
            boot: Box::new(move |path: &Path, _: &mut dyn FnMut(Progress<'_>)| {
                if !path.ends_with(format!("{}-bzImage", &head[..12])) {
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
        };
        let commit = Commit {
            hash: repo_head(&bench),
            subject: "one".into(),
            merge: false,
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
    fn a_boot_is_one_round_of_the_metric() {
        let events = vec![
            sample("value", 100.0),
            sample("other", 1.0),
            sample("value", 102.0),
        ];
        let (_dir, mut bench, commit) = bench(events, true, "echo kernel > bzImage");
        assert_eq!(bench.build(&commit, &mut |_| {}).unwrap(), Ok(()));
        assert_eq!(bench.measure().unwrap(), Ok(vec![100.0, 102.0]));
    }

    #[test]
    fn no_image_or_no_boot_skips() {
        let (_dir, mut bench, commit) = bench(vec![], true, "true");
        let error = bench.build(&commit, &mut |_| {}).unwrap().unwrap_err();
        assert!(error.contains("no kernel image at bzImage"), "{error}");
        let (_dir, mut bench, commit) = bench_panics();
        assert_eq!(bench.build(&commit, &mut |_| {}).unwrap(), Ok(()));
        let error = bench.measure().unwrap().unwrap_err().to_string();
        assert!(
            error.contains("did not boot") && error.contains("Kernel panic"),
            "{error}"
        );
    }

    fn bench_panics() -> (tempfile::TempDir, KernelBench, Commit) {
        bench(vec![], false, "echo kernel > bzImage")
    }
}
