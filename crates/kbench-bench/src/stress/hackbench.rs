//! hackbench (`messaging`): groups of 20 senders and 20 receivers; every
//! sender writes `LOOPS` messages of 100 bytes to every receiver of its
//! group, round robin over the receivers, and every receiver reads until it
//! has all `20 * LOOPS` messages of its group.
//!
//! One iteration is one whole hackbench run, timed as hackbench times it:
//! the tasks (processes or threads) and their pipes or socketpairs are made
//! first, each task reports ready on a pipe and waits (in `poll`) for the
//! start byte; once all are ready the clock starts, the start byte is
//! written, every task is reaped (waitpid / join), the clock stops. Only
//! that part is timed; the interval of `n` iterations is the sum of their
//! timed parts and the value (unit s) is the time of one run.
//!
//! Each run makes and reaps its own tasks. A task that fails exits with a
//! non-zero code, which fails the run; whatever happens, every task is
//! reaped before `run` returns: the parent keeps no sender or receiver
//! descriptor open, so a dead receiver makes its senders fail (EPIPE) and
//! dead senders end their receivers' reads (EOF), and on an early error the
//! start pipe is closed (processes are killed), so no task waits forever.
//! In thread mode a broken pipe relies on SIGPIPE being ignored, as the Rust
//! runtime does in every Rust program.

use crate::sys::fd::{self, raw};
use crate::sys::process::{check_status, fork_child, wait_for};
use crate::sys::{errno, os_error};
use crate::{BenchError, Interval, Options, Workload};
use libc::{c_int, pid_t};
use std::os::fd::{OwnedFd, RawFd};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Senders per group, and receivers per group (hackbench's `num_fds`).
const FDS: usize = 20;
/// Messages each sender writes to each receiver (hackbench's default loops).
const LOOPS: usize = 100;
/// Bytes per message (hackbench's DATASIZE).
const DATASIZE: usize = 100;
/// The most tasks (senders + receivers, all groups) a run may make...
const MAX_TASKS: u64 = 4000;
/// ...and so the most groups.
pub(super) const MAX_GROUPS: u64 = MAX_TASKS / (2 * FDS as u64);
/// The `ipc` option's words.
pub(super) const IPCS: &[&str] = &["pipe", "socket"];
/// Stack of a task in thread mode: they only read and write small buffers.
const THREAD_STACK: usize = 128 * 1024;
/// How long to wait for every task to report ready.
const READY_TIMEOUT: Duration = Duration::from_secs(60);

/// Task exit codes.
const EXIT_NO_START: c_int = 1;
const EXIT_WRITE: c_int = 2;
const EXIT_EOF: c_int = 3;
const EXIT_READ: c_int = 4;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ipc {
    Pipe,
    Socket,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Process,
    Thread,
}

/// A fault injected by the tests after every task is ready.
#[cfg(test)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Sabotage {
    None,
    /// `run` fails before the start byte is written.
    FailBeforeStart,
    /// The first receiver is killed (process mode).
    KillReceiver,
}

pub(super) struct Messaging {
    groups: usize,
    ipc: Ipc,
    mode: Mode,
    #[cfg(test)]
    pub(super) sabotage: Sabotage,
    /// The processes of the last process-mode run.
    #[cfg(test)]
    pub(super) last_pids: Vec<pid_t>,
}

impl Messaging {
    pub(super) fn new(options: &Options) -> Result<Messaging, BenchError> {
        let groups = options.number("groups");
        let tasks = groups * 2 * FDS as u64;
        let ipc = match options.choice("ipc") {
            "pipe" => Ipc::Pipe,
            _ => Ipc::Socket,
        };
        let mode = match options.choice("mode") {
            "process" => Mode::Process,
            _ => Mode::Thread,
        };
        if mode == Mode::Thread {
            // Every group's 40 descriptors stay open in this process.
            let needed = tasks + 4 + open_fds();
            let limit = nofile_limit();
            if needed > limit {
                return Err(BenchError::Skip(format!(
                    "mode=thread with {groups} groups needs about {needed} open descriptors, \
                     RLIMIT_NOFILE is {limit}"
                )));
            }
        }
        Ok(Messaging {
            groups: groups as usize,
            ipc,
            mode,
            #[cfg(test)]
            sabotage: Sabotage::None,
            #[cfg(test)]
            last_pids: Vec::new(),
        })
    }

    fn tasks(&self) -> usize {
        self.groups * 2 * FDS
    }

