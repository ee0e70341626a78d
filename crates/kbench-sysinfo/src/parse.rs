//! Pure parsers for the /proc, /sys and /etc text that the snapshot reads.
//!
//! Each takes a file's text and returns `None` (or an empty string) when the
//! fact is not there, so the caller never has to guess.

use super::cpu_times::CpuTimes;
use std::path::{Path, PathBuf};

/// The value of the first `key : value` line in `/proc/cpuinfo`.
pub fn cpuinfo_value<'a>(cpuinfo: &'a str, key: &str) -> Option<&'a str> {
    cpuinfo.lines().find_map(|line| {
        let (name, value) = line.split_once(':')?;
        (name.trim() == key).then(|| value.trim())
    })
}

/// The CPU's name: x86's "model name", or the key other architectures use
/// (MIPS "cpu model", POWER "cpu", RISC-V "uarch", old ARM "Processor");
/// arm64 only gives implementer and part numbers, which are kept as such.
pub fn cpu_model(cpuinfo: &str) -> Option<String> {
    let named = ["model name", "cpu model", "cpu", "uarch", "Processor"]
        .iter()
        .find_map(|key| cpuinfo_value(cpuinfo, key).filter(|value| !value.is_empty()));
    if let Some(name) = named {
        return Some(name.to_string());
    }
    let implementer = cpuinfo_value(cpuinfo, "CPU implementer")?;
    let part = cpuinfo_value(cpuinfo, "CPU part")?;
    Some(format!("CPU implementer {implementer} part {part}"))
}

/// Whether the cpuinfo "flags" line holds `flag`; `None` without such a line
/// (architectures other than x86 have none).
pub fn cpu_flag(cpuinfo: &str, flag: &str) -> Option<bool> {
    cpuinfo_value(cpuinfo, "flags").map(|flags| flags.split_whitespace().any(|f| f == flag))
}

/// How many CPUs a kernel CPU list such as "0-3,5" names.
pub fn count_cpu_list(list: &str) -> Option<u32> {
    let list = list.trim();
    if list.is_empty() {
        return None;
    }
    list.split(',')
        .map(|part| match part.split_once('-') {
            Some((first, last)) => {
                let (first, last) = (first.parse::<u32>().ok()?, last.parse::<u32>().ok()?);
                last.checked_sub(first).map(|span| span + 1)
            }
            None => part.parse::<u32>().ok().map(|_| 1),
        })
        .sum()
}

/// The selected word of a sysfs choice list: `[madvise]` in
/// "always [madvise] never", or `(full)` in debugfs' "none voluntary (full)".
pub fn selected_choice(text: &str) -> Option<&str> {
    text.split_whitespace().find_map(|word| {
        word.strip_prefix('[')
            .and_then(|w| w.strip_suffix(']'))
            .or_else(|| word.strip_prefix('(')?.strip_suffix(')'))
    })
}

/// A `/proc/meminfo` value in KiB, e.g. `MemTotal`.
pub fn meminfo_kib(meminfo: &str, key: &str) -> Option<u64> {
    meminfo.lines().find_map(|line| {
        let rest = line.strip_prefix(key)?.strip_prefix(':')?;
        rest.split_whitespace().next()?.parse().ok()
    })
}

/// The OS name from os-release: PRETTY_NAME, else NAME, unquoted.
pub fn os_release_name(os_release: &str) -> Option<String> {
    os_release_field(os_release, "PRETTY_NAME").or_else(|| os_release_field(os_release, "NAME"))
}

/// One field of os-release, unquoted, when it is there and not empty.
pub fn os_release_field(os_release: &str, key: &str) -> Option<String> {
    os_release
        .lines()
        .find_map(|line| line.trim().strip_prefix(key)?.strip_prefix('='))
        .map(unquote)
        .filter(|value| !value.is_empty())
}

/// Undoes os-release's shell-style quoting.
fn unquote(value: &str) -> String {
    if let Some(inner) = value.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')) {
        return inner.to_string();
    }
    let Some(inner) = value.strip_prefix('"').and_then(|v| v.strip_suffix('"')) else {
        return value.to_string();
    };
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.extend(chars.next()),
            _ => out.push(c),
        }
    }
    out
}

