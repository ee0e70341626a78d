//! The CPU time counters of `/proc/stat`, and the steal time between two
//! readings.

/// The aggregate CPU time counters of `/proc/stat`, in clock ticks.
///
/// `guest` and `guest_nice` are left out: the kernel already counts them in
/// `user` and `nice`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuTimes {
    pub user: u64,
    pub nice: u64,
    pub system: u64,
    pub idle: u64,
    pub iowait: u64,
    pub irq: u64,
    pub softirq: u64,
    /// Time the hypervisor ran something else while this guest wanted a CPU.
    pub steal: u64,
}

impl CpuTimes {
    /// All ticks counted, each once.
    pub fn total(&self) -> u64 {
        self.user
            + self.nice
            + self.system
            + self.idle
            + self.iowait
            + self.irq
            + self.softirq
            + self.steal
    }
}

/// Steal time as a percentage of all CPU ticks between two readings; `None`
/// when no tick passed or a counter went backwards.
pub fn steal_percent(before: &CpuTimes, after: &CpuTimes) -> Option<f64> {
    let total = after.total().checked_sub(before.total())?;
    let steal = after.steal.checked_sub(before.steal)?;
    (total > 0).then(|| steal as f64 * 100.0 / total as f64)
}