    /// A receiver's channel as (receiver's end, senders' end).
    fn channel(&self) -> Result<(OwnedFd, OwnedFd), BenchError> {
        match self.ipc {
            Ipc::Pipe => fd::pipe(),
            Ipc::Socket => fd::socketpair(),
        }
    }

    /// The injected fault, if any; `first` is the first receiver.
    #[cfg(test)]
    fn sabotage(&self, first: Option<pid_t>) -> Result<(), BenchError> {
        match (self.sabotage, first) {
            (Sabotage::FailBeforeStart, _) => Err(BenchError::Os {
                what: "messaging: sabotage".into(),
                error: std::io::Error::other("injected before the start"),
            }),
            (Sabotage::KillReceiver, Some(pid)) => {
                // SAFETY: pid is our unreaped child.
                unsafe { libc::kill(pid, libc::SIGKILL) };
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// One run with forked tasks; the timed part.
    fn run_processes(&mut self) -> Result<Duration, BenchError> {
        let (ready_rx, ready_tx) = fd::pipe()?;
        let (start_rx, start_tx) = fd::pipe()?;
        let (start, ready) = (raw(&start_rx), raw(&ready_tx));
        // Dropped first on any error: kills and reaps every task.
        let mut tasks = Tasks {
            pids: Vec::with_capacity(self.tasks()),
            reaped: 0,
        };
        for _ in 0..self.groups {
            let (rxs, txs): (Vec<OwnedFd>, Vec<OwnedFd>) = (0..FDS)
                .map(|_| self.channel())
                .collect::<Result<Vec<_>, _>>()?
                .into_iter()
                .unzip();
            let tx_raw: [RawFd; FDS] = std::array::from_fn(|i| raw(&txs[i]));
            for rx in rxs.iter().map(raw) {
                tasks.fork(&[start, ready, rx], || receiver(start, ready, rx))?;
            }
            let mut keep = vec![start, ready];
            keep.extend(tx_raw);
            for _ in 0..FDS {
                tasks.fork(&keep, || sender(start, ready, &tx_raw))?;
            }
            // The group's descriptors now live in its tasks only.
        }
        #[cfg(test)]
        {
            self.last_pids = tasks.pids.clone();
        }
        drop((start_rx, ready_tx));
        wait_ready(raw(&ready_rx), self.tasks())?;
        #[cfg(test)]
        self.sabotage(tasks.pids.first().copied())?;
        let clock = Instant::now();
        fd::write_all(raw(&start_tx), b"s", "messaging: start")?;
        let reaped = tasks.wait_all();
        let elapsed = clock.elapsed();
        reaped?;
        Ok(elapsed)
    }

    /// One run with threads; the timed part.
    fn run_threads(&mut self) -> Result<Duration, BenchError> {
        let (ready_rx, ready_tx) = fd::pipe()?;
        let (start_rx, start_tx) = fd::pipe()?;
        let (start, ready) = (raw(&start_rx), raw(&ready_tx));
        // Declared after the descriptors the threads use, so dropped (start
        // pipe closed, every thread joined) before them.
        let mut threads = Threads {
            start_tx: Some(start_tx),
            handles: Vec::with_capacity(self.tasks()),
        };
        for _ in 0..self.groups {
            let mut txs = Vec::with_capacity(FDS);
            for _ in 0..FDS {
                let (rx, tx) = self.channel()?;
                txs.push(tx);
                // The receiver owns its end: its senders see EPIPE once it is gone.
                threads.spawn(move || receiver(start, ready, raw(&rx)))?;
            }
            // The senders share the write ends, closed when the last one ends.
            let txs: Arc<[OwnedFd]> = txs.into();
            let tx_raw: [RawFd; FDS] = std::array::from_fn(|i| raw(&txs[i]));
            for _ in 0..FDS {
                let txs = Arc::clone(&txs);
                threads.spawn(move || {
                    let code = sender(start, ready, &tx_raw);
                    drop(txs);
                    code
                })?;
            }
        }
        wait_ready(raw(&ready_rx), self.tasks())?;
        #[cfg(test)]
        self.sabotage(None)?;
        let start_tx = raw(threads.start_tx.as_ref().expect("open until dropped"));
        let clock = Instant::now();
        fd::write_all(start_tx, b"s", "messaging: start")?;
        let joined = threads.join_all();
        let elapsed = clock.elapsed();
        joined?;
        Ok(elapsed)
    }
}

impl Workload for Messaging {
    fn run(&mut self, iterations: u64) -> Result<Interval, BenchError> {
        let mut elapsed = Duration::ZERO;
        for _ in 0..iterations {
            elapsed += match self.mode {
                Mode::Process => self.run_processes()?,
                Mode::Thread => self.run_threads()?,
            };
        }
        Ok(Interval {
            elapsed,
            work: iterations as f64,
        })
    }
}

/// The number of descriptors this process has open.
fn open_fds() -> u64 {
    std::fs::read_dir("/proc/self/fd").map_or(64, |dir| dir.count() as u64)
}

/// The soft RLIMIT_NOFILE.
fn nofile_limit() -> u64 {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: limit is a valid rlimit for getrlimit to fill.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return 1024;
    }
    #[allow(clippy::unnecessary_cast, reason = "rlim_t is 32 bits on some targets")]
    let limit = limit.rlim_cur as u64;
    limit
}

/// Reads one ready byte per task, giving up after [`READY_TIMEOUT`].
fn wait_ready(fd: RawFd, tasks: usize) -> Result<(), BenchError> {
    let what = "messaging: wait for the tasks to be ready";
    let deadline = Instant::now() + READY_TIMEOUT;
    let mut buf = [0u8; 256];
    let mut left = tasks;
    while left > 0 {
        let wait = deadline.saturating_duration_since(Instant::now());
        if wait.is_zero() {
            return Err(BenchError::Os {
                what: what.into(),
                error: std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    format!("{left} of {tasks} tasks never reported ready"),
                ),
            });
        }
        let mut pfd = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        let millis = wait.as_millis().clamp(1, c_int::MAX as u128) as c_int;
        // SAFETY: pfd is one valid pollfd of ours.
        let r = unsafe { libc::poll(&mut pfd, 1, millis) };
        if r < 0 && errno() != libc::EINTR {
            return Err(BenchError::last_os(what));
        }
        if r <= 0 {
            continue;
        }
        let want = left.min(buf.len());
        // SAFETY: buf is valid for writes of `want` bytes.
        let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), want) };
        if n < 0 && errno() != libc::EINTR {
            return Err(BenchError::last_os(what));
        }
        if n == 0 {
            return Err(BenchError::Os {
                what: what.into(),
                error: std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    format!("{left} of {tasks} tasks ended before reporting ready"),
                ),
            });
        }
        left -= n.max(0) as usize;
    }
    Ok(())
}

