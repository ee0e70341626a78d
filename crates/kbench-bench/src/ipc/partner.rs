//! Partner processes and the descriptors they talk over.
//!
//! A partner is forked in `prepare`, before any timing. In the child only
//! async-signal-safe calls are made (signal, close, read, write, _exit), nothing is
//! allocated, and every inherited descriptor except the partner's own is
//! closed first, so that the partner sees EOF (and exits by itself) as soon
//! as the measuring side closes its ends, even when the measuring process
//! dies. Dropping a [`Partner`] kills and reaps it.

use crate::BenchError;
use crate::process::kill_and_reap;
use crate::syscalls::os_error;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

/// A pipe as (read end, write end), both close-on-exec.
pub(crate) fn pipe() -> Result<(OwnedFd, OwnedFd), BenchError> {
    let mut fds: [libc::c_int; 2] = [-1, -1];
    // SAFETY: `fds` is an array of two ints for pipe2 to fill.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(BenchError::last_os("pipe2"));
    }
    // SAFETY: pipe2 succeeded, so both descriptors are open and owned by nobody else.
    let ends = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    Ok(ends)
}

/// Both ends of an AF_UNIX stream socketpair (close-on-exec).
pub(crate) fn socketpair() -> Result<(OwnedFd, OwnedFd), BenchError> {
    let (a, b) = UnixStream::pair().map_err(os_error("socketpair(AF_UNIX, SOCK_STREAM)"))?;
    Ok((OwnedFd::from(a), OwnedFd::from(b)))
}

/// The calling thread's errno.
pub(crate) fn errno() -> i32 {
    // Reading errno neither allocates nor takes locks: safe in the child too.
    io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// Writes all of `buf` to `fd` (measuring side), retrying on EINTR.
pub(crate) fn write_all(fd: RawFd, buf: &[u8], what: &str) -> Result<(), BenchError> {
    if child_write_all(fd, buf) {
        return Ok(());
    }
    Err(BenchError::last_os(format!("{what}: write")))
}

/// Why [`fill`] stopped short.
enum Short {
    Eof,
    /// A failed read; errno says why.
    Error,
}

/// Fills all of `buf` from `fd`, retrying on EINTR and short reads. No
/// allocation: safe in the child.
fn fill(fd: RawFd, buf: &mut [u8]) -> Result<(), Short> {
    let mut done = 0;
    while done < buf.len() {
        let rest = &mut buf[done..];
        // SAFETY: `rest` is valid for writes of `rest.len()` bytes.
        let n = unsafe { libc::read(fd, rest.as_mut_ptr().cast(), rest.len()) };
        if n < 0 {
            if errno() == libc::EINTR {
                continue;
            }
            return Err(Short::Error);
        }
        if n == 0 {
            return Err(Short::Eof);
        }
        done += n as usize;
    }
    Ok(())
}

/// Fills all of `buf` from `fd` (measuring side), retrying on EINTR and
/// short reads; EOF (the partner is gone) is an error.
pub(crate) fn read_exact(fd: RawFd, buf: &mut [u8], what: &str) -> Result<(), BenchError> {
    match fill(fd, buf) {
        Ok(()) => Ok(()),
        Err(Short::Error) => Err(BenchError::last_os(format!("{what}: read"))),
        Err(Short::Eof) => Err(BenchError::Os {
            what: format!("{what}: read"),
            error: io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the partner process closed its end",
            ),
        }),
    }
}

/// Child side: fills all of `buf`; false on EOF or error.
pub(crate) fn child_read_exact(fd: RawFd, buf: &mut [u8]) -> bool {
    fill(fd, buf).is_ok()
}

/// Child side: reads one byte; false on EOF or error (time to exit).
pub(crate) fn child_read_byte(fd: RawFd, byte: &mut u8) -> bool {
    loop {
        // SAFETY: `byte` is valid for a write of one byte.
        let n = unsafe { libc::read(fd, (byte as *mut u8).cast(), 1) };
        if n == 1 {
            return true;
        }
        if n < 0 && errno() == libc::EINTR {
            continue;
        }
        return false;
    }
}

/// Child side: writes all of `buf`, retrying on EINTR; false when the other
/// side is gone (errno says why).
pub(crate) fn child_write_all(fd: RawFd, buf: &[u8]) -> bool {
    let mut done = 0;
    while done < buf.len() {
        let rest = &buf[done..];
        // SAFETY: `rest` is valid for reads of `rest.len()` bytes.
        let n = unsafe { libc::write(fd, rest.as_ptr().cast(), rest.len()) };
        if n < 0 {
            if errno() == libc::EINTR {
                continue;
            }
            return false;
        }
        done += n as usize;
    }
    true
}

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

/// Forks a child that ignores SIGPIPE (a peer gone is EPIPE), keeps only
/// the descriptors in `keep` (and 0..=2), runs `body` and exits with its
/// code; the child's pid. `body` must only make async-signal-safe calls,
/// must not allocate and must not panic.
pub(crate) fn fork_child(
    keep: &[RawFd],
    what: &str,
    body: impl FnOnce() -> libc::c_int,
) -> Result<libc::pid_t, BenchError> {
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

/// The raw descriptor of an owned one, for the child's keep list.
pub(crate) fn raw(fd: &OwnedFd) -> RawFd {
    fd.as_raw_fd()
}
