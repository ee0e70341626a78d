//! The measuring side: runs a job of built-in benchmarks and external
//! profile tests ([`kbench_catalog::profile`]) and writes one [`AgentEvent`] JSON
//! line per thing that happens, flushed at once, so the side that stores
//! samples (the `kbench run` parent, or a VM's host) commits each sample as
//! it is measured. `kbench agent` runs this in a fresh
//! process, under the user's wrapper when there is one. Every test's
//! samples are followed by its interference monitors ([`crate::monitor`]).

use crate::counters::{Event, count_interval};
use crate::monitor::RoundMonitor;
use crate::plan::{SamplingPlan, StopReason};
use crate::sampler::{Progress, sample};
use crate::sysmon::SystemRound;
use crate::turns::Turns;
use kbench_bench::{BenchError, BenchInfo};
use kbench_catalog::profile::Profiles;
use kbench_model::{AgentEvent, TestKey};
use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use std::io::{self, Write};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// What one agent invocation does.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentJob {
    /// Emit the system snapshot first.
    pub snapshot: bool,
    /// Tests to run in order (canonical keys of built-in benchmarks or of
    /// profile tests; user profiles come from `KBENCH_PROFILES`).
    pub tests: Vec<TestKey>,
    pub plan: SamplingPlan,
    /// With `snapshot`: the run's profile tests, whose tools' versions and
    /// descriptions the snapshot records ([`crate::profile::version`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<TestKey>,
}

/// Routes SIGINT and SIGTERM to `stop` instead of killing the agent: the
/// running test stops before its next sample and its workload is dropped,
/// so partners are reaped and temporary files removed before the agent
/// exits.
pub fn stop_on_signals(stop: &Arc<AtomicBool>) -> io::Result<()> {
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(signal, Arc::clone(stop))?;
    }
    Ok(())
}

/// Runs `job`, writing events to `out`, until `stop` is raised. Fails only
/// when `out` fails (the reader is gone) or the agent was stopped
/// (`ErrorKind::Interrupted`; the unfinished test gets no end event, so a
/// resumed run measures it again); a benchmark's failure is an event and
/// the job goes on. With `turns` (an interleaved block, [`crate::turns`]),
/// the agent works only while it holds the token, and built-in tests
/// sample one sample a turn.
pub fn run_job(
    job: &AgentJob,
    out: &mut dyn Write,
    mut turns: Option<&mut Turns>,
    stop: &AtomicBool,
) -> io::Result<()> {
    if let Some(turns) = turns.as_deref_mut()
        && !turns.begin()?
    {
        for test in &job.tests {
            emit(
                out,
                &AgentEvent::Failed {
                    test: test.clone(),
                    reason: "the block ended before this variant's turn (another variant's \
                             agent ended early)"
                        .to_string(),
                },
            )?;
        }
        return Ok(());
    }
    let result = run_tests(job, out, turns.as_deref_mut(), stop);
    match turns {
        Some(turns) => turns.end().and(result),
        None => result,
    }
}

/// The built-in profiles and the user's (`KBENCH_PROFILES`), or why not.
fn load_profiles() -> Result<Profiles, String> {
    Profiles::from_env().map_err(|e| e.to_string())
}

fn run_tests(
    job: &AgentJob,
    out: &mut dyn Write,
    mut turns: Option<&mut Turns>,
    stop: &AtomicBool,
) -> io::Result<()> {
    let stopped = || stop.load(Ordering::SeqCst);
    // Read once, when the first test that is not built-in needs them.
    let mut profiles: Option<Result<Profiles, String>> = None;
    if job.snapshot {
        let mut snapshot = Box::new(crate::snapshot(Path::new(".")));
        if job
            .tools
            .iter()
            .any(|t| kbench_bench::find(&t.benchmark).is_none())
            && let Ok(profiles) = profiles.get_or_insert_with(load_profiles)
        {
            (snapshot.tools, snapshot.tools_notes) =
                crate::profile::version::tools(profiles, &job.tools, Path::new("."), &stopped);
        }
        emit(out, &AgentEvent::Snapshot { snapshot })?;
    }
    for test in &job.tests {
        if stopped() {
            break;
        }
        let builtin = kbench_bench::find(&test.benchmark);
        // Every test's events pass its interference and system monitors,
        // which read between samples and send their samples before the
        // test's end; an external tool's also get its children's rusage.
        let mut monitor = RoundMonitor::start();
        let system = RefCell::new(SystemRound::new(
            &job.plan.record.monitors,
            builtin.is_none(),
        ));
        let mut emit_monitored = |event: AgentEvent| -> io::Result<()> {
            match &event {
                AgentEvent::TestStart { .. } => system.borrow_mut().start(),
                AgentEvent::Sample {
                    metric, iterations, ..
                } => {
                    monitor.between_samples();
                    if !kbench_model::is_secondary_metric(metric) {
                        system.borrow_mut().sampled(metric, *iterations);
                    }
                }
                AgentEvent::TestEnd { .. } => {
                    let system = system.borrow_mut().finish();
                    for monitored in monitor.finish().iter().chain(&system) {
                        emit(out, monitored)?;
                    }
                }
                _ => {}
            }
            emit(out, &event)
        };
        // Counting runs after the samples: the system's window ends first.
        let close_window = || system.borrow_mut().close();
        let counting = job
            .plan
            .record
            .counters
            .then_some(&close_window as &dyn Fn());
        if let Some(info) = builtin {
            run_builtin(
                info,
                test,
                &job.plan,
                counting,
                turns.as_deref_mut(),
                stop,
                &mut emit_monitored,
            )?;
            continue;
        }
        match profiles.get_or_insert_with(load_profiles) {
            Ok(profiles) => {
                // Scratch files go to the work directory (its filesystem is
                // the one the snapshot records).
                let work_dir = std::env::current_dir().unwrap_or_else(|_| ".".into());
                crate::profile::run_test(
                    profiles,
                    test,
                    &job.plan,
                    &work_dir,
                    stop,
                    &mut emit_monitored,
                )?;
            }
            Err(reason) => {
                let reason = reason.clone();
                emit_monitored(AgentEvent::Failed {
                    test: test.clone(),
                    reason,
                })?;
            }
        }
    }
    if stopped() {
        return Err(io::Error::new(
            io::ErrorKind::Interrupted,
            "stopped by a signal",
        ));
    }
    Ok(())
}

