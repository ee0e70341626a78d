//! The will-it-scale task runner.
//!
//! N worker tasks spin on a loop body from `prepare` until the workload is
//! dropped; each bumps its own counter (one 128-byte line per task, as
//! will-it-scale's `CACHELINE_SIZE`, so no two tasks share a line) in a
//! `MAP_SHARED` anonymous mapping that forked workers share with the
//! measuring process. The workers are never paused: between two intervals
//! they keep running, as in will-it-scale.
//!
//! `prepare` returns once every worker has started. `run(iterations)` reads
//! the sum of the counters and the clock, sleeps until the sum has grown by
//! at least `iterations` *and* at least [`MIN_INTERVAL`] has passed, reads
//! both again and returns the measured wall time between the two reads with
//! the operations counted between them (never the sleep length, which the
//! scheduler stretches at will, nor `iterations`). The floor keeps every
//! interval at 5 ms or more whatever calibration chose: a wake-up delayed by
//! the busy workers can make the first, 1-iteration calibration interval
//! look long enough, and calibration then keeps that count; so calibration
//! often settles on a small count and the intervals last about 5 ms. The
//! sleep is predicted from the rate so far, so an interval takes one or a
//! few wake-ups of the measuring thread, each stealing a few microseconds
//! from a worker sharing its CPU, as will-it-scale's `sleep(1)` loop does.
//!
//! Tasks are:
//! - processes forked in `prepare`, each keeping only its own descriptors
//!   ([`Partner::spawn`]); they die with the measuring thread
//!   (`PR_SET_PDEATHSIG`) and are killed and reaped on drop;
//! - or threads of the measuring process, stopped by a shared flag and
//!   joined on drop;
//! - or, for a loop body that must not run beside the measuring process's
//!   allocator (`brk1`), threads of one helper process of their own, made
//!   with a raw `clone` so that the helper never allocates; the helper is
//!   killed and reaped on drop.
//!
//! Every worker takes the CPU mask of the process (of its main thread), not
//! that of the thread that made it, and is otherwise not pinned: the
//! scheduler places the tasks (will-it-scale pins task i to core i mod n by
//! default). A worker whose system call fails records the call and errno in
//! its line and stops; the next poll of `run` reports it.

use crate::sys::cpu::CpuMask;
use crate::sys::fd::raw;
use crate::sys::memory::page_size;
use crate::sys::os_error;
use crate::sys::partner::Partner;
use crate::sys::process::check_status;
use crate::sys::signal::Sigusr1Guard;
use crate::{BenchError, Interval, MIN_INTERVAL, Workload};
use libc::{c_int, c_void};
use std::os::fd::{OwnedFd, RawFd};
use std::ptr::NonNull;
use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The most tasks a benchmark takes (will-it-scale's `MAX_TASKS`).
pub(super) const MAX_TASKS: u64 = 1024;

/// One counter's share of the shared mapping: 128 bytes, two 64-byte lines,
/// so that the adjacent-line prefetcher does not pair two tasks either.
const LINE: usize = 128;

/// The shortest and longest sleep between two polls of the counters.
const MIN_POLL: Duration = Duration::from_micros(100);
const MAX_POLL: Duration = Duration::from_millis(50);
/// Without progress for this long, `run` checks that the workers live...
const STALL_CHECK: Duration = Duration::from_secs(1);
/// ...and for this long, gives up.
const STALL_LIMIT: Duration = Duration::from_secs(30);
/// How long `prepare` waits for every worker to start.
const START_LIMIT: Duration = Duration::from_secs(30);

/// The stack of a thread of the helper process.
const RAW_STACK: usize = 64 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    Process,
    Thread,
}

/// The system call a worker failed in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub(super) enum Op {
    Futex = 1,
    PipeWrite,
    PipeRead,
    PipeClosed,
    MutexLock,
    MutexUnlock,
    SchedYield,
    Sigmask,
    Raise,
    Mmap,
    Munmap,
    Brk,
    StackMmap,
    Clone,
    #[cfg(test)]
    Test,
}

