//! The will-it-scale family: throughput of a kernel path as tasks are added,
//! in operations per second of all tasks together (the runner adds the
//! per-task value), higher is better.
//!
//! Every benchmark takes `tasks=N` (1..=1024, more than the CPUs is a valid,
//! oversubscribed point) and `mode=process|thread`. The loop bodies are
//! will-it-scale's (`tests/*.c`); the task runner ([`tasks`]) starts the
//! tasks in `prepare`, lets them spin without pause and samples their
//! counters over measured wall time. Points to know when reading values:
//!
//! - `futex1` / `futex3`: `FUTEX_WAKE` / `FUTEX_WAKE_PRIVATE` with no waiter
//!   on the task's own word (on its stack, as will-it-scale); `futex1`'s
//!   shared operation keys the futex by the page it lies in, `futex3` by the
//!   address in the address space.
//! - `pthread_mutex1`: each task locks its own mutex, never contended, in
//!   both modes: no system call, the user-space lock path only (will-it-scale
//!   shares one global mutex, which its thread mode contends). A process-mode
//!   task is a single-threaded process, where glibc (2.34+) takes an
//!   uncontended lock without atomic instructions: expect process mode to be
//!   several times faster than thread mode.
//! - `signal1`: `raise(SIGUSR1)` as will-it-scale (glibc: `tgkill` of the
//!   calling thread after `gettid` and `getpid`); the SIGUSR1 handler is
//!   shared with `sig-catch` ([`Sigusr1Guard`]).
//! - `page_fault1`: one operation per page written (a minor fault each, or
//!   one THP fault per 2 MiB when THP is `always`); `mmap1`: one operation
//!   per mmap + munmap pair. Both map 128 MiB per task and skip when that
//!   exceeds 3/4 of MemAvailable.
//! - `brk1`: two operations (brk calls) per grow + shrink, as will-it-scale.
//!   The break belongs to the process, and moving it under the allocator of
//!   the measuring process would corrupt its heap: in process mode each
//!   forked task moves its own copy's break; in thread mode the N threads
//!   live in one helper process that never allocates and they all toggle the
//!   same page above that process's single break (they contend on one
//!   mm's lock, which is what will-it-scale's thread mode measures).
//! - `context_switch1`: a task is a pair (ping + echo over two pipes), so
//!   tasks=N runs 2N processes or threads; two operations per round trip
//!   (one-way hops, each a sleep and a wake-up), as will-it-scale counts.
//!
//! Thread-mode `pipe1` and `context_switch1` hold 2 or 4 descriptors per
//! task in one process and skip when RLIMIT_NOFILE is too low.

mod bodies;
mod tasks;

use crate::shared::mode::MODES;
use crate::sys::fd;
use crate::sys::memory::available_memory;
use crate::sys::signal::Sigusr1Guard;
use crate::{BenchError, BenchInfo, Direction, OptionKind, OptionSpec, Options, Unit, Workload};
use bodies::MEMSIZE;
use tasks::{Body, Launch, MAX_TASKS, Mode, Scale, Spec};

const TASKS: OptionSpec = OptionSpec {
    name: "tasks",
    kind: OptionKind::Whole {
        min: 1,
        max: MAX_TASKS,
    },
    default: || "1".to_string(),
    help: "tasks spinning on the loop body (context_switch1: pairs); \
           more than the CPUs is allowed (oversubscribed)",
};

const MODE: OptionSpec = OptionSpec {
    name: "mode",
    kind: MODES,
    default: || "process".to_string(),
    help: "process: each task is a forked process; thread: each task is a thread of one process",
};

const OPTIONS: &[OptionSpec] = &[TASKS, MODE];

/// What a benchmark needs besides its loop body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Setup {
    Plain,
    /// A pipe of its own per task.
    OwnPipe,
    /// Each task is a pair: the body pings, `bodies::echo` echoes, over two
    /// pipes.
    Pair,
    /// 128 MiB of address space per task, checked against MemAvailable.
    Memory,
    /// The empty SIGUSR1 handler.
    Signal,
    /// Moves the program break: threads run in a helper process.
    Brk,
}

/// One benchmark of the family.
struct Def {
    id: &'static str,
    body: Body,
    setup: Setup,
}