/// Task side: reports ready, then waits for the start byte. False when the
/// start pipe was closed without one (the run was abandoned).
fn ready_and_wait(start: RawFd, ready: RawFd) -> bool {
    if !fd::child_write_all(ready, b"r") {
        return false;
    }
    let mut pfd = libc::pollfd {
        fd: start,
        events: libc::POLLIN,
        revents: 0,
    };
    loop {
        // SAFETY: pfd is one valid pollfd of ours.
        let r = unsafe { libc::poll(&mut pfd, 1, -1) };
        if r > 0 {
            return pfd.revents & libc::POLLIN != 0;
        }
        if r < 0 && errno() != libc::EINTR {
            return false;
        }
    }
}

/// A receiver (forked child or thread; async-signal-safe calls only, no
/// allocation): reads all its group's messages from `rx`.
fn receiver(start: RawFd, ready: RawFd, rx: RawFd) -> c_int {
    if !ready_and_wait(start, ready) {
        return EXIT_NO_START;
    }
    let mut buf = [0u8; DATASIZE];
    let mut left = FDS * LOOPS * DATASIZE;
    while left > 0 {
        let want = left.min(DATASIZE);
        // SAFETY: buf is valid for writes of `want` <= DATASIZE bytes.
        let n = unsafe { libc::read(rx, buf.as_mut_ptr().cast(), want) };
        if n == 0 {
            return EXIT_EOF;
        }
        if n < 0 {
            if errno() == libc::EINTR {
                continue;
            }
            return EXIT_READ;
        }
        left -= n as usize;
    }
    0
}

/// A sender (forked child or thread; async-signal-safe calls only, no
/// allocation): writes `LOOPS` rounds of one message to each receiver.
fn sender(start: RawFd, ready: RawFd, txs: &[RawFd; FDS]) -> c_int {
    if !ready_and_wait(start, ready) {
        return EXIT_NO_START;
    }
    let message = [b'h'; DATASIZE];
    for _ in 0..LOOPS {
        for &tx in txs {
            if !fd::child_write_all(tx, &message) {
                return EXIT_WRITE;
            }
        }
    }
    0
}

