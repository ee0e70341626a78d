//! The smallest kernel configuration that boots kbench's guest: a base
//! (`tinyconfig`, `defconfig`, or the user's own `.config`) with the
//! [`FRAGMENT`] merged in by the kernel's own `merge_config.sh`, then
//! `make olddefconfig`, built out of tree (`O=`), so the user's tree is
//! never written. Every option of the fragment is checked in the result:
//! one Kconfig refused (a dependency missing in this version) is named,
//! instead of a guest that hangs at boot.

use crate::command::run;
use crate::error::{Result, VmError, invalid};
use kbench_catalog::programs::find_program;
use std::path::{Path, PathBuf};

/// What the guest needs, each option with why. Lines are `CONFIG_X=y`
/// after a `#` comment saying what for.
pub const FRAGMENT: &str = "\
# The guest is x86-64 and uses every CPU qemu gives it.
CONFIG_64BIT=y
CONFIG_SMP=y
# Messages and the two serial ports: ttyS0 is the console (the serial log),
# ttyS1 the results channel.
CONFIG_PRINTK=y
CONFIG_TTY=y
CONFIG_SERIAL_8250=y
CONFIG_SERIAL_8250_CONSOLE=y
# kbench is /init of an initramfs (an uncompressed cpio).
CONFIG_BLK_DEV_INITRD=y
CONFIG_BINFMT_ELF=y
CONFIG_BINFMT_SCRIPT=y
# The file systems PID 1 mounts: /dev, /proc, /sys, /tmp and /run.
CONFIG_DEVTMPFS=y
CONFIG_PROC_FS=y
CONFIG_SYSFS=y
CONFIG_TMPFS=y
CONFIG_SHMEM=y
# Powering off at the end: without ACPI the guest halts and kbench waits
# for its timeout.
CONFIG_ACPI=y
# The counters (perf's software events) and the system monitors.
CONFIG_PERF_EVENTS=y
CONFIG_SCHEDSTATS=y
CONFIG_PSI=y
# What the built-in benchmarks call: futexes, polling, timers, signals,
# shared memory, threads, users, locks, asynchronous I/O.
CONFIG_FUTEX=y
CONFIG_EPOLL=y
CONFIG_EVENTFD=y
CONFIG_SIGNALFD=y
CONFIG_TIMERFD=y
CONFIG_POSIX_TIMERS=y
CONFIG_HIGH_RES_TIMERS=y
CONFIG_SYSVIPC=y
CONFIG_MULTIUSER=y
CONFIG_FILE_LOCKING=y
CONFIG_AIO=y
CONFIG_IO_URING=y
CONFIG_SECCOMP=y
CONFIG_CGROUPS=y
# Sockets: Unix, and TCP/UDP on loopback.
CONFIG_NET=y
CONFIG_UNIX=y
CONFIG_INET=y
# A rootfs disk for profiles (`kbench vm --rootfs`): virtio-blk on PCI,
# ext4.
CONFIG_PCI=y
CONFIG_VIRTIO_MENU=y
CONFIG_VIRTIO_PCI=y
CONFIG_BLOCK=y
CONFIG_BLK_DEV=y
CONFIG_VIRTIO_BLK=y
CONFIG_EXT4_FS=y
";

/// Where a configuration starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigBase {
    /// `make tinyconfig`: the smallest kernel, plus the fragment.
    Tiny,
    /// `make defconfig`: the architecture's default.
    Default,
    /// The user's own `.config` (`make olddefconfig` brings it to the tree).
    File(PathBuf),
}

impl ConfigBase {
    /// "tiny", "default", or a path to a `.config`.
    pub fn parse(text: &str) -> ConfigBase {
        match text {
            "tiny" => ConfigBase::Tiny,
            "default" => ConfigBase::Default,
            path => ConfigBase::File(PathBuf::from(path)),
        }
    }
}

/// What `CONFIG_DEBUG_FORCE_FUNCTION_ALIGN_64B` needs: the kernel's own
/// remedy for the few percent a neutral commit can move a benchmark by
/// shifting the alignment of functions it does not touch.
pub const ALIGN_FUNCTIONS: &str = "\
# Every function starts on 64 bytes, so that a commit cannot move the
# alignment of code it does not touch (a debug option: EXPERT first).
CONFIG_EXPERT=y
CONFIG_DEBUG_FORCE_FUNCTION_ALIGN_64B=y
";

/// The options of a fragment as (name, value).
pub fn fragment_options(fragment: &str) -> Vec<(&str, &str)> {
    fragment
        .lines()
        .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
        .filter_map(|line| line.split_once('='))
        .collect()
}

