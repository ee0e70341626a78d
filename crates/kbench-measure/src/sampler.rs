//! Adaptive sampling (docs/statistics.md, "Adaptive sampling"): calibrate once,
//! then take samples until the 95 % CI half-width of the mean is within the
//! target, or the time or sample budget runs out. Every sample is handed to
//! the caller the moment it exists.

use crate::plan::{SamplingPlan, StopReason};
use crate::turns::Turns;
use kbench_bench::{BenchError, Unit, Workload, calibrate};
use kbench_stats::{Samples, Summary};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// One sample of one metric, as the sampler hands it out.
#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    /// `value` for the main metric, `per_task` for scaling benchmarks.
    pub metric: &'static str,
    pub value: f64,
    pub iterations: u64,
}

/// What the sampler reports as it goes.
#[derive(Debug, Clone, PartialEq)]
pub enum Progress {
    /// Calibration chose this iteration count; samples follow.
    Calibrated {
        iterations: u64,
    },
    Sample(Measured),
}

/// The end of one test's sampling.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SamplingEnd {
    pub iterations: u64,
    pub samples: usize,
    pub stop: StopReason,
}

/// Calibrates `workload`, then samples it per `plan`; `report` hears of the
/// calibration and of each sample as it is measured. `stop` is checked
/// before each sample, so an interrupted test ends within one interval.
/// With `turns`, each sample waits for this agent's turn, and the time
/// spent waiting does not count against the plan's time.
pub fn sample(
    workload: &mut dyn Workload,
    unit: Unit,
    plan: &SamplingPlan,
    stop: &AtomicBool,
    mut turns: Option<&mut Turns>,
    mut report: impl FnMut(Progress),
) -> Result<SamplingEnd, BenchError> {
    let started = Instant::now();
    let iterations = calibrate(workload, plan.min_interval)?;
    report(Progress::Calibrated { iterations });
    let tasks = workload.tasks();
    let mut values = Vec::new();
    let stop = loop {
        if stop.load(Ordering::SeqCst) {
            break StopReason::Interrupted;
        }
        let interval = workload.run(iterations)?;
        let value = unit.value(interval);
        if !value.is_finite() || value <= 0.0 {
            return Err(BenchError::Os {
                what: format!("interval gave an unusable value {value} ({interval:?})"),
                error: std::io::Error::other("non-positive or non-finite sample"),
            });
        }
        values.push(value);
        report(Progress::Sample(Measured {
            metric: kbench_model::MAIN_METRIC,
            value,
            iterations,
        }));
        if tasks > 1 {
            report(Progress::Sample(Measured {
                metric: "per_task",
                value: value / f64::from(tasks),
                iterations,
            }));
        }
        let waited = turns.as_ref().map_or(Duration::ZERO, |t| t.waited());
        let wants = should_stop(&values, plan, started.elapsed().saturating_sub(waited));
        let ends = match turns.as_deref_mut() {
            Some(turns) => turns.between(wants).map_err(|error| BenchError::Os {
                what: "waiting for this variant's turn".to_string(),
                error,
            })?,
            None => wants,
        };
        if let Some(stop) = ends {
            break stop;
        }
    };
    Ok(SamplingEnd {
        iterations,
        samples: values.len(),
        stop,
    })
}

/// The stopping rule on the main metric's samples so far.
pub fn should_stop(values: &[f64], plan: &SamplingPlan, elapsed: Duration) -> Option<StopReason> {
    let n = values.len();
    if n >= plan.min_samples.max(2) && relative_ci(values) <= plan.target_ci {
        return Some(StopReason::TargetMet);
    }
    if n >= plan.max_samples {
        return Some(StopReason::SampleBudget);
    }
    if n >= plan.min_samples && elapsed >= plan.max_time {
        return Some(StopReason::TimeBudget);
    }
    None
}

