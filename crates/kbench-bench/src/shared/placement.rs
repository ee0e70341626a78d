//! Placement of the measuring task and its partners: `same` pins all of
//! them to one CPU, `cross` to different CPUs (a ring: round-robin over the
//! allowed CPUs), `free` pins nothing. The `placement` option of the ipc and
//! net families.

use crate::sys::cpu::{CpuMask, allowed_cpus};
use crate::{BenchError, OptionKind, OptionSpec, Options};

pub(crate) const OPTION: &str = "placement";
/// The placements.
pub(crate) const KIND: OptionKind = OptionKind::Choice(&["same", "cross", "free"]);
const HELP: &str = "same: both tasks pinned to one CPU; cross: pinned to two different CPUs; \
     free: no pinning (default cross with 2+ allowed CPUs, else same)";
pub(crate) const RING_HELP: &str = "same (default): every process of the ring pinned to one CPU; \
     cross: processes pinned round-robin over the allowed CPUs (needs 2+); free: no pinning";

/// The `placement` option of two-task benchmarks.
pub(crate) const PLACEMENT: OptionSpec = OptionSpec {
    name: OPTION,
    kind: KIND,
    default: default_placement,
    help: HELP,
};

/// `cross` with 2+ allowed CPUs, `same` otherwise.
pub(crate) fn default_placement() -> String {
    let cpus = allowed_cpus().map(|c| c.len()).unwrap_or(1);
    if cpus >= 2 { "cross" } else { "same" }.to_string()
}

/// The placement of one benchmark: pins the calling (measuring) thread when
/// made, the partners with [`Pinning::pin_partner`] or
/// [`Pinning::pin_process`], and gives the measuring thread its old mask
/// back when dropped.
pub(crate) struct Pinning {
    /// Process `k` of the benchmark (0: the measuring thread) runs on
    /// `cpus[k % cpus.len()]`; empty for `free`.
    cpus: Vec<usize>,
    saved: Option<CpuMask>,
}

impl Pinning {
    /// Two tasks, the measuring thread and one partner: `same` puts both on
    /// the first allowed CPU, `cross` the partner on the second.
    pub(crate) fn new(options: &Options) -> Result<Pinning, BenchError> {
        Pinning::with(options, 2)
    }

    /// A ring of processes: `same` puts all of them on the first allowed
    /// CPU, `cross` spreads them round-robin over every allowed CPU (process
    /// `k` on the `k % n`-th).
    pub(crate) fn spread(options: &Options) -> Result<Pinning, BenchError> {
        Pinning::with(options, usize::MAX)
    }

    /// `cross` uses at most `max_cpus` of the allowed CPUs.
    fn with(options: &Options, max_cpus: usize) -> Result<Pinning, BenchError> {
        let placement = options.choice(OPTION);
        if placement == "free" {
            return Ok(Pinning {
                cpus: Vec::new(),
                saved: None,
            });
        }
        let allowed = allowed_cpus()?;
        let cpus: Vec<usize> = match (placement, allowed.as_slice()) {
            ("same", [first, ..]) => vec![*first],
            ("cross", [_, _, ..]) => allowed.into_iter().take(max_cpus).collect(),
            _ => {
                return Err(BenchError::Skip(format!(
                    "needs 2 CPUs for placement={placement}, have {}",
                    allowed.len()
                )));
            }
        };
        let saved = CpuMask::of(0)?;
        CpuMask::single(cpus[0]).apply(0)?;
        Ok(Pinning {
            cpus,
            saved: Some(saved),
        })
    }

    /// Pins the (single) partner process as the placement says (nothing
    /// for `free`).
    pub(crate) fn pin_partner(&self, pid: libc::pid_t) -> Result<(), BenchError> {
        self.pin_process(1, pid)
    }

    /// Pins process `index` of the benchmark (1 and up: the partners).
    pub(crate) fn pin_process(&self, index: usize, pid: libc::pid_t) -> Result<(), BenchError> {
        match self.cpus.len() {
            0 => Ok(()),
            n => CpuMask::single(self.cpus[index % n]).apply(pid),
        }
    }
}

impl Drop for Pinning {
    fn drop(&mut self) {
        if let Some(saved) = self.saved {
            // Best effort: the workload is not Send, so this is the thread
            // that was pinned in `new`.
            let _ = saved.apply(0);
        }
    }
}