/// One built-in test (`info` is its benchmark), sampled per `plan`. With
/// `counting`, the round's counters are counted after the samples, once
/// `counting` has ended what must not see that interval.
fn run_builtin(
    info: &BenchInfo,
    test: &TestKey,
    plan: &SamplingPlan,
    counting: Option<&dyn Fn()>,
    turns: Option<&mut Turns>,
    stop: &AtomicBool,
    emit: &mut dyn FnMut(AgentEvent) -> io::Result<()>,
) -> io::Result<()> {
    let prepared = info
        .resolve(test)
        .and_then(|(key, options)| info.prepare(&options).map(|w| (key, w)));
    let (key, mut workload) = match prepared {
        Ok(ready) => ready,
        Err(error) => return emit(failure_event(test, &error)),
    };
    let unit = info.unit;
    // Events are written from the sampler's callback; the first write error
    // is kept and returned once sampling ends.
    let mut write_error: Option<io::Error> = None;
    let result = sample(workload.as_mut(), unit, plan, stop, turns, |progress| {
        let event = match progress {
            Progress::Calibrated { iterations } => AgentEvent::TestStart {
                test: key.clone(),
                unit: unit.label().to_string(),
                direction: info.direction,
                iterations,
            },
            Progress::Sample(m) => AgentEvent::Sample {
                metric: m.metric.to_string(),
                value: m.value,
                iterations: m.iterations,
                at_ms: kbench_model::now_ms(),
            },
        };
        if write_error.is_none() {
            write_error = emit(event).err();
        }
    });
    // The round's counters, in an interval of their own after the samples
    // (still this agent's turn in a block; in a duet, the other side may
    // still be sampling on its CPU); a failure there fails nothing.
    let counted = match &result {
        Ok(end)
            if counting.is_some()
                && end.samples > 0
                && info.in_measuring_task
                && !stop.load(Ordering::SeqCst) =>
        {
            counting.into_iter().for_each(|close| close());
            let per_op = count_interval(workload.as_mut(), end.iterations).unwrap_or_default();
            counter_events(&per_op, end.iterations)
        }
        _ => vec![],
    };
    drop(workload);
    if stop.load(Ordering::SeqCst) {
        // Whatever the sampler said (a partner killed by the same SIGINT
        // fails the interval), the test is unfinished, not failed.
        return write_error.map_or(Ok(()), Err);
    }
    let last = match result {
        Ok(end) => AgentEvent::TestEnd {
            target_met: end.stop == StopReason::TargetMet,
            stop: end.stop.describe(plan),
        },
        Err(error) => failure_event(&key, &error),
    };
    if let Some(error) = write_error {
        return Err(error);
    }
    // Counters are sent only after samples that succeeded.
    for event in counted {
        emit(event)?;
    }
    emit(last)
}

/// The round's counters per operation, each declared then sampled once;
/// a counter that counted nothing is not sent (absence is 0).
fn counter_events(counted: &[(Event, f64)], iterations: u64) -> Vec<AgentEvent> {
    let at_ms = kbench_model::now_ms();
    counted
        .iter()
        .filter(|(_, value)| *value > 0.0)
        .flat_map(|(event, value)| {
            AgentEvent::secondary_sample(event.metric(), event.unit, *value, iterations, at_ms)
        })
        .collect()
}

fn failure_event(test: &TestKey, error: &BenchError) -> AgentEvent {
    match error {
        BenchError::Skip(reason) => AgentEvent::Skip {
            test: test.clone(),
            reason: reason.clone(),
        },
        other => AgentEvent::Failed {
            test: test.clone(),
            reason: other.to_string(),
        },
    }
}

/// Writes one event as a JSON line and flushes it.
pub fn emit(out: &mut dyn Write, event: &AgentEvent) -> io::Result<()> {
    let line = serde_json::to_string(event).map_err(io::Error::other)?;
    writeln!(out, "{line}")?;
    out.flush()
}
