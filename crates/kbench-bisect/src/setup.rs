//! A bisection from the user's request to its report, for the binary:
//! [`Bisection::prepare`] resolves how commits are measured and makes the
//! checks that write nothing ([`Plan::new`]); [`Bisection::run`] opens the
//! state ([`Session::open`]), makes the worktrees and the workbench, runs
//! [`Session::run`] and removes the worktrees. The binary turns its flags
//! into a [`Setup`], wires the stop flag to signals between the two calls,
//! and prints.

use super::bench::{CommandBench, Workbench};
use super::error::Result;
use super::git::Repo;
use super::progress::Progress;
use super::vm::{KernelMeasure, KernelSetup};
use super::{BisectReport, BisectRequest, Plan, Session};
use kbench_model::Direction;
use kbench_stats::bisection::BisectionOptions;
use kbench_store::Database;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

/// How each commit is measured.
#[derive(Debug, Clone)]
pub enum Measure {
    /// A shell command run in the worktree that prints the metric
    /// (`NAME: VALUE` lines or one JSON object); one run is one sample.
    Command {
        run: String,
        metric: String,
        unit: String,
        better: Direction,
    },
    /// The built kernel booted in a VM.
    Kernel(KernelMeasure),
}

/// What to bisect, as the user asked it; [`Bisection::prepare`] checks it.
#[derive(Debug, Clone)]
pub struct Setup {
    /// The git repository (a checkout); it is only read.
    pub repo: PathBuf,
    pub good: String,
    pub bad: String,
    /// Shell command that builds a checked-out commit, run in the worktree.
    pub build: String,
    pub measure: Measure,
    /// The result set (`None`: `bisect-` and the metric's name, or with a
    /// kernel the benchmark's).
    pub into: Option<String>,
    pub options: BisectionOptions,
    /// Bisect even with uncommitted changes in the repository.
    pub allow_dirty: bool,
}

/// A bisection checked and ready to run; nothing is written yet.
pub struct Bisection {
    request: BisectRequest,
    plan: Plan,
    repo: Repo,
    workbench: BenchSetup,
}

/// What the workbench is made from once its directory is known.
enum BenchSetup {
    Command { run: String, metric: String },
    Kernel(Box<KernelSetup>),
}

impl Bisection {
    /// Resolves how commits are measured, checks the repository and the
    /// endpoints, and says what will be bisected.
    pub fn prepare(setup: Setup, progress: &mut dyn FnMut(Progress<'_>)) -> Result<Bisection> {
        let (measure, metric, unit, better, workbench) = match setup.measure {
            Measure::Command {
                run,
                metric,
                unit,
                better,
            } => (
                run.clone(),
                metric.clone(),
                unit,
                better,
                BenchSetup::Command { run, metric },
            ),
            Measure::Kernel(kernel) => {
                let kernel = KernelSetup::new(kernel, progress)?;
                (
                    kernel.describe(),
                    kernel.test.to_string(),
                    kernel.unit.clone(),
                    kernel.better,
                    BenchSetup::Kernel(Box::new(kernel)),
                )
            }
        };
        let set = setup.into.unwrap_or_else(|| match &workbench {
            BenchSetup::Command { metric, .. } => format!("bisect-{metric}"),
            BenchSetup::Kernel(kernel) => format!("bisect-{}", kernel.test.benchmark),
        });
        let request = BisectRequest {
            repo: setup.repo,
            good: setup.good,
            bad: setup.bad,
            build: setup.build,
            measure,
            metric,
            unit,
            better,
            set,
            options: setup.options,
            allow_dirty: setup.allow_dirty,
            seed: None,
        };
        let plan = Plan::new(&request)?;
        let repo = plan.repo.clone().expect("Plan::new opens the repository");
        let (good, bad) = (&plan.commits[0], &plan.commits[plan.commits.len() - 1]);
        progress(Progress::Step(&format!(
            "bisecting '{}' over {} commits after {} up to {} in {}",
            request.metric,
            plan.commits.len() - 1,
            good.short(),
            bad.short(),
            repo.root.display()
        )));
        Ok(Bisection {
            request,
            plan,
            repo,
            workbench,
        })
    }

    /// Runs (or continues) the bisection in `store` to its end; `stop`
    /// interrupts it. The worktrees are gone when it returns.
    pub fn run(
        self,
        store: &mut dyn Database,
        stop: &Arc<AtomicBool>,
        progress: &mut dyn FnMut(Progress<'_>),
    ) -> Result<BisectReport> {
        let good = self.plan.commits[0].hash.clone();
        let build = self.request.build.clone();
        let mut session = Session::open(store, self.request, self.plan)?;
        let root = session.worktree_path()?;
        let mut bench: Box<dyn Workbench> = match self.workbench {
            BenchSetup::Command { run, metric } => Box::new(CommandBench::new(
                self.repo,
                root.clone(),
                build,
                run,
                metric,
                stop.clone(),
            )),
            BenchSetup::Kernel(kernel) => {
                Box::new(kernel.workbench(&self.repo, &root, &good, build, stop.clone())?)
            }
        };
        let result = session.run(bench.as_mut(), progress, stop);
        drop(bench);
        let _ = std::fs::remove_dir_all(&root);
        result
    }
}
