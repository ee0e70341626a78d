//! lmbench-style system call latencies (`lat_syscall`, `lat_sig`,
//! `lat_select`), in nanoseconds per loop body, lower is better.
//!
//! Every loop body enters the kernel through `libc::syscall` with a fixed
//! system call number, so the kernel path measured does not depend on the
//! libc the binary is linked with (glibc's `fstat()` is really
//! `newfstatat(fd, "", AT_EMPTY_PATH)` and its `select()` is `pselect6`,
//! musl's differ). The one exception is `sigaction`: its libc wrapper supplies
//! the signal-return trampoline (`SA_RESTORER`) that x86_64 requires, and it
//! always enters the kernel.
//!
//! Files used (all opened or created in `prepare`, released on drop):
//! - `syscall-read` reads from `/dev/zero`, `syscall-write` writes to
//!   `/dev/null`.
//! - `syscall-stat` stats the path `/dev/null` and `syscall-fstat` an fd open
//!   on it: the path is the same on every machine and every run (a temporary
//!   file's path would change length with the pid and the temp dir) and its
//!   dentry is always cached; stat minus fstat is the path-walk cost.
//! - `open-close` opens (`O_RDONLY | O_CLOEXEC`) and closes a regular, empty
//!   file in a temporary directory, so that its cost includes a real
//!   filesystem's open rather than a character device's.
//! - `select[fds=N]` watches N separate opens of `/dev/null` (always ready)
//!   in the write set, as lmbench's `lat_select file` does.
//!
//! `sig-catch` signals the calling thread (`tgkill`), not the process: see
//! [`SigCatch`] for why. Both signal benchmarks share one SIGUSR1 handler
//! installation ([`Sigusr1Guard`]) restored when the last of them is dropped.

use crate::sys::fd::open_fd;
use crate::sys::signal::{Sigusr1Guard, empty_action, sigusr1_blocked};
use crate::sys::tempdir::TempDir;
use crate::sys::{check, os_error};
use crate::unit::timed;
use crate::{
    BenchError, BenchInfo, Direction, Interval, OptionKind, OptionSpec, Options, Unit, Workload,
};
use libc::{c_int, c_long};
use std::ffi::CString;
use std::fs::File;
use std::hint::black_box;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

pub const BENCHES: &[BenchInfo] = &[
    BenchInfo {
        id: "syscall-null",
        unit: Unit::Nanos,
        direction: Direction::Lower,
        summary: "syscall(SYS_getppid)",
        options: &[],
        one_task: true,
        in_measuring_task: true,
        prepare: prepare_null,
    },
    BenchInfo {
        id: "syscall-read",
        unit: Unit::Nanos,
        direction: Direction::Lower,
        summary: "read(2) of 1 byte from /dev/zero",
        options: &[],
        one_task: true,
        in_measuring_task: true,
        prepare: prepare_read,
    },
    BenchInfo {
        id: "syscall-write",
        unit: Unit::Nanos,
        direction: Direction::Lower,
        summary: "write(2) of 1 byte to /dev/null",
        options: &[],
        one_task: true,
        in_measuring_task: true,
        prepare: prepare_write,
    },
    BenchInfo {
        id: "syscall-stat",
        unit: Unit::Nanos,
        direction: Direction::Lower,
        summary: "stat of the path /dev/null (newfstatat with AT_FDCWD)",
        options: &[],
        one_task: true,
        in_measuring_task: true,
        prepare: prepare_stat,
    },
    BenchInfo {
        id: "syscall-fstat",
        unit: Unit::Nanos,
        direction: Direction::Lower,
        summary: "fstat(2) of an fd open on /dev/null",
        options: &[],
        one_task: true,
        in_measuring_task: true,
        prepare: prepare_fstat,
    },
    BenchInfo {
        id: "open-close",
        unit: Unit::Nanos,
        direction: Direction::Lower,
        summary: "openat(O_RDONLY) + close(2) of a cached empty file in a temp dir",
        options: &[],
        one_task: true,
        in_measuring_task: true,
        prepare: prepare_open_close,
    },
    BenchInfo {
        id: "sig-install",
        unit: Unit::Nanos,
        direction: Direction::Lower,
        summary: "sigaction(SIGUSR1) installing an empty handler",
        options: &[],
        one_task: true,
        in_measuring_task: true,
        prepare: prepare_sig_install,
    },
    BenchInfo {
        id: "sig-catch",
        unit: Unit::Nanos,
        direction: Direction::Lower,
        summary: "SIGUSR1 sent to the calling thread (tgkill) and caught by an empty handler",
        options: &[],
        one_task: true,
        in_measuring_task: true,
        prepare: prepare_sig_catch,
    },
    BenchInfo {
        id: "sig-send",
        unit: Unit::Nanos,
        direction: Direction::Lower,
        summary: "the null signal (0) sent to the calling thread (tgkill): the send path of sig-catch, nothing delivered",
        options: &[],
        one_task: true,
        in_measuring_task: true,
        prepare: prepare_sig_send,
    },
    BenchInfo {
        id: "select",
        unit: Unit::Nanos,
        direction: Direction::Lower,
        summary: "pselect6 with zero timeout over N always-ready fds (/dev/null) in the write set",
        options: &[OptionSpec {
            name: "fds",
            kind: OptionKind::Whole { min: 1, max: 1000 },
            default: || "10".to_string(),
            help: "how many fds to watch (fd numbers must stay below FD_SETSIZE)",
        }],
        one_task: true,
        in_measuring_task: true,
        prepare: prepare_select,
    },
];

