//! Variants measured in randomized interleaved blocks (Abedi and Brecht,
//! "Conducting Repeatable Experiments in Highly Variable Cloud Computing
//! Environments", ICPE 2017): per test, every block runs each variant
//! once, a fresh agent each (one round), in a fresh random order from a
//! recorded seed. The agents of a block start together and take turns
//! sample by sample ([`crate::turns`]), so drift, speed spells and load
//! bursts hit every variant of a block alike, and `compare` pairs the
//! variants block by block ([`kbench_stats::paired`]).
//!
//! Each variant is an identifier of the set with one run for the whole
//! invocation; block k of the session is round `first_round + k` of every
//! variant (the same number for all), and the session id in each run's
//! snapshot says which rounds pair. Blocks go on, per test, until the CI
//! of every variant's change against the baseline is within the target,
//! or the test's time budget is spent (adaptive rounds: the precision is
//! the one the decision uses). Samples are committed as they arrive; an
//! interrupted invocation keeps its blocks, and running it again measures
//! a new session.

use crate::agent::AgentJob;
use crate::error::{MeasureError, Result};
use crate::launcher::{AgentStream, Launcher, Started};
use crate::plan::{SHORT_ROUND, SamplingPlan};
use crate::runner::{self, RoundRun, RunEvent, RunRequest, RunSummary};
use crate::variant::{SysctlGuard, Variant};
use kbench_model::{TestKey, VariantRecord};
use kbench_stats::paired::hodges_lehmann;
use kbench_store::{RunId, RunSink, RunStatus, TestOutcome, TestOutcomeKind};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// When a test has had blocks enough.
#[derive(Debug, Clone, PartialEq)]
pub struct BlockPlan {
    /// Never fewer: with 12 blocks the signed-rank test reaches p < 0.001,
    /// which one change needs to stand out of a family of 50 metrics.
    pub min_blocks: usize,
    pub max_blocks: usize,
    /// Stop when every variant's change CI half-width is within this
    /// fraction (0.01 = +-1 %).
    pub target_ci: f64,
    /// Time per test and variant; a test stops after this times the number
    /// of variants.
    pub budget: Duration,
}

impl BlockPlan {
    /// The fewest blocks per test by default (see [`BlockPlan::min_blocks`]).
    pub const MIN_BLOCKS: usize = 12;
    /// The most blocks per test by default.
    pub const MAX_BLOCKS: usize = 200;

    /// The blocks of `kbench run --variant`: 12 to 200 per test, until
    /// `plan`'s precision or `budget`; the plan's rounds become short
    /// unless their time was chosen.
    pub fn for_variants(plan: &mut SamplingPlan, budget: Duration) -> BlockPlan {
        if !plan.max_time_chosen {
            plan.max_time = SHORT_ROUND;
        }
        BlockPlan {
            min_blocks: BlockPlan::MIN_BLOCKS,
            max_blocks: BlockPlan::MAX_BLOCKS,
            target_ci: plan.target_ci,
            budget,
        }
    }
}

