//! The OS helpers the benchmark families share: descriptors, processes and
//! the partner processes forked before timing, execve in a child, temporary
//! directories, the SIGUSR1 handler guard, file mappings, CPU masks, page
//! size and available memory.
//!
//! No benchmark lives here and nothing here imports a family: a family file
//! holds its `BENCHES` and workloads and takes what it needs from `sys`.
//! Each helper releases what it made (descriptors, children, mappings,
//! directories, signal actions) when dropped.

pub(crate) mod cpu;
pub(crate) mod exec;
pub(crate) mod fd;
pub(crate) mod mapping;
pub(crate) mod memory;
pub(crate) mod partner;
pub(crate) mod process;
pub(crate) mod signal;
pub(crate) mod tempdir;

use crate::BenchError;
use std::io;

/// A system call's (or libc call's) return value, or the errno as
/// `BenchError::Os` when it is negative.
#[inline(always)]
pub(crate) fn check<T: Copy + Default + PartialOrd>(ret: T, what: &str) -> Result<T, BenchError> {
    if ret < T::default() {
        Err(BenchError::last_os(what))
    } else {
        Ok(ret)
    }
}

/// Maps an `io::Error` to an `Os` error naming what was attempted.
pub(crate) fn os_error(what: impl Into<String>) -> impl FnOnce(io::Error) -> BenchError {
    move |error| BenchError::Os {
        what: what.into(),
        error,
    }
}

/// The calling thread's errno.
pub(crate) fn errno() -> i32 {
    // Reading errno neither allocates nor takes locks: safe in a forked
    // child too.
    io::Error::last_os_error().raw_os_error().unwrap_or(0)
}