impl Op {
    const ALL: &[Op] = &[
        Op::Futex,
        Op::PipeWrite,
        Op::PipeRead,
        Op::PipeClosed,
        Op::MutexLock,
        Op::MutexUnlock,
        Op::SchedYield,
        Op::Sigmask,
        Op::Raise,
        Op::Mmap,
        Op::Munmap,
        Op::Brk,
        Op::StackMmap,
        Op::Clone,
        #[cfg(test)]
        Op::Test,
    ];

    fn describe(self) -> &'static str {
        match self {
            Op::Futex => "futex",
            Op::PipeWrite => "write 1 byte to a pipe",
            Op::PipeRead => "read 1 byte from a pipe",
            Op::PipeClosed => "read 1 byte from a pipe: the partner closed its end",
            Op::MutexLock => "pthread_mutex_lock",
            Op::MutexUnlock => "pthread_mutex_unlock",
            Op::SchedYield => "sched_yield",
            Op::Sigmask => "unblock SIGUSR1",
            Op::Raise => "raise(SIGUSR1)",
            Op::Mmap => "mmap 128 MiB",
            Op::Munmap => "munmap 128 MiB",
            Op::Brk => "brk",
            Op::StackMmap => "mmap a thread stack",
            Op::Clone => "clone a thread",
            #[cfg(test)]
            Op::Test => "test failure",
        }
    }
}

/// Why a worker stopped: the call and its errno (0: no errno applies).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Failure {
    pub op: Op,
    pub errno: i32,
}

impl Failure {
    /// The failure of `op` with the calling thread's errno.
    pub(super) fn last(op: Op) -> Failure {
        let errno = std::io::Error::last_os_error().raw_os_error().unwrap_or(0);
        Failure { op, errno }
    }

    fn encode(self) -> u64 {
        (u64::from(self.op as u32) << 32) | u64::from(self.errno as u32)
    }

    fn decode(code: u64) -> Option<Failure> {
        let op = *Op::ALL
            .iter()
            .find(|op| **op as u32 == (code >> 32) as u32)?;
        Some(Failure {
            op,
            errno: code as u32 as i32,
        })
    }

    fn error(self) -> std::io::Error {
        if self.errno == 0 {
            std::io::Error::other(self.op.describe())
        } else {
            std::io::Error::from_raw_os_error(self.errno)
        }
    }
}

/// One worker's line of the shared mapping.
#[repr(C, align(128))]
struct Slot {
    /// Operations done; written by the worker alone.
    count: AtomicU64,
    /// 0, or the worker's [`Failure`], encoded.
    failure: AtomicU64,
    /// The worker's thread id once it runs (its pid for a process).
    tid: AtomicI32,
}

/// The first line of the shared mapping.
#[repr(C, align(128))]
struct Header {
    /// Set on drop: threads leave their loop.
    stop: AtomicBool,
}

const _: () = assert!(size_of::<Slot>() == LINE && size_of::<Header>() == LINE);

/// The `MAP_SHARED` anonymous mapping of the header and the workers' slots,
/// unmapped on drop (forked workers keep their own mapping of it).
struct Region {
    base: NonNull<u8>,
    len: usize,
    slots: usize,
}

// SAFETY: the mapping holds only atomics; it is unmapped once, on drop, when
// no thread uses it any more (threads hold an Arc of it).
unsafe impl Send for Region {}
// SAFETY: as above.
unsafe impl Sync for Region {}

impl Region {
    fn new(slots: usize) -> Result<Region, BenchError> {
        let page = page_size();
        let len = ((1 + slots) * LINE).div_ceil(page) * page;
        // SAFETY: a fresh anonymous mapping; no existing memory is affected.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(BenchError::last_os("mmap the shared counters"));
        }
        let base = NonNull::new(base.cast::<u8>()).expect("mmap never returns null here");
        Ok(Region { base, len, slots })
    }

    fn header(&self) -> &Header {
        // SAFETY: the mapping starts with one zeroed, aligned Header line.
        unsafe { &*self.base.as_ptr().cast::<Header>() }
    }

    fn slot_ptr(&self, i: usize) -> NonNull<Slot> {
        assert!(i < self.slots, "slot {i} of {}", self.slots);
        // SAFETY: line 1 + i lies within the mapping (checked above).
        unsafe { NonNull::new_unchecked(self.base.as_ptr().add(LINE * (1 + i)).cast::<Slot>()) }
    }

    fn slot(&self, i: usize) -> &Slot {
        // SAFETY: a zeroed, aligned Slot line of the mapping, alive with self.
        unsafe { self.slot_ptr(i).as_ref() }
    }

    fn stop_ptr(&self) -> NonNull<AtomicBool> {
        NonNull::from(&self.header().stop)
    }
}

