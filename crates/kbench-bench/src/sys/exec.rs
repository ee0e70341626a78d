//! execve in a forked child, with the path, argv and envp built before
//! timing, and one untimed trial that checks the program runs here.

use super::fd::pipe;
use super::process::{check_status, wait_for};
use super::{errno, os_error};
use crate::BenchError;
use libc::{c_char, c_int};
use std::ffi::CString;
use std::io::Read;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::time::{Duration, Instant};

/// A program to execve in the child, with argv and envp built before timing.
pub(crate) struct Exec {
    path: CString,
    /// Own the strings `argv` and `envp` point into.
    _strings: Vec<CString>,
    argv: Vec<*const c_char>,
    envp: Vec<*const c_char>,
}

impl Exec {
    pub(crate) fn new(path: &Path, args: &[&str], env: &[&str]) -> Exec {
        let path = CString::new(path.as_os_str().as_bytes()).expect("paths have no NUL byte");
        let strings: Vec<CString> = args
            .iter()
            .chain(env)
            .map(|s| CString::new(*s).expect("no NUL byte"))
            .collect();
        let pointers = |range: &[CString]| {
            let mut v: Vec<*const c_char> = range.iter().map(|s| s.as_ptr()).collect();
            v.push(std::ptr::null());
            v
        };
        let argv = pointers(&strings[..args.len()]);
        let envp = pointers(&strings[args.len()..]);
        Exec {
            path,
            _strings: strings,
            argv,
            envp,
        }
    }

    /// In a forked child: execve the program. Should that fail, writes errno
    /// to `report` (unless it is -1) and exits with status 127.
    pub(crate) fn exec_in_child(&self, report: c_int) -> ! {
        // SAFETY: path, argv and envp are NUL-terminated and null-terminated
        // arrays owned by self; execve only returns on failure.
        unsafe { libc::execve(self.path.as_ptr(), self.argv.as_ptr(), self.envp.as_ptr()) };
        let errno: c_int = errno();
        if report >= 0 {
            // SAFETY: writes the 4 bytes of errno to the report pipe; nothing
            // can be done about a failure in the child.
            unsafe { libc::write(report, (&errno as *const c_int).cast(), size_of::<c_int>()) };
        }
        // SAFETY: _exit is async-signal-safe and ends the child at once.
        unsafe { libc::_exit(127) }
    }
}

/// Runs `exec` once, untimed: checks that it can run here and exits 0.
/// Retries while execve says ETXTBSY: a child another thread forked while the
/// helper was open for writing still holds that fd until it execs or exits
/// (O_CLOEXEC does not help before exec). Once one exec succeeds, no writer
/// is left and none can appear, so the timed loop cannot hit it.
pub(crate) fn trial(exec: &Exec, what: &str) -> Result<(), BenchError> {
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        let errno = match try_exec(exec, what)? {
            None => return Ok(()),
            Some(errno) => errno,
        };
        let error = std::io::Error::from_raw_os_error(errno);
        let path = exec.path.to_string_lossy();
        match errno {
            libc::ETXTBSY if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(5));
            }
            libc::ENOENT | libc::EACCES | libc::EPERM | libc::ENOEXEC => {
                return Err(BenchError::Skip(format!(
                    "cannot execute {path}: {error} (temp dir mounted noexec?)"
                )));
            }
            _ => {
                return Err(BenchError::Os {
                    what: format!("execve {path}"),
                    error,
                });
            }
        }
    }
}

/// fork + execve once; the errno of a failed execve comes back through a
/// close-on-exec pipe (None when the exec worked and the child exited 0).
fn try_exec(exec: &Exec, what: &str) -> Result<Option<c_int>, BenchError> {
    let (reader, writer) = pipe()?;
    // SAFETY: as in the timed loop, the child only calls execve/write/_exit.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        exec.exec_in_child(writer.as_raw_fd());
    }
    if pid < 0 {
        return Err(BenchError::last_os("fork"));
    }
    drop(writer);
    let mut report = Vec::new();
    let read = std::fs::File::from(reader).read_to_end(&mut report);
    let status = wait_for(pid)?;
    read.map_err(os_error("read the exec report pipe"))?;
    if let Ok(bytes) = <[u8; size_of::<c_int>()]>::try_from(report.as_slice()) {
        return Ok(Some(c_int::from_ne_bytes(bytes)));
    }
    check_status(status, what)?;
    Ok(None)
}