const FUTEX1: Def = Def {
    id: "futex1",
    body: bodies::futex1,
    setup: Setup::Plain,
};
const FUTEX3: Def = Def {
    id: "futex3",
    body: bodies::futex3,
    setup: Setup::Plain,
};
const PIPE1: Def = Def {
    id: "pipe1",
    body: bodies::pipe1,
    setup: Setup::OwnPipe,
};
const PTHREAD_MUTEX1: Def = Def {
    id: "pthread_mutex1",
    body: bodies::pthread_mutex1,
    setup: Setup::Plain,
};
const SCHED_YIELD: Def = Def {
    id: "sched_yield",
    body: bodies::sched_yield,
    setup: Setup::Plain,
};
const SIGNAL1: Def = Def {
    id: "signal1",
    body: bodies::signal1,
    setup: Setup::Signal,
};
const GETPPID1: Def = Def {
    id: "getppid1",
    body: bodies::getppid1,
    setup: Setup::Plain,
};
const PAGE_FAULT1: Def = Def {
    id: "page_fault1",
    body: bodies::page_fault1,
    setup: Setup::Memory,
};
const BRK1: Def = Def {
    id: "brk1",
    body: bodies::brk1,
    setup: Setup::Brk,
};
const MMAP1: Def = Def {
    id: "mmap1",
    body: bodies::mmap1,
    setup: Setup::Memory,
};
const CONTEXT_SWITCH1: Def = Def {
    id: "context_switch1",
    body: bodies::ping,
    setup: Setup::Pair,
};

const OPS: Unit = Unit::Rate("ops/s");

pub const BENCHES: &[BenchInfo] = &[
    BenchInfo {
        id: FUTEX1.id,
        unit: OPS,
        direction: Direction::Higher,
        summary: "FUTEX_WAKE (shared, non-private op) with no waiter on the task's own word",
        options: OPTIONS,
        one_task: false,
        in_measuring_task: false,
        prepare: |o| boxed(start(&FUTEX1, o)),
    },
    BenchInfo {
        id: FUTEX3.id,
        unit: OPS,
        direction: Direction::Higher,
        summary: "FUTEX_WAKE_PRIVATE with no waiter on the task's own word",
        options: OPTIONS,
        one_task: false,
        in_measuring_task: false,
        prepare: |o| boxed(start(&FUTEX3, o)),
    },
    BenchInfo {
        id: PIPE1.id,
        unit: OPS,
        direction: Direction::Higher,
        summary: "write 1 byte to the task's own pipe, read it back",
        options: OPTIONS,
        one_task: false,
        in_measuring_task: false,
        prepare: |o| boxed(start(&PIPE1, o)),
    },
    BenchInfo {
        id: PTHREAD_MUTEX1.id,
        unit: OPS,
        direction: Direction::Higher,
        summary: "pthread_mutex_lock + unlock of the task's own (uncontended) mutex",
        options: OPTIONS,
        one_task: false,
        in_measuring_task: false,
        prepare: |o| boxed(start(&PTHREAD_MUTEX1, o)),
    },
    BenchInfo {
        id: SCHED_YIELD.id,
        unit: OPS,
        direction: Direction::Higher,
        summary: "syscall(SYS_sched_yield)",
        options: OPTIONS,
        one_task: false,
        in_measuring_task: false,
        prepare: |o| boxed(start(&SCHED_YIELD, o)),
    },
    BenchInfo {
        id: SIGNAL1.id,
        unit: OPS,
        direction: Direction::Higher,
        summary: "raise(SIGUSR1), as will-it-scale: the calling thread signalled and caught by an empty handler",
        options: OPTIONS,
        one_task: false,
        in_measuring_task: false,
        prepare: |o| boxed(start(&SIGNAL1, o)),
    },
    BenchInfo {
        id: GETPPID1.id,
        unit: OPS,
        direction: Direction::Higher,
        summary: "syscall(SYS_getppid)",
        options: OPTIONS,
        one_task: false,
        in_measuring_task: false,
        prepare: |o| boxed(start(&GETPPID1, o)),
    },
    BenchInfo {
        id: PAGE_FAULT1.id,
        unit: OPS,
        direction: Direction::Higher,
        summary: "mmap 128 MiB anonymous, write a byte per page, munmap; one op per page",
        options: OPTIONS,
        one_task: false,
        in_measuring_task: false,
        prepare: |o| boxed(start(&PAGE_FAULT1, o)),
    },
    BenchInfo {
        id: BRK1.id,
        unit: OPS,
        direction: Direction::Higher,
        summary: "brk up one page and back down (raw SYS_brk); one op per brk call; \
                  thread mode: the threads share one helper process's break",
        options: OPTIONS,
        one_task: false,
        in_measuring_task: false,
        prepare: |o| boxed(start(&BRK1, o)),
    },
    BenchInfo {
        id: MMAP1.id,
        unit: OPS,
        direction: Direction::Higher,
        summary: "mmap + munmap of 128 MiB anonymous, untouched",
        options: OPTIONS,
        one_task: false,
        in_measuring_task: false,
        prepare: |o| boxed(start(&MMAP1, o)),
    },
    BenchInfo {
        id: CONTEXT_SWITCH1.id,
        unit: OPS,
        direction: Direction::Higher,
        summary: "pairs ping-pong 1 byte over two pipes; a task is a pair; \
                  one op per one-way hop (2 per round trip)",
        options: OPTIONS,
        one_task: false,
        in_measuring_task: false,
        prepare: |o| boxed(start(&CONTEXT_SWITCH1, o)),
    },
];

