//! System monitors of one round (`kbench run --monitor`): the deltas of
//! `/proc/vmstat`, `/proc/interrupts`, `/proc/softirqs`, `/proc/schedstat`
//! and `/proc/pressure/*` from a test's start to the end of its samples, and for an
//! external tool its children's `getrusage`. They are the whole system's
//! (every task on it, not only the measuring one), read outside the timed
//! intervals, and stored as secondary metrics of the test: counts per
//! operation, pressure as % of the round's time. Only what changed is
//! stored (absence is 0: [`kbench_model::secondary_family`]); a file this
//! kernel lacks is skipped with a note, never failing the run.

use kbench_model::AgentEvent;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::time::Instant;

/// One source of system monitors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SystemMonitor {
    Vmstat,
    Interrupts,
    Softirqs,
    Sched,
    Psi,
}

impl SystemMonitor {
    pub const ALL: [SystemMonitor; 5] = [
        SystemMonitor::Vmstat,
        SystemMonitor::Interrupts,
        SystemMonitor::Softirqs,
        SystemMonitor::Sched,
        SystemMonitor::Psi,
    ];

    /// Its name on the command line and its metrics' family.
    pub fn name(self) -> &'static str {
        match self {
            SystemMonitor::Vmstat => "vmstat",
            SystemMonitor::Interrupts => "interrupts",
            SystemMonitor::Softirqs => "softirqs",
            SystemMonitor::Sched => "sched",
            SystemMonitor::Psi => "psi",
        }
    }

    /// Whether this kernel has its files.
    pub fn is_available(self) -> bool {
        self.read().is_some()
    }

    /// The file it reads, for notes.
    pub fn source(self) -> &'static str {
        match self {
            SystemMonitor::Vmstat => "/proc/vmstat",
            SystemMonitor::Interrupts => "/proc/interrupts",
            SystemMonitor::Softirqs => "/proc/softirqs",
            SystemMonitor::Sched => "/proc/schedstat",
            SystemMonitor::Psi => "/proc/pressure",
        }
    }

    /// Parses `--monitor`'s comma-separated list; `none` is the empty set.
    /// An unknown name is refused with the closest known one.
    pub fn parse_list(text: &str) -> Result<Vec<SystemMonitor>, String> {
        let mut chosen = Vec::new();
        for name in text.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            if name == "none" {
                continue;
            }
            let monitor = SystemMonitor::ALL
                .into_iter()
                .find(|m| m.name() == name)
                .ok_or_else(|| unknown(name))?;
            if !chosen.contains(&monitor) {
                chosen.push(monitor);
            }
        }
        chosen.sort();
        Ok(chosen)
    }

    /// Its counters now; `None` when this kernel has no such file.
    fn read(self) -> Option<BTreeMap<String, f64>> {
        let read = |path: &str| std::fs::read_to_string(path).ok();
        match self {
            SystemMonitor::Vmstat => read("/proc/vmstat").map(|t| parse_vmstat(&t)),
            SystemMonitor::Interrupts => read("/proc/interrupts").map(|t| parse_per_cpu(&t)),
            SystemMonitor::Softirqs => read("/proc/softirqs").map(|t| parse_per_cpu(&t)),
            SystemMonitor::Sched => read("/proc/schedstat").and_then(|t| parse_schedstat(&t)),
            SystemMonitor::Psi => {
                let mut all = BTreeMap::new();
                for resource in ["cpu", "memory", "io"] {
                    let text = read(&format!("/proc/pressure/{resource}"))?;
                    all.extend(parse_pressure(resource, &text));
                }
                Some(all)
            }
        }
    }
}

