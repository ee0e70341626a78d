//! Interference monitors: metrics the agent records with every round of
//! every test beside what it measures, so a round that ran while the machine
//! was busy, stolen from or slow can be told from one that was not
//! (docs/statistics.md, "Interference monitors"). They are stored as metrics
//! of the test (`syscall-null:monitor.steal`) through the ordinary write
//! path, and are never results: reports leave them out of verdicts,
//! geometric means and the FDR family ([`is_monitor_metric`]).

/// What every monitor metric's name begins with. Profile metric names are
/// lowercase letters, digits and `_`, and built-in ones `value` and
/// `per_task`, so no measured metric can take it.
pub const MONITOR_PREFIX: &str = "monitor.";

/// Steal time over the test, in % of all CPU time (`/proc/stat`). Not
/// stored when it is 0 (the store keeps positive values only): a round with
/// monitors but no steal sample had none.
pub const MONITOR_STEAL: &str = "monitor.steal";

/// Runnable tasks during the test: the mean of `/proc/stat`
/// `procs_running`, read between samples, the agent itself included (so at
/// least 1; the other runnable tasks are this minus 1).
pub const MONITOR_RUNNING: &str = "monitor.running";

/// The agent's involuntary context switches over the test. Not stored
/// when 0, like [`MONITOR_STEAL`].
pub const MONITOR_NIVCSW: &str = "monitor.nivcsw";

/// The control loop: ns per iteration of a short pure-userspace loop, one
/// sample before and one after the test. It shows how fast the machine
/// itself was.
pub const MONITOR_CONTROL: &str = "monitor.control";

/// Each monitor with its unit; smaller is always better (less disturbed).
pub const MONITORS: [(&str, &str); 4] = [
    (MONITOR_STEAL, "%"),
    (MONITOR_RUNNING, "tasks"),
    (MONITOR_NIVCSW, "switches"),
    (MONITOR_CONTROL, "ns"),
];

/// The note stored with a run that `kbench run --redo-disturbed` made to
/// run disturbed rounds again; reports find replacement rounds by it.
pub const REDO_NOTE: &str = "rounds run again for disturbed ones (kbench run --redo-disturbed)";

/// Whether `metric` (a [`crate::TestKey`]'s metric) is an interference
/// monitor rather than a measured result.
pub fn is_monitor_metric(metric: &str) -> bool {
    metric.starts_with(MONITOR_PREFIX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{TestKey, TestSpec};

    #[test]
    fn monitors_are_told_from_measured_metrics() {
        for (name, _) in MONITORS {
            assert!(is_monitor_metric(name), "{name}");
        }
        for name in [crate::MAIN_METRIC, "per_task", "monitor", "latency"] {
            assert!(!is_monitor_metric(name), "{name}");
        }
    }

    /// Every monitor is a valid, storable metric of a test.
    #[test]
    fn monitor_keys_are_storable() {
        for (name, unit) in MONITORS {
            let key = TestKey::parse("pipe-lat[placement=cross]")
                .unwrap()
                .with_metric(name);
            let spec = TestSpec {
                key: key.clone(),
                unit: unit.to_string(),
                direction: crate::Direction::Lower,
            };
            crate::check_test_spec(&spec).unwrap();
            assert_eq!(TestKey::parse(&key.to_string()).unwrap(), key);
        }
    }
}