impl Drop for Region {
    fn drop(&mut self) {
        // SAFETY: the mapping is ours and nobody uses it any more.
        unsafe { libc::munmap(self.base.as_ptr().cast(), self.len) };
    }
}

/// What a loop body sees of its task: its counter, the stop flag, the
/// descriptors made for it, and a few constants. Plain data, so that a
/// forked child uses it without allocating.
#[derive(Clone, Copy)]
pub(super) struct Task {
    slot: NonNull<Slot>,
    stop: NonNull<AtomicBool>,
    /// The task's own `[read end, write end]`, or -1s.
    pub fds: [RawFd; 2],
    /// The page size.
    pub page: usize,
    /// brk1 in a helper process: the break the threads toggle above; 0:
    /// the task reads its own.
    pub brk_base: usize,
}

// SAFETY: the pointers point into the shared mapping, which outlives every
// worker: forked workers have their own mapping of it, threads hold an Arc
// of the Region.
unsafe impl Send for Task {}

impl Task {
    /// False once the workload is being dropped.
    #[inline(always)]
    pub(super) fn running(&self) -> bool {
        // SAFETY: see the Send impl: the flag outlives the task.
        !unsafe { self.stop.as_ref() }.load(Relaxed)
    }

    /// Counts `n` more operations. The task is its counter's only writer: a
    /// plain load and store, no locked instruction.
    #[inline(always)]
    pub(super) fn add(&self, n: u64) {
        // SAFETY: see the Send impl.
        let count = &unsafe { self.slot.as_ref() }.count;
        count.store(count.load(Relaxed).wrapping_add(n), Relaxed);
    }

    fn fail(&self, failure: Failure) {
        // SAFETY: see the Send impl.
        let slot = unsafe { self.slot.as_ref() };
        let _ = slot
            .failure
            .compare_exchange(0, failure.encode(), Relaxed, Relaxed);
    }

    fn started(&self) {
        // SAFETY: gettid takes no arguments and cannot fail.
        let tid = unsafe { libc::syscall(libc::SYS_gettid) } as i32;
        // SAFETY: see the Send impl.
        unsafe { self.slot.as_ref() }.tid.store(tid, Relaxed);
    }
}

/// A loop body: runs until `task.running()` turns false, counting with
/// `task.add`; the first failing call ends it. In a forked child it may only
/// make async-signal-safe calls, must not allocate and must not panic.
pub(super) type Body = fn(&Task) -> Result<(), Failure>;

/// One worker to start.
pub(super) struct Launch {
    pub body: Body,
    /// Whether its counter is part of the total (a ping-pong partner's is not).
    pub counted: bool,
    /// Its own `(read end, write end)`, made just before it starts.
    pub fds: Option<(OwnedFd, OwnedFd)>,
}

/// How to start a workload.
pub(super) struct Spec<'a> {
    pub id: &'static str,
    pub mode: Mode,
    /// Thread mode runs the threads in a helper process rather than in the
    /// measuring process.
    pub isolated: bool,
    /// Tasks, as `tasks()` reports them.
    pub tasks: usize,
    /// Workers per task (2 for a ping-pong pair).
    pub per_task: usize,
    /// Makes the `per_task` workers of the next task; called right before
    /// they start, so a process-mode parent holds few descriptors at once.
    pub make: &'a mut dyn FnMut() -> Result<Vec<Launch>, BenchError>,
    /// Held until every worker is gone (signal1's SIGUSR1 handler).
    pub guard: Option<Sigusr1Guard>,
}

enum Workers {
    /// Forked workers, or the one helper process of isolated threads.
    Processes(Vec<Partner>),
    Threads(Vec<JoinHandle<()>>),
}

/// The counters at one moment.
#[derive(Clone, Copy)]
struct Snapshot {
    /// The middle of the reads of the counters.
    at: Instant,
    ops: u64,
}