impl fmt::Display for SystemMonitor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The default `--monitor` set: every source (each is a few reads of
/// /proc per round).
pub const DEFAULT_MONITORS: &str = "vmstat,interrupts,softirqs,sched,psi";

fn unknown(name: &str) -> String {
    let closest = SystemMonitor::ALL
        .into_iter()
        .map(|m| (strsim::levenshtein(name, m.name()), m.name()))
        .min()
        .map(|(_, n)| n)
        .unwrap_or("vmstat");
    let known: Vec<&str> = SystemMonitor::ALL.iter().map(|m| m.name()).collect();
    format!(
        "unknown monitor '{name}': did you mean '{closest}'? The monitors are {} (or none)",
        known.join(", ")
    )
}

/// `/proc/vmstat`'s event counters (its `nr_*` lines are gauges, not
/// events, and are left out).
fn parse_vmstat(text: &str) -> BTreeMap<String, f64> {
    text.lines()
        .filter_map(|line| line.split_once(' '))
        .filter(|(name, _)| !name.starts_with("nr_") && *name != "workingset_nodes")
        .filter_map(|(name, value)| Some((name.to_string(), value.trim().parse().ok()?)))
        .collect()
}

/// `/proc/interrupts` and `/proc/softirqs`: each line's counts summed over
/// the CPUs (the header line says how many columns are CPUs).
fn parse_per_cpu(text: &str) -> BTreeMap<String, f64> {
    let mut lines = text.lines();
    let cpus = lines.next().map_or(0, |h| h.split_whitespace().count());
    lines
        .filter_map(|line| {
            let (name, rest) = line.split_once(':')?;
            let total: f64 = rest
                .split_whitespace()
                .take(cpus)
                .map_while(|c| c.parse::<f64>().ok())
                .sum();
            Some((name.trim().to_string(), total))
        })
        .collect()
}

/// `/proc/schedstat` (version 15 and later): per CPU, the time tasks waited
/// to run (`run_delay`, ns) and the timeslices run, summed over the CPUs.
fn parse_schedstat(text: &str) -> Option<BTreeMap<String, f64>> {
    let mut wait = 0.0;
    let mut timeslices = 0.0;
    let mut cpus = 0;
    for line in text.lines().filter(|l| l.starts_with("cpu")) {
        let fields: Vec<f64> = line
            .split_whitespace()
            .skip(1)
            .filter_map(|f| f.parse().ok())
            .collect();
        if fields.len() < 9 {
            return None;
        }
        wait += fields[7];
        timeslices += fields[8];
        cpus += 1;
    }
    (cpus > 0).then(|| {
        BTreeMap::from([
            ("wait_ns".to_string(), wait),
            ("timeslices".to_string(), timeslices),
        ])
    })
}

/// One `/proc/pressure/<resource>` file: the `some` and `full` stall
/// totals, in microseconds.
fn parse_pressure(resource: &str, text: &str) -> BTreeMap<String, f64> {
    text.lines()
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            let kind = words.next()?;
            let total = words.find_map(|w| w.strip_prefix("total="))?.parse().ok()?;
            Some((format!("{resource}_{kind}"), total))
        })
        .collect()
}

/// This process's reaped children's resource use: user and system time
/// (ms), minor and major faults, voluntary and involuntary switches. Max
/// RSS is a maximum, not a count, and is kept apart.
fn children_usage() -> Option<(BTreeMap<String, f64>, f64)> {
    // SAFETY: `rusage` is plain C data, valid when zeroed.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `usage` is a valid, writable `rusage`.
    if unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) } != 0 {
        return None;
    }
    let ms = |t: libc::timeval| t.tv_sec as f64 * 1e3 + t.tv_usec as f64 / 1e3;
    let counts = BTreeMap::from([
        ("user_ms".to_string(), ms(usage.ru_utime)),
        ("sys_ms".to_string(), ms(usage.ru_stime)),
        ("minor_faults".to_string(), usage.ru_minflt as f64),
        ("major_faults".to_string(), usage.ru_majflt as f64),
        ("voluntary_switches".to_string(), usage.ru_nvcsw as f64),
        ("involuntary_switches".to_string(), usage.ru_nivcsw as f64),
    ]);
    Some((counts, usage.ru_maxrss as f64))
}

