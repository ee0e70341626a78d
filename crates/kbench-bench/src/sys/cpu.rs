//! CPU masks: which CPUs a thread or process may run on, and pinning it.

use crate::BenchError;

/// A CPU mask of up to 1024 CPUs, laid out as the kernel's `cpu_set_t`.
#[derive(Clone, Copy)]
pub(crate) struct CpuMask([u64; 16]);

impl CpuMask {
    /// The mask of `pid` (0: the calling thread).
    pub(crate) fn of(pid: libc::pid_t) -> Result<CpuMask, BenchError> {
        let mut mask = CpuMask([0; 16]);
        // SAFETY: the mask is 128 writable bytes, as the size argument says.
        let r =
            unsafe { libc::sched_getaffinity(pid, size_of::<CpuMask>(), (&raw mut mask.0).cast()) };
        if r != 0 {
            return Err(BenchError::last_os("sched_getaffinity"));
        }
        Ok(mask)
    }

    /// The mask of the one CPU `cpu`.
    pub(crate) fn single(cpu: usize) -> CpuMask {
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
    pub(crate) fn apply(&self, pid: libc::pid_t) -> Result<(), BenchError> {
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
pub(crate) fn allowed_cpus() -> Result<Vec<usize>, BenchError> {
    // SAFETY: getpid has no preconditions.
    let pid = unsafe { libc::getpid() };
    Ok(CpuMask::of(pid)?.cpus())
}
