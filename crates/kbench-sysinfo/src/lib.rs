//! The system snapshot: reads the facts of this machine that every run
//! records ([`SystemSnapshot`]) from /proc, /sys and /etc, and the
//! /proc/stat CPU times its steal time comes from (and the runnable tasks
//! the interference monitors read).
//!
//! Every fact is read, never guessed: one that cannot be read stays empty or
//! zero. The text parsers are pure functions in `parse`, tested on text
//! captured from real machines; this file only does the reading, and
//! `hardware` the motherboard, disk and network lines under /sys. What the
//! measuring process can record (perf counters, system monitors) is not
//! the system's to say: kbench-measure adds it.

mod cpu_times;
mod hardware;
mod parse;

pub use cpu_times::{CpuTimes, steal_percent};

use kbench_model::SystemSnapshot;
use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::sync::OnceLock;

const CPU_DIR: &str = "/sys/devices/system/cpu";

/// The build the binary names with [`set_kbench_version`].
static KBENCH_VERSION: OnceLock<&'static str> = OnceLock::new();

/// Names the build every snapshot records as its kbench version: the
/// binary's version and git commit, which only the binary's build knows
/// (its build script runs git, so a commit rebuilds only the binary).
/// Called once at start; later calls are ignored.
pub fn set_kbench_version(version: &'static str) {
    let _ = KBENCH_VERSION.set(version);
}

/// The build [`set_kbench_version`] named, else the library's version.
pub fn kbench_version() -> &'static str {
    KBENCH_VERSION
        .get()
        .copied()
        .unwrap_or(concat!(env!("CARGO_PKG_VERSION"), " (build unknown)"))
}

/// This system's release codename (VERSION_CODENAME of os-release:
/// "bookworm"), when it says one.
pub fn os_codename() -> Option<String> {
    os_release_text().and_then(|text| parse::os_release_field(&text, "VERSION_CODENAME"))
}

/// Reads this machine's snapshot; `work_dir` is where the benchmarks do
/// their I/O. Never fails. `steal_percent` is left `None` for the caller,
/// who knows when the run started and ended (see [`steal_percent`]), and
/// so are the counters and monitors the measuring process can record.
pub fn snapshot(work_dir: &Path) -> SystemSnapshot {
    let uname = Uname::read();
    let cpuinfo = read("/proc/cpuinfo");
    let cmdline = read("/proc/cmdline").trim().to_string();
    let work_dir = fs::canonicalize(work_dir)
        .or_else(|_| std::path::absolute(work_dir))
        .unwrap_or_else(|_| work_dir.to_path_buf());
    SystemSnapshot {
        os: os_name(),
        vulnerabilities: vulnerabilities(),
        cpu_model: parse::cpu_model(&cpuinfo).unwrap_or_default(),
        cpus_online: parse::count_cpu_list(&read(&format!("{CPU_DIR}/online"))).unwrap_or(0),
        threads_per_core: parse::count_cpu_list(&read(&format!(
            "{CPU_DIR}/cpu0/topology/thread_siblings_list"
        )))
        .unwrap_or(1),
        cpu_mhz: cpu_mhz(&cpuinfo),
        governor: read_trimmed(&format!("{CPU_DIR}/cpu0/cpufreq/scaling_governor")),
        clocksource: read_trimmed(
            "/sys/devices/system/clocksource/clocksource0/current_clocksource",
        ),
        thp_enabled: thp_choice("enabled"),
        thp_defrag: thp_choice("defrag"),
        preempt: preempt(&uname, &cmdline),
        memory_total_kib: parse::meminfo_kib(&read("/proc/meminfo"), "MemTotal").unwrap_or(0),
        work_dir_fs: parse::mount_fs_type(&read("/proc/self/mountinfo"), &work_dir)
            .unwrap_or_default(),
        work_dir: work_dir.to_string_lossy().into_owned(),
        cgroup: parse::cgroup(&read("/proc/self/cgroup")),
        virtualization: virtualization(&cpuinfo),
        steal_percent: None,
        compiler: option_env!("KBENCH_RUSTC_VERSION")
            .unwrap_or("rustc (unknown)")
            .to_string(),
        kbench_version: kbench_version().to_string(),
        counters: vec![],
        counters_note: None,
        monitors_missing: vec![],
        variant: None,
        imported: None,
        tools: Default::default(),
        tools_notes: vec![],
        rootfs: rootfs_record(),
        motherboard: hardware::motherboard(Path::new("/sys")),
        disks: hardware::disks(Path::new("/sys")),
        network: hardware::network(Path::new("/sys")),
        kernel_cmdline: cmdline,
        boot_id: read_trimmed("/proc/sys/kernel/random/boot_id"),
        boot_via: std::env::var(kbench_model::BOOT_VIA_ENV).unwrap_or_default(),
        machine_id: machine_id(),
        hostname: uname.nodename,
        arch: uname.machine,
        kernel_release: uname.release,
        kernel_version: uname.version,
    }
}