// ---------------------------------------------------------------- syscall-null

struct Null;

impl Workload for Null {
    fn run(&mut self, iterations: u64) -> Result<Interval, BenchError> {
        timed(iterations, || {
            // SAFETY: getppid takes no arguments and cannot fail.
            black_box(unsafe { libc::syscall(libc::SYS_getppid) });
            Ok(())
        })
    }
}

fn prepare_null(_: &Options) -> Result<Box<dyn Workload>, BenchError> {
    Ok(Box::new(Null))
}

// ------------------------------------------------------ syscall-read / -write

struct ReadWrite {
    /// /dev/zero (read) or /dev/null (write); closed on drop.
    fd: OwnedFd,
    write: bool,
    byte: [u8; 1],
}

impl Workload for ReadWrite {
    fn run(&mut self, iterations: u64) -> Result<Interval, BenchError> {
        let fd = self.fd.as_raw_fd() as c_long;
        let buf = self.byte.as_mut_ptr();
        if self.write {
            timed(iterations, || {
                // SAFETY: buf points to 1 byte we own; fd is open until drop.
                let n = unsafe { libc::syscall(libc::SYS_write, fd, buf as *const u8, 1usize) };
                black_box(check(n, "write 1 byte to /dev/null")?);
                Ok(())
            })
        } else {
            timed(iterations, || {
                // SAFETY: buf points to 1 writable byte we own; fd is open until drop.
                let n = unsafe { libc::syscall(libc::SYS_read, fd, buf, 1usize) };
                black_box(check(n, "read 1 byte from /dev/zero")?);
                Ok(())
            })
        }
    }
}

fn prepare_read(_: &Options) -> Result<Box<dyn Workload>, BenchError> {
    Ok(Box::new(ReadWrite {
        fd: open_fd("/dev/zero", false)?,
        write: false,
        byte: [0],
    }))
}

fn prepare_write(_: &Options) -> Result<Box<dyn Workload>, BenchError> {
    Ok(Box::new(ReadWrite {
        fd: open_fd("/dev/null", true)?,
        write: true,
        byte: [0],
    }))
}

// ----------------------------------------------------- syscall-stat / -fstat

/// Room for the kernel's `struct stat` (144 bytes on x86_64, 128 on the
/// generic 64-bit ABI); we never read it.
#[repr(C, align(8))]
struct StatBuf([u8; 256]);

const STAT_PATH: &str = "/dev/null";

/// syscall-stat stats the path, syscall-fstat an fd open on it.
enum StatTarget {
    Path(CString),
    Fd(OwnedFd),
}

struct Stat {
    target: StatTarget,
    buf: Box<StatBuf>,
}

impl Workload for Stat {
    fn run(&mut self, iterations: u64) -> Result<Interval, BenchError> {
        let buf = self.buf.0.as_mut_ptr();
        match &self.target {
            StatTarget::Path(path) => {
                let path = path.as_ptr();
                timed(iterations, || {
                    black_box(check(stat_call::stat_at(path, buf), "stat /dev/null")?);
                    Ok(())
                })
            }
            StatTarget::Fd(fd) => {
                let fd = fd.as_raw_fd();
                timed(iterations, || {
                    black_box(check(stat_call::fstat(fd, buf), "fstat /dev/null")?);
                    Ok(())
                })
            }
        }
    }
}

