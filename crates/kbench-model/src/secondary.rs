//! Secondary metrics: what the agent records with every round of a test
//! to say why its numbers moved, not what it measures.
//!
//! - The measuring task's counters (`perf.context_switches_per_op`).
//! - The system's monitors over the round (`vmstat.pgfault_per_op`,
//!   `interrupts.LOC_per_op`, `softirqs.TIMER_per_op`,
//!   `sched.wait_ns_per_op`, `psi.cpu_some_pct`).
//! - An external tool's resource use (`rusage.user_ms_per_op`).
//!
//! Each is stored as a metric of the test, one sample per round. The store
//! keeps positive values only, so a metric that counted nothing in a round
//! is told by its absence: within a round that has any sample of its
//! family (the part before the dot), a missing metric was 0. Reports
//! compare them apart from the results: never in the FDR family, the
//! geometric mean or the verdict counts of the measured metrics
//! ([`is_secondary_metric`]).

/// What the perf counters' metric names begin with.
pub const COUNTER_PREFIX: &str = "perf.";

/// Every secondary family, by the prefix of its metrics' names.
pub const SECONDARY_FAMILIES: [&str; 7] = [
    "perf",
    "vmstat",
    "interrupts",
    "softirqs",
    "sched",
    "psi",
    "rusage",
];

/// The family of a secondary metric (`perf` of `perf.cycles_per_op`), or
/// `None` for any other metric. Measured metrics have no dot in their
/// names (profile metrics are lowercase letters, digits and `_`), so none
/// can be taken for one.
pub fn secondary_family(metric: &str) -> Option<&'static str> {
    let (family, rest) = metric.split_once('.')?;
    if rest.is_empty() {
        return None;
    }
    SECONDARY_FAMILIES.iter().copied().find(|f| *f == family)
}

/// Whether `metric` is a secondary metric rather than a measured result.
pub fn is_secondary_metric(metric: &str) -> bool {
    secondary_family(metric).is_some()
}

/// Whether `metric` is a measured result: neither an interference monitor
/// nor a secondary metric.
pub fn is_result_metric(metric: &str) -> bool {
    !crate::is_monitor_metric(metric) && !is_secondary_metric(metric)
}

/// The readable name of a secondary metric: `perf.context_switches_per_op`
/// is "context switches/op", `vmstat.pgfault_per_op` "vmstat pgfault/op",
/// `psi.cpu_some_pct` "psi cpu_some" (its unit says %).
pub fn secondary_label(metric: &str) -> String {
    let Some(family) = secondary_family(metric) else {
        return metric.to_string();
    };
    let name = &metric[family.len() + 1..];
    let (name, per) = match (name.strip_suffix("_per_op"), name.strip_suffix("_pct")) {
        (Some(stem), _) => (stem, "/op"),
        (None, Some(stem)) => (stem, ""),
        (None, None) => (name, ""),
    };
    let name = match family {
        "perf" => name.replace('_', " "),
        _ => format!("{family} {name}"),
    };
    format!("{name}{per}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_are_told_by_their_prefix() {
        assert_eq!(secondary_family("perf.cycles_per_op"), Some("perf"));
        assert_eq!(secondary_family("psi.cpu_some_pct"), Some("psi"));
        for not in [
            "value",
            "per_task",
            "perf.",
            "perfx.a",
            "monitor.steal",
            "latency",
        ] {
            assert_eq!(secondary_family(not), None, "{not}");
        }
        assert!(is_result_metric("value") && is_result_metric("latency"));
        assert!(!is_result_metric("monitor.steal") && !is_result_metric("vmstat.pgfault_per_op"));
    }

    #[test]
    fn labels_read_like_perf_stat() {
        assert_eq!(
            secondary_label("perf.context_switches_per_op"),
            "context switches/op"
        );
        assert_eq!(
            secondary_label("vmstat.pgfault_per_op"),
            "vmstat pgfault/op"
        );
        assert_eq!(secondary_label("psi.cpu_some_pct"), "psi cpu_some");
    }
}