fn boxed(scale: Result<Scale, BenchError>) -> Result<Box<dyn Workload>, BenchError> {
    Ok(Box::new(scale?))
}

/// Checks the options, makes what the tasks need and starts them.
fn start(def: &Def, options: &Options) -> Result<Scale, BenchError> {
    let tasks = options.number("tasks") as usize;
    let mode = match options.choice("mode") {
        "process" => Mode::Process,
        _ => Mode::Thread,
    };
    if def.setup == Setup::Memory {
        check_memory(def.id, tasks)?;
    }
    let guard = match def.setup {
        Setup::Signal => Some(Sigusr1Guard::acquire()?),
        _ => None,
    };
    let body = def.body;
    let pipe = || {
        fd::pipe().map_err(|e| match e {
            BenchError::Os { error, .. }
                if mode == Mode::Thread && error.raw_os_error() == Some(libc::EMFILE) =>
            {
                BenchError::Skip(format!(
                    "{} in thread mode keeps every task's pipes open in one process: \
                     {tasks} tasks exceed RLIMIT_NOFILE ({error})",
                    def.id
                ))
            }
            other => other,
        })
    };
    let mut make = || -> Result<Vec<Launch>, BenchError> {
        Ok(match def.setup {
            Setup::OwnPipe => vec![Launch {
                body,
                counted: true,
                fds: Some(pipe()?),
            }],
            Setup::Pair => {
                let (down_rx, down_tx) = pipe()?;
                let (up_rx, up_tx) = pipe()?;
                vec![
                    Launch {
                        body: bodies::echo,
                        counted: false,
                        fds: Some((down_rx, up_tx)),
                    },
                    Launch {
                        body,
                        counted: true,
                        fds: Some((up_rx, down_tx)),
                    },
                ]
            }
            _ => vec![Launch {
                body,
                counted: true,
                fds: None,
            }],
        })
    };
    Scale::start(Spec {
        id: def.id,
        mode,
        isolated: def.setup == Setup::Brk && mode == Mode::Thread,
        tasks,
        per_task: if def.setup == Setup::Pair { 2 } else { 1 },
        make: &mut make,
        guard,
    })
}