/// The variants to measure and where to keep them. The first variant is
/// the baseline.
pub struct InterleavedRequest<'a> {
    /// One request per variant (identifier = the variant's name), all with
    /// the same set, tests and per-round plan.
    pub requests: Vec<RunRequest>,
    pub variants: Vec<Variant>,
    pub launchers: Vec<&'a dyn Launcher>,
    pub blocks: BlockPlan,
    pub seed: u64,
    /// Duet (two variants): launchers of variant v pinned to CPU c, as
    /// `duet[v][c]`. Each block starts both variants at once, each on a
    /// CPU of its own (which one is random per block), so both see the
    /// same interference (Bulej et al., "Duet Benchmarking", ICPE 2020);
    /// agents that take time to be ready (VM guests) start when both are.
    pub duet: Option<[[&'a dyn Launcher; 2]; 2]>,
}

/// One variant's run during the session.
struct VariantRun {
    run: RunId,
    test_ids: HashMap<TestKey, kbench_store::TestId>,
    /// Main-metric median of each block of the current test (`None`: no
    /// usable round in that block), as `compare` pairs them.
    block_medians: Vec<Option<f64>>,
    cpu_before: Option<kbench_sysinfo::CpuTimes>,
}

/// Runs every test of the request in interleaved blocks, storing into
/// `store`; `stop` ends it between rounds, as interrupted.
pub fn execute(
    store: &mut dyn RunSink,
    request: &InterleavedRequest<'_>,
    observer: &mut dyn FnMut(RunEvent),
    stop: &AtomicBool,
) -> Result<RunSummary> {
    let mut summary = RunSummary::default();
    let first = &request.requests[0];
    for r in &request.requests {
        store.lock_identifier(&r.set, &r.identifier)?;
    }
    let mut first_round = 0;
    for r in &request.requests {
        if let Some(unfinished) = store.unfinished_run(&r.set, &r.identifier)? {
            runner::close_unfinished(store, &unfinished, &[])?;
        }
        if let Some(last) = store.last_round(&r.set, &r.identifier)? {
            first_round = first_round.max(last + 1);
        }
    }
    let session = kbench_model::random_id().map_err(MeasureError::os("making the session's id"))?;
    let mut runs = vec![];
    for ((r, variant), launcher) in request
        .requests
        .iter()
        .zip(&request.variants)
        .zip(&request.launchers)
    {
        let mut info = runner::run_info(*launcher, r, stop)?;
        info.snapshot.variant = Some(VariantRecord {
            name: variant.name.clone(),
            settings: variant.settings(),
            sysctl_before: SysctlGuard::values_before(variant)?,
            session: session.clone(),
            seed: request.seed,
        });
        let run = store.begin_run(&r.set, &r.identifier, &info)?;
        summary.runs.push(run);
        runs.push(VariantRun {
            run,
            test_ids: HashMap::new(),
            block_medians: vec![],
            cpu_before: kbench_sysinfo::cpu_times(),
        });
    }
    let mut rng = fastrand::Rng::with_seed(request.seed);
    let outcome = (|| {
        for (index, test) in first.tests.iter().enumerate() {
            if stop.load(Ordering::SeqCst) {
                break;
            }
            observer(RunEvent::TestStarted {
                index,
                total: first.tests.len(),
                test: test.clone(),
            });
            let ended = measure_test(
                store,
                request,
                &mut runs,
                test,
                first_round,
                &mut rng,
                observer,
                stop,
                &mut summary,
            )?;
            if let Some(outcome) = ended {
                observer(RunEvent::TestEnded {
                    outcome: outcome.clone(),
                });
                if summary.end_test(outcome, first.keep_going) {
                    break;
                }
            }
        }
        Ok::<(), MeasureError>(())
    })();
    let status = match (&outcome, stop.load(Ordering::SeqCst)) {
        (Err(_), _) => RunStatus::Failed,
        (Ok(()), true) => RunStatus::Interrupted,
        (Ok(()), false) if summary.stopped_at_failure => RunStatus::Failed,
        (Ok(()), false) => RunStatus::Complete,
    };
    for variant_run in &runs {
        let steal = variant_run
            .cpu_before
            .zip(kbench_sysinfo::cpu_times())
            .and_then(|(before, after)| kbench_sysinfo::steal_percent(&before, &after));
        store.end_run(variant_run.run, status, steal)?;
    }
    summary.interrupted = status == RunStatus::Interrupted;
    match outcome {
        Ok(()) => Ok(summary),
        Err(error) => Err(error.at(format!(
            "the interleaved run failed; its runs are marked failed and the {} sample(s) \
             stored are kept",
            summary.samples
        ))),
    }
}

/// Blocks of one test until the plan is met; the outcome (for the
/// baseline's identifier) says how many blocks and how precise. `None`
/// when interrupted.
#[allow(clippy::too_many_arguments)]
fn measure_test(
    store: &mut dyn RunSink,
    request: &InterleavedRequest<'_>,
    runs: &mut [VariantRun],
    test: &TestKey,
    first_round: u32,
    rng: &mut fastrand::Rng,
    observer: &mut dyn FnMut(RunEvent),
    stop: &AtomicBool,
    summary: &mut RunSummary,
) -> Result<Option<TestOutcome>> {
    let plan = &request.blocks;
    let started = Instant::now();
    let budget = plan.budget * request.variants.len() as u32;
    for run in runs.iter_mut() {
        run.block_medians.clear();
    }
    let mut order: Vec<usize> = (0..request.variants.len()).collect();
    // The command never asks for no block: the loop ends at max_blocks.
    assert!(plan.max_blocks > 0, "an interleaved test needs a block");
    for block in 0.. {
        if stop.load(Ordering::SeqCst) {
            return Ok(None);
        }
        let round = first_round + block as u32;
        let launchers: Vec<(usize, Box<dyn Launcher + '_>)> = match &request.duet {
            Some(duet) => {
                let cpus = if rng.bool() { [0, 1] } else { [1, 0] };
                let mut both = [
                    duet[0][cpus[0]].launch(&block_job(request, 0, test))?,
                    duet[1][cpus[1]].launch(&block_job(request, 1, test))?,
                ];
                // Agents that boot first (VM guests) wait for each other.
                for stream in &mut both {
                    stream.wait_until_ready()?;
                }
                for stream in &mut both {
                    stream.start();
                }
                both.into_iter()
                    .enumerate()
                    .map(|(v, stream)| (v, Box::new(Started::new(stream)) as Box<dyn Launcher>))
                    .collect()
            }
            None if takes_turns(request, test) => {
                rng.shuffle(&mut order);
                in_turns(request, test, &order, rng)?
            }
            None => {
                rng.shuffle(&mut order);
                order
                    .iter()
                    .map(|&v| {
                        (
                            v,
                            Box::new(Borrowed(request.launchers[v])) as Box<dyn Launcher>,
                        )
                    })
                    .collect()
            }
        };
        for (v, launcher) in launchers {
            let measured = measure_round(
                store,
                request,
                &mut runs[v],
                v,
                launcher.as_ref(),
                test,
                round,
                observer,
                stop,
                summary,
            )?;
            let Some((outcome, values)) = measured else {
                return Ok(None);
            };
            if matches!(
                outcome.kind,
                TestOutcomeKind::Skipped | TestOutcomeKind::Failed
            ) {
                // A variant that cannot run the test ends it for all.
                return Ok(Some(TestOutcome {
                    detail: format!("variant '{}': {}", request.variants[v].name, outcome.detail),
                    ..outcome
                }));
            }
            runs[v].block_medians.push(median(values));
        }
        let blocks = block + 1;
        let widest = widest_change_ci(runs);
        let met = widest <= plan.target_ci;
        let spent = started.elapsed() >= budget;
        if blocks >= plan.min_blocks && (met || spent) || blocks == plan.max_blocks {
            let kind = if met {
                TestOutcomeKind::TargetMet
            } else {
                TestOutcomeKind::BudgetHit
            };
            let detail = format!(
                "{blocks} blocks of {} variants, change CI within ±{}",
                request.variants.len(),
                if widest.is_finite() {
                    format!("{:.2} %", widest * 100.0)
                } else {
                    "?".to_string()
                }
            );
            let outcome = TestOutcome {
                test: test.clone(),
                kind,
                detail,
            };
            for run in runs.iter() {
                if let Some(id) = run.test_ids.get(test) {
                    store.end_test(run.run, *id, &outcome)?;
                }
            }
            return Ok(Some(outcome));
        }
    }
    unreachable!("the blocks end at max_blocks")
}

/// Whether the variants take turns on `test` ([`crate::turns`]): a
/// built-in test, every variant's agent started on this machine.
fn takes_turns(request: &InterleavedRequest<'_>, test: &TestKey) -> bool {
    kbench_bench::find(&test.benchmark).is_some()
        && request.launchers.iter().all(|l| l.takes_turns())
}

/// Starts every variant's agent of a block at once, in a ring of turns in
/// `order`. A single-task test's agents are pinned to one CPU, drawn per
/// block, unless a variant chose its own CPUs; a test of more tasks keeps
/// the placement it asks for.
fn in_turns<'a>(
    request: &InterleavedRequest<'a>,
    test: &TestKey,
    order: &[usize],
    rng: &mut fastrand::Rng,
) -> Result<Vec<(usize, Box<dyn Launcher + 'a>)>> {
    let cpus = crate::placement::allowed_cpus();
    let cpu = (kbench_bench::runs_in_one_task(&test.benchmark) && !cpus.is_empty())
        .then(|| cpus[rng.usize(..cpus.len())]);
    // The seats are dropped on return, once every agent has its ends: the
    // parent keeps none, so an agent that dies reads as a closed ring.
    let seats =
        crate::turns::ring(order.len()).map_err(MeasureError::os("making the ring of turns"))?;
    order
        .iter()
        .zip(&seats)
        .map(|(&v, seat)| {
            let own_cpus = request.variants[v].cpus.is_some();
            let job = block_job(request, v, test);
            let stream =
                request.launchers[v].launch_in_turn(&job, seat, cpu.filter(|_| !own_cpus))?;
            Ok((v, Box::new(Started::new(stream)) as Box<dyn Launcher>))
        })
        .collect()
}