/// A running will-it-scale benchmark. Dropping it stops the workers and
/// reaps every process and thread.
pub(super) struct Scale {
    id: &'static str,
    tasks: usize,
    /// Per slot: whether its count is part of the total.
    counted: Vec<bool>,
    /// Operations per second in the last interval: predicts the sleep.
    rate: Option<f64>,
    workers: Workers,
    region: Arc<Region>,
    _guard: Option<Sigusr1Guard>,
}

impl Scale {
    pub(super) fn start(spec: Spec<'_>) -> Result<Scale, BenchError> {
        let slots = spec.tasks * spec.per_task;
        let region = Arc::new(Region::new(slots)?);
        let workers = match (spec.mode, spec.isolated) {
            (Mode::Thread, false) => Workers::Threads(Vec::with_capacity(slots)),
            _ => Workers::Processes(Vec::with_capacity(slots)),
        };
        let mut scale = Scale {
            id: spec.id,
            tasks: spec.tasks,
            counted: Vec::with_capacity(slots),
            rate: None,
            workers,
            region,
            _guard: spec.guard,
        };
        // Every worker inherits the process's CPU mask from this thread.
        let _mask = ProcessMask::enter();
        let page = page_size();
        let mut next = 0;
        let mut helper = Vec::new();
        for _ in 0..spec.tasks {
            let launches = (spec.make)()?;
            assert_eq!(launches.len(), spec.per_task, "workers per task");
            for launch in launches {
                let index = next;
                next += 1;
                scale.counted.push(launch.counted);
                let task = Task {
                    slot: scale.region.slot_ptr(index),
                    stop: scale.region.stop_ptr(),
                    fds: launch
                        .fds
                        .as_ref()
                        .map_or([-1, -1], |(r, w)| [raw(r), raw(w)]),
                    page,
                    brk_base: 0,
                };
                // On an error, dropping `scale` stops what did start.
                match &mut scale.workers {
                    Workers::Threads(threads) => {
                        threads.push(spawn_thread(&scale.region, launch, task, index)?);
                    }
                    Workers::Processes(processes) if !spec.isolated => {
                        processes.push(spawn_process(launch, task)?);
                    }
                    Workers::Processes(_) => helper.push((launch, task)),
                }
            }
        }
        if spec.isolated {
            let started = spawn_helper(&helper)?;
            if let Workers::Processes(processes) = &mut scale.workers {
                processes.push(started);
            }
        }
        scale.wait_started()?;
        Ok(scale)
    }

    /// Waits until every worker runs (has reported its thread id), so that
    /// no interval counts fewer tasks than asked for.
    fn wait_started(&mut self) -> Result<(), BenchError> {
        let begin = Instant::now();
        let mut sleep = MIN_POLL;
        loop {
            let started =
                (0..self.region.slots).all(|i| self.region.slot(i).tid.load(Relaxed) != 0);
            self.check_failures()?;
            if started {
                return Ok(());
            }
            self.check_alive()?;
            if begin.elapsed() >= START_LIMIT {
                return Err(BenchError::Os {
                    what: format!("{}: start the workers", self.id),
                    error: std::io::Error::new(
                        std::io::ErrorKind::TimedOut,
                        format!("not all started within {} s", START_LIMIT.as_secs()),
                    ),
                });
            }
            std::thread::sleep(sleep);
            sleep = (sleep * 2).min(MAX_POLL);
        }
    }

    /// The pids of the worker processes (the helper's, for isolated
    /// threads).
    #[cfg(test)]
    pub(super) fn pids(&self) -> Vec<libc::pid_t> {
        match &self.workers {
            Workers::Processes(processes) => processes.iter().map(Partner::pid).collect(),
            Workers::Threads(_) => vec![],
        }
    }

    /// The thread ids the workers reported, 0 for a worker not started yet.
    #[cfg(test)]
    pub(super) fn tids(&self) -> Vec<libc::pid_t> {
        (0..self.region.slots)
            .map(|i| self.region.slot(i).tid.load(Relaxed))
            .collect()
    }