/// The guest root filesystem this system runs from, when it is one kbench
/// built (it names itself in [`kbench_model::ROOTFS_RECORD_PATH`]).
fn rootfs_record() -> Option<kbench_model::RootfsRecord> {
    let text = fs::read(kbench_model::ROOTFS_RECORD_PATH).ok()?;
    serde_json::from_slice(&text).ok()
}

/// The kernel's log buffer (what dmesg prints), when this process may
/// read it (root, or `kernel.dmesg_restrict=0`).
pub fn kernel_log() -> Option<String> {
    const SYSLOG_ACTION_READ_ALL: libc::c_int = 3;
    let mut buffer = vec![0u8; 1 << 17];
    // SAFETY: klogctl writes at most `buffer.len()` bytes into `buffer`.
    let read = unsafe {
        libc::klogctl(
            SYSLOG_ACTION_READ_ALL,
            buffer.as_mut_ptr().cast(),
            buffer.len() as libc::c_int,
        )
    };
    let read = usize::try_from(read).ok()?;
    Some(String::from_utf8_lossy(&buffer[..read]).into_owned())
}

/// The OOM killer's lines of a kernel log ("Out of memory: Killed process
/// 123 (hackbench) ...", a memory cgroup's too), oldest first, without
/// klogctl's `<level>` prefix.
pub fn oom_kills(log: &str) -> Vec<&str> {
    log.lines()
        .filter(|line| line.to_ascii_lowercase().contains("out of memory: kill"))
        .map(|line| line.trim_start_matches(|c: char| c == '<' || c == '>' || c.is_ascii_digit()))
        .collect()
}

/// The running kernel's release, `kbench run`'s identifier by default
/// ("unknown-kernel" when /proc cannot be read).
pub fn kernel_release() -> String {
    fs::read_to_string("/proc/sys/kernel/osrelease")
        .map_or_else(|_| "unknown-kernel".to_string(), |s| s.trim().to_string())
}

/// Reads the aggregate "cpu" line of `/proc/stat`; `None` if unreadable.
pub fn cpu_times() -> Option<CpuTimes> {
    parse::cpu_times(&read("/proc/stat"))
}

/// Tasks runnable right now (`/proc/stat` procs_running), the reader
/// included; `None` if unreadable.
pub fn procs_running() -> Option<u32> {
    parse::procs_running(&read("/proc/stat"))
}

/// A file's text, empty when it cannot be read.
fn read(path: &str) -> String {
    fs::read_to_string(path).unwrap_or_default()
}

/// This machine's id hashed with kbench's own key (as systemd's
/// `sd_id128_get_machine_app_specific` advises: the raw id is private):
/// 16 hex digits of SHA-256("kbench:" + id); empty without a machine id.
fn machine_id() -> String {
    use sha2::{Digest, Sha256};
    let id = ["/etc/machine-id", "/var/lib/dbus/machine-id"]
        .iter()
        .map(|path| read_trimmed(path))
        .find(|id| !id.is_empty());
    id.map_or_else(String::new, |id| {
        Sha256::digest(format!("kbench:{id}"))
            .iter()
            .take(8)
            .map(|byte| format!("{byte:02x}"))
            .collect()
    })
}