/// Raw `newfstatat` and `fstat` system calls, on the ABIs that have them
/// with the generic `struct stat`.
#[cfg(any(
    target_arch = "x86_64",
    target_arch = "aarch64",
    target_arch = "riscv64",
    target_arch = "powerpc64",
    target_arch = "s390x"
))]
mod stat_call {
    use libc::{c_char, c_int, c_long};

    #[inline(always)]
    pub(super) fn stat_at(path: *const c_char, buf: *mut u8) -> c_long {
        // SAFETY: path is a NUL-terminated string and buf has room for the
        // kernel's struct stat; both outlive the call.
        unsafe {
            libc::syscall(
                libc::SYS_newfstatat,
                libc::AT_FDCWD as c_long,
                path,
                buf,
                0 as c_long,
            )
        }
    }

    #[inline(always)]
    pub(super) fn fstat(fd: c_int, buf: *mut u8) -> c_long {
        // SAFETY: fd is open and buf has room for the kernel's struct stat.
        unsafe { libc::syscall(libc::SYS_fstat, fd as c_long, buf) }
    }
}

/// Other ABIs name the calls differently (fstatat64, statx) or lay out
/// struct stat otherwise; libc's stat and fstat always enter the kernel.
#[cfg(not(any(
    target_arch = "x86_64",
    target_arch = "aarch64",
    target_arch = "riscv64",
    target_arch = "powerpc64",
    target_arch = "s390x"
)))]
mod stat_call {
    use libc::{c_char, c_int, c_long};

    #[inline(always)]
    pub(super) fn stat_at(path: *const c_char, buf: *mut u8) -> c_long {
        // SAFETY: path is a NUL-terminated string and buf outsizes libc's
        // struct stat; both outlive the call.
        unsafe { libc::stat(path, buf.cast::<libc::stat>()) as c_long }
    }

    #[inline(always)]
    pub(super) fn fstat(fd: c_int, buf: *mut u8) -> c_long {
        // SAFETY: fd is open and buf outsizes libc's struct stat.
        unsafe { libc::fstat(fd, buf.cast::<libc::stat>()) as c_long }
    }
}

fn prepare_stat(_: &Options) -> Result<Box<dyn Workload>, BenchError> {
    if !Path::new(STAT_PATH).exists() {
        return Err(BenchError::Skip(format!("{STAT_PATH} does not exist")));
    }
    Ok(Box::new(Stat {
        target: StatTarget::Path(CString::new(STAT_PATH).expect("no NUL")),
        buf: Box::new(StatBuf([0; 256])),
    }))
}

fn prepare_fstat(_: &Options) -> Result<Box<dyn Workload>, BenchError> {
    Ok(Box::new(Stat {
        target: StatTarget::Fd(open_fd(STAT_PATH, false)?),
        buf: Box::new(StatBuf([0; 256])),
    }))
}

// ------------------------------------------------------------------ open-close

fn c_path(path: &Path) -> CString {
    CString::new(path.as_os_str().as_bytes()).expect("paths from the OS have no NUL byte")
}

struct OpenClose {
    path: CString,
    /// Holds the file; removed on drop.
    _dir: TempDir,
}

impl Workload for OpenClose {
    fn run(&mut self, iterations: u64) -> Result<Interval, BenchError> {
        let path = self.path.as_ptr();
        let flags = (libc::O_RDONLY | libc::O_CLOEXEC) as c_long;
        timed(iterations, || {
            // SAFETY: path is a NUL-terminated string that outlives the call.
            let fd =
                unsafe { libc::syscall(libc::SYS_openat, libc::AT_FDCWD as c_long, path, flags) };
            let fd = check(fd, "open the cached file")?;
            // SAFETY: fd was just opened by us and is not used afterwards.
            let r = unsafe { libc::syscall(libc::SYS_close, fd) };
            black_box(check(r, "close the cached file")?);
            Ok(())
        })
    }
}

fn prepare_open_close(_: &Options) -> Result<Box<dyn Workload>, BenchError> {
    let dir = TempDir::new("open-close")?;
    let file = dir.path().join("file");
    File::create(&file).map_err(os_error(format!("create {}", file.display())))?;
    // One untimed open so the dentry and inode are surely cached.
    File::open(&file).map_err(os_error(format!("open {}", file.display())))?;
    Ok(Box::new(OpenClose {
        path: c_path(&file),
        _dir: dir,
    }))
}

// ------------------------------------------------------ sig-install, sig-catch

struct SigInstall {
    action: libc::sigaction,
    old: libc::sigaction,
    /// Restores the original SIGUSR1 action on drop.
    _guard: Sigusr1Guard,
}

