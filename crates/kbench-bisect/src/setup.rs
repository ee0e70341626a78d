//! A bisection from the user's request to its report, for the binary:
//! [`Bisection::prepare`] resolves how commits are measured and makes the
//! checks that write nothing ([`Plan::new`]); [`Bisection::run`] opens the
//! state ([`Session::open`]), makes the worktrees and the workbench, runs
//! [`Session::run`] and removes the worktrees. The binary turns its flags
//! into a [`Setup`], wires the stop flag to signals between the two calls,
//! and prints.

use super::bench::{CommandBench, Workbench};
use super::error::{BisectError, Result};
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

impl Measure {
    /// `--run CMD --metric NAME` with the metric's unit and direction
    /// (`--higher-is-better` or `--lower-is-better`, one of them): each is
    /// asked for by name when missing.
    pub fn command(
        run: Option<String>,
        metric: Option<String>,
        unit: String,
        higher_is_better: bool,
        lower_is_better: bool,
    ) -> Result<Measure> {
        let Some(run) = run else {
            return Err(BisectError::Invalid(
                "say how to measure: --run CMD --metric NAME, or --kernel PATH_IN_TREE \
                 --bench NAMES"
                    .into(),
            ));
        };
        let Some(metric) = metric else {
            return Err(BisectError::Invalid(
                "--run needs --metric NAME: the metric to take from the command's output".into(),
            ));
        };
        let better = match (higher_is_better, lower_is_better) {
            (true, false) => Direction::Higher,
            (false, true) => Direction::Lower,
            _ => {
                return Err(BisectError::Invalid(
                    "--run needs the metric's direction: --higher-is-better or --lower-is-better"
                        .into(),
                ));
            }
        };
        Ok(Measure::Command {
            run,
            metric,
            unit,
            better,
        })
    }
}

/// What to bisect, as the user asked it; [`Bisection::prepare`] checks it.
#[derive(Debug, Clone)]
pub struct Setup {
    /// The git repository (a checkout); it is only read.
    pub repo: PathBuf,
    pub good: String,
    pub bad: String,
    /// Shell command that builds a checked-out commit, run in the worktree
    /// (a kernel's build is in its [`KernelMeasure`]).
    pub build: String,
    pub measure: Measure,
    /// The result set (`None`: `bisect-` and the metric's name, or with a
    /// kernel the benchmark's).
    pub into: Option<String>,
    pub options: BisectionOptions,
    /// Bisect even with uncommitted changes in the repository.
    pub allow_dirty: bool,
    /// Measure an A/A rebuild of good where kbench builds the kernels.
    pub rebuild: bool,
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
        let options = &setup.options;
        if options.max_blocks < options.initial_blocks {
            return Err(BisectError::Invalid(format!(
                "--max-blocks {} is below --blocks {}",
                options.max_blocks, options.initial_blocks
            )));
        }
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
        let build = match &workbench {
            BenchSetup::Command { .. } => setup.build,
            BenchSetup::Kernel(kernel) => kernel.build.describe(),
        };
        let request = BisectRequest {
            repo: setup.repo,
            good: setup.good,
            bad: setup.bad,
            build,
            measure,
            metric,
            unit,
            better,
            set,
            options: setup.options,
            allow_dirty: setup.allow_dirty,
            seed: None,
            rebuild: setup.rebuild,
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
                Box::new(kernel.workbench(&self.repo, &root, &good, stop.clone())?)
            }
        };
        let result = session.run(bench.as_mut(), progress, stop);
        drop(bench);
        let _ = std::fs::remove_dir_all(&root);
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn command(run: Option<&str>, metric: Option<&str>, higher: bool, lower: bool) -> String {
        let to = |s: Option<&str>| s.map(str::to_string);
        match Measure::command(to(run), to(metric), "ms".into(), higher, lower) {
            Ok(Measure::Command { better, .. }) => format!("{better:?}"),
            Ok(Measure::Kernel(_)) => unreachable!(),
            Err(error) => error.to_string(),
        }
    }

    #[test]
    fn a_command_needs_its_metric_and_one_direction() {
        assert_eq!(command(Some("./b"), Some("t"), false, true), "Lower");
        assert_eq!(command(Some("./b"), Some("t"), true, false), "Higher");
        assert!(command(None, Some("t"), true, false).starts_with("say how to measure"));
        assert!(command(Some("./b"), None, true, false).contains("--run needs --metric"));
        for (higher, lower) in [(false, false), (true, true)] {
            let error = command(Some("./b"), Some("t"), higher, lower);
            assert!(
                error.contains("--higher-is-better or --lower-is-better"),
                "{error}"
            );
        }
    }

    #[test]
    fn max_blocks_below_blocks_is_refused_before_anything_is_read() {
        let setup = Setup {
            repo: "/no/such/repo".into(),
            good: "a".into(),
            bad: "b".into(),
            build: "true".into(),
            measure: Measure::command(
                Some("./b".into()),
                Some("t".into()),
                "ms".into(),
                true,
                false,
            )
            .unwrap(),
            into: None,
            options: BisectionOptions {
                initial_blocks: 8,
                max_blocks: 4,
                ..BisectionOptions::default()
            },
            allow_dirty: false,
            rebuild: false,
        };
        let error = Bisection::prepare(setup, &mut |_| {}).err().unwrap();
        assert_eq!(error.to_string(), "--max-blocks 4 is below --blocks 8");
    }
}