fn read_trimmed(path: &str) -> String {
    read(path).trim().to_string()
}

/// PRETTY_NAME from os-release.
fn os_name() -> String {
    os_release_text()
        .and_then(|text| parse::os_release_name(&text))
        .unwrap_or_default()
}

/// os-release, `/etc` first as the os-release spec says.
fn os_release_text() -> Option<String> {
    ["/etc/os-release", "/usr/lib/os-release"]
        .iter()
        .find_map(|path| fs::read_to_string(path).ok())
}

/// `/sys/devices/system/cpu/vulnerabilities/*`, file name -> state.
fn vulnerabilities() -> BTreeMap<String, String> {
    let Ok(entries) = fs::read_dir(format!("{CPU_DIR}/vulnerabilities")) else {
        return BTreeMap::new();
    };
    entries
        .flatten()
        .filter_map(|entry| {
            let state = fs::read_to_string(entry.path()).ok()?;
            Some((
                entry.file_name().to_string_lossy().into_owned(),
                state.trim().to_string(),
            ))
        })
        .collect()
}

/// cpuinfo's "cpu MHz" (x86), else cpufreq's current frequency of cpu0.
fn cpu_mhz(cpuinfo: &str) -> f64 {
    parse::cpuinfo_value(cpuinfo, "cpu MHz")
        .and_then(|mhz| mhz.parse().ok())
        .or_else(|| {
            let khz: f64 = read_trimmed(&format!("{CPU_DIR}/cpu0/cpufreq/scaling_cur_freq"))
                .parse()
                .ok()?;
            Some(khz / 1000.0)
        })
        .unwrap_or(0.0)
}

/// The selected transparent huge page setting `enabled` or `defrag`.
fn thp_choice(file: &str) -> String {
    let text = read(&format!("/sys/kernel/mm/transparent_hugepage/{file}"));
    parse::selected_choice(&text)
        .unwrap_or_default()
        .to_string()
}

/// See [`parse::preempt_model`] for which source wins.
fn preempt(uname: &Uname, cmdline: &str) -> String {
    // The file moved into debugfs' sched/ directory in Linux 5.13.
    let debugfs = [
        "/sys/kernel/debug/sched/preempt",
        "/sys/kernel/debug/sched_preempt",
    ]
    .iter()
    .find_map(|path| fs::read_to_string(path).ok());
    let kconfig = (!uname.release.is_empty())
        .then(|| fs::read_to_string(format!("/boot/config-{}", uname.release)).ok())
        .flatten();
    parse::preempt_model(
        debugfs.as_deref(),
        &uname.version,
        cmdline,
        kconfig.as_deref(),
    )
}

/// See [`parse::virtualization`]. The CPUID signature is asked only when the
/// hypervisor flag is set: without a hypervisor the leaf means nothing.
fn virtualization(cpuinfo: &str) -> String {
    let hypervisor_flag = parse::cpu_flag(cpuinfo, "hypervisor");
    let signature = if hypervisor_flag == Some(true) {
        cpuid_hypervisor_signature()
    } else {
        None
    };
    parse::virtualization(
        hypervisor_flag,
        signature.as_deref(),
        read("/sys/class/dmi/id/sys_vendor").trim(),
        read("/sys/class/dmi/id/product_name").trim(),
    )
}

