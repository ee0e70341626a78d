//! lmbench-style calibration: grow the iteration count until one timed
//! interval lasts at least [`MIN_INTERVAL`], then keep it fixed for the run.

use crate::{BenchError, Workload};
use std::time::Duration;

/// The shortest timed interval a sample may come from.
pub const MIN_INTERVAL: Duration = Duration::from_millis(5);

/// The largest iteration count calibration will reach.
const MAX_ITERATIONS: u64 = 1 << 40;

/// Finds the iteration count whose interval lasts at least `min_interval`,
/// aiming at twice that so that later intervals stay above the minimum when
/// the machine's load changes; the workload runs untimed on the way, and
/// once more at the final count as the warm-up.
pub fn calibrate(workload: &mut dyn Workload, min_interval: Duration) -> Result<u64, BenchError> {
    let target = min_interval.as_secs_f64() * 2.0;
    let scale = |iterations: u64, factor: f64| {
        ((iterations as f64 * factor).ceil() as u64).min(MAX_ITERATIONS)
    };
    let mut iterations = 1u64;
    let mut warm_ups = 0;
    loop {
        let interval = workload.run(iterations)?;
        let elapsed = interval.elapsed.as_secs_f64().max(1e-9);
        if interval.elapsed < min_interval && iterations < MAX_ITERATIONS {
            // Grow towards the target, at least 2x and at most 10x per step.
            iterations = scale(iterations, (target / elapsed).clamp(2.0, 10.0));
            continue;
        }
        // Long enough to time: scale up to the target if below it, then one
        // more untimed warm-up interval at the final count. A cold first
        // run (page faults, an emulator translating code) can make the
        // count too small: if the warm-up falls short, calibrate again
        // from there (a few times at most).
        iterations = scale(iterations, (target / elapsed).max(1.0));
        let warm = workload.run(iterations)?;
        warm_ups += 1;
        if warm.elapsed >= min_interval || warm_ups == MAX_WARM_UPS || iterations >= MAX_ITERATIONS
        {
            return Ok(iterations);
        }
        let warm_elapsed = warm.elapsed.as_secs_f64().max(1e-9);
        iterations = scale(iterations, (target / warm_elapsed).clamp(1.0, 10.0));
    }
}

/// How many warm-up intervals may send calibration back to growing.
const MAX_WARM_UPS: u32 = 4;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Interval;

    /// A workload whose interval is 1 us per iteration, without sleeping.
    struct Fake {
        calls: Vec<u64>,
    }

    impl Workload for Fake {
        fn run(&mut self, iterations: u64) -> Result<Interval, BenchError> {
            self.calls.push(iterations);
            Ok(Interval {
                elapsed: Duration::from_micros(iterations),
                work: iterations as f64,
            })
        }
    }

    /// A workload whose first intervals run 10x slower (cold caches, an
    /// emulator translating code), then 1 us per iteration.
    struct ColdStart {
        calls: u32,
    }

    impl Workload for ColdStart {
        fn run(&mut self, iterations: u64) -> Result<Interval, BenchError> {
            self.calls += 1;
            let per_iteration = if self.calls <= 4 { 10 } else { 1 };
            Ok(Interval {
                elapsed: Duration::from_micros(iterations * per_iteration),
                work: iterations as f64,
            })
        }
    }

    #[test]
    fn a_cold_start_does_not_leave_intervals_short() {
        let mut cold = ColdStart { calls: 0 };
        let n = calibrate(&mut cold, MIN_INTERVAL).unwrap();
        let warm = cold.run(n).unwrap();
        assert!(
            warm.elapsed >= MIN_INTERVAL,
            "{n} iterations take {:?} once warm",
            warm.elapsed
        );
    }

    #[test]
    fn reaches_the_minimum_interval_and_warms_up() {
        let mut fake = Fake { calls: vec![] };
        let n = calibrate(&mut fake, MIN_INTERVAL).unwrap();
        assert!(n >= 10_000, "{n} iterations of 1 us is under twice 5 ms");
        assert!(n < 40_000, "{n} overshoots");
        let last_two = &fake.calls[fake.calls.len() - 2..];
        assert_eq!(last_two, &[n, n], "the final count runs once more untimed");
    }
}