/// The monitors of one test, from its start to the end of its samples.
pub struct SystemRound {
    monitors: Vec<SystemMonitor>,
    /// Set at the test's first event that says it started.
    before: Option<Readings>,
    /// The operations its samples timed: the iterations of the first
    /// metric's samples.
    operations: u64,
    first_metric: Option<String>,
    /// With an external tool: its children's usage.
    children: bool,
    /// Set when the window closed before the test's end (a built-in's
    /// counting interval runs after it).
    after: Option<Readings>,
}

/// The sources read at one moment.
struct Readings {
    at: Instant,
    readings: Vec<(SystemMonitor, BTreeMap<String, f64>)>,
    children: Option<(BTreeMap<String, f64>, f64)>,
}

impl Readings {
    fn read(monitors: &[SystemMonitor], children: bool) -> Readings {
        Readings {
            at: Instant::now(),
            readings: monitors
                .iter()
                .filter_map(|monitor| Some((*monitor, monitor.read()?)))
                .collect(),
            children: children.then(children_usage).flatten(),
        }
    }
}

impl SystemRound {
    /// `children`: also record the children's `getrusage` (external tools).
    pub fn new(monitors: &[SystemMonitor], children: bool) -> SystemRound {
        SystemRound {
            monitors: monitors.to_vec(),
            before: None,
            operations: 0,
            first_metric: None,
            children,
            after: None,
        }
    }

    /// Reads the sources when the test starts (after calibration). A
    /// source this kernel lacks is skipped: the run's snapshot names it
    /// ([`SystemMonitor::is_available`]), and its note says so once.
    pub fn start(&mut self) {
        self.before = Some(Readings::read(&self.monitors, self.children));
        self.after = None;
    }

    /// Ends the window now, before work that is not the samples (the
    /// counting interval); [`SystemRound::finish`] sends it later.
    pub fn close(&mut self) {
        if self.before.is_some() && self.after.is_none() {
            self.after = Some(Readings::read(&self.monitors, self.children));
        }
    }

    /// Counts a sample's operations (those of the test's first metric).
    pub fn sampled(&mut self, metric: &str, iterations: u64) {
        let first = self.first_metric.get_or_insert_with(|| metric.to_string());
        if first == metric {
            self.operations += iterations;
        }
    }