/// The 12-byte hypervisor vendor signature of CPUID leaf 0x4000_0000, e.g.
/// "KVMKVMKVM\0\0\0". Firecracker guests have no DMI, so this is what tells
/// KVM there, and what tells QEMU's TCG emulator ("TCGTCGTCGTCG") from KVM.
#[cfg(target_arch = "x86_64")]
fn cpuid_hypervisor_signature() -> Option<String> {
    // Newer toolchains made `__cpuid` safe; the rust-version still needs `unsafe`.
    #[allow(unused_unsafe)]
    // SAFETY: every x86_64 CPU has CPUID, and any leaf may be asked.
    let leaf = unsafe { std::arch::x86_64::__cpuid(0x4000_0000) };
    let bytes: Vec<u8> = [leaf.ebx, leaf.ecx, leaf.edx]
        .iter()
        .flat_map(|word| word.to_le_bytes())
        .collect();
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

#[cfg(not(target_arch = "x86_64"))]
fn cpuid_hypervisor_signature() -> Option<String> {
    None
}

/// The `uname(2)` fields the snapshot keeps; empty when the call fails.
#[derive(Default)]
struct Uname {
    nodename: String,
    release: String,
    version: String,
    machine: String,
}

impl Uname {
    fn read() -> Uname {
        // SAFETY: `utsname` is plain C data, valid when zeroed.
        let mut buf: libc::utsname = unsafe { std::mem::zeroed() };
        // SAFETY: `buf` is a valid, writable `utsname`.
        if unsafe { libc::uname(&mut buf) } != 0 {
            return Uname::default();
        }
        let field = |chars: &[libc::c_char]| {
            let bytes: Vec<u8> = chars
                .iter()
                .take_while(|&&c| c != 0)
                .map(|&c| c as u8)
                .collect();
            String::from_utf8_lossy(&bytes).into_owned()
        };
        Uname {
            nodename: field(&buf.nodename),
            release: field(&buf.release),
            version: field(&buf.version),
            machine: field(&buf.machine),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A Debian 6.1 guest's log of an OOM kill, as klogctl gives it.
    #[test]
    fn oom_kills_are_the_killer_s_lines() {
        let log = "<4>[   27.56] hackbench invoked oom-killer: gfp_mask=0x140cca(GFP_HIGHUSER_MOVABLE|__GFP_COMP), order=0, oom_score_adj=0\n\
<6>[   27.94] oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0,global_oom,task_memcg=/,task=init,pid=89,uid=0\n\
<3>[   27.94] Out of memory: Killed process 89 (init) total-vm:90504kB, anon-rss:1488kB, file-rss:4kB, shmem-rss:6172kB, UID:0 pgtables:72kB oom_score_adj:0\n";
        let kills = oom_kills(log);
        assert_eq!(kills.len(), 1);
        assert!(kills[0].starts_with("[   27.94] Out of memory: Killed process 89 (init)"));
        let cgroup = "<6>[ 1.0] Memory cgroup out of memory: Killed process 7 (x)\n";
        assert_eq!(oom_kills(cgroup).len(), 1);
        assert!(oom_kills("<6>[ 1.0] all is well\n").is_empty());
    }

    #[test]
    fn steal_share_between_readings() {
        let before = CpuTimes {
            user: 100,
            idle: 880,
            steal: 20,
            ..CpuTimes::default()
        };
        let after = CpuTimes {
            user: 150,
            idle: 1020,
            steal: 30,
            ..CpuTimes::default()
        };
        assert_eq!(steal_percent(&before, &after), Some(5.0));
        assert_eq!(steal_percent(&before, &before), None);
        assert_eq!(steal_percent(&after, &before), None);
    }

    /// Reads this machine; run with `--nocapture` to see its snapshot.
    #[test]
    fn snapshot_of_this_machine() {
        let snapshot = snapshot(Path::new("."));
        println!("{}", serde_json::to_string_pretty(&snapshot).unwrap());
        assert!(!snapshot.kernel_release.is_empty());
        assert!(snapshot.cpus_online >= 1);
        assert!(snapshot.memory_total_kib > 0);
        assert!(!snapshot.work_dir_fs.is_empty());
        assert!(Path::new(&snapshot.work_dir).is_absolute());
        assert!(snapshot.steal_percent.is_none());
        // A UUID: 8-4-4-4-12 hexadecimal digits.
        let groups: Vec<usize> = snapshot.boot_id.split('-').map(str::len).collect();
        assert_eq!(groups, [8, 4, 4, 4, 12], "{}", snapshot.boot_id);
        // A hash of /etc/machine-id, never the id itself.
        let raw = read_trimmed("/etc/machine-id");
        if !raw.is_empty() {
            assert_eq!(snapshot.machine_id.len(), 16);
            assert!(!raw.contains(&snapshot.machine_id));
        }
        let times = cpu_times().expect("/proc/stat");
        assert!(times.total() > 0);
    }
}
