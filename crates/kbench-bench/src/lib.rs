//! kbench's built-in microbenchmarks of kernel paths: system calls,
//! processes, IPC, loopback networking, files, memory, will-it-scale
//! scaling and stress-style loads.
//!
//! A library linked into the kbench binary, not a program of its own: the
//! agent that prepares and times these benchmarks is that binary, as a
//! `kbench agent` process on the host, or in a VM guest whose init is the
//! same kbench binary. Each benchmark is a [`BenchInfo`]: its id,
//! unit, direction, options, where its loop runs (one task; the measuring
//! task) and a `prepare` function that sets up
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
pub use options::{OptionKind, OptionSpec, Options};
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

    /// A loop in one task runs in the measuring task; each family says
    /// where its loops run (spot checks of each kind; every entry sets both
    /// fields itself, so a new benchmark needs no list here).
    #[test]
    fn each_benchmark_says_where_its_loop_runs() {
        for b in all() {
            assert!(
                b.in_measuring_task || !b.one_task,
                "{}: one task is the measuring task",
                b.id
            );
            assert_eq!(runs_in_one_task(b.id), b.one_task, "{}", b.id);
        }
        let tasks = |id: &str| {
            let b = find(id).expect("a benchmark");
            (b.one_task, b.in_measuring_task)
        };
        // A system call, a file and a memory loop: one task, measured.
        for id in ["syscall-null", "open-close", "mem-bw"] {
            assert_eq!(tasks(id), (true, true), "{id}");
        }
        // Partners and forks: the measuring task, not one task alone.
        for id in ["pipe-lat", "fork-exit"] {
            assert_eq!(tasks(id), (false, true), "{id}");
        }
        // will-it-scale's tasks and hackbench's groups: elsewhere.
        for id in ["getppid1", "messaging"] {
            assert_eq!(tasks(id), (false, false), "{id}");
        }
        assert!(!runs_in_one_task("nosuch"));
        assert!(!runs_in_one_task("fio-randread"));
    }
}
