//! The loop bodies of the will-it-scale family, as in will-it-scale's
//! `tests/*.c`. Each runs in a forked child or a thread: raw system calls
//! only, no allocation, no panic.

use super::tasks::{Failure, Op, Task};
use libc::{c_int, c_long};
use std::hint::black_box;
use std::os::fd::RawFd;
use std::sync::atomic::AtomicU32;

/// page_fault1 and mmap1 map this much per task.
pub(super) const MEMSIZE: usize = 128 * 1024 * 1024;

/// `syscall(SYS_futex, &word, op, 1, NULL, NULL, 0)` on the task's own word.
#[inline(always)]
fn futex_wake(task: &Task, op: c_int) -> Result<(), Failure> {
    // The task's own word on its own stack, as will-it-scale's `addr`.
    let word = AtomicU32::new(0);
    while task.running() {
        // SAFETY: `word` is a live, aligned u32; FUTEX_WAKE reads no other
        // argument than the count.
        let r = unsafe {
            libc::syscall(
                libc::SYS_futex,
                word.as_ptr(),
                op as c_long,
                1 as c_long,
                std::ptr::null::<libc::timespec>(),
                std::ptr::null::<u32>(),
                0 as c_long,
            )
        };
        if r < 0 {
            return Err(Failure::last(Op::Futex));
        }
        task.add(1);
    }
    Ok(())
}

/// futex1: FUTEX_WAKE, the shared (non-private) operation, with no waiter.
pub(super) fn futex1(task: &Task) -> Result<(), Failure> {
    futex_wake(task, libc::FUTEX_WAKE)
}

/// futex3: FUTEX_WAKE_PRIVATE with no waiter.
pub(super) fn futex3(task: &Task) -> Result<(), Failure> {
    futex_wake(task, libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG)
}

/// Writes one byte, retrying on EINTR.
#[inline(always)]
fn write_byte(fd: RawFd, byte: &u8) -> Result<(), Failure> {
    loop {
        // SAFETY: `byte` is valid for a read of one byte.
        let n = unsafe { libc::write(fd, (byte as *const u8).cast(), 1) };
        if n == 1 {
            return Ok(());
        }
        let failure = Failure::last(Op::PipeWrite);
        if failure.errno != libc::EINTR {
            return Err(failure);
        }
    }
}

/// Reads one byte, retrying on EINTR; false at end of file.
#[inline(always)]
fn read_byte(fd: RawFd, byte: &mut u8) -> Result<bool, Failure> {
    loop {
        // SAFETY: `byte` is valid for a write of one byte.
        let n = unsafe { libc::read(fd, (byte as *mut u8).cast(), 1) };
        if n == 1 {
            return Ok(true);
        }
        if n == 0 {
            return Ok(false);
        }
        let failure = Failure::last(Op::PipeRead);
        if failure.errno != libc::EINTR {
            return Err(failure);
        }
    }
}

/// Writes one byte to `task.fds[1]` and reads one from `task.fds[0]`,
/// counting `ops` per round trip, until stopped.
#[inline(always)]
fn round_trips(task: &Task, ops: u64) -> Result<(), Failure> {
    let [rx, tx] = task.fds;
    let mut byte = 0u8;
    while task.running() {
        write_byte(tx, &byte)?;
        if !read_byte(rx, &mut byte)? {
            return Err(Failure {
                op: Op::PipeClosed,
                errno: 0,
            });
        }
        task.add(ops);
    }
    Ok(())
}

/// pipe1: write one byte to the task's own pipe, read it back.
pub(super) fn pipe1(task: &Task) -> Result<(), Failure> {
    round_trips(task, 1)
}

/// pthread_mutex1: lock and unlock the task's own (so uncontended) mutex.
pub(super) fn pthread_mutex1(task: &Task) -> Result<(), Failure> {
    let mut mutex = libc::PTHREAD_MUTEX_INITIALIZER;
    while task.running() {
        // SAFETY: a statically initialised default mutex, never moved while
        // in use, locked and unlocked by this thread alone.
        let r = unsafe { libc::pthread_mutex_lock(&mut mutex) };
        if r != 0 {
            return Err(Failure {
                op: Op::MutexLock,
                errno: r,
            });
        }
        // SAFETY: as above; this thread holds the lock.
        let r = unsafe { libc::pthread_mutex_unlock(&mut mutex) };
        if r != 0 {
            return Err(Failure {
                op: Op::MutexUnlock,
                errno: r,
            });
        }
        task.add(1);
    }
    Ok(())
}

/// sched_yield: `syscall(SYS_sched_yield)`.
pub(super) fn sched_yield(task: &Task) -> Result<(), Failure> {
    while task.running() {
        // SAFETY: sched_yield takes no arguments.
        if unsafe { libc::syscall(libc::SYS_sched_yield) } < 0 {
            return Err(Failure::last(Op::SchedYield));
        }
        task.add(1);
    }
    Ok(())
}

