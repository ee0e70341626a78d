//! The snapshot a run records: kbench-sysinfo's facts of this system, and
//! what the measuring process can record on it (the perf counters that
//! open, the system monitors whose files this kernel has).

use crate::counters::Counters;
use crate::sysmon::SystemMonitor;
use kbench_model::SystemSnapshot;
use std::path::Path;

/// This system's snapshot as a run records it; `work_dir` is where the
/// benchmarks do their I/O. Never fails (see [`kbench_sysinfo::snapshot`]).
pub fn snapshot(work_dir: &Path) -> SystemSnapshot {
    let counters = Counters::open().1;
    SystemSnapshot {
        counters: counters.available.iter().map(|c| c.to_string()).collect(),
        counters_note: counters.note,
        monitors_missing: SystemMonitor::ALL
            .into_iter()
            .filter(|m| !m.is_available())
            .map(|m| m.name().to_string())
            .collect(),
        ..kbench_sysinfo::snapshot(work_dir)
    }
}