/// The CI half-width of the mean as a fraction of the mean (infinite when
/// it cannot be known yet).
pub fn relative_ci(values: &[f64]) -> f64 {
    Samples::new(values.to_vec())
        .map(|s| Summary::of(&s).ci.relative_half_width())
        .unwrap_or(f64::INFINITY)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kbench_bench::Interval;

    /// A fake benchmark: 1 us per iteration times a fixed noise pattern, so
    /// the sampler's decisions are deterministic and take no real time.
    struct Fake {
        noise: Vec<f64>,
        calls: usize,
    }

    impl Workload for Fake {
        fn run(&mut self, iterations: u64) -> Result<Interval, BenchError> {
            let factor = self.noise[self.calls % self.noise.len()];
            self.calls += 1;
            Ok(Interval {
                elapsed: Duration::from_nanos((iterations as f64 * 1000.0 * factor) as u64),
                work: iterations as f64,
            })
        }
    }

    fn run_fake(noise: Vec<f64>, plan: &SamplingPlan) -> (SamplingEnd, Vec<f64>) {
        let mut fake = Fake { noise, calls: 0 };
        let mut values = vec![];
        let end = sample(
            &mut fake,
            Unit::Nanos,
            plan,
            &AtomicBool::new(false),
            None,
            |p| {
                if let Progress::Sample(m) = p {
                    values.push(m.value);
                }
            },
        )
        .unwrap();
        (end, values)
    }

    #[test]
    fn stops_at_the_minimum_when_quiet() {
        let (end, values) = run_fake(vec![1.0, 1.001, 0.999], &SamplingPlan::default());
        assert_eq!(end.stop, StopReason::TargetMet);
        assert_eq!(end.samples, 5);
        assert_eq!(values.len(), 5);
    }

    #[test]
    fn takes_more_samples_when_noisy_and_stops_at_target() {
        // +-5 % noise: needs many more samples than 5 to reach a 1 % CI.
        let noise = vec![1.05, 0.95, 1.02, 0.98, 1.04, 0.96, 1.0];
        let plan = SamplingPlan::default();
        let (end, values) = run_fake(noise, &plan);
        assert_eq!(end.stop, StopReason::TargetMet);
        assert!(end.samples > 5, "stopped after {} samples", end.samples);
        assert!(relative_ci(&values) <= plan.target_ci);
        assert!(
            relative_ci(&values[..values.len() - 1]) > plan.target_ci,
            "went past the target"
        );
    }

    #[test]
    fn stops_at_the_sample_budget() {
        let noise = vec![1.5, 0.5];
        let plan = SamplingPlan {
            max_samples: 8,
            ..SamplingPlan::default()
        };
        let (end, values) = run_fake(noise, &plan);
        assert_eq!(end.stop, StopReason::SampleBudget);
        assert_eq!(values.len(), 8);
    }

    #[test]
    fn a_raised_stop_flag_ends_sampling_before_the_next_sample() {
        let mut fake = Fake {
            noise: vec![1.5, 0.5],
            calls: 0,
        };
        let stop = AtomicBool::new(false);
        let mut samples = 0;
        let end = sample(
            &mut fake,
            Unit::Nanos,
            &SamplingPlan::default(),
            &stop,
            None,
            |p| {
                if let Progress::Sample(_) = p {
                    samples += 1;
                    if samples == 3 {
                        stop.store(true, Ordering::SeqCst);
                    }
                }
            },
        )
        .unwrap();
        assert_eq!(end.stop, StopReason::Interrupted);
        assert_eq!(end.samples, 3);
    }

    #[test]
    fn time_budget_waits_for_the_minimum() {
        let plan = SamplingPlan::default();
        let late = plan.max_time * 2;
        assert_eq!(should_stop(&[1.0, 2.0], &plan, late), None);
        assert_eq!(
            should_stop(&[1.0, 2.0, 1.0, 2.0, 1.0], &plan, late),
            Some(StopReason::TimeBudget)
        );
    }
}
