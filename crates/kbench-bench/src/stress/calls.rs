//! stress-ng's `poll` and `get` stressors: cheap system calls, several per
//! iteration, one op each.

use crate::sys::check;
use crate::sys::fd;
use crate::{BenchError, Interval, Workload};
use libc::{c_int, c_long};
use std::hint::black_box;
use std::os::fd::{AsRawFd, OwnedFd};
use std::time::Instant;

// ------------------------------------------------------------------------ poll

/// Pipes watched.
const PIPES: usize = 5;

/// One iteration is three calls, each one op, each over the read ends of the
/// same 5 pipes with a zero timeout: `poll`, `ppoll` and `select` (on x86_64
/// the `poll` and `select` system calls themselves; elsewhere, where those
/// do not exist, `ppoll` and `pselect6` with a zero timeout, as libc does).
/// Pipes 0, 2 and 4 hold one byte, never read; 1 and 3 are empty: every call
/// sees 3 readable descriptors, and both the ready and the not-ready paths
/// of the pipe's poll are walked.
pub(super) struct Poll {
    _pipes: Vec<(OwnedFd, OwnedFd)>,
    fds: [libc::pollfd; PIPES],
    set: libc::fd_set,
    nfds: c_int,
}

/// Readable pipes: every call must return this.
const READY: c_long = 3;

impl Poll {
    pub(super) fn new() -> Result<Poll, BenchError> {
        let mut pipes = Vec::with_capacity(PIPES);
        for i in 0..PIPES {
            let (rx, tx) = fd::pipe()?;
            if i % 2 == 0 {
                fd::write_all(tx.as_raw_fd(), b"p", "poll: fill a pipe")?;
            }
            pipes.push((rx, tx));
        }
        let max = pipes
            .iter()
            .map(|(rx, _)| rx.as_raw_fd())
            .max()
            .unwrap_or(0);
        if max as usize >= libc::FD_SETSIZE {
            return Err(BenchError::Skip(format!(
                "fd {max} is not below FD_SETSIZE ({}): too many fds already open",
                libc::FD_SETSIZE
            )));
        }
        let fds = std::array::from_fn(|i| libc::pollfd {
            fd: pipes[i].0.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        });
        // SAFETY: fd_set is a plain bit array; FD_ZERO initialises it anyway.
        let mut set: libc::fd_set = unsafe { std::mem::zeroed() };
        // SAFETY: set is a valid fd_set.
        unsafe { libc::FD_ZERO(&mut set) };
        for (rx, _) in &pipes {
            // SAFETY: 0 <= fd < FD_SETSIZE (checked above) and set is valid.
            unsafe { libc::FD_SET(rx.as_raw_fd(), &mut set) };
        }
        Ok(Poll {
            _pipes: pipes,
            fds,
            set,
            nfds: max + 1,
        })
    }
}

fn expect_ready(ret: c_long, what: &'static str) -> Result<(), BenchError> {
    if check(ret, what)? != READY {
        return Err(BenchError::Os {
            what: what.into(),
            error: std::io::Error::other(format!("{ret} descriptors ready, expected {READY}")),
        });
    }
    Ok(())
}

