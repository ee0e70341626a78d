//! Placement of the measuring task and its partner: `same` pins both to one
//! CPU, `cross` to two different CPUs, `free` pins nothing.

use crate::{BenchError, Options};

pub(super) const OPTION: &str = "placement";
pub(super) const CHOICES: &[&str] = &["same", "cross", "free"];
pub(super) const HELP: &str = "same: both tasks pinned to one CPU; cross: pinned to two different CPUs; \
     free: no pinning (default cross with 2+ allowed CPUs, else same)";

/// A CPU mask of up to 1024 CPUs, laid out as the kernel's `cpu_set_t`.
#[derive(Clone, Copy)]
struct CpuMask([u64; 16]);

impl CpuMask {
    /// The mask of `pid` (0: the calling thread).
    fn of(pid: libc::pid_t) -> Result<CpuMask, BenchError> {
        let mut mask = CpuMask([0; 16]);
        // SAFETY: the mask is 128 writable bytes, as the size argument says.
        let r =
            unsafe { libc::sched_getaffinity(pid, size_of::<CpuMask>(), (&raw mut mask.0).cast()) };
        if r != 0 {
            return Err(BenchError::last_os("sched_getaffinity"));
        }
        Ok(mask)
    }

    fn single(cpu: usize) -> CpuMask {
        let mut mask = CpuMask([0; 16]);
        mask.0[cpu / 64] |= 1 << (cpu % 64);
        mask
    }

    fn cpus(&self) -> Vec<usize> {
        (0..1024)
            .filter(|&cpu| self.0[cpu / 64] & (1 << (cpu % 64)) != 0)
            .collect()
    }

    /// Applies the mask to `pid` (0: the calling thread).
    fn apply(&self, pid: libc::pid_t) -> Result<(), BenchError> {
        // SAFETY: the mask is 128 readable bytes, as the size argument says.
        let r = unsafe {
            libc::sched_setaffinity(pid, size_of::<CpuMask>(), (&raw const self.0).cast())
        };
        if r != 0 {
            return Err(BenchError::last_os(format!("sched_setaffinity(pid {pid})")));
        }
        Ok(())
    }
}

/// The CPUs this process may run on.
fn allowed_cpus() -> Result<Vec<usize>, BenchError> {
    // SAFETY: getpid has no preconditions.
    let pid = unsafe { libc::getpid() };
    Ok(CpuMask::of(pid)?.cpus())
}

/// `cross` with 2+ allowed CPUs, `same` otherwise.
pub(super) fn default_placement() -> String {
    let cpus = allowed_cpus().map(|c| c.len()).unwrap_or(1);
    if cpus >= 2 { "cross" } else { "same" }.to_string()
}

/// The placement of one benchmark: pins the calling (measuring) thread when
/// made, the partners with [`Pinning::pin_partner`], and gives the measuring
/// thread its old mask back when dropped.
pub(super) struct Pinning {
    partner_cpu: Option<usize>,
    saved: Option<CpuMask>,
}

impl Pinning {
    pub(super) fn new(options: &Options) -> Result<Pinning, BenchError> {
        let placement = options.choice(OPTION, CHOICES)?;
        if placement == "free" {
            return Ok(Pinning {
                partner_cpu: None,
                saved: None,
            });
        }
        let cpus = allowed_cpus()?;
        let (mine, partner) = match (placement, cpus.as_slice()) {
            ("same", [first, ..]) => (*first, *first),
            ("cross", [first, second, ..]) => (*first, *second),
            _ => {
                return Err(BenchError::Skip(format!(
                    "needs 2 CPUs for placement={placement}, have {}",
                    cpus.len()
                )));
            }
        };
        let saved = CpuMask::of(0)?;
        CpuMask::single(mine).apply(0)?;
        Ok(Pinning {
            partner_cpu: Some(partner),
            saved: Some(saved),
        })
    }

    /// Pins a partner process as the placement says (nothing for `free`).
    pub(super) fn pin_partner(&self, pid: libc::pid_t) -> Result<(), BenchError> {
        match self.partner_cpu {
            Some(cpu) => CpuMask::single(cpu).apply(pid),
            None => Ok(()),
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
