//! The system snapshot recorded with every run.
//!
//! Everything docs/benchmarks.md lists as a pitfall: kernel, cmdline, CPU
//! vulnerabilities and mitigations, CPU model/count/SMT/governor, clocksource,
//! THP, preempt model, memory, the work directory's filesystem, the measuring
//! process's cgroup, virtualization and steal time, compiler and kbench
//! version, and the boot's id. Reading it is kbench-sysinfo's job (and
//! kbench-measure adds the counters and monitors the measuring process can
//! record); this is only its shape.

use crate::ImportedRecord;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The environment variable a campaign sets for the runs it starts, saying
/// how the boot started ([`SystemSnapshot::boot_via`]).
pub const BOOT_VIA_ENV: &str = "KBENCH_BOOT_VIA";

/// One machine's state as a measuring process saw it. Unknown facts are
/// empty strings or zero, never guesses.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SystemSnapshot {
    pub hostname: String,
    pub os: String,
    pub arch: String,
    pub kernel_release: String,
    pub kernel_version: String,
    pub kernel_cmdline: String,
    /// This boot's id (`/proc/sys/kernel/random/boot_id`). Runs that share
    /// it share the boot's kernel layout and page allocator state, so a
    /// comparison counts boots, not runs, as its replicates when it can
    /// (docs/statistics.md, "Measured apart"). Empty in runs stored before
    /// kbench recorded it, and where it cannot be read.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub boot_id: String,
    /// How this boot started, as `kbench campaign` knew when it ran the
    /// invocation ([`BOOT_VIA_ENV`]): "kexec" (the firmware skipped) or
    /// "firmware" (a boot loader's boot, or after a power cycle). Empty
    /// for runs outside a campaign.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub boot_via: String,
    /// The machine, as kbench's own hash of `/etc/machine-id` (the id is
    /// private; its hash names the machine without giving it away): what
    /// a calibration is keyed by besides the CPU and memory. Empty where
    /// the system has none, and in runs stored before kbench recorded it.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub machine_id: String,
    /// `/sys/devices/system/cpu/vulnerabilities/*`: file name -> contents.
    pub vulnerabilities: BTreeMap<String, String>,
    pub cpu_model: String,
    pub cpus_online: u32,
    pub threads_per_core: u32,
    pub cpu_mhz: f64,
    pub governor: String,
    pub clocksource: String,
    pub thp_enabled: String,
    pub thp_defrag: String,
    pub preempt: String,
    pub memory_total_kib: u64,
    /// The board's vendor and name (and product name) from DMI; empty
    /// where DMI cannot be read (many VMs, containers).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub motherboard: String,
    /// Each disk device: "2000GB Samsung SSD 970 EVO Plus 2TB", or its size
    /// and name ("275GB vda") when it has no model.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub disks: Vec<String>,
    /// The drivers of the network adapters ("virtio_net", "e1000e").
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub network: Vec<String>,
    pub work_dir: String,
    pub work_dir_fs: String,
    pub cgroup: String,
    /// "none", or the hypervisor's name ("kvm", "qemu-tcg", ...).
    pub virtualization: String,
    /// Steal time in percent of CPU time while the run went on, when known.
    pub steal_percent: Option<f64>,
    pub compiler: String,
    pub kbench_version: String,
    /// The perf counters the measuring process could open
    /// (`task_clock`, ..., `instructions` where there is a PMU).
    pub counters: Vec<String>,
    /// Why some counters are missing (no PMU, `perf_event_paranoid`), when
    /// some are.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counters_note: Option<String>,
    /// The system monitors whose files this kernel lacks (`sched` without
    /// /proc/schedstat, `psi` before 4.20).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub monitors_missing: Vec<String>,
    /// The variant this run measured, when it was one of several measured
    /// in interleaved blocks (`kbench run --variant`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub variant: Option<VariantRecord>,
    /// What another tool's result file said of this run, when it was
    /// imported from one (`kbench import composite.xml`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub imported: Option<ImportedRecord>,
    /// The external tools of the run's profile tests, by test name
    /// (`redis[clients=50,test=get]`): what report titles show. Kept out of
    /// the test's key, so two versions of a tool still compare as one test.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub tools: BTreeMap<String, ToolRecord>,
    /// Why a tool's version is unknown, one line per profile (its version
    /// command failed or printed nothing its regex matched).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tools_notes: Vec<String>,
    /// The kbench guest root filesystem the run's programs came from, as
    /// the image names itself ([`ROOTFS_RECORD_PATH`]); `None` on a system
    /// that is not one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rootfs: Option<RootfsRecord>,
}