/// The value of a `name=value` kernel parameter, ignoring what follows `--`
/// (those arguments belong to init).
pub fn cmdline_param<'a>(cmdline: &'a str, name: &str) -> Option<&'a str> {
    cmdline
        .split_whitespace()
        .take_while(|word| *word != "--")
        .filter_map(|word| word.strip_prefix(name)?.strip_prefix('='))
        .last()
}

/// The preemption model, from the best source available, in this order:
///
/// 1. debugfs `sched/preempt` (the mode in force now): "full (dynamic)".
/// 2. The flag in `uname -v`: `PREEMPT_RT` gives "rt", `PREEMPT` gives
///    "full"; `PREEMPT_DYNAMIC` gives "<mode> (dynamic)" with the mode from a
///    `preempt=` boot parameter, else the kernel config's default, else just
///    "dynamic".
/// 3. With no flag in `uname -v` the kernel is not preemptible: the kernel
///    config tells "none" from "voluntary", else "none or voluntary".
///
/// `kconfig` is `/boot/config-<release>`. Empty when nothing could be read.
pub fn preempt_model(
    debugfs: Option<&str>,
    uname_version: &str,
    cmdline: &str,
    kconfig: Option<&str>,
) -> String {
    if let Some(mode) = debugfs.and_then(selected_choice) {
        return format!("{mode} (dynamic)");
    }
    let config_mode = kconfig.and_then(kconfig_preempt_mode);
    let flags: Vec<&str> = uname_version.split_whitespace().collect();
    if flags.contains(&"PREEMPT_RT") {
        "rt".to_string()
    } else if flags.contains(&"PREEMPT_DYNAMIC") {
        let boot_mode = cmdline_param(cmdline, "preempt")
            .filter(|mode| ["none", "voluntary", "full", "lazy"].contains(mode));
        match boot_mode.or(config_mode) {
            Some(mode) => format!("{mode} (dynamic)"),
            None => "dynamic".to_string(),
        }
    } else if flags.contains(&"PREEMPT") {
        config_mode.unwrap_or("full").to_string()
    } else if let Some(mode) = config_mode {
        mode.to_string()
    } else if uname_version.is_empty() {
        String::new()
    } else {
        "none or voluntary".to_string()
    }
}

/// The preemption model a kernel config selects (for a dynamic kernel, its
/// boot default).
fn kconfig_preempt_mode(kconfig: &str) -> Option<&'static str> {
    let set = |key: &str| {
        kconfig
            .lines()
            .any(|line| line.trim().strip_prefix(key) == Some("=y"))
    };
    [
        ("CONFIG_PREEMPT_RT", "rt"),
        ("CONFIG_PREEMPT_LAZY", "lazy"),
        ("CONFIG_PREEMPT", "full"),
        ("CONFIG_PREEMPT_VOLUNTARY", "voluntary"),
        ("CONFIG_PREEMPT_NONE", "none"),
    ]
    .into_iter()
    .find_map(|(key, mode)| set(key).then_some(mode))
}

/// The filesystem type of the mount holding `path` (absolute), from
/// `/proc/self/mountinfo`: the longest mount point that is a prefix of the
/// path, the later of two equal ones (it is mounted over the other).
pub fn mount_fs_type(mountinfo: &str, path: &Path) -> Option<String> {
    let mut best: Option<(usize, &str)> = None;
    for line in mountinfo.lines() {
        // "36 35 98:0 /root /mnt opts [optional...] - fstype source superopts"
        let Some((left, right)) = line.split_once(" - ") else {
            continue;
        };
        let (Some(mount_point), Some(fs_type)) = (left.split(' ').nth(4), right.split(' ').next())
        else {
            continue;
        };
        let mount_point = PathBuf::from(unescape_mount(mount_point));
        let depth = mount_point.components().count();
        if path.starts_with(&mount_point) && best.is_none_or(|(best_depth, _)| depth >= best_depth)
        {
            best = Some((depth, fs_type));
        }
    }
    best.map(|(_, fs_type)| fs_type.to_string())
}