/// The programs a kernel build needs, with their Debian packages; the
/// first one missing, named.
pub fn check_build_tools() -> Result<()> {
    for (tool, package) in [
        ("make", "make"),
        ("gcc", "gcc"),
        ("flex", "flex"),
        ("bison", "bison"),
        ("bc", "bc"),
    ] {
        if find_program(tool).is_none() {
            invalid!(
                "{tool} was not found: building a kernel needs it (apt-get install {package})"
            );
        }
    }
    Ok(())
}

/// Writes the guest's configuration of `tree` to `build/.config`
/// (`build` is made if missing), with `extra` (more fragment lines, as
/// [`ALIGN_FUNCTIONS`]) merged in after [`FRAGMENT`]; returns its path.
pub fn write(tree: &Path, build: &Path, base: &ConfigBase, extra: &str) -> Result<PathBuf> {
    for file in ["Makefile", "Kconfig", "scripts/kconfig/merge_config.sh"] {
        if !tree.join(file).is_file() {
            invalid!(
                "{} is not a Linux source tree: it has no {file}",
                tree.display()
            );
        }
    }
    check_build_tools()?;
    std::fs::create_dir_all(build).map_err(VmError::os(format!("creating {}", build.display())))?;
    let build = std::path::absolute(build).map_err(VmError::os("resolving the build directory"))?;
    let tree_text = tree.to_string_lossy();
    let out = format!("O={}", build.display());
    let config = build.join(".config");
    match base {
        ConfigBase::Tiny => drop(run("make", &["-C", &tree_text, &out, "tinyconfig"], None)?),
        ConfigBase::Default => drop(run("make", &["-C", &tree_text, &out, "defconfig"], None)?),
        ConfigBase::File(path) => {
            std::fs::copy(path, &config).map_err(VmError::os(format!(
                "copying the config {}",
                path.display()
            )))?;
        }
    }
    let fragment = build.join("kbench-guest.config");
    std::fs::write(&fragment, format!("{FRAGMENT}{extra}"))
        .map_err(VmError::os(format!("writing {}", fragment.display())))?;
    let merge = tree.join("scripts/kconfig/merge_config.sh");
    run(
        "sh",
        &[
            &merge.to_string_lossy(),
            "-m",
            "-O",
            &build.to_string_lossy(),
            &config.to_string_lossy(),
            &fragment.to_string_lossy(),
        ],
        None,
    )?;
    run("make", &["-C", &tree_text, &out, "olddefconfig"], None)?;
    check(&config, extra)?;
    Ok(config)
}

/// Checks that the configuration at `config` (after `olddefconfig`) holds
/// every option of [`FRAGMENT`] and `extra`; the ones it lost are named.
pub fn check(config: &Path, extra: &str) -> Result<()> {
    let written = std::fs::read_to_string(config)
        .map_err(VmError::os(format!("reading {}", config.display())))?;
    let refused = refused(&written, extra);
    if !refused.is_empty() {
        invalid!(
            "this tree's Kconfig did not keep {} that kbench's guest needs (a dependency is \
             missing, or the option does not exist in this version); without them the guest \
             cannot boot or run kbench. The configuration is in {}",
            refused.join(", "),
            config.display()
        );
    }
    Ok(())
}

/// The options of the fragment and `extra` that `config` does not set as
/// asked.
fn refused(config: &str, extra: &str) -> Vec<String> {
    fragment_options(FRAGMENT)
        .into_iter()
        .chain(fragment_options(extra))
        .filter(|(name, value)| {
            !config
                .lines()
                .any(|line| line.split_once('=') == Some((name, value)))
        })
        .map(|(name, value)| format!("{name}={value}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_option_of_the_fragment_says_what_it_is_for() {
        let options = fragment_options(FRAGMENT);
        assert!(options.len() > 30, "{options:?}");
        assert!(
            options
                .iter()
                .all(|(name, value)| name.starts_with("CONFIG_") && *value == "y")
        );
        let first = FRAGMENT.lines().next().unwrap();
        assert!(
            first.starts_with("# "),
            "a comment opens the fragment: {first}"
        );
    }

    #[test]
    fn options_not_kept_are_named() {
        let mut config: String = fragment_options(FRAGMENT)
            .iter()
            .map(|(name, value)| format!("{name}={value}\n"))
            .collect();
        assert!(refused(&config, "").is_empty());
        config = config.replace("CONFIG_ACPI=y\n", "# CONFIG_ACPI is not set\n");
        assert_eq!(refused(&config, ""), ["CONFIG_ACPI=y"]);
        assert_eq!(
            refused(&config, ALIGN_FUNCTIONS),
            [
                "CONFIG_ACPI=y",
                "CONFIG_EXPERT=y",
                "CONFIG_DEBUG_FORCE_FUNCTION_ALIGN_64B=y"
            ]
        );
    }

    #[test]
    fn a_directory_that_is_no_kernel_tree_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let error = write(dir.path(), &dir.path().join("build"), &ConfigBase::Tiny, "")
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("is not a Linux source tree: it has no Makefile"),
            "{error}"
        );
    }
}