impl Workload for SigInstall {
    fn run(&mut self, iterations: u64) -> Result<Interval, BenchError> {
        let action = &self.action;
        let old = &mut self.old;
        timed(iterations, || {
            // SAFETY: both structs are valid; this re-installs the same
            // action the guard installed.
            let r = unsafe { libc::sigaction(libc::SIGUSR1, action, &mut *old) };
            if r != 0 {
                return Err(BenchError::last_os("sigaction SIGUSR1"));
            }
            black_box(&mut *old);
            Ok(())
        })
    }
}

fn prepare_sig_install(_: &Options) -> Result<Box<dyn Workload>, BenchError> {
    let guard = Sigusr1Guard::acquire()?;
    Ok(Box::new(SigInstall {
        action: empty_action(),
        old: empty_action(),
        _guard: guard,
    }))
}

/// Sends SIGUSR1 with `tgkill(getpid(), gettid())` rather than
/// `kill(getpid())`: a process-directed signal is delivered to the main thread
/// whenever it does not block it, so from any other thread the handler would
/// run elsewhere, asynchronously, and only the send would be timed. Sent to
/// the calling thread, the signal is queued, delivered on the way back from
/// the syscall, the handler frame is set up and torn down by rt_sigreturn,
/// from whichever thread runs it. Nothing is subtracted: lmbench's `lat_sig
/// catch` subtracts its send loop, which is [`SigSend`] here.
struct SigCatch {
    /// Restores the original SIGUSR1 action on drop.
    _guard: Sigusr1Guard,
}

impl Workload for SigCatch {
    fn run(&mut self, iterations: u64) -> Result<Interval, BenchError> {
        if sigusr1_blocked()? {
            return Err(BenchError::Skip(
                "SIGUSR1 is blocked in the running thread, it would never be caught".into(),
            ));
        }
        // SAFETY: getpid and gettid take no arguments and cannot fail.
        let pid = unsafe { libc::syscall(libc::SYS_getpid) };
        // SAFETY: as above.
        let tid = unsafe { libc::syscall(libc::SYS_gettid) };
        let sig = libc::SIGUSR1 as c_long;
        timed(iterations, || {
            // SAFETY: signals this very thread, whose SIGUSR1 handler is the
            // empty one (held by the guard) and which does not block it.
            let r = unsafe { libc::syscall(libc::SYS_tgkill, pid, tid, sig) };
            black_box(check(r, "tgkill SIGUSR1 to self")?);
            Ok(())
        })
    }
}

fn prepare_sig_catch(_: &Options) -> Result<Box<dyn Workload>, BenchError> {
    if sigusr1_blocked()? {
        return Err(BenchError::Skip(
            "SIGUSR1 is blocked in this thread, it would never be caught".into(),
        ));
    }
    Ok(Box::new(SigCatch {
        _guard: Sigusr1Guard::acquire()?,
    }))
}

/// `tgkill(getpid(), gettid(), 0)`: the checks of sending a signal to this
/// thread (the target exists, the sender may signal it) with nothing queued
/// or delivered. lmbench's `lat_sig catch` subtracts this cost (its
/// `kill(getpid(), 0)`) from its send-and-catch loop; sig-catch minus
/// sig-send is that number (docs/benchmarks.md, "Against the reference
/// tools").
struct SigSend {
    pid: c_long,
    tid: c_long,
}

impl Workload for SigSend {
    fn run(&mut self, iterations: u64) -> Result<Interval, BenchError> {
        let (pid, tid) = (self.pid, self.tid);
        timed(iterations, || {
            // SAFETY: signal 0 to this very thread: checked, never sent.
            let r = unsafe { libc::syscall(libc::SYS_tgkill, pid, tid, 0 as c_long) };
            black_box(check(r, "tgkill 0 to self")?);
            Ok(())
        })
    }
}

fn prepare_sig_send(_: &Options) -> Result<Box<dyn Workload>, BenchError> {
    // SAFETY: getpid and gettid take no arguments and cannot fail.
    let pid = unsafe { libc::syscall(libc::SYS_getpid) };
    // SAFETY: as above.
    let tid = unsafe { libc::syscall(libc::SYS_gettid) };
    Ok(Box::new(SigSend { pid, tid }))
}

// ---------------------------------------------------------------------- select

struct Select {
    /// N separate opens of /dev/null; closed on drop.
    _fds: Vec<OwnedFd>,
    /// The write set with every fd in `fds`.
    set: libc::fd_set,
    nfds: c_int,
}