    /// Sums the counters in one pass over the slots, which also looks for
    /// failures (the same line, no extra cache miss).
    fn snapshot(&self) -> Result<Snapshot, BenchError> {
        let before = Instant::now();
        let mut ops = 0u64;
        let mut failed = false;
        for (i, &counted) in self.counted.iter().enumerate() {
            let slot = self.region.slot(i);
            if counted {
                ops = ops.wrapping_add(slot.count.load(Relaxed));
            }
            failed |= slot.failure.load(Relaxed) != 0;
        }
        let after = Instant::now();
        if failed {
            self.check_failures()?;
        }
        Ok(Snapshot {
            at: before + (after - before) / 2,
            ops,
        })
    }

    /// The first failure a worker recorded.
    fn check_failures(&self) -> Result<(), BenchError> {
        for i in 0..self.region.slots {
            let code = self.region.slot(i).failure.load(Relaxed);
            if code == 0 {
                continue;
            }
            let what = match Failure::decode(code) {
                Some(f) => {
                    return Err(BenchError::Os {
                        what: format!("{} worker {i}: {}", self.id, f.op.describe()),
                        error: f.error(),
                    });
                }
                None => format!("{} worker {i}: failure code {code:#x}", self.id),
            };
            return Err(BenchError::Os {
                what,
                error: std::io::Error::other("unknown failure"),
            });
        }
        Ok(())
    }

    /// An error when a worker has ended (they only end when dropped).
    fn check_alive(&mut self) -> Result<(), BenchError> {
        let id = self.id;
        let ended = match &mut self.workers {
            Workers::Processes(processes) => {
                let mut ended = None;
                for (i, p) in processes.iter_mut().enumerate() {
                    if let Some(status) = p.wait_exit(Duration::ZERO) {
                        ended = Some((i, p.pid(), Some(status)));
                        break;
                    }
                }
                if let Some((i, ..)) = ended {
                    // Reaped: its pid may be reused, it must never be killed.
                    processes.remove(i);
                }
                ended.map(|(_, pid, status)| (pid, status))
            }
            Workers::Threads(threads) => threads
                .iter()
                .position(JoinHandle::is_finished)
                .map(|i| (i as libc::pid_t, None)),
        };
        let Some((who, status)) = ended else {
            return Ok(());
        };
        // A recorded failure says more than the exit.
        self.check_failures()?;
        let what = format!("{id} worker");
        match status {
            Some(status) => {
                check_status(status, &what)?;
                Err(BenchError::Os {
                    what: format!("{what} process {who}"),
                    error: std::io::Error::other("exited while the benchmark ran"),
                })
            }
            None => Err(BenchError::Os {
                what: format!("{what} thread {who}"),
                error: std::io::Error::other("ended while the benchmark ran (panicked?)"),
            }),
        }
    }

    /// The sleep until `remaining` more operations are likely done and the
    /// interval reaches `floor`.
    fn predict(&self, now: Instant, floor: Instant, remaining: u64, rate: Option<f64>) -> Duration {
        let for_work = match rate.or(self.rate) {
            _ if remaining == 0 => Duration::ZERO,
            Some(rate) if rate > 0.0 => {
                Duration::from_secs_f64((remaining as f64 / rate).min(MAX_POLL.as_secs_f64()))
            }
            _ => MIN_POLL,
        };
        for_work
            .max(floor.saturating_duration_since(now))
            .clamp(MIN_POLL, MAX_POLL)
    }

    /// Stops every worker and reaps it.
    fn stop(&mut self) {
        self.region.header().stop.store(true, Relaxed);
        match &mut self.workers {
            Workers::Processes(processes) => {
                // Kill them all first, then reap each (a Partner kills and
                // reaps as it drops): they die in parallel. None is reaped
                // yet (check_alive drops those it reaps).
                for p in processes.iter() {
                    // SAFETY: an unreaped child of ours: its pid is not reused.
                    unsafe { libc::kill(p.pid(), libc::SIGKILL) };
                }
                processes.clear();
            }
            Workers::Threads(threads) => {
                for thread in threads.drain(..) {
                    let _ = thread.join();
                }
            }
        }
    }
}