/// Undoes mountinfo's octal escapes (`\040` for a space and so on).
fn unescape_mount(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let octal = bytes.get(i + 1..i + 4).filter(|_| bytes[i] == b'\\');
        match octal.and_then(|digits| u8::from_str_radix(std::str::from_utf8(digits).ok()?, 8).ok())
        {
            Some(byte) => {
                out.push(byte);
                i += 4;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The process's cgroup from `/proc/self/cgroup`: the path of a pure
/// cgroup v2 system (its one "0::" line), else every line (v1 or hybrid,
/// where the controllers live in the v1 hierarchies) joined with "; ".
pub fn cgroup(text: &str) -> String {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    match lines.as_slice() {
        [only] if only.starts_with("0::") => only["0::".len()..].to_string(),
        _ => lines.join("; "),
    }
}

/// The aggregate "cpu" line of `/proc/stat`.
pub fn cpu_times(stat: &str) -> Option<CpuTimes> {
    let line = stat
        .lines()
        .find(|line| line.split_whitespace().next() == Some("cpu"))?;
    let values: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .map(|v| v.parse().ok())
        .collect::<Option<_>>()?;
    let field = |i: usize| values.get(i).copied().unwrap_or(0);
    (values.len() >= 4).then(|| CpuTimes {
        user: field(0),
        nice: field(1),
        system: field(2),
        idle: field(3),
        iowait: field(4),
        irq: field(5),
        softirq: field(6),
        steal: field(7),
    })
}

/// The `procs_running` line of `/proc/stat`: tasks runnable right now,
/// the reader included.
pub fn procs_running(stat: &str) -> Option<u32> {
    stat.lines()
        .find_map(|line| line.strip_prefix("procs_running "))
        .and_then(|n| n.trim().parse().ok())
}

/// What runs the machine, from (in this order) the CPUID hypervisor
/// signature, the DMI vendor and product names, and the cpuinfo
/// "hypervisor" flag: "kvm", "qemu-tcg", "vmware", ..., "hypervisor
/// (unknown)" when only the flag says so, "none" when the flags line lacks
/// it, and empty when nothing tells (non-x86 without DMI).
pub fn virtualization(
    hypervisor_flag: Option<bool>,
    cpuid_signature: Option<&str>,
    dmi_vendor: &str,
    dmi_product: &str,
) -> String {
    let known = cpuid_signature
        .and_then(hypervisor_by_signature)
        .or_else(|| hypervisor_by_dmi(dmi_vendor, dmi_product));
    match (known, hypervisor_flag) {
        (Some(name), _) => name.to_string(),
        (None, Some(true)) => "hypervisor (unknown)".to_string(),
        (None, Some(false)) => "none".to_string(),
        (None, None) => String::new(),
    }
}

/// The hypervisor a CPUID leaf 0x4000_0000 vendor signature names.
fn hypervisor_by_signature(signature: &str) -> Option<&'static str> {
    Some(
        match signature.trim_matches(|c: char| c == '\0' || c == ' ') {
            "KVMKVMKVM" | "Linux KVM Hv" => "kvm",
            "TCGTCGTCGTCG" => "qemu-tcg",
            "VMwareVMware" => "vmware",
            "Microsoft Hv" => "microsoft",
            "XenVMMXenVMM" => "xen",
            "VBoxVBoxVBox" => "virtualbox",
            "bhyve bhyve" => "bhyve",
            "ACRNACRNACRN" => "acrn",
            "QNXQVMBSQG" => "qnx",
            "lrpepyh  vr" => "parallels",
            _ => return None,
        },
    )
}

/// The hypervisor DMI names. Only names that mean a virtual machine: cloud
/// vendors also sell bare metal under their own name.
fn hypervisor_by_dmi(vendor: &str, product: &str) -> Option<&'static str> {
    let has = |needle: &str| vendor.contains(needle) || product.contains(needle);
    if has("QEMU") {
        Some("qemu")
    } else if has("KVM") {
        Some("kvm")
    } else if has("VMware") {
        Some("vmware")
    } else if has("VirtualBox") || has("innotek") {
        Some("virtualbox")
    } else if has("Xen") {
        Some("xen")
    } else if vendor.contains("Microsoft") && product.contains("Virtual Machine") {
        Some("microsoft")
    } else if has("Parallels") {
        Some("parallels")
    } else if has("BHYVE") {
        Some("bhyve")
    } else if has("Bochs") {
        Some("bochs")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first processor of this lab's Firecracker guest's /proc/cpuinfo.
    const CPUINFO_EPYC: &str = "processor\t: 0\n\
        vendor_id\t: AuthenticAMD\n\
        cpu family\t: 26\n\
        model\t\t: 2\n\
        model name\t: AMD EPYC\n\
        stepping\t: 1\n\
        microcode\t: 0x1000065\n\
        cpu MHz\t\t: 2596.098\n\
        cache size\t: 1024 KB\n\
        physical id\t: 0\n\
        siblings\t: 2\n\
        core id\t\t: 0\n\
        cpu cores\t: 2\n\
        flags\t\t: fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 \
        clflush mmx fxsr sse sse2 ht syscall nx mmxext fxsr_opt pdpe1gb rdtscp lm constant_tsc \
        rep_good nopl xtopology nonstop_tsc cpuid extd_apicid tsc_known_freq pni pclmulqdq ssse3 \
        fma cx16 pcid sse4_1 sse4_2 x2apic movbe popcnt tsc_deadline_timer aes xsave avx f16c \
        rdrand hypervisor lahf_lm cmp_legacy cr8_legacy abm sse4a misalignsse 3dnowprefetch\n\
        bugs\t\t: sysret_ss_attrs null_seg spectre_v1 spectre_v2 spec_store_bypass srso\n\
        bogomips\t: 5192.19\n\
        power management:\n\
        \n\
        processor\t: 1\n\
        vendor_id\t: AuthenticAMD\n\
        model name\t: AMD EPYC\n";

    const CPUINFO_ARM64: &str = "processor\t: 0\n\
        BogoMIPS\t: 243.75\n\
        Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid\n\
        CPU implementer\t: 0x41\n\
        CPU architecture: 8\n\
        CPU variant\t: 0x3\n\
        CPU part\t: 0xd0c\n\
        CPU revision\t: 1\n";

    /// Lines of this machine's /proc/self/mountinfo, plus a bind mount with
    /// an escaped space.
    const MOUNTINFO: &str = "22 27 0:21 / /proc rw,relatime - proc proc rw\n\
        23 27 0:22 / /sys rw,relatime - sysfs sysfs rw\n\
        25 24 0:23 / /dev/shm rw,relatime - tmpfs tmpfs rw,size=24684092k\n\
        27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard,resv_strict,resuid=65534,resgid=65534\n\
        31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n\
        41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n\
        50 27 0:40 / /work rw,relatime shared:5 - xfs /dev/vdb rw\n\
        51 27 0:41 / /work\\040dir rw,relatime - btrfs /dev/vdc rw\n\
        52 50 0:42 / /work/tmp rw,relatime - tmpfs tmpfs rw\n\
        53 50 0:43 / /work/tmp rw,relatime - overlay overlay rw\n";

    /// This machine's /proc/self/cgroup: hybrid, controllers in v1.
    const CGROUP_HYBRID: &str = "9:name=systemd:/\n\
        8:pids:/\n\
        7:blkio:/\n\
        6:freezer:/\n\
        5:devices:/\n\
        4:memory:/process_api/8eee01a1a1122fadb6a362a1d3afafd7\n\
        3:cpuset:/\n\
        2:cpuacct:/\n\
        1:cpu:/\n\
        0::/\n";

    /// This machine's /proc/stat head.
    const STAT: &str = "cpu  3220 0 3625 79698 221 0 18 7 0 0\n\
        cpu0 1428 0 1618 40324 35 0 6 2 0 0\n\
        cpu1 1791 0 2007 39374 185 0 11 4 0 0\n\
        intr 123456 0 0\n\
        procs_running 3\n\
        procs_blocked 0\n";

    #[test]
    fn cpuinfo_model_mhz_and_flags() {
        assert_eq!(cpu_model(CPUINFO_EPYC).as_deref(), Some("AMD EPYC"));
        assert_eq!(cpuinfo_value(CPUINFO_EPYC, "cpu MHz"), Some("2596.098"));
        assert_eq!(cpu_flag(CPUINFO_EPYC, "hypervisor"), Some(true));
        assert_eq!(cpu_flag(CPUINFO_EPYC, "vmx"), Some(false));
        assert_eq!(
            cpu_model(CPUINFO_ARM64).as_deref(),
            Some("CPU implementer 0x41 part 0xd0c")
        );
        assert_eq!(cpu_flag(CPUINFO_ARM64, "hypervisor"), None);
        assert_eq!(
            cpu_model("cpu\t\t: POWER9 (raw), altivec supported\n").as_deref(),
            Some("POWER9 (raw), altivec supported")
        );
        assert_eq!(cpu_model(""), None);
    }

    #[test]
    fn cpu_lists() {
        assert_eq!(count_cpu_list("0-1\n"), Some(2));
        assert_eq!(count_cpu_list("0,2-3"), Some(3));
        assert_eq!(count_cpu_list("0-3,5"), Some(5));
        assert_eq!(count_cpu_list("0"), Some(1));
        assert_eq!(count_cpu_list(""), None);
        assert_eq!(count_cpu_list("3-1"), None);
        assert_eq!(count_cpu_list("x"), None);
    }

    #[test]
    fn choices() {
        assert_eq!(selected_choice("always [madvise] never\n"), Some("madvise"));
        assert_eq!(
            selected_choice("always defer defer+madvise [madvise] never\n"),
            Some("madvise")
        );
        assert_eq!(
            selected_choice("none voluntary (full) lazy \n"),
            Some("full")
        );
        assert_eq!(selected_choice("always madvise never"), None);
    }

    #[test]
    fn meminfo_and_os_release() {
        let meminfo = "MemTotal:       24684092 kB\nMemFree:        23752780 kB\n";
        assert_eq!(meminfo_kib(meminfo, "MemTotal"), Some(24_684_092));
        assert_eq!(meminfo_kib(meminfo, "MemAvailable"), None);
        let debian = "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nNAME=\"Debian GNU/Linux\"\n";
        assert_eq!(
            os_release_name(debian).as_deref(),
            Some("Debian GNU/Linux 12 (bookworm)")
        );
        assert_eq!(
            os_release_name("NAME='Alpine Linux'\n").as_deref(),
            Some("Alpine Linux")
        );
        assert_eq!(
            os_release_name("PRETTY_NAME=\"A \\\"quoted\\\" OS\"").as_deref(),
            Some("A \"quoted\" OS")
        );
        assert_eq!(os_release_name("ID=debian\n"), None);
        let codename = "VERSION_CODENAME=bookworm\nID=debian\n";
        assert_eq!(
            os_release_field(codename, "VERSION_CODENAME").as_deref(),
            Some("bookworm")
        );
        assert_eq!(os_release_field(debian, "VERSION_CODENAME"), None);
    }

    #[test]
    fn preempt_precedence() {
        let dynamic = "#1 SMP PREEMPT_DYNAMIC @0";
        assert_eq!(
            preempt_model(Some("none voluntary (full) lazy\n"), dynamic, "", None),
            "full (dynamic)"
        );
        assert_eq!(
            preempt_model(None, dynamic, "quiet preempt=voluntary", None),
            "voluntary (dynamic)"
        );
        assert_eq!(
            preempt_model(None, dynamic, "quiet -- preempt=none", None),
            "dynamic"
        );
        assert_eq!(
            preempt_model(
                None,
                dynamic,
                "preempt=bogus",
                Some("CONFIG_PREEMPT_VOLUNTARY=y\n")
            ),
            "voluntary (dynamic)"
        );
        assert_eq!(preempt_model(None, dynamic, "", None), "dynamic");
        assert_eq!(
            preempt_model(None, "#1 SMP PREEMPT_RT Thu Jan 1", "", None),
            "rt"
        );
        assert_eq!(
            preempt_model(None, "#1 SMP PREEMPT Thu Jan 1", "", None),
            "full"
        );
        let none =
            "# CONFIG_PREEMPT_VOLUNTARY is not set\nCONFIG_PREEMPT_NONE=y\nCONFIG_PREEMPT_RCU=y\n";
        assert_eq!(
            preempt_model(None, "#1 SMP Thu Jan 1", "", Some(none)),
            "none"
        );
        assert_eq!(
            preempt_model(None, "#1 SMP Thu Jan 1", "", None),
            "none or voluntary"
        );
        assert_eq!(preempt_model(None, "", "", None), "");
    }

    #[test]
    fn mounts() {
        let fs = |path: &str| mount_fs_type(MOUNTINFO, Path::new(path));
        assert_eq!(fs("/work/main").as_deref(), Some("xfs"));
        assert_eq!(fs("/work").as_deref(), Some("xfs"));
        assert_eq!(fs("/workspace").as_deref(), Some("ext4"));
        assert_eq!(fs("/work dir/x").as_deref(), Some("btrfs"));
        assert_eq!(fs("/work/tmp/a").as_deref(), Some("overlay"));
        assert_eq!(fs("/sys/fs/cgroup/unified").as_deref(), Some("cgroup2"));
        assert_eq!(mount_fs_type("", Path::new("/")), None);
    }

    #[test]
    fn cgroups() {
        assert_eq!(
            cgroup("0::/user.slice/user-1000.slice/session-2.scope\n"),
            "/user.slice/user-1000.slice/session-2.scope"
        );
        assert_eq!(
            cgroup(CGROUP_HYBRID),
            "9:name=systemd:/; 8:pids:/; 7:blkio:/; 6:freezer:/; 5:devices:/; \
             4:memory:/process_api/8eee01a1a1122fadb6a362a1d3afafd7; 3:cpuset:/; 2:cpuacct:/; 1:cpu:/; 0::/"
        );
        assert_eq!(
            cgroup("2:cpu,cpuacct:/docker/abc\n1:name=systemd:/docker/abc\n"),
            "2:cpu,cpuacct:/docker/abc; 1:name=systemd:/docker/abc"
        );
        assert_eq!(cgroup(""), "");
    }

    #[test]
    fn stat_lines() {
        let times = cpu_times(STAT).unwrap();
        assert_eq!(
            times,
            CpuTimes {
                user: 3220,
                nice: 0,
                system: 3625,
                idle: 79698,
                iowait: 221,
                irq: 0,
                softirq: 18,
                steal: 7
            }
        );
        assert_eq!(
            cpu_times("cpu  1 2 3 4\n").map(|t| (t.idle, t.steal)),
            Some((4, 0))
        );
        assert_eq!(cpu_times("cpu0 1 2 3 4\n"), None);
        assert_eq!(procs_running(STAT), Some(3));
        assert_eq!(procs_running("procs_running x\n"), None);
        assert_eq!(procs_running("cpu  1 2 3 4\n"), None);
        assert_eq!(cpu_times("cpu  1 2\n"), None);
    }

    #[test]
    fn hypervisors() {
        assert_eq!(
            virtualization(Some(true), Some("KVMKVMKVM\0\0\0"), "", ""),
            "kvm"
        );
        assert_eq!(
            virtualization(
                Some(true),
                Some("TCGTCGTCGTCG"),
                "QEMU",
                "Standard PC (Q35 + ICH9, 2009)"
            ),
            "qemu-tcg"
        );
        assert_eq!(
            virtualization(
                Some(true),
                None,
                "QEMU",
                "Standard PC (i440FX + PIIX, 1996)"
            ),
            "qemu"
        );
        assert_eq!(
            virtualization(
                Some(true),
                Some("VMwareVMware"),
                "VMware, Inc.",
                "VMware Virtual Platform"
            ),
            "vmware"
        );
        assert_eq!(
            virtualization(None, None, "innotek GmbH", "VirtualBox"),
            "virtualbox"
        );
        assert_eq!(
            virtualization(Some(true), Some("NewHvNewHv"), "", ""),
            "hypervisor (unknown)"
        );
        assert_eq!(
            virtualization(Some(false), None, "Dell Inc.", "PowerEdge R650"),
            "none"
        );
        assert_eq!(virtualization(None, None, "Amazon EC2", "m7g.metal"), "");
    }

    #[test]
    fn kernel_parameters() {
        let cmdline = "mitigations=auto,no_guest_host console=ttyS0 preempt=full rdinit=/init -- --preempt=none";
        assert_eq!(cmdline_param(cmdline, "preempt"), Some("full"));
        assert_eq!(
            cmdline_param(cmdline, "mitigations"),
            Some("auto,no_guest_host")
        );
        assert_eq!(cmdline_param(cmdline, "quiet"), None);
    }
}
