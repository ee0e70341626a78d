//! The agent's interference monitors of one test (one round): steal time,
//! runnable tasks, the agent's involuntary context switches, and the
//! control loop before and after (kbench-model's `monitor` names them).
//!
//! Nothing here runs inside a timed interval: [`RoundMonitor::start`] runs
//! before the test, [`RoundMonitor::between_samples`] after a sample is
//! reported (between intervals), and [`RoundMonitor::finish`] after the
//! last sample.

use kbench_model::{
    AgentEvent, Direction, MONITOR_CONTROL, MONITOR_NIVCSW, MONITOR_RUNNING, MONITOR_STEAL,
    MONITORS,
};
use kbench_sysinfo::CpuTimes;
use std::hint::black_box;
use std::time::{Duration, Instant};

/// How long one control measurement runs: long enough that a timer tick or
/// a cache miss does not move it, short against a round.
pub const CONTROL_TIME: Duration = Duration::from_millis(20);

/// How often, at most, the runnable tasks are read between samples.
const RUNNABLE_EVERY: Duration = Duration::from_millis(100);

/// The monitors of one running test.
pub struct RoundMonitor {
    cpu_before: Option<CpuTimes>,
    nivcsw_before: Option<i64>,
    /// `procs_running` readings (the agent included).
    running: Vec<f64>,
    last_read: Instant,
    control_before: Control,
}

/// One control measurement.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Control {
    pub ns_per_iteration: f64,
    pub iterations: u64,
}

impl RoundMonitor {
    /// Runs the control loop, then reads the counters the test's deltas
    /// start from.
    pub fn start() -> RoundMonitor {
        let control_before = control_loop(CONTROL_TIME);
        let mut monitor = RoundMonitor {
            cpu_before: kbench_sysinfo::cpu_times(),
            nivcsw_before: involuntary_switches(),
            running: Vec::new(),
            last_read: Instant::now(),
            control_before,
        };
        monitor.read_running();
        monitor
    }

    /// Reads the runnable tasks when the last reading is old enough.
    pub fn between_samples(&mut self) {
        if self.last_read.elapsed() >= RUNNABLE_EVERY {
            self.read_running();
        }
    }

    fn read_running(&mut self) {
        if let Some(running) = kbench_sysinfo::procs_running() {
            self.running.push(f64::from(running));
        }
        self.last_read = Instant::now();
    }

    /// Ends the test's monitors: the counters' deltas, then the control
    /// loop again. Returns each monitor's declaration and its samples, to
    /// be sent before the test's end event.
    pub fn finish(&mut self) -> Vec<AgentEvent> {
        self.read_running();
        let nivcsw = self
            .nivcsw_before
            .zip(involuntary_switches())
            .map(|(before, after)| (after - before).max(0) as f64);
        let steal = self
            .cpu_before
            .zip(kbench_sysinfo::cpu_times())
            .and_then(|(before, after)| kbench_sysinfo::steal_percent(&before, &after));
        let running = (!self.running.is_empty()).then(|| mean(&self.running));
        let control_after = control_loop(CONTROL_TIME);
        let mut samples: Vec<(&str, f64, u64)> = Vec::new();
        samples.extend(steal.map(|v| (MONITOR_STEAL, v, 1)));
        samples.extend(running.map(|v| (MONITOR_RUNNING, v, 1)));
        samples.extend(nivcsw.map(|v| (MONITOR_NIVCSW, v, 1)));
        for control in [self.control_before, control_after] {
            samples.push((
                MONITOR_CONTROL,
                control.ns_per_iteration,
                control.iterations,
            ));
        }
        // The store keeps positive values only: no steal, no switch and
        // (unreadable) no runnable task are told by the sample's absence.
        samples.retain(|&(_, value, _)| value > 0.0 && value.is_finite());
        let at_ms = kbench_model::now_ms();
        let mut events = Vec::new();
        for (name, unit) in MONITORS {
            let mine: Vec<_> = samples.iter().filter(|(n, ..)| *n == name).collect();
            if mine.is_empty() {
                continue;
            }
            events.push(AgentEvent::Metric {
                metric: name.to_string(),
                unit: unit.to_string(),
                direction: Direction::Lower,
            });
            events.extend(
                mine.into_iter()
                    .map(|&(_, value, iterations)| AgentEvent::Sample {
                        metric: name.to_string(),
                        value,
                        iterations,
                        at_ms,
                    }),
            );
        }
        events
    }
}

fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len() as f64
}

/// The control loop: a dependent chain of 64-bit LCG steps (multiply, add)
/// in userspace only, run in chunks until `time` has passed. Each step
/// needs the one before and goes through `black_box`, so the compiler can
/// neither remove nor shorten it; it touches no memory beyond the stack, so
/// only the CPU's own speed (its frequency, the host's vCPU state, an
/// SMT sibling, preemption) moves it.
pub fn control_loop(time: Duration) -> Control {
    const CHUNK: u64 = 50_000;
    let started = Instant::now();
    let mut x = black_box(0x2545_f491_4f6c_dd1d_u64);
    let mut iterations = 0;
    loop {
        for _ in 0..CHUNK {
            x = black_box(
                x.wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407),
            );
        }
        iterations += CHUNK;
        let elapsed = started.elapsed();
        if elapsed >= time {
            black_box(x);
            return Control {
                ns_per_iteration: elapsed.as_nanos() as f64 / iterations as f64,
                iterations,
            };
        }
    }
}