/// The forked tasks of one run; dropping kills and reaps those not reaped.
struct Tasks {
    pids: Vec<pid_t>,
    /// `pids[..reaped]` are reaped.
    reaped: usize,
}

impl Tasks {
    /// Forks a task (see [`fork_child`]): with SIGPIPE ignored, a
    /// sender whose receiver is gone sees EPIPE and exits with EXIT_WRITE.
    fn fork(&mut self, keep: &[RawFd], body: impl FnOnce() -> c_int) -> Result<(), BenchError> {
        let pid = fork_child(keep, "messaging: fork", body)?;
        self.pids.push(pid);
        Ok(())
    }

    /// Reaps every task, in order; the first that did not exit with 0 is
    /// the error.
    fn wait_all(&mut self) -> Result<(), BenchError> {
        let mut first_error = None;
        while let Some(&pid) = self.pids.get(self.reaped) {
            let status = wait_for(pid)?;
            self.reaped += 1;
            if first_error.is_none() {
                first_error = check_status(status, "messaging task").err();
            }
        }
        first_error.map_or(Ok(()), Err)
    }
}

impl Drop for Tasks {
    fn drop(&mut self) {
        let left = &self.pids[self.reaped..];
        for &pid in left {
            // SAFETY: pid is our unreaped child, so it cannot have been reused.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        for &pid in left {
            let _ = wait_for(pid);
        }
    }
}

/// The threads of one run; dropping closes the start pipe (threads still
/// waiting for the start give up) and joins every thread.
struct Threads {
    start_tx: Option<OwnedFd>,
    handles: Vec<JoinHandle<c_int>>,
}

impl Threads {
    fn spawn(&mut self, body: impl FnOnce() -> c_int + Send + 'static) -> Result<(), BenchError> {
        let handle = std::thread::Builder::new()
            .stack_size(THREAD_STACK)
            .spawn(body)
            .map_err(os_error("messaging: spawn a thread"))?;
        self.handles.push(handle);
        Ok(())
    }

    /// Joins every thread; the first that did not return 0 is the error.
    fn join_all(&mut self) -> Result<(), BenchError> {
        let mut first_error = None;
        for handle in self.handles.drain(..) {
            let how = match handle.join() {
                Ok(0) => continue,
                Ok(code) => format!("ended with code {code}"),
                Err(_) => "panicked".to_string(),
            };
            first_error.get_or_insert(BenchError::Os {
                what: "messaging task thread".into(),
                error: std::io::Error::other(how),
            });
        }
        first_error.map_or(Ok(()), Err)
    }
}

impl Drop for Threads {
    fn drop(&mut self) {
        self.start_tx = None;
        for handle in self.handles.drain(..) {
            let _ = handle.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{self, assert_no_children};

    fn messaging(ipc: &str, mode: &str) -> Messaging {
        let specs = crate::find("messaging").unwrap().options;
        let given = [("groups", "1"), ("ipc", ipc), ("mode", mode)]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Messaging::new(&Options::resolve(specs, &given).unwrap()).unwrap()
    }

    #[test]
    fn a_failed_run_reaps_every_task() {
        let _serial = testing::serial();
        for ipc in ["pipe", "socket"] {
            for sabotage in [Sabotage::FailBeforeStart, Sabotage::KillReceiver] {
                let mut w = messaging(ipc, "process");
                w.sabotage = sabotage;
                let result = w.run(1);
                assert!(result.is_err(), "{ipc} {sabotage:?}: {result:?}");
                assert_eq!(w.last_pids.len(), 40);
                testing::assert_gone(&w.last_pids);
                assert_no_children();
                // The workload still runs once the fault is gone.
                w.sabotage = Sabotage::None;
                w.run(1).unwrap();
                testing::assert_gone(&w.last_pids);
            }
            let mut w = messaging(ipc, "thread");
            w.sabotage = Sabotage::FailBeforeStart;
            assert!(w.run(1).is_err());
            w.sabotage = Sabotage::None;
            w.run(2).unwrap();
        }
        assert_no_children();
    }

    #[test]
    fn a_run_moves_every_message() {
        let _serial = testing::serial();
        let mut w = messaging("pipe", "process");
        let interval = w.run(2).unwrap();
        assert_eq!(interval.work, 2.0);
        assert!(interval.elapsed > Duration::ZERO);
        assert_eq!(w.last_pids.len(), 40);
        testing::assert_gone(&w.last_pids);
    }
}
