//! The measuring task's counters through `perf_event_open(2)`, with no
//! external tool: software events always (task clock, context switches,
//! CPU migrations, minor and major page faults), hardware events where the
//! PMU allows them (instructions, cycles, branch and cache misses).
//!
//! Each counter is opened on the calling thread with `inherit`, so the
//! children a timed interval forks (fork-exit, exec) count when they exit,
//! while partner processes started before counting began (a pipe's other
//! end) do not: the counts are the measuring task's. They are read right
//! before and right after each timed interval ([`CountedWorkload`]), so the
//! agent's own work between samples (writing events) is never counted; the
//! reads fall outside the interval the sampler times.

use kbench_bench::{BenchError, Interval, Workload};
use kbench_model::{COUNTER_PREFIX, Direction};
use std::cell::RefCell;
use std::fs::File;
use std::io::{self, Read};
use std::os::fd::{FromRawFd, OwnedFd};

const PERF_TYPE_HARDWARE: u32 = 0;
const PERF_TYPE_SOFTWARE: u32 = 1;
/// `perf_event_attr` as of its first version (PERF_ATTR_SIZE_VER0): the
/// kernel accepts any older size and zero-fills the rest.
const ATTR_SIZE_VER0: u32 = 64;
/// `perf_event_attr.flags` bits.
const FLAG_INHERIT: u64 = 1 << 1;
const FLAG_EXCLUDE_HV: u64 = 1 << 6;
/// `perf_event_open`'s flag: close the descriptor on exec.
const PERF_FLAG_FD_CLOEXEC: libc::c_ulong = 1 << 3;

/// The first version of the kernel's `struct perf_event_attr`.
#[repr(C)]
#[derive(Default)]
struct PerfEventAttr {
    kind: u32,
    size: u32,
    config: u64,
    sample_period: u64,
    sample_type: u64,
    read_format: u64,
    flags: u64,
    wakeup_events: u32,
    bp_type: u32,
    config1: u64,
}

/// One counter kbench knows: its metric name (before `_per_op`), its
/// `perf_event_attr` type and config, and what one count is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event {
    pub name: &'static str,
    kind: u32,
    config: u64,
    pub unit: &'static str,
}

impl Event {
    /// Whether it needs a PMU.
    pub fn is_hardware(&self) -> bool {
        self.kind == PERF_TYPE_HARDWARE
    }

    /// Its stored metric: `perf.context_switches_per_op`.
    pub fn metric(&self) -> String {
        format!("{COUNTER_PREFIX}{}_per_op", self.name)
    }
}

const fn software(name: &'static str, config: u64, unit: &'static str) -> Event {
    Event {
        name,
        kind: PERF_TYPE_SOFTWARE,
        config,
        unit,
    }
}

const fn hardware(name: &'static str, config: u64, unit: &'static str) -> Event {
    Event {
        name,
        kind: PERF_TYPE_HARDWARE,
        config,
        unit,
    }
}

/// Every counter, software first (configs from linux/perf_event.h).
pub const EVENTS: [Event; 9] = [
    software("task_clock", 1, "ns/op"),
    software("context_switches", 3, "switches/op"),
    software("cpu_migrations", 4, "migrations/op"),
    software("minor_faults", 5, "faults/op"),
    software("major_faults", 6, "faults/op"),
    hardware("instructions", 1, "instructions/op"),
    hardware("cycles", 0, "cycles/op"),
    hardware("branch_misses", 5, "misses/op"),
    hardware("cache_misses", 3, "misses/op"),
];

/// The counters that opened, with what could not be opened said once.
pub struct Counters {
    open: Vec<(Event, File)>,
    /// Counts over the timed intervals since [`Counters::reset`], per open
    /// counter, and the iterations they timed.
    totals: Vec<u64>,
    iterations: u64,
}

/// Which counters this machine gives, and why the others are missing.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Availability {
    pub available: Vec<&'static str>,
    /// One line for the user when some are missing (no PMU, paranoid
    /// setting); `None` when all opened.
    pub note: Option<String>,
}

impl Counters {
    /// Opens every counter that this machine and its permissions allow.
    pub fn open() -> (Counters, Availability) {
        let mut open = Vec::new();
        let mut hardware_error = None;
        let mut software_error = None;
        for event in EVENTS {
            match open_counter(&event) {
                Ok(file) => open.push((event, file)),
                Err(error) if event.is_hardware() => {
                    hardware_error.get_or_insert(error);
                }
                Err(error) => {
                    software_error.get_or_insert(error);
                }
            }
        }
        let note = missing_note(software_error.as_ref(), hardware_error.as_ref());
        let availability = Availability {
            available: open.iter().map(|(event, _)| event.name).collect(),
            note,
        };
        let totals = vec![0; open.len()];
        (
            Counters {
                open,
                totals,
                iterations: 0,
            },
            availability,
        )
    }

    /// Forgets what was counted (calibration's intervals are not samples).
    pub fn reset(&mut self) {
        self.totals.iter_mut().for_each(|t| *t = 0);
        self.iterations = 0;
    }

    /// Each counter's current value; a counter that cannot be read is
    /// dropped for the rest of the test.
    fn read_all(&mut self) -> Vec<u64> {
        let mut values = Vec::with_capacity(self.open.len());
        let mut row = 0;
        self.open.retain_mut(|(_, file)| {
            let mut bytes = [0u8; 8];
            let ok = file.read_exact(&mut bytes).is_ok();
            if ok {
                values.push(u64::from_ne_bytes(bytes));
                row += 1;
            } else {
                self.totals.remove(row);
            }
            ok
        });
        values
    }

