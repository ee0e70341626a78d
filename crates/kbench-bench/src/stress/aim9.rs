//! aim9's `brk_test` and `page_test` (`exec_test` is the `fork-exec` loop
//! of [`crate::shared::spawn`]).
//!
//! The brk loops move the program break, which glibc's malloc owns: its main
//! arena grows and shrinks with `brk`, from any thread of this process at
//! any time. Moving the break under it would corrupt the heap, and a library
//! cannot stop malloc from using it. So the loops run in a dedicated child
//! process forked at `prepare` ([`Partner`]), which never allocates: its
//! break is its own. The child waits for an iteration count on a pipe,
//! times the loop itself (`CLOCK_MONOTONIC`, around the loop only) and
//! writes back the elapsed nanoseconds; the parent turns that into the
//! interval. The child only ever moves the break above where it found it,
//! puts it back before exiting, and is killed and reaped when the workload
//! is dropped.

use crate::sys::fd::{self, raw};
use crate::sys::memory::page_size;
use crate::sys::partner::Partner;
use crate::{BenchError, Interval, Workload};
use libc::c_long;
use std::os::fd::{OwnedFd, RawFd};
use std::time::{Duration, Instant};

/// Pages moved per iteration: a 16-page shrink, then 16 one-page grows
/// (aim9's 64 KiB and 4 KiB with 4 KiB pages).
const STEPS: usize = 16;

/// What the child writes back: `[status, elapsed ns, 0]`.
type Reply = [u64; 3];
const OK: u64 = 0;
/// The break could not be moved above its start (nothing was timed).
const SETUP_FAILED: u64 = 1;
/// A brk call in the loop did not move the break where asked.
const LOOP_FAILED: u64 = 2;

/// brk-test (calls, 17 per iteration) and page-test (pages, 16 per
/// iteration, each written once after the grow that maps it).
pub(super) struct Brk {
    dirty: bool,
    cmd: RawFd,
    reply: RawFd,
    // Our ends close first (the child sees EOF, restores its break and
    // exits), then the child is killed (if still there) and reaped.
    _ends: [OwnedFd; 2],
    child: Partner,
}

impl Brk {
    pub(super) fn new(dirty: bool) -> Result<Brk, BenchError> {
        let (cmd_rx, cmd_tx) = fd::pipe()?;
        let (reply_rx, reply_tx) = fd::pipe()?;
        let (rx, tx) = (raw(&cmd_rx), raw(&reply_tx));
        let page = page_size();
        let child = Partner::spawn(&[rx, tx], || brk_child(rx, tx, page, dirty))?;
        drop((cmd_rx, reply_tx));
        let mut w = Brk {
            dirty,
            cmd: raw(&cmd_tx),
            reply: raw(&reply_rx),
            _ends: [cmd_tx, reply_rx],
            child,
        };
        w.run(1)?;
        Ok(w)
    }

    fn what(&self) -> &'static str {
        if self.dirty { "page-test" } else { "brk-test" }
    }
}

impl Workload for Brk {
    fn run(&mut self, iterations: u64) -> Result<Interval, BenchError> {
        let what = self.what();
        fd::write_all(self.cmd, &iterations.to_ne_bytes(), what)?;
        let mut bytes = [0u8; size_of::<Reply>()];
        fd::read_exact(self.reply, &mut bytes, what)?;
        let word =
            |i: usize| u64::from_ne_bytes(bytes[i * 8..i * 8 + 8].try_into().expect("8 bytes"));
        match word(0) {
            OK => {}
            SETUP_FAILED => {
                return Err(BenchError::Skip(format!(
                    "{what}: the child cannot grow its program break by {STEPS} pages"
                )));
            }
            _ => {
                return Err(BenchError::Os {
                    what: format!("{what}: brk in the child (pid {})", self.child.pid()),
                    error: std::io::Error::other("the break did not move where asked"),
                });
            }
        }
        let per_iteration = if self.dirty { STEPS } else { STEPS + 1 };
        Ok(Interval {
            elapsed: Duration::from_nanos(word(1)),
            work: (iterations * per_iteration as u64) as f64,
        })
    }
}

/// The break after `syscall(SYS_brk, addr)`: the new one, or the old one
/// when the kernel refused (0 asks for the current one).
#[inline(always)]
fn brk(addr: usize) -> usize {
    // SAFETY: only called in the brk child, which never allocates, so
    // nothing lives in the break area it moves (see the module doc).
    unsafe { libc::syscall(libc::SYS_brk, addr as c_long) as usize }
}

/// The brk child (async-signal-safe calls only, no allocation): serves
/// iteration counts from `cmd` until EOF, then restores its break.
fn brk_child(cmd: RawFd, reply: RawFd, page: usize, dirty: bool) {
    // Huge pages would turn page-test's 4 KiB faults into 2 MiB ones as soon
    // as the (inherited, possibly large) heap spans an aligned 2 MiB.
    // SAFETY: prctl with integer arguments; affects this child only.
    unsafe { libc::prctl(libc::PR_SET_THP_DISABLE, 1 as libc::c_ulong, 0, 0, 0) };
    let original = brk(0);
    let base = original.next_multiple_of(page);
    let top = base + STEPS * page;
    let ready = original != 0 && brk(top) == top;
    let mut count = [0u8; 8];
    while fd::child_read_exact(cmd, &mut count) {
        let reply_words: Reply = if ready {
            brk_loop(u64::from_ne_bytes(count), base, page, dirty)
        } else {
            [SETUP_FAILED, 0, 0]
        };
        let mut bytes = [0u8; size_of::<Reply>()];
        for (chunk, word) in bytes.chunks_exact_mut(8).zip(reply_words) {
            chunk.copy_from_slice(&word.to_ne_bytes());
        }
        if !fd::child_write_all(reply, &bytes) {
            break;
        }
    }
    brk(original);
}

/// The timed loop, entered and left with the break at `base + STEPS pages`.
#[inline(never)]
fn brk_loop(iterations: u64, base: usize, page: usize, dirty: bool) -> Reply {
    let start = Instant::now();
    for _ in 0..iterations {
        if brk(base) != base {
            return [LOOP_FAILED, 0, 0];
        }
        let mut end = base;
        for _ in 0..STEPS {
            end += page;
            if brk(end) != end {
                return [LOOP_FAILED, 0, 0];
            }
            if dirty {
                // SAFETY: [end - page, end) was just added to the break of
                // this process, which nothing else uses (see the module doc).
                unsafe { std::ptr::write_volatile((end - page) as *mut u8, 1) };
            }
        }
    }
    [OK, start.elapsed().as_nanos() as u64, 0]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing;

    #[test]
    fn a_dead_child_is_an_error_and_is_reaped() {
        let _serial = testing::serial();
        for dirty in [false, true] {
            let mut w = Brk::new(dirty).unwrap();
            let interval = w.run(10).unwrap();
            assert_eq!(interval.work, if dirty { 160.0 } else { 170.0 });
            let pid = w.child.pid();
            assert!(testing::children().contains(&pid));
            // SAFETY: pid is our unreaped child.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            assert!(w.run(10).is_err(), "a run against a dead child");
            drop(w);
            testing::assert_gone(&[pid]);
        }
    }

    #[test]
    fn the_child_exits_by_itself_on_eof() {
        let _serial = testing::serial();
        let mut w = Brk::new(true).unwrap();
        w.run(3).unwrap();
        let Brk {
            _ends, mut child, ..
        } = w;
        drop(_ends);
        let status = child.wait_exit(Duration::from_secs(5)).expect("exited");
        assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0);
    }
}
