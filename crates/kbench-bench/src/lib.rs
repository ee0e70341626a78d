//! kbench's built-in microbenchmarks of kernel paths: system calls,
//! processes, IPC, loopback networking, files, memory, will-it-scale
//! scaling and stress-style loads.
//!
//! A library linked into the kbench binary, not a program of its own: the
//! agent that prepares and times these benchmarks is that binary, as a
//! `kbench agent` process on the host, or in a VM guest whose init is the
//! same kbench binary. Each benchmark is a [`BenchInfo`]: its id,
//! unit, direction, options and a `prepare` function that sets up
//! partners, files and buffers *before* timing, and returns a [`Workload`]
//! whose `run(iterations)` times exactly the loop body (the timing rules
//! are in docs/benchmarks.md).
//!
//! The layout:
//! - one module per family (`syscalls`, `process`, `ipc`, `net`, `files`,
//!   `memory`, `scale`, `stress`), holding its `BENCHES` and workloads; no
//!   family imports another;
//! - `shared`: the workloads and options two families share (the partner
//!   round trip and stream, the fork + exec loop, the `placement` option);
//! - `sys`: the OS helpers (descriptors, processes, partners, execve, temp
//!   dirs, the SIGUSR1 guard, mappings, CPU masks, memory), no benchmark;
//! - calibration, options and units, used by all of them.
//!
//! Its only dependencies are libc and kbench-model.

mod calibrate;
mod files;
mod ipc;
mod memory;
mod net;
mod options;
mod process;
mod scale;
mod shared;
mod stress;
mod sys;
mod syscalls;
#[cfg(test)]
mod testing;
mod unit;

pub use calibrate::{MIN_INTERVAL, calibrate};
pub use kbench_model::{Direction, TestKey};
pub use options::{OptionSpec, Options};
pub use unit::{Interval, Unit};

use std::fmt;

/// Why a benchmark did not run or stopped.
#[derive(Debug)]
pub enum BenchError {
    /// It cannot run here (permission, CPUs, a missing file); the run goes on.
    Skip(String),
    /// An option value is wrong; names the option.
    InvalidOption { option: String, reason: String },
    /// A system call failed while preparing or running.
    Os { what: String, error: std::io::Error },
}

impl BenchError {
    /// An `Os` error from the last errno, naming what was attempted.
    pub fn last_os(what: impl Into<String>) -> BenchError {
        BenchError::Os {
            what: what.into(),
            error: std::io::Error::last_os_error(),
        }
    }
}

impl fmt::Display for BenchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BenchError::Skip(reason) => write!(f, "skipped: {reason}"),
            BenchError::InvalidOption { option, reason } => {
                write!(f, "option '{option}': {reason}")
            }
            BenchError::Os { what, error } => write!(f, "{what}: {error}"),
        }
    }
}

impl std::error::Error for BenchError {}

/// A prepared benchmark. Dropping it reaps every partner process and thread
/// and removes every temporary file it made.
pub trait Workload {
    /// Runs `iterations` iterations of the loop body and returns the timed
    /// interval with the work done in it (operations, or bytes for MB/s).
    fn run(&mut self, iterations: u64) -> Result<Interval, BenchError>;

    /// How many tasks share the work of one interval; >1 adds a `per_task`
    /// metric (will-it-scale style).
    fn tasks(&self) -> u32 {
        1
    }
}

/// One built-in benchmark.
pub struct BenchInfo {
    pub id: &'static str,
    pub unit: Unit,
    pub direction: Direction,
    /// What the loop body does, in one line.
    pub summary: &'static str,
    pub options: &'static [OptionSpec],
    /// Whether the timed loop runs in one task on one CPU (the syscall,
    /// file and memory families): what a duet run, two tests at once on
    /// CPUs of their own, can measure, and what an interleaved run pins to
    /// one CPU (kbench-measure's `duet` and `interleave`). Partners, forks
    /// and scaling tasks would share or cross those CPUs.
    pub one_task: bool,
    /// Whether the timed loop runs in the measuring task itself (with its
    /// own forks), so that the task's perf counters describe it: the agent
    /// counts only then (kbench-measure's `agent`). Not for will-it-scale's
    /// tasks, started before timing, nor for loops whose work runs in other
    /// tasks (hackbench's groups, contending threads, a break-moving helper).
    pub in_measuring_task: bool,
    pub prepare: fn(&Options) -> Result<Box<dyn Workload>, BenchError>,
}

