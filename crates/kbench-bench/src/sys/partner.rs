//! Partner processes.
//!
//! A partner is forked in `prepare`, before any timing. In the child only
//! async-signal-safe calls are made (signal, close, read, write, _exit), nothing is
//! allocated, and every inherited descriptor except the partner's own is
//! closed first, so that the partner sees EOF (and exits by itself) as soon
//! as the measuring side closes its ends, even when the measuring process
//! dies. Dropping a [`Partner`] kills and reaps it. The descriptors they
//! talk over, and how each side reads and writes them, are in [`super::fd`].

use super::process::{fork_child, kill_and_reap};
use crate::BenchError;
use std::os::fd::RawFd;
use std::time::{Duration, Instant};

/// A forked partner process; dropping it kills and reaps it.
#[derive(Debug)]
pub(crate) struct Partner {
    pid: libc::pid_t,
    reaped: bool,
}

impl Partner {
    /// Forks a partner that keeps only the descriptors in `keep` (and 0..=2),
    /// runs `body` and exits with status 0 when `body` returns. `body` runs in
    /// the child of a possibly multi-threaded process: it must only make
    /// async-signal-safe calls, must not allocate and must not panic.
    pub(crate) fn spawn(keep: &[RawFd], body: impl FnOnce()) -> Result<Partner, BenchError> {
        let pid = fork_child(keep, "fork", || {
            body();
            0
        })?;
        Ok(Partner { pid, reaped: false })
    }

    pub(crate) fn pid(&self) -> libc::pid_t {
        self.pid
    }

    /// Waits up to `timeout` for the partner to exit by itself; its wait
    /// status when it did (a zero timeout checks once, without blocking).
    pub(crate) fn wait_exit(&mut self, timeout: Duration) -> Option<libc::c_int> {
        let deadline = Instant::now() + timeout;
        loop {
            let mut status = 0;
            // SAFETY: `status` is a valid int for waitpid to fill; the pid is our child.
            let r = unsafe { libc::waitpid(self.pid, &mut status, libc::WNOHANG) };
            if r == self.pid {
                self.reaped = true;
                return Some(status);
            }
            if Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }
}

impl Drop for Partner {
    fn drop(&mut self) {
        if self.reaped {
            return;
        }
        kill_and_reap(self.pid);
        self.reaped = true;
    }
}