/// This process's involuntary context switches so far (`ru_nivcsw`: it was
/// preempted while it could have run on).
fn involuntary_switches() -> Option<i64> {
    // SAFETY: `rusage` is plain C data, valid when zeroed.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `usage` is a valid, writable `rusage`.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } != 0 {
        return None;
    }
    Some(usage.ru_nivcsw as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_control_loop_runs_its_time_and_reports_a_speed() {
        let control = control_loop(Duration::from_millis(5));
        assert!(control.iterations >= 50_000);
        assert!(
            control.ns_per_iteration > 0.0 && control.ns_per_iteration.is_finite(),
            "{control:?}"
        );
    }

    #[test]
    fn a_round_sends_every_monitor_declared_before_its_samples() {
        let mut monitor = RoundMonitor::start();
        monitor.between_samples();
        let events = monitor.finish();
        let mut declared: Vec<String> = Vec::new();
        let mut controls = 0;
        for event in &events {
            match event {
                AgentEvent::Metric { metric, .. } => declared.push(metric.clone()),
                AgentEvent::Sample { metric, value, .. } => {
                    assert!(declared.contains(metric), "{metric} sent before declared");
                    assert!(*value > 0.0 && value.is_finite(), "{metric} = {value}");
                    controls += usize::from(metric == MONITOR_CONTROL);
                }
                other => panic!("unexpected {other:?}"),
            }
        }
        assert_eq!(controls, 2, "a control before and one after");
        // /proc is there on Linux, and the agent itself is running.
        for name in [MONITOR_RUNNING, MONITOR_CONTROL] {
            assert!(declared.iter().any(|d| d == name), "{name} missing");
        }
    }

    /// Runs the agent in this process, its events replayed to the runner.
    struct InProcess;

    impl crate::launcher::Launcher for InProcess {
        fn launch(
            &self,
            job: &crate::agent::AgentJob,
        ) -> crate::Result<Box<dyn crate::launcher::AgentStream>> {
            let mut out = Vec::new();
            let never = std::sync::atomic::AtomicBool::new(false);
            crate::agent::run_job(job, &mut out, None, &never).unwrap();
            let events: Vec<AgentEvent> = String::from_utf8(out)
                .unwrap()
                .lines()
                .map(|line| serde_json::from_str(line).unwrap())
                .collect();
            Ok(Box::new(crate::launcher::Replay::new(events)))
        }
    }

    /// The real agent on a fast built-in test: every round stores its
    /// monitors beside the measured samples, with plausible values.
    #[test]
    fn the_agent_stores_monitors_with_every_round() {
        use kbench_model::TestKey;
        let (_dir, mut store) = kbench_store::testing::temp_store();
        let request = crate::runner::RunRequest {
            set: "s".into(),
            identifier: "a".into(),
            tests: vec![TestKey::new("syscall-null")],
            plan: crate::plan::SamplingPlan {
                max_time: Duration::from_millis(50),
                ..Default::default()
            },
            rounds: 2,
            adaptive: None,
            wrapper: None,
            notes: vec![],
            host: None,
            keep_going: false,
            replayed: None,
        };
        let stop = std::sync::atomic::AtomicBool::new(false);
        crate::runner::execute(&mut store, &InProcess, &request, &mut |_| {}, &stop).unwrap();
        let data = kbench_store::Results::load(&mut store, "s").unwrap();
        let test = TestKey::new("syscall-null");
        let id = &data.identifiers[0];
        let of = |metric: &str| -> Vec<(u32, f64)> {
            id.samples
                .get(&test.with_metric(metric))
                .map(|s| s.iter().map(|s| (s.round, s.value)).collect())
                .unwrap_or_default()
        };
        let control = of(MONITOR_CONTROL);
        let rounds: Vec<u32> = control.iter().map(|c| c.0).collect();
        assert_eq!(
            rounds,
            [0, 0, 1, 1],
            "a control before and after each round"
        );
        // A pure userspace loop step takes well under a microsecond.
        assert!(
            control.iter().all(|c| c.1 > 0.0 && c.1 < 1000.0),
            "{control:?}"
        );
        let running = of(MONITOR_RUNNING);
        assert_eq!(running.len(), 2, "{running:?}");
        assert!(running.iter().all(|r| r.1 >= 1.0), "the agent itself runs");
        // Steal and switches are stored only when above 0, at most once a round.
        for metric in [MONITOR_STEAL, MONITOR_NIVCSW] {
            let values = of(metric);
            assert!(
                values.len() <= 2 && values.iter().all(|v| v.1 > 0.0),
                "{values:?}"
            );
        }
        for (metric, unit) in MONITORS {
            if let Some(spec) = data
                .tests
                .iter()
                .find(|t| t.key == test.with_metric(metric))
            {
                assert_eq!(
                    (spec.unit.as_str(), spec.direction),
                    (unit, Direction::Lower)
                );
            }
        }
        // The measured metric keeps the test's own unit.
        let main = data.tests.iter().find(|t| t.key == test).unwrap();
        assert_eq!(main.unit, "ns");
        assert!(of(kbench_model::MAIN_METRIC).len() >= 10);
    }
}