    /// The round's deltas as declarations and samples, to be sent before
    /// the test's end; nothing when it never started or timed nothing.
    pub fn finish(&mut self) -> Vec<AgentEvent> {
        self.close();
        let (Some(before), Some(after)) = (self.before.take(), self.after.take()) else {
            return vec![];
        };
        if self.operations == 0 {
            return vec![];
        }
        let operations = self.operations as f64;
        let elapsed_us = after.at.duration_since(before.at).as_secs_f64() * 1e6;
        let mut values: Vec<(String, &str, f64)> = Vec::new();
        for (monitor, old) in &before.readings {
            let Some((_, new)) = after.readings.iter().find(|(m, _)| m == monitor) else {
                continue;
            };
            // A line that appeared meanwhile (a new IRQ) has no start.
            for (name, now) in new.iter().filter(|(name, _)| old.contains_key(*name)) {
                let delta = now - old[name];
                let family = monitor.name();
                match monitor {
                    SystemMonitor::Psi => values.push((
                        format!("{family}.{name}_pct"),
                        "%",
                        100.0 * delta / elapsed_us,
                    )),
                    _ => values.push((
                        format!("{family}.{name}_per_op"),
                        if name.ends_with("_ns") {
                            "ns/op"
                        } else {
                            "/op"
                        },
                        delta / operations,
                    )),
                }
            }
        }
        if let (Some((old, _)), Some((new, max_rss))) = (&before.children, &after.children) {
            for (name, now) in new.iter().filter(|(name, _)| old.contains_key(*name)) {
                let delta = now - old[name];
                let unit = if name.ends_with("_ms") {
                    "ms/op"
                } else {
                    "/op"
                };
                values.push((format!("rusage.{name}_per_op"), unit, delta / operations));
            }
            values.push(("rusage.max_rss_kib".to_string(), "KiB", *max_rss));
        }
        let at_ms = kbench_model::now_ms();
        let iterations = self.operations;
        values
            .into_iter()
            .filter(|(_, _, value)| *value > 0.0 && value.is_finite())
            .flat_map(|(metric, unit, value)| {
                AgentEvent::secondary_sample(metric, unit, value, iterations, at_ms)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_monitor_is_refused_with_the_closest_name() {
        let error = SystemMonitor::parse_list("vmstat,softirq").unwrap_err();
        assert!(
            error.contains("unknown monitor 'softirq': did you mean 'softirqs'?"),
            "{error}"
        );
        assert_eq!(
            SystemMonitor::parse_list("psi, vmstat,psi").unwrap(),
            [SystemMonitor::Vmstat, SystemMonitor::Psi]
        );
        assert!(SystemMonitor::parse_list("none").unwrap().is_empty());
        assert_eq!(
            SystemMonitor::parse_list(DEFAULT_MONITORS).unwrap(),
            SystemMonitor::ALL
        );
    }

    #[test]
    fn proc_files_parse_into_counters() {
        let vmstat = parse_vmstat("nr_free_pages 5\npgfault 100\npgmajfault 2\n");
        assert_eq!(vmstat.keys().collect::<Vec<_>>(), ["pgfault", "pgmajfault"]);
        let irq = parse_per_cpu(
            "           CPU0       CPU1\n 24:   1   2  IO-APIC 5-edge ACPI:Ged\nLOC:  10  20  Local timer interrupts\nERR:   0\n",
        );
        assert_eq!(irq["24"], 3.0);
        assert_eq!(irq["LOC"], 30.0);
        assert_eq!(irq["ERR"], 0.0);
        let psi = parse_pressure(
            "cpu",
            "some avg10=1.00 avg60=0.00 avg300=0.00 total=1500\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
        );
        assert_eq!(psi["cpu_some"], 1500.0);
        assert_eq!(psi["cpu_full"], 0.0);
        let sched = parse_schedstat(
            "version 15\ntimestamp 1\ncpu0 0 0 5 1 2 3 100 40 7\ndomain0 3 1 2\ncpu1 0 0 5 1 2 3 200 60 3\n",
        )
        .unwrap();
        assert_eq!(sched["wait_ns"], 100.0);
        assert_eq!(sched["timeslices"], 10.0);
        assert_eq!(parse_schedstat("version 15\ncpu0 1 2\n"), None);
    }

    /// A round of this machine's monitors: declared before sampled, every
    /// value positive, named in a secondary family.
    #[test]
    fn a_round_sends_what_changed_per_operation() {
        let mut round = SystemRound::new(&SystemMonitor::ALL, true);
        round.start();
        round.sampled("value", 1000);
        round.sampled("other", 5);
        // Touch memory and sleep so that vmstat and the timer move.
        let buffer = vec![1u8; 8 << 20];
        std::hint::black_box(&buffer);
        std::thread::sleep(std::time::Duration::from_millis(20));
        let events = round.finish();
        let mut declared = vec![];
        for event in &events {
            match event {
                AgentEvent::Metric { metric, .. } => declared.push(metric.clone()),
                AgentEvent::Sample {
                    metric,
                    value,
                    iterations,
                    ..
                } => {
                    assert!(declared.contains(metric));
                    assert!(*value > 0.0, "{metric}");
                    assert_eq!(*iterations, 1000, "the first metric's operations");
                    assert!(kbench_model::is_secondary_metric(metric), "{metric}");
                }
                other => panic!("{other:?}"),
            }
        }
        assert!(
            declared.iter().any(|m| m.starts_with("vmstat.")),
            "{declared:?}"
        );
        assert!(round.finish().is_empty(), "a round ends once");
    }
}