/// Skips when `tasks` mappings of 128 MiB exceed 3/4 of MemAvailable.
fn check_memory(id: &str, tasks: usize) -> Result<(), BenchError> {
    const MIB: u64 = 1024 * 1024;
    let needed = tasks as u64 * MEMSIZE as u64;
    let available = available_memory().unwrap_or(u64::MAX);
    if needed > available / 4 * 3 {
        return Err(BenchError::Skip(format!(
            "{id} maps {} MiB ({tasks} tasks x 128 MiB), more than 3/4 of the {} MiB available",
            needed / MIB,
            available / MIB
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{self, canonical, invalid, thread_children};
    use std::time::{Duration, Instant};

    fn options(tasks: u32, mode: &str) -> Options {
        let given = [("tasks", tasks.to_string()), ("mode", mode.to_string())]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
        Options::resolve(OPTIONS, &given).unwrap()
    }

    fn def(id: &str) -> &'static Def {
        [
            &FUTEX1,
            &FUTEX3,
            &PIPE1,
            &PTHREAD_MUTEX1,
            &SCHED_YIELD,
            &SIGNAL1,
            &GETPPID1,
            &PAGE_FAULT1,
            &BRK1,
            &MMAP1,
            &CONTEXT_SWITCH1,
        ]
        .into_iter()
        .find(|d| d.id == id)
        .unwrap()
    }

    /// Whether the thread `tid` of this process still exists.
    fn thread_alive(tid: libc::pid_t) -> bool {
        std::path::Path::new(&format!("/proc/self/task/{tid}")).exists()
    }

    /// The children of the calling thread.
    fn my_children() -> String {
        thread_children().unwrap_or_default()
    }

    /// Starts `id` with tasks and mode, takes a short calibration and two
    /// intervals; checks the values, then that dropping leaves no process
    /// or thread behind. Returns the values.
    fn measure(id: &str, tasks: u32, mode: &str, low: f64, high: f64) -> Vec<f64> {
        let mut w = start(def(id), &options(tasks, mode)).expect("start");
        assert_eq!(w.tasks(), tasks);
        let n = crate::calibrate(&mut w, Duration::from_millis(2)).expect("calibrate");
        let values: Vec<f64> = (0..2)
            .map(|_| {
                let interval = w.run(n).expect("run");
                assert!(interval.work >= n as f64, "{interval:?} < {n}");
                OPS.value(interval)
            })
            .collect();
        let shown: Vec<String> = values.iter().map(|v| format!("{v:.3e}")).collect();
        eprintln!("{id}[mode={mode},tasks={tasks}]: {shown:?} ops/s ({n} iterations)");
        for &v in &values {
            assert!(v.is_finite() && v > 0.0, "{id}: {v}");
            assert!(
                (low..=high).contains(&v),
                "{id}/{mode}/{tasks}: {v} outside {low}..={high}"
            );
        }
        let pids = w.pids();
        let tids = w.tids();
        let workers = tasks as usize * if id == "context_switch1" { 2 } else { 1 };
        assert_eq!(tids.len(), workers);
        match (mode, id) {
            ("process", _) => assert_eq!(pids.len(), workers),
            (_, "brk1") => assert_eq!(pids.len(), 1, "one helper process"),
            _ => {
                assert!(pids.is_empty());
                for &tid in &tids {
                    assert!(tid > 0 && thread_alive(tid), "worker thread {tid} runs");
                }
            }
        }
        drop(w);
        testing::assert_gone(&pids);
        assert_eq!(my_children().trim(), "", "children left");
        if mode == "thread" && id != "brk1" {
            for &tid in &tids {
                assert!(!thread_alive(tid), "worker thread {tid} is left");
            }
        }
        values
    }

    fn both_modes(id: &str, low: f64, high: f64) {
        let _serial = testing::serial();
        for mode in ["process", "thread"] {
            for tasks in [1, 2] {
                measure(id, tasks, mode, low, high);
            }
        }
    }

    #[test]
    fn futex1() {
        both_modes("futex1", 1e4, 1e9);
    }

    #[test]
    fn futex3() {
        both_modes("futex3", 1e4, 1e9);
    }

    #[test]
    fn pipe1() {
        both_modes("pipe1", 1e3, 1e9);
    }

    #[test]
    fn pthread_mutex1() {
        both_modes("pthread_mutex1", 1e5, 1e10);
    }

    #[test]
    fn sched_yield() {
        both_modes("sched_yield", 1e3, 1e9);
    }

    #[test]
    fn signal1() {
        both_modes("signal1", 1e3, 1e9);
    }

    #[test]
    fn getppid1() {
        both_modes("getppid1", 1e4, 1e9);
    }

    #[test]
    fn page_fault1() {
        both_modes("page_fault1", 1e3, 1e9);
    }

    #[test]
    fn brk1() {
        both_modes("brk1", 1e3, 1e9);
    }

    #[test]
    fn mmap1() {
        both_modes("mmap1", 1e2, 1e9);
    }

    #[test]
    fn context_switch1() {
        both_modes("context_switch1", 1e2, 1e9);
    }

    #[test]
    fn oversubscribed() {
        let _serial = testing::serial();
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get()) as u32;
        measure("getppid1", cpus * 2 + 1, "thread", 1e4, 1e10);
        measure("context_switch1", 3, "process", 1e2, 1e9);
    }

    /// brk1 in either mode never moves this process's break: sampled while
    /// it runs, the break would flip between two values thousands of times
    /// (the allocator may grow it now and then).
    #[test]
    fn brk1_leaves_the_measuring_process_break_alone() {
        let _serial = testing::serial();
        for mode in ["process", "thread"] {
            let mut w = start(&BRK1, &options(2, mode)).unwrap();
            let mut changes = 0;
            // SAFETY: brk(0) only reads the break.
            let mut last = unsafe { libc::syscall(libc::SYS_brk, 0usize) };
            let until = Instant::now() + Duration::from_millis(20);
            while Instant::now() < until {
                // SAFETY: as above.
                let now = unsafe { libc::syscall(libc::SYS_brk, 0usize) };
                changes += usize::from(now != last);
                last = now;
            }
            let interval = w.run(1000).unwrap();
            assert!(interval.work >= 1000.0);
            assert!(changes < 10, "{mode}: the break changed {changes} times");
        }
    }

    #[test]
    fn canonical_keys_and_registration() {
        for info in BENCHES {
            assert_eq!(crate::find(info.id).map(|b| b.id), Some(info.id));
            assert_eq!(info.unit.label(), "ops/s");
            assert_eq!(info.direction, Direction::Higher);
        }
        assert_eq!(BENCHES.len(), 11);
        assert_eq!(canonical("futex1"), "futex1[mode=process,tasks=1]");
    }

    #[test]
    fn rejects_invalid_options() {
        for info in BENCHES {
            let id = info.id;
            assert_eq!(invalid(id, &[("tasks", "0")]), "tasks");
            assert_eq!(invalid(id, &[("tasks", "1025")]), "tasks");
            assert_eq!(invalid(id, &[("tasks", "two")]), "tasks");
            assert_eq!(invalid(id, &[("mode", "fiber")]), "mode");
            assert_eq!(invalid(id, &[("mode", "")]), "mode");
            assert_eq!(invalid(id, &[("placement", "same")]), "placement");
        }
    }

    #[test]
    fn skips_when_memory_is_short() {
        let available = available_memory().unwrap_or(u64::MAX);
        if available / 4 * 3 >= 1024 * MEMSIZE as u64 {
            return;
        }
        for d in [&PAGE_FAULT1, &MMAP1] {
            match start(d, &options(1024, "process")) {
                Err(BenchError::Skip(reason)) => assert!(reason.contains("MiB"), "{reason}"),
                Err(other) => panic!("{}: {other}", d.id),
                Ok(_) => panic!("{} ran 1024 x 128 MiB", d.id),
            }
        }
    }

    /// A body that fails at once, and one that spins until stopped.
    fn fails(_: &tasks::Task) -> Result<(), tasks::Failure> {
        Err(tasks::Failure {
            op: tasks::Op::Test,
            errno: libc::EPERM,
        })
    }

    fn spins(task: &tasks::Task) -> Result<(), tasks::Failure> {
        while task.running() {
            task.add(1);
            std::hint::spin_loop();
        }
        Ok(())
    }

    fn custom(body: Body, mode: Mode, tasks: usize) -> Result<Scale, BenchError> {
        let mut make = || {
            Ok(vec![Launch {
                body,
                counted: true,
                fds: None,
            }])
        };
        Scale::start(Spec {
            id: "test",
            mode,
            isolated: false,
            tasks,
            per_task: 1,
            make: &mut make,
            guard: None,
        })
    }

    #[test]
    fn a_failing_worker_is_reported() {
        let _serial = testing::serial();
        for mode in [Mode::Process, Mode::Thread] {
            // Usually while prepare waits for the workers to start.
            match custom(fails, mode, 2).and_then(|mut w| w.run(1_000_000)) {
                Err(BenchError::Os { what, error }) => {
                    assert!(what.contains("test failure"), "{what}");
                    assert_eq!(error.raw_os_error(), Some(libc::EPERM));
                }
                other => panic!("{mode:?}: {other:?}"),
            }
            assert_eq!(my_children().trim(), "", "children left");
        }
    }

    #[test]
    fn a_killed_worker_is_reported() {
        let _serial = testing::serial();
        let mut w = custom(spins, Mode::Process, 2).unwrap();
        w.run(1000).unwrap();
        let pids = w.pids();
        // SAFETY: our own unreaped child.
        unsafe { libc::kill(pids[1], libc::SIGKILL) };
        let deadline = Instant::now() + Duration::from_secs(10);
        let error = loop {
            match w.run(1000) {
                Err(e) => break e,
                Ok(_) => assert!(Instant::now() < deadline, "the dead worker went unnoticed"),
            }
        };
        assert!(error.to_string().contains("signal 9"), "{error}");
        drop(w);
        testing::assert_gone(&pids);
        assert_eq!(my_children().trim(), "");
    }

    #[test]
    fn threads_stop_on_drop() {
        let _serial = testing::serial();
        let mut w = custom(spins, Mode::Thread, 3).unwrap();
        let interval = w.run(10_000).unwrap();
        assert!(interval.work >= 10_000.0);
        let tids = w.tids();
        drop(w);
        for tid in tids {
            assert!(!thread_alive(tid));
        }
    }
}