impl Workload for Scale {
    fn run(&mut self, iterations: u64) -> Result<Interval, BenchError> {
        let target = iterations.max(1);
        let start = self.snapshot()?;
        let floor = start.at + MIN_INTERVAL;
        let mut progress = start;
        let mut sleep = self.predict(start.at, floor, target, None);
        let end = loop {
            std::thread::sleep(sleep);
            let now = self.snapshot()?;
            let done = now.ops.wrapping_sub(start.ops);
            if done >= target && now.at >= floor {
                break now;
            }
            if now.ops != progress.ops {
                progress = now;
            } else if now.at - progress.at >= STALL_CHECK {
                self.check_alive()?;
                if now.at - progress.at >= STALL_LIMIT {
                    return Err(BenchError::Os {
                        what: format!("{}: no worker made progress", self.id),
                        error: std::io::Error::new(
                            std::io::ErrorKind::TimedOut,
                            format!("for {} s", STALL_LIMIT.as_secs()),
                        ),
                    });
                }
            }
            let elapsed = (now.at - start.at).as_secs_f64();
            let rate = (done > 0 && elapsed > 0.0).then(|| done as f64 / elapsed);
            sleep = self.predict(now.at, floor, target.saturating_sub(done), rate);
        };
        // Untimed: a worker that died would otherwise only lower the rate.
        self.check_alive()?;
        let elapsed = end.at - start.at;
        let work = end.ops.wrapping_sub(start.ops);
        self.rate = Some(work as f64 / elapsed.as_secs_f64().max(1e-9));
        Ok(Interval {
            elapsed,
            work: work as f64,
        })
    }

    fn tasks(&self) -> u32 {
        self.tasks as u32
    }
}

impl Drop for Scale {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Runs a worker's body, recording how it failed.
fn run_task(body: Body, task: &Task) {
    if let Err(failure) = body(task) {
        task.fail(failure);
    }
}

/// Sets the calling thread's CPU mask to the process's (its main thread's)
/// while workers are made, so that they inherit it rather than a mask the
/// measuring thread may have been pinned to; restores it on drop. Best
/// effort: without it the workers keep the calling thread's mask.
struct ProcessMask {
    saved: CpuMask,
}

impl ProcessMask {
    fn enter() -> Option<ProcessMask> {
        let saved = CpuMask::of(0).ok()?;
        // SAFETY: getpid has no preconditions.
        let process = CpuMask::of(unsafe { libc::getpid() }).ok()?;
        process.apply(0).ok()?;
        Some(ProcessMask { saved })
    }
}

impl Drop for ProcessMask {
    fn drop(&mut self) {
        let _ = self.saved.apply(0);
    }
}

/// Child side, first thing: die with the measuring thread (SIGKILL when it
/// exits, as will-it-scale's watchdog does for its parent).
fn child_setup(parent: libc::pid_t) {
    // SAFETY: prctl with PR_SET_PDEATHSIG only sets a flag of this process.
    unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong) };
    // SAFETY: getppid has no preconditions.
    if unsafe { libc::getppid() } != parent {
        // The measuring process is gone already.
        // SAFETY: _exit ends this child at once.
        unsafe { libc::_exit(0) };
    }
}

fn spawn_process(launch: Launch, task: Task) -> Result<Partner, BenchError> {
    // SAFETY: getpid has no preconditions.
    let parent = unsafe { libc::getpid() };
    let keep = task.fds;
    let keep = if keep[0] >= 0 { &keep[..] } else { &[][..] };
    let body = launch.body;
    let partner = Partner::spawn(keep, move || {
        child_setup(parent);
        task.started();
        run_task(body, &task);
    })?;
    // The worker's descriptors stay open in the worker alone.
    drop(launch.fds);
    Ok(partner)
}

fn spawn_thread(
    region: &Arc<Region>,
    launch: Launch,
    task: Task,
    index: usize,
) -> Result<JoinHandle<()>, BenchError> {
    let region = Arc::clone(region);
    let Launch { body, fds, .. } = launch;
    std::thread::Builder::new()
        .name(format!("kbench-scale-{index}"))
        .stack_size(256 * 1024)
        .spawn(move || {
            // Closed when the thread ends, which ends its ping-pong partner.
            let _fds = fds;
            let _region = region;
            task.started();
            run_task(body, &task);
        })
        .map_err(os_error(format!("spawn worker thread {index}")))
}

/// What a thread of the helper process starts with, at the top of its stack.
#[repr(C)]
struct RawStart {
    body: Body,
    task: Task,
}

