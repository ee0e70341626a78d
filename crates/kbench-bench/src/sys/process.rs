//! Child processes: forking one that keeps only the descriptors it needs,
//! waiting for it, reading its exit status, and killing it.

use crate::BenchError;
use libc::{c_int, pid_t};
use std::os::fd::RawFd;

/// Forks a child that ignores SIGPIPE (a peer gone is EPIPE), keeps only
/// the descriptors in `keep` (and 0..=2), runs `body` and exits with its
/// code; the child's pid. `body` must only make async-signal-safe calls,
/// must not allocate and must not panic.
pub(crate) fn fork_child(
    keep: &[RawFd],
    what: &str,
    body: impl FnOnce() -> c_int,
) -> Result<pid_t, BenchError> {
    // SAFETY: the child only makes async-signal-safe calls (signal,
    // close_range, `body`'s) and leaves with _exit, never returning.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(BenchError::last_os(what));
    }
    if pid == 0 {
        // SAFETY: signal is async-signal-safe.
        unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
        close_other_fds(keep);
        let code = body();
        // SAFETY: _exit ends the child without running parent-owned destructors.
        unsafe { libc::_exit(code) }
    }
    Ok(pid)
}

/// Child side: closes every descriptor from 3 up except those in `keep`.
fn close_other_fds(keep: &[RawFd]) {
    let mut low: RawFd = 3;
    loop {
        let next = keep.iter().copied().filter(|&fd| fd >= low).min();
        let high = next.map_or(RawFd::MAX, |fd| fd - 1);
        if high >= low {
            close_fds(low, high);
        }
        match next {
            Some(fd) if fd < RawFd::MAX => low = fd + 1,
            _ => return,
        }
    }
}

/// Child side: closes `low..=high`, one by one when close_range (Linux 5.9)
/// is missing.
fn close_fds(low: RawFd, high: RawFd) {
    // SAFETY: close_range only closes descriptors of this (child) process.
    let r = unsafe {
        libc::syscall(
            libc::SYS_close_range,
            low as libc::c_uint,
            high as libc::c_uint,
            0 as libc::c_uint,
        )
    };
    if r == 0 {
        return;
    }
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `limit` is a valid rlimit for getrlimit to fill.
    let end = if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == 0 {
        limit.rlim_cur.min(1 << 20) as RawFd
    } else {
        1 << 16
    };
    for fd in low..end.min(high.saturating_add(1)) {
        // SAFETY: closing a descriptor of this (child) process; EBADF is harmless.
        unsafe { libc::close(fd) };
    }
}

/// Kills our unreaped child `pid` and reaps it.
pub(crate) fn kill_and_reap(pid: pid_t) {
    // SAFETY: pid is our own unreaped child, so it cannot have been reused
    // by another process.
    unsafe { libc::kill(pid, libc::SIGKILL) };
    let _ = wait_for(pid);
}

/// Waits for the child `pid` (retrying on EINTR) and returns its status.
pub(crate) fn wait_for(pid: pid_t) -> Result<c_int, BenchError> {
    let mut status: c_int = 0;
    loop {
        // SAFETY: status is a valid c_int; pid is our child.
        let r = unsafe { libc::waitpid(pid, &mut status, 0) };
        if r == pid {
            return Ok(status);
        }
        let error = std::io::Error::last_os_error();
        if error.kind() != std::io::ErrorKind::Interrupted {
            return Err(BenchError::Os {
                what: format!("waitpid {pid}"),
                error,
            });
        }
    }
}

/// Ok when the wait `status` says the child exited with 0; otherwise an
/// error naming the `what` child and how it ended.
pub(crate) fn check_status(status: c_int, what: &str) -> Result<(), BenchError> {
    if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0 {
        return Ok(());
    }
    let how = if libc::WIFEXITED(status) {
        format!("exited with status {}", libc::WEXITSTATUS(status))
    } else if libc::WIFSIGNALED(status) {
        format!("was killed by signal {}", libc::WTERMSIG(status))
    } else {
        format!("ended with wait status {status:#x}")
    };
    Err(BenchError::Os {
        what: format!("{what} child"),
        error: std::io::Error::other(how),
    })
}