/// Where a root filesystem built by `kbench rootfs` names itself: a JSON
/// [`RootfsRecord`], read by the snapshot of any system running from it
/// (a `kbench vm` guest, a LAVA board).
pub const ROOTFS_RECORD_PATH: &str = "/etc/kbench-rootfs.json";

/// A guest root filesystem: its id (the cache's, from its content), Debian
/// release and architecture.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct RootfsRecord {
    pub id: String,
    pub release: String,
    pub architecture: String,
}

/// The tool a profile test ran, as read when its run began.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ToolRecord {
    /// "Redis".
    pub tool: String,
    /// "7.0.15"; `None` when the profile's version command failed or
    /// printed nothing its regex matched.
    pub version: Option<String>,
    /// The test's description with its option values ("Test: GET -
    /// Parallel Connections: 50").
    pub description: String,
}

impl ToolRecord {
    /// The tool and its version: "Redis 7.0.15", "Redis (version unknown)".
    pub fn tool_version(&self) -> String {
        match &self.version {
            Some(version) => format!("{} {version}", self.tool),
            None => format!("{} (version unknown)", self.tool),
        }
    }

    /// The title PTS gives a result: "Redis 7.0.15 - Test: GET - Parallel
    /// Connections: 50".
    pub fn title(&self) -> String {
        if self.description.is_empty() {
            self.tool_version()
        } else {
            format!("{} - {}", self.tool_version(), self.description)
        }
    }
}

impl RootfsRecord {
    /// "7b8edfe231440051 (bookworm/amd64)".
    pub fn describe(&self) -> String {
        format!("{} ({}/{})", self.id, self.release, self.architecture)
    }
}

/// A variant of an interleaved run: what it set, and the session whose
/// blocks pair it with the other variants.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct VariantRecord {
    pub name: String,
    /// Its settings as written: `wrap:CMD`, `env:K=V`, `sysctl:k=v`,
    /// `cgroup:PATH`, `cpus:LIST`.
    pub settings: Vec<String>,
    /// Each sysctl's value before the variant set it (restored after each
    /// of its rounds).
    pub sysctl_before: BTreeMap<String, String>,
    /// Shared by every variant of one invocation: a round number of one
    /// session is one block, measured for every variant.
    pub session: String,
    /// Seed of the random variant order within blocks.
    pub seed: u64,
}