    /// The iterations timed since the last reset.
    pub fn iterations(&self) -> u64 {
        self.iterations
    }

    /// Each counter per operation over the timed intervals since the last
    /// reset, as (event, value); empty before any interval.
    pub fn per_op(&self) -> Vec<(Event, f64)> {
        if self.iterations == 0 {
            return vec![];
        }
        self.open
            .iter()
            .zip(&self.totals)
            .map(|((event, _), &total)| (*event, total as f64 / self.iterations as f64))
            .collect()
    }
}

/// What to tell the user about the counters that did not open.
fn missing_note(software: Option<&io::Error>, hardware: Option<&io::Error>) -> Option<String> {
    let denied = |e: &io::Error| matches!(e.raw_os_error(), Some(libc::EACCES | libc::EPERM));
    if let Some(error) = software {
        let paranoid = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|_| "unknown".to_string());
        return Some(if denied(error) {
            format!(
                "counters are off: perf_event_paranoid is {paranoid}; run \
                 `sysctl kernel.perf_event_paranoid=2` (or measure as root) to record them"
            )
        } else {
            format!("counters are off: perf_event_open failed ({error})")
        });
    }
    hardware.map(|error| {
        if denied(error) {
            "hardware counters are off (instructions, cycles, branch and cache misses): \
             perf_event_paranoid forbids them; run `sysctl kernel.perf_event_paranoid=2`"
                .to_string()
        } else {
            format!(
                "no PMU: hardware counters (instructions, cycles, branch and cache misses) \
                 are not supported here ({error}); the software counters are recorded"
            )
        }
    })
}

fn open_counter(event: &Event) -> io::Result<File> {
    let attr = PerfEventAttr {
        kind: event.kind,
        size: ATTR_SIZE_VER0,
        config: event.config,
        flags: FLAG_INHERIT | FLAG_EXCLUDE_HV,
        ..PerfEventAttr::default()
    };
    // SAFETY: attr is a valid perf_event_attr of the size it states; pid 0
    // and cpu -1 count the calling thread on any CPU; no group fd.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_perf_event_open,
            &attr as *const PerfEventAttr,
            0 as libc::pid_t,
            -1 as libc::c_int,
            -1 as libc::c_int,
            PERF_FLAG_FD_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the kernel just returned this descriptor, and nothing else
    // owns it.
    let owned = unsafe { OwnedFd::from_raw_fd(fd as libc::c_int) };
    Ok(File::from(owned))
}

/// A workload whose timed intervals are counted: each counter is read
/// before and after [`Workload::run`], and the difference is added.
pub struct CountedWorkload<'a> {
    pub inner: &'a mut dyn Workload,
    pub counters: &'a RefCell<Counters>,
}

impl Workload for CountedWorkload<'_> {
    fn run(&mut self, iterations: u64) -> Result<Interval, BenchError> {
        let before = self.counters.borrow_mut().read_all();
        let interval = self.inner.run(iterations)?;
        let mut counters = self.counters.borrow_mut();
        let after = counters.read_all();
        if after.len() == before.len() {
            for (total, (a, b)) in counters.totals.iter_mut().zip(after.iter().zip(&before)) {
                *total += a.saturating_sub(*b);
            }
            counters.iterations += iterations;
        }
        Ok(interval)
    }

    fn tasks(&self) -> u32 {
        self.inner.tasks()
    }
}

/// Every counter is a count per operation: fewer is better.
pub const DIRECTION: Direction = Direction::Lower;

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// Forks and reaps one child per iteration: the parent's copy-on-write
    /// faults and the child's own count.
    struct Forks;

    impl Workload for Forks {
        fn run(&mut self, iterations: u64) -> Result<Interval, BenchError> {
            for _ in 0..iterations {
                // SAFETY: the child only calls _exit.
                let pid = unsafe { libc::fork() };
                if pid == 0 {
                    // SAFETY: leaving the child at once, no destructors.
                    unsafe { libc::_exit(0) };
                }
                let mut status = 0;
                // SAFETY: waits for the child just forked.
                unsafe { libc::waitpid(pid, &mut status, 0) };
            }
            Ok(Interval {
                elapsed: Duration::from_millis(1),
                work: iterations as f64,
            })
        }
    }

    #[test]
    fn software_counters_open_and_count_per_operation() {
        let (counters, availability) = Counters::open();
        let software: Vec<_> = EVENTS.iter().filter(|e| !e.is_hardware()).collect();
        if availability.available.len() < software.len() {
            // A kernel without perf events, or a paranoid setting: the note
            // says which, and nothing is counted.
            assert!(availability.note.is_some());
            return;
        }
        let counters = RefCell::new(counters);
        let mut forks = Forks;
        let mut counted = CountedWorkload {
            inner: &mut forks,
            counters: &counters,
        };
        counted.run(3).unwrap();
        counters.borrow_mut().reset();
        assert!(counters.borrow().per_op().is_empty(), "reset forgets");
        counted.run(20).unwrap();
        let per_op = counters.borrow().per_op();
        let of = |name: &str| per_op.iter().find(|(e, _)| e.name == name).unwrap().1;
        assert!(of("task_clock") > 0.0);
        // A fork write-protects the parent's pages: its next writes fault.
        assert!(of("minor_faults") >= 1.0, "{per_op:?}");
        assert_eq!(of("major_faults"), 0.0, "{per_op:?}");
    }

    #[test]
    fn metrics_are_named_per_operation() {
        assert_eq!(EVENTS[1].metric(), "perf.context_switches_per_op");
        assert!(EVENTS[5].is_hardware() && !EVENTS[0].is_hardware());
    }
}
