//! Descriptors: opening a device, pipes and socketpairs, and reading or
//! writing them whole, from the measuring side (errors as [`BenchError`])
//! or from a forked child (no allocation, async-signal-safe calls only).

use super::{errno, os_error};
use crate::BenchError;
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixStream;

/// `path` opened read-only, or write-only when `write`.
pub(crate) fn open_fd(path: &str, write: bool) -> Result<OwnedFd, BenchError> {
    File::options()
        .read(!write)
        .write(write)
        .open(path)
        .map(OwnedFd::from)
        .map_err(os_error(format!("open {path}")))
}

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

/// The raw descriptor of an owned one, for a child's keep list.
pub(crate) fn raw(fd: &OwnedFd) -> RawFd {
    fd.as_raw_fd()
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