impl SystemSnapshot {
    /// The kernel command line without a campaign's boot marker
    /// ([`crate::campaign::BOOT_MARKER`]), which differs at every boot.
    fn cmdline_without_marker(&self) -> String {
        let marker = format!("{}=", crate::campaign::BOOT_MARKER);
        self.kernel_cmdline
            .split(' ')
            .filter(|parameter| !parameter.starts_with(&marker))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// The facts this snapshot knows as (label, value) pairs, in the order
    /// reports print them: for a run imported from another tool's file,
    /// that file's own. An unknown fact is left out, and a fact made of
    /// parts shows only the parts that are known ("2.6.0", not "2.6.0
    /// ()"), so a snapshot that records nothing has no facts.
    pub fn facts(&self) -> Vec<(String, String)> {
        if let Some(imported) = &self.imported {
            return imported.facts.clone();
        }
        let thp = [("enabled", &self.thp_enabled), ("defrag", &self.thp_defrag)]
            .iter()
            .filter(|(_, value)| !value.is_empty())
            .map(|(name, value)| format!("{name}={value}"))
            .collect::<Vec<_>>()
            .join(" ");
        let memory = match self.memory_total_kib {
            0 => String::new(),
            kib => format!("{:.1} GiB", kib as f64 / (1024.0 * 1024.0)),
        };
        let mut facts = vec![
            ("Processor", self.processor()),
            ("Memory", memory),
            ("Motherboard", self.motherboard.clone()),
            ("Disk", self.disks.join(" + ")),
            ("Network", self.network.join(" + ")),
            ("OS", self.os.clone()),
            (
                "Rootfs",
                self.rootfs
                    .as_ref()
                    .map(RootfsRecord::describe)
                    .unwrap_or_default(),
            ),
            ("Kernel", detailed(&self.kernel_release, &self.arch)),
            ("Kernel cmdline", self.cmdline_without_marker()),
            ("Boot", self.boot_via.clone()),
            ("Preempt", self.preempt.clone()),
            ("Governor", self.governor.clone()),
            ("Clocksource", self.clocksource.clone()),
            ("THP", thp),
            ("File-System", detailed(&self.work_dir_fs, &self.work_dir)),
            ("Cgroup", self.cgroup.clone()),
            ("Virtualization", self.virtualization.clone()),
            ("Compiler", self.compiler.clone()),
            ("kbench", self.kbench_version.clone()),
        ]
        .into_iter()
        .map(|(label, value)| (label.to_string(), value))
        .collect::<Vec<_>>();
        if let Some(steal) = self.steal_percent {
            facts.push(("Steal time".to_string(), format!("{steal:.2} %")));
        }
        facts.extend(
            self.vulnerabilities
                .iter()
                .map(|(name, state)| (format!("Mitigation {name}"), state.clone())),
        );
        facts.retain(|(_, value)| !value.trim().is_empty());
        facts
    }

    /// "AMD EPYC (2 Cores / 2 Threads) @ 2994 MHz", as OpenBenchmarking
    /// writes it, of the parts that are known: no "(0 Cores / 0
    /// Threads)" when the CPU count is not; empty when nothing is.
    pub fn processor(&self) -> String {
        let mut parts = vec![];
        if !self.cpu_model.is_empty() {
            parts.push(self.cpu_model.clone());
        }
        if self.cpus_online > 0 {
            let cores = self.cpus_online / self.threads_per_core.max(1);
            parts.push(format!("({cores} Cores / {} Threads)", self.cpus_online));
        }
        if self.cpu_mhz > 0.0 {
            parts.push(format!("@ {:.0} MHz", self.cpu_mhz));
        }
        parts.join(" ")
    }
}

/// "main (detail)", or whichever of the two is known alone.
fn detailed(main: &str, detail: &str) -> String {
    match (main.is_empty(), detail.is_empty()) {
        (false, false) => format!("{main} ({detail})"),
        (false, true) => main.to_string(),
        _ => detail.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An imported run's snapshot records nothing; a transcribed one
    /// (seed 003: a CPU model, its clock and the kernel) only what it
    /// has, with no empty placeholder.
    #[test]
    fn facts_are_only_the_known_ones() {
        assert_eq!(SystemSnapshot::default().facts(), vec![]);
        let partial = SystemSnapshot {
            cpu_model: "two-way 2.8 GHz Xeon SMP".into(),
            cpu_mhz: 2800.0,
            kernel_release: "2.6.0".into(),
            ..SystemSnapshot::default()
        };
        let facts = partial.facts();
        assert_eq!(
            facts,
            [
                (
                    "Processor".into(),
                    "two-way 2.8 GHz Xeon SMP @ 2800 MHz".into()
                ),
                ("Kernel".into(), "2.6.0".into()),
            ]
        );
        let full = SystemSnapshot {
            cpus_online: 4,
            threads_per_core: 2,
            arch: "x86_64".into(),
            thp_enabled: "always".into(),
            memory_total_kib: 8 * 1024 * 1024,
            ..partial
        };
        let facts = full.facts();
        assert_eq!(
            facts[0].1,
            "two-way 2.8 GHz Xeon SMP (2 Cores / 4 Threads) @ 2800 MHz"
        );
        assert!(facts.contains(&("Memory".into(), "8.0 GiB".into())));
        assert!(facts.contains(&("Kernel".into(), "2.6.0 (x86_64)".into())));
        assert!(facts.contains(&("THP".into(), "enabled=always".into())));
    }
}
