//! Waiting for a freshly booted machine to settle (boot services done,
//! caches warm) before its invocation: until the 1-minute load average is
//! low enough and the machine has been up long enough, or a time limit.

use kbench_model::campaign::{Settle, Settled};
use std::time::{Duration, Instant};

/// How often the load is read.
const POLL: Duration = Duration::from_secs(2);
/// How often a waiting line is told.
const TELL_EVERY: Duration = Duration::from_secs(30);

/// The 1-minute load average and the uptime in seconds, read now.
fn read() -> (f64, f64) {
    let first = |path: &str| {
        std::fs::read_to_string(path)
            .ok()
            .and_then(|text| text.split_whitespace().next()?.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (first("/proc/loadavg"), first("/proc/uptime"))
}

/// Whether `load` and `uptime_s` meet `settle`.
fn settled(settle: &Settle, load: f64, uptime_s: f64) -> bool {
    load <= settle.max_load && uptime_s >= settle.min_uptime_s
}

/// Waits until the machine meets `settle` or its time limit passes;
/// `tell` hears a line now and then while waiting.
pub fn wait(settle: &Settle, tell: &mut dyn FnMut(String)) -> Settled {
    let started = Instant::now();
    let mut told = started;
    loop {
        let (load, uptime_s) = read();
        let waited_s = started.elapsed().as_secs_f64();
        let done = settled(settle, load, uptime_s);
        if done || waited_s >= settle.timeout_s {
            return Settled {
                settled: done,
                waited_s,
                load,
                uptime_s,
            };
        }
        if told.elapsed() >= TELL_EVERY {
            told = Instant::now();
            tell(format!(
                "waiting for the machine to settle: load {load:.2} (at most {:.2}), up {uptime_s:.0} s (at least {:.0} s)",
                settle.max_load, settle.min_uptime_s
            ));
        }
        std::thread::sleep(POLL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settled_needs_both_the_load_and_the_uptime() {
        let settle = Settle {
            max_load: 0.5,
            min_uptime_s: 60.0,
            timeout_s: 600.0,
        };
        assert!(settled(&settle, 0.4, 61.0));
        assert!(!settled(&settle, 0.6, 61.0));
        assert!(!settled(&settle, 0.1, 59.0));
    }

    #[test]
    fn the_wait_ends_at_its_limit_and_says_it_did_not_settle() {
        let settle = Settle {
            max_load: -1.0,
            min_uptime_s: 0.0,
            timeout_s: 0.0,
        };
        let outcome = wait(&settle, &mut |_| {});
        assert!(!outcome.settled);
        assert!(outcome.uptime_s > 0.0);
    }
}
