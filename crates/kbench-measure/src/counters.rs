//! The measuring task's counters through `perf_event_open(2)`, with no
//! external tool: software events always (task clock, context switches,
//! CPU migrations, minor and major page faults), hardware events where the
//! PMU allows them (instructions, cycles, branch and cache misses).
//!
//! Each round counts one extra interval of the calibrated length after its
//! samples ([`count_interval`]), whose time is thrown away: counting never
//! runs while a sample is timed. Each counter is opened on the calling
//! thread with `inherit`, so the children the interval forks (fork-exit,
//! exec) count when they exit, while partner processes started before (a
//! pipe's other end) do not: the counts are the measuring task's. They are
//! read right before and right after the interval, so nothing the agent
//! does between (writing events) is counted.

use kbench_bench::{BenchError, Workload};
use kbench_model::COUNTER_PREFIX;
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

/// The counters that opened.
pub struct Counters {
    open: Vec<(Event, File)>,
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
        let availability = Availability {
            available: open.iter().map(|(event, _)| event.name).collect(),
            note: missing_note(software_error.as_ref(), hardware_error.as_ref()),
        };
        (Counters { open }, availability)
    }

    /// Each counter's current value; `None` when one cannot be read.
    fn read_all(&mut self) -> Option<Vec<u64>> {
        self.open
            .iter_mut()
            .map(|(_, file)| {
                let mut bytes = [0u8; 8];
                file.read_exact(&mut bytes).ok()?;
                Some(u64::from_ne_bytes(bytes))
            })
            .collect()
    }
}

/// One counting interval: opens the counters, runs `iterations` of
/// `workload` once, and returns each counter per operation (nothing when
/// none opened or one could not be read). The interval's time is not a
/// sample: the counters are never open while samples are timed, so they
/// cannot slow what is measured (their kernel bookkeeping costs up to a
/// third of a context switch, and `inherit` makes every fork copy them).
pub fn count_interval(
    workload: &mut dyn Workload,
    iterations: u64,
) -> Result<Vec<(Event, f64)>, BenchError> {
    let (mut counters, _) = Counters::open();
    let before = counters.read_all();
    workload.run(iterations)?;
    let after = counters.read_all();
    let (Some(before), Some(after)) = (before, after) else {
        return Ok(vec![]);
    };
    Ok(counters
        .open
        .iter()
        .zip(after.iter().zip(&before))
        .map(|((event, _), (a, b))| {
            (
                *event,
                a.saturating_sub(*b) as f64 / iterations.max(1) as f64,
            )
        })
        .collect())
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
                 `sysctl kernel.perf_event_paranoid=1` (kernel-side counts need 1 or less; or measure as root) to record them"
            )
        } else {
            format!("counters are off: perf_event_open failed ({error})")
        });
    }
    hardware.map(|error| {
        if denied(error) {
            "hardware counters are off (instructions, cycles, branch and cache misses): \
             perf_event_paranoid forbids them; run `sysctl kernel.perf_event_paranoid=1`"
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

#[cfg(test)]
mod tests {
    use super::*;
    use kbench_bench::Interval;
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
        let (_, availability) = Counters::open();
        let software = EVENTS.iter().filter(|e| !e.is_hardware()).count();
        if availability.available.len() < software {
            // A kernel without perf events, or a paranoid setting: the note
            // says which.
            assert!(availability.note.is_some());
            return;
        }
        let per_op = count_interval(&mut Forks, 20).unwrap();
        let of = |name: &str| per_op.iter().find(|(e, _)| e.name == name).unwrap().1;
        assert!(of("task_clock") > 0.0);
        // A fork write-protects the parent's pages: its next writes fault.
        assert!(of("minor_faults") >= 1.0, "{per_op:?}");
        assert_eq!(of("major_faults"), 0.0, "{per_op:?}");
    }

    #[test]
    fn what_did_not_open_is_said_with_what_to_do() {
        let denied = io::Error::from_raw_os_error(libc::EACCES);
        let missing = io::Error::from_raw_os_error(libc::ENOENT);
        let all_off = missing_note(Some(&denied), Some(&denied)).unwrap();
        assert!(
            all_off.starts_with("counters are off: perf_event_paranoid is "),
            "{all_off}"
        );
        assert!(
            all_off.contains("sysctl kernel.perf_event_paranoid=1"),
            "{all_off}"
        );
        let no_pmu = missing_note(None, Some(&missing)).unwrap();
        assert!(no_pmu.starts_with("no PMU: hardware counters"), "{no_pmu}");
        assert!(
            no_pmu.contains("the software counters are recorded"),
            "{no_pmu}"
        );
        let paranoid_hw = missing_note(None, Some(&denied)).unwrap();
        assert!(paranoid_hw.contains("sysctl kernel.perf_event_paranoid=1"));
        assert_eq!(missing_note(None, None), None);
    }

    #[test]
    fn metrics_are_named_per_operation() {
        assert_eq!(EVENTS[1].metric(), "perf.context_switches_per_op");
        assert!(EVENTS[5].is_hardware() && !EVENTS[0].is_hardware());
    }
}