/// signal1: `raise(SIGUSR1)`, as will-it-scale's loop does, caught by the
/// empty handler the workload installed before the tasks started. glibc's
/// `raise` signals the calling thread: `gettid`, `getpid` and `tgkill` per
/// call (glibc 2.36, seen with strace), so the op is two null system calls
/// longer than sig-catch's bare `tgkill` (docs/benchmarks.md, "Against the
/// reference tools").
pub(super) fn signal1(task: &Task) -> Result<(), Failure> {
    // A thread or child may inherit a mask blocking SIGUSR1: the signal
    // would stay pending and no handler would run.
    // SAFETY: sigset_t is a plain bit set; sigemptyset initialises it.
    let mut set: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is a valid sigset_t; unblocking touches this thread only.
    let r = unsafe {
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGUSR1);
        libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut())
    };
    if r != 0 {
        return Err(Failure {
            op: Op::Sigmask,
            errno: r,
        });
    }
    while task.running() {
        // SAFETY: signals this very thread, whose SIGUSR1 handler is empty.
        if unsafe { libc::raise(libc::SIGUSR1) } != 0 {
            return Err(Failure::last(Op::Raise));
        }
        task.add(1);
    }
    Ok(())
}

/// getppid1: `syscall(SYS_getppid)`.
pub(super) fn getppid1(task: &Task) -> Result<(), Failure> {
    while task.running() {
        // SAFETY: getppid takes no arguments and cannot fail.
        black_box(unsafe { libc::syscall(libc::SYS_getppid) });
        task.add(1);
    }
    Ok(())
}

fn map_anonymous() -> Result<*mut u8, Failure> {
    // SAFETY: a fresh private anonymous mapping; no existing memory is affected.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            MEMSIZE,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(Failure::last(Op::Mmap));
    }
    Ok(p.cast())
}

fn unmap(p: *mut u8) -> Result<(), Failure> {
    // SAFETY: `p` is a MEMSIZE mapping of ours that nothing uses any more.
    if unsafe { libc::munmap(p.cast(), MEMSIZE) } != 0 {
        return Err(Failure::last(Op::Munmap));
    }
    Ok(())
}

/// page_fault1: map 128 MiB, write a byte to each page (one operation per
/// page: each is a minor fault, or a THP fault per 2 MiB when transparent
/// huge pages are on for all mappings), unmap.
pub(super) fn page_fault1(task: &Task) -> Result<(), Failure> {
    let page = task.page;
    while task.running() {
        let p = map_anonymous()?;
        let mut offset = 0;
        while offset < MEMSIZE && task.running() {
            // SAFETY: `offset` lies within the mapping just made.
            unsafe { std::ptr::write_volatile(p.add(offset), 0) };
            task.add(1);
            offset += page;
        }
        unmap(p)?;
    }
    Ok(())
}

/// mmap1: map 128 MiB (untouched) and unmap it.
pub(super) fn mmap1(task: &Task) -> Result<(), Failure> {
    while task.running() {
        let p = map_anonymous()?;
        unmap(black_box(p))?;
        task.add(1);
    }
    Ok(())
}

/// `syscall(SYS_brk, addr)`: the new break, or the old one when it failed.
#[inline(always)]
fn brk(addr: usize) -> usize {
    // SAFETY: moves the program break of a process whose allocator never
    // uses it (a forked child or the helper process, see brk1).
    unsafe { libc::syscall(libc::SYS_brk, addr) as usize }
}

/// brk1: grow the program break by one page and shrink it back; two
/// operations (two brk calls) per loop, as will-it-scale counts them. Runs
/// only in processes that never allocate (forked children, or the helper
/// process of thread mode), since it moves the break under the allocator.
pub(super) fn brk1(task: &Task) -> Result<(), Failure> {
    let base = if task.brk_base != 0 {
        task.brk_base
    } else {
        brk(0)
    };
    let up = base + task.page;
    while task.running() {
        if brk(up) != up || brk(base) != base {
            return Err(Failure {
                op: Op::Brk,
                errno: libc::ENOMEM,
            });
        }
        task.add(2);
    }
    Ok(())
}

/// context_switch1, the counted side of a pair: write one byte to the
/// partner, read its echo; two operations (one-way hops, each waking the
/// other task) per round trip, as will-it-scale counts them.
pub(super) fn ping(task: &Task) -> Result<(), Failure> {
    round_trips(task, 2)
}

/// context_switch1, the partner: echo every byte until end of file (the
/// pinging side ended and closed its end).
pub(super) fn echo(task: &Task) -> Result<(), Failure> {
    let [rx, tx] = task.fds;
    let mut byte = 0u8;
    while read_byte(rx, &mut byte)? {
        write_byte(tx, &byte)?;
    }
    Ok(())
}