impl fmt::Debug for BenchInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BenchInfo").field("id", &self.id).finish()
    }
}

/// Every built-in benchmark, in listing order.
pub fn all() -> Vec<&'static BenchInfo> {
    let families: &[&'static [BenchInfo]] = &[
        syscalls::BENCHES,
        process::BENCHES,
        ipc::BENCHES,
        net::BENCHES,
        files::BENCHES,
        memory::BENCHES,
        scale::BENCHES,
        stress::BENCHES,
    ];
    families.iter().flat_map(|family| family.iter()).collect()
}

/// The benchmark with this id.
pub fn find(id: &str) -> Option<&'static BenchInfo> {
    all().into_iter().find(|b| b.id == id)
}

/// Whether the built-in `id` runs in one task on one CPU
/// ([`BenchInfo::one_task`]); false for an unknown or external test.
pub fn runs_in_one_task(id: &str) -> bool {
    find(id).is_some_and(|b| b.one_task)
}

impl BenchInfo {
    /// Checks a test's options against this benchmark's and fills in the
    /// defaults: the canonical key names every option.
    pub fn resolve(&self, key: &TestKey) -> Result<(TestKey, Options), BenchError> {
        let options = Options::resolve(self.options, &key.options)?;
        let canonical = TestKey {
            benchmark: self.id.to_string(),
            options: options.to_map(),
            metric: key.metric.clone(),
        };
        Ok((canonical, options))
    }

    /// Sets the benchmark up with these options.
    pub fn prepare(&self, options: &Options) -> Result<Box<dyn Workload>, BenchError> {
        (self.prepare)(options)
    }
}

#[cfg(test)]
mod task_tests {
    use super::*;

    /// The built-ins whose loop runs in one task on one CPU: the syscall,
    /// file and memory families, as when duet runs decided by family.
    const ONE_TASK: [&str; 17] = [
        "syscall-null",
        "syscall-read",
        "syscall-write",
        "syscall-stat",
        "syscall-fstat",
        "open-close",
        "sig-install",
        "sig-catch",
        "sig-send",
        "select",
        "fs-create",
        "fs-delete",
        "mmap-lat",
        "pagefault",
        "file-rd-bw",
        "mmap-rd-bw",
        "mem-bw",
    ];

    /// The built-ins whose loop runs elsewhere than in the measuring task:
    /// the will-it-scale family and four stress-style tests, as when the
    /// counters decided by a list of ids.
    const ELSEWHERE: [&str; 15] = [
        "futex1",
        "futex3",
        "pipe1",
        "pthread_mutex1",
        "sched_yield",
        "signal1",
        "getppid1",
        "page_fault1",
        "brk1",
        "mmap1",
        "context_switch1",
        "brk-test",
        "page-test",
        "messaging",
        "mutex-contend",
    ];

    /// Every benchmark says what it said before its entry held it.
    #[test]
    fn every_benchmark_keeps_its_tasks() {
        for b in all() {
            assert_eq!(b.one_task, ONE_TASK.contains(&b.id), "{} one_task", b.id);
            assert_eq!(runs_in_one_task(b.id), b.one_task, "{}", b.id);
            assert_eq!(
                b.in_measuring_task,
                !ELSEWHERE.contains(&b.id),
                "{} in_measuring_task",
                b.id
            );
            assert!(
                b.in_measuring_task || !b.one_task,
                "{}: one task is the measuring task",
                b.id
            );
        }
        for id in ONE_TASK.iter().chain(&ELSEWHERE) {
            assert!(find(id).is_some(), "{id} is a benchmark");
        }
        assert!(!runs_in_one_task("nosuch"));
        assert!(!runs_in_one_task("fio-randread"));
    }
}