/// Variant `v`'s job in a block: `test` under its own plan (a variant may
/// record no counters).
fn block_job(request: &InterleavedRequest<'_>, v: usize, test: &TestKey) -> AgentJob {
    AgentJob {
        snapshot: false,
        tests: vec![test.clone()],
        plan: request.requests[v].plan.clone(),
        tools: vec![],
    }
}

/// A launcher lent for one round.
struct Borrowed<'a>(&'a dyn Launcher);

impl Launcher for Borrowed<'_> {
    fn launch(&self, job: &AgentJob) -> Result<Box<dyn AgentStream>> {
        self.0.launch(job)
    }
}

/// One round of variant `v` on `test`, its sysctl values set around it.
#[allow(clippy::too_many_arguments)]
fn measure_round(
    store: &mut dyn RunSink,
    request: &InterleavedRequest<'_>,
    variant_run: &mut VariantRun,
    v: usize,
    launcher: &dyn Launcher,
    test: &TestKey,
    round: u32,
    observer: &mut dyn FnMut(RunEvent),
    stop: &AtomicBool,
    summary: &mut RunSummary,
) -> Result<Option<(TestOutcome, Vec<f64>)>> {
    let guard = SysctlGuard::apply(&request.variants[v])?;
    let mut round_run = RoundRun {
        store,
        request: &request.requests[v],
        run: variant_run.run,
        round,
        test_ids: std::mem::take(&mut variant_run.test_ids),
    };
    let measured = round_run.run_test(launcher, test, observer, stop, summary);
    variant_run.test_ids = std::mem::take(&mut round_run.test_ids);
    guard.restore().map_err(|e| {
        e.at(format!(
            "after a round of variant '{}' on {test}",
            request.variants[v].name
        ))
    })?;
    measured
}

fn median(values: Vec<f64>) -> Option<f64> {
    kbench_stats::Samples::new(values).ok().map(|s| s.median())
}

/// The widest half-width (log scale, about a fraction) of the paired CI
/// of each variant's change against the baseline (the first) so far.
fn widest_change_ci(runs: &[VariantRun]) -> f64 {
    let base = &runs[0].block_medians;
    runs[1..]
        .iter()
        .map(|run| {
            let diffs: Vec<f64> = base
                .iter()
                .zip(&run.block_medians)
                .filter_map(|(b, v)| Some((v.as_ref()?.ln()) - b.as_ref()?.ln()))
                .collect();
            hodges_lehmann(&diffs, 0.95).map_or(f64::INFINITY, |p| p.shift.half_width())
        })
        .fold(0.0, f64::max)
}