/// The helper process: its main thread clones the other threads (on stacks
/// it maps itself), then runs the first worker. Nothing in it allocates, so
/// the loop bodies may move its program break as they like.
fn spawn_helper(workers: &[(Launch, Task)]) -> Result<Partner, BenchError> {
    // SAFETY: getpid has no preconditions.
    let parent = unsafe { libc::getpid() };
    let keep: Vec<RawFd> = workers
        .iter()
        .flat_map(|(_, task)| task.fds)
        .filter(|&fd| fd >= 0)
        .collect();
    Partner::spawn(&keep, || {
        child_setup(parent);
        // SAFETY: brk(0) only reads the current break.
        let base = unsafe { libc::syscall(libc::SYS_brk, 0usize) } as usize;
        for (launch, task) in workers.iter().skip(1) {
            let start = RawStart {
                body: launch.body,
                task: Task {
                    brk_base: base,
                    ..*task
                },
            };
            if let Err(failure) = clone_thread(start) {
                task.fail(failure);
            }
        }
        if let Some((launch, task)) = workers.first() {
            let task = Task {
                brk_base: base,
                ..*task
            };
            task.started();
            run_task(launch.body, &task);
        }
        // Until killed: returning would end every thread of the helper.
        loop {
            // SAFETY: pause just waits for a signal.
            unsafe { libc::pause() };
        }
    })
}

/// Helper side: starts a thread (sharing everything, as pthreads do, but
/// with no thread-local storage of its own: it runs only the loop body and
/// raw system calls) on a fresh stack with a guard page.
fn clone_thread(start: RawStart) -> Result<(), Failure> {
    let page = start.task.page;
    let len = RAW_STACK + page;
    // SAFETY: a fresh anonymous mapping; no existing memory is affected.
    let stack = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_STACK,
            -1,
            0,
        )
    };
    if stack == libc::MAP_FAILED {
        return Err(Failure::last(Op::StackMmap));
    }
    // Best effort guard page at the bottom of the stack.
    // SAFETY: the first page of the mapping just made.
    unsafe { libc::mprotect(stack, page, libc::PROT_NONE) };
    let top = stack as usize + len;
    let arg = (top - size_of::<RawStart>()) & !63;
    // SAFETY: `arg` lies within the new mapping, aligned, with room for it.
    unsafe { std::ptr::write(arg as *mut RawStart, start) };
    let flags = libc::CLONE_VM
        | libc::CLONE_FS
        | libc::CLONE_FILES
        | libc::CLONE_SIGHAND
        | libc::CLONE_THREAD
        | libc::CLONE_SYSVSEM;
    // SAFETY: the new thread runs `raw_thread` on its own stack below `arg`
    // (the stack grows down), with `arg` for argument; the mapping is never
    // unmapped (the helper is killed whole).
    let tid = unsafe {
        libc::clone(
            raw_thread,
            (arg & !15) as *mut c_void,
            flags,
            arg as *mut c_void,
        )
    };
    if tid < 0 {
        return Err(Failure::last(Op::Clone));
    }
    Ok(())
}

extern "C" fn raw_thread(arg: *mut c_void) -> c_int {
    // SAFETY: `arg` is the RawStart clone_thread wrote at the top of our stack.
    let start = unsafe { &*(arg as *const RawStart) };
    start.task.started();
    run_task(start.body, &start.task);
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_round_trip() {
        for &op in Op::ALL {
            let f = Failure { op, errno: 22 };
            assert_eq!(Failure::decode(f.encode()), Some(f));
        }
        let f = Failure {
            op: Op::PipeClosed,
            errno: 0,
        };
        assert_eq!(Failure::decode(f.encode()), Some(f));
        assert_eq!(Failure::decode(0), None);
    }

    #[test]
    fn slots_have_lines_of_their_own() {
        let region = Region::new(3).unwrap();
        let a = region.slot_ptr(0).as_ptr() as usize;
        let b = region.slot_ptr(1).as_ptr() as usize;
        assert_eq!(b - a, LINE);
        assert_eq!(a % LINE, 0);
        assert_eq!(a - region.base.as_ptr() as usize, LINE);
    }
}