impl Workload for Select {
    fn run(&mut self, iterations: u64) -> Result<Interval, BenchError> {
        let set = self.set;
        let nfds = self.nfds as c_long;
        let none = std::ptr::null_mut::<libc::fd_set>();
        timed(iterations, || {
            // select rewrites both the set and the timeout: fresh copies each time.
            let mut writes = set;
            let mut timeout = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            // SAFETY: the set and timeout are ours and valid; every fd in the
            // set is open until drop; a null sigmask argument is allowed.
            let r = unsafe {
                libc::syscall(
                    libc::SYS_pselect6,
                    nfds,
                    none,
                    &mut writes as *mut libc::fd_set,
                    none,
                    &mut timeout as *mut libc::timespec,
                    std::ptr::null::<libc::c_void>(),
                )
            };
            black_box(check(r, "select")?);
            Ok(())
        })
    }
}

fn prepare_select(options: &Options) -> Result<Box<dyn Workload>, BenchError> {
    let n = options.number("fds") as usize;
    let fds = (0..n)
        .map(|_| open_fd("/dev/null", true))
        .collect::<Result<Vec<_>, _>>()?;
    let max = fds.iter().map(|fd| fd.as_raw_fd()).max().unwrap_or(0);
    if max as usize >= libc::FD_SETSIZE {
        return Err(BenchError::Skip(format!(
            "fd {max} is not below FD_SETSIZE ({}): too many fds already open for fds={n}",
            libc::FD_SETSIZE
        )));
    }
    // SAFETY: fd_set is a plain bit array; FD_ZERO initialises it anyway.
    let mut set: libc::fd_set = unsafe { std::mem::zeroed() };
    // SAFETY: set is a valid fd_set.
    unsafe { libc::FD_ZERO(&mut set) };
    for fd in &fds {
        // SAFETY: 0 <= fd < FD_SETSIZE (checked above) and set is valid.
        unsafe { libc::FD_SET(fd.as_raw_fd(), &mut set) };
    }
    Ok(Box::new(Select {
        _fds: fds,
        set,
        nfds: max + 1,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::TestKey;
    use crate::testing::{assert_calibrated, assert_temp_dir_gone, canonical};

    #[test]
    fn syscall_null() {
        assert_calibrated("syscall-null", 10.0, 100_000.0);
    }

    #[test]
    fn syscall_read() {
        assert_calibrated("syscall-read", 10.0, 100_000.0);
    }

    #[test]
    fn syscall_write() {
        assert_calibrated("syscall-write", 10.0, 100_000.0);
    }

    #[test]
    fn syscall_stat() {
        assert_calibrated("syscall-stat", 20.0, 200_000.0);
    }

    #[test]
    fn syscall_fstat() {
        assert_calibrated("syscall-fstat", 10.0, 100_000.0);
    }

    #[test]
    fn open_close() {
        assert_calibrated("open-close", 50.0, 1_000_000.0);
        assert_temp_dir_gone();
    }

    #[test]
    fn sig_install() {
        assert_calibrated("sig-install", 10.0, 100_000.0);
    }

    #[test]
    fn sig_catch() {
        assert_calibrated("sig-catch", 50.0, 1_000_000.0);
    }

    #[test]
    fn select_default_and_extremes() {
        assert_eq!(canonical("select"), "select[fds=10]");
        assert_calibrated("select", 20.0, 1_000_000.0);
        assert_calibrated("select[fds=1]", 10.0, 1_000_000.0);
        assert_calibrated("select[fds=1000]", 100.0, 10_000_000.0);
    }

    #[test]
    fn select_rejects_bad_fds() {
        let info = crate::find("select").unwrap();
        // Resolving refuses them, before anything is prepared.
        for bad in ["select[fds=0]", "select[fds=abc]", "select[fds=1001]"] {
            match info.resolve(&TestKey::parse(bad).unwrap()) {
                Err(BenchError::InvalidOption { option, .. }) => assert_eq!(option, "fds", "{bad}"),
                Err(other) => panic!("{bad}: {other}"),
                Ok(_) => panic!("{bad} was accepted"),
            }
        }
        let unknown = crate::find("syscall-null")
            .unwrap()
            .resolve(&TestKey::parse("syscall-null[fds=3]").unwrap());
        assert!(
            matches!(unknown, Err(BenchError::InvalidOption { option, .. }) if option == "fds")
        );
    }
}