const ZERO: libc::timespec = libc::timespec {
    tv_sec: 0,
    tv_nsec: 0,
};

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn sys_poll(fds: *mut libc::pollfd, n: c_long) -> c_long {
    // SAFETY: fds points to n pollfds we own; every fd is open until drop.
    unsafe { libc::syscall(libc::SYS_poll, fds, n, 0 as c_long) }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn sys_poll(fds: *mut libc::pollfd, n: c_long) -> c_long {
    sys_ppoll(fds, n)
}

#[inline(always)]
fn sys_ppoll(fds: *mut libc::pollfd, n: c_long) -> c_long {
    // The kernel writes the time left back: a fresh zero each call.
    let mut timeout = ZERO;
    // SAFETY: fds points to n pollfds we own, timeout is ours; a null
    // sigmask leaves the mask alone.
    unsafe {
        libc::syscall(
            libc::SYS_ppoll,
            fds,
            n,
            &mut timeout as *mut libc::timespec,
            std::ptr::null::<libc::sigset_t>(),
            0 as c_long,
        )
    }
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn sys_select(nfds: c_long, reads: *mut libc::fd_set) -> c_long {
    let mut timeout = libc::timeval {
        tv_sec: 0,
        tv_usec: 0,
    };
    let none = std::ptr::null_mut::<libc::fd_set>();
    // SAFETY: the set and the timeout are ours; every fd in the set is open.
    unsafe {
        libc::syscall(
            libc::SYS_select,
            nfds,
            reads,
            none,
            none,
            &mut timeout as *mut libc::timeval,
        )
    }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn sys_select(nfds: c_long, reads: *mut libc::fd_set) -> c_long {
    let mut timeout = ZERO;
    let none = std::ptr::null_mut::<libc::fd_set>();
    // SAFETY: the set and the timeout are ours; every fd in the set is open;
    // a null sigmask argument is allowed.
    unsafe {
        libc::syscall(
            libc::SYS_pselect6,
            nfds,
            reads,
            none,
            none,
            &mut timeout as *mut libc::timespec,
            std::ptr::null::<libc::c_void>(),
        )
    }
}

impl Workload for Poll {
    fn run(&mut self, iterations: u64) -> Result<Interval, BenchError> {
        let n = PIPES as c_long;
        let nfds = self.nfds as c_long;
        let set = self.set;
        let fds = &mut self.fds;
        let start = Instant::now();
        for _ in 0..iterations {
            expect_ready(sys_poll(fds.as_mut_ptr(), n), "poll")?;
            expect_ready(sys_ppoll(fds.as_mut_ptr(), n), "ppoll")?;
            // select rewrites the set: a fresh copy each call.
            let mut reads = set;
            expect_ready(sys_select(nfds, &mut reads), "select")?;
            black_box(&mut reads);
        }
        Ok(Interval::since(start, (iterations * 3) as f64))
    }
}

// ------------------------------------------------------------------------- get

/// System calls per iteration of `get`.
const GET_CALLS: u64 = 16;

/// One iteration is 16 get* system calls, each one op, all through
/// `libc::syscall` (no libc caching, no vDSO): getpid, getppid, gettid,
/// getuid, geteuid, getgid, getegid, getresuid, getresgid, getgroups(0),
/// getpgid(0) (what getpgrp is), getsid(0), getpriority(PRIO_PROCESS, 0),
/// prlimit64(0, RLIMIT_NOFILE) (what getrlimit is), getrusage(RUSAGE_THREAD)
/// and uname. Left out on purpose: getcwd (its cost follows the depth of
/// whatever directory the runner was started in) and getrusage(RUSAGE_SELF)
/// (its cost follows the number of threads of the measuring process).
pub(super) struct Get {
    ids: [libc::uid_t; 3],
    rlimit: libc::rlimit,
    usage: Box<libc::rusage>,
    uname: Box<libc::utsname>,
}

impl Get {
    pub(super) fn new() -> Get {
        Get {
            ids: [0; 3],
            rlimit: libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            },
            // SAFETY: rusage and utsname are plain C structs; all zeroes is valid.
            usage: Box::new(unsafe { std::mem::zeroed() }),
            // SAFETY: as above.
            uname: Box::new(unsafe { std::mem::zeroed() }),
        }
    }
}

/// A system call without pointer arguments.
macro_rules! plain {
    ($nr:expr $(, $arg:expr)*) => {{
        // SAFETY: these calls take no pointers and only read process state.
        let r = unsafe { libc::syscall($nr $(, $arg as c_long)*) };
        black_box(check(r, stringify!($nr))?);
    }};
}

impl Workload for Get {
    fn run(&mut self, iterations: u64) -> Result<Interval, BenchError> {
        let [a, b, c] = &mut self.ids;
        let (a, b, c) = (
            a as *mut libc::uid_t,
            b as *mut libc::uid_t,
            c as *mut libc::uid_t,
        );
        let rlimit = &mut self.rlimit as *mut libc::rlimit;
        let usage = &mut *self.usage as *mut libc::rusage;
        let uname = &mut *self.uname as *mut libc::utsname;
        let start = Instant::now();
        for _ in 0..iterations {
            plain!(libc::SYS_getpid);
            plain!(libc::SYS_getppid);
            plain!(libc::SYS_gettid);
            plain!(libc::SYS_getuid);
            plain!(libc::SYS_geteuid);
            plain!(libc::SYS_getgid);
            plain!(libc::SYS_getegid);
            // SAFETY: a, b and c point to three uid_t we own (gid_t is the
            // same size).
            let r = unsafe { libc::syscall(libc::SYS_getresuid, a, b, c) };
            black_box(check(r, "getresuid")?);
            // SAFETY: as above.
            let r = unsafe { libc::syscall(libc::SYS_getresgid, a, b, c) };
            black_box(check(r, "getresgid")?);
            // A zero size only counts the groups; the list pointer is unused.
            // SAFETY: with size 0 the kernel writes nothing.
            let r = unsafe { libc::syscall(libc::SYS_getgroups, 0 as c_long, a) };
            black_box(check(r, "getgroups")?);
            plain!(libc::SYS_getpgid, 0);
            plain!(libc::SYS_getsid, 0);
            plain!(libc::SYS_getpriority, libc::PRIO_PROCESS, 0);
            // SAFETY: a null new limit only reads the old one into rlimit, ours.
            let r = unsafe {
                libc::syscall(
                    libc::SYS_prlimit64,
                    0 as c_long,
                    libc::RLIMIT_NOFILE as c_long,
                    std::ptr::null::<libc::rlimit>(),
                    rlimit,
                )
            };
            black_box(check(r, "prlimit64")?);
            // SAFETY: usage points to an rusage we own.
            let r =
                unsafe { libc::syscall(libc::SYS_getrusage, libc::RUSAGE_THREAD as c_long, usage) };
            black_box(check(r, "getrusage")?);
            // SAFETY: uname points to a utsname we own.
            let r = unsafe { libc::syscall(libc::SYS_uname, uname) };
            black_box(check(r, "uname")?);
        }
        let interval = Interval::since(start, (iterations * GET_CALLS) as f64);
        black_box((&self.ids, &self.rlimit, &self.usage, &self.uname));
        Ok(interval)
    }
}
