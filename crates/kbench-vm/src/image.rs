//! The guest's initramfs: the kbench binary as /init, what it needs to
//! run, and the job.
//!
//! Which binary ([`super::guest_binary`]): the running one for a guest of
//! the host's architecture, so `kbench vm run` works from a plain `cargo
//! build` with no second, static build the user must know about, and the
//! guest runs exactly the code that runs on the host; an arm64 guest on an
//! x86_64 host needs a static cross-build. A dynamically
//! linked binary goes in with its loader and libraries (read from its ELF
//! headers, at the paths the guest's loader searches); a static one
//! (`-C target-feature=+crt-static`) goes in alone.
//!
//! The kernel unpacks concatenated cpio archives in order, so the large part
//! (binary and libraries) is built once and each boot appends a small
//! archive holding only its job.

use super::console_frames::{ConsoleBoot, GuestPush};
use super::elf;
use super::error::{Result, VmError, invalid};
use super::guest_binary;
use super::initramfs::Archive;
use super::kernel_image::{ImageArch, KernelImage};
use super::modules;
use kbench_measure::agent::AgentJob;
use std::path::{Path, PathBuf};

/// Where the guest finds its job.
pub const JOB_PATH: &str = "/kbench/job.json";

/// When this file is in the initramfs, the guest waits for the host's start
/// signal before it runs its job ([`super::guest`]): a duet's two guests
/// boot in different times, and start measuring together.
pub const GATE_PATH: &str = "/kbench/gate";

/// When this file is in the initramfs, the guest has a `--rootfs` disk: it
/// loads the modules in [`MODULES_PATH`], mounts /dev/vda at
/// [`ROOTFS_MOUNT`] and runs its job chrooted there ([`super::guest`]).
pub const ROOTFS_PATH: &str = "/kbench/rootfs";

/// When this file is in the initramfs, the guest is a console guest (a
/// LAVA job's boot): it holds the boot's [`ConsoleBoot`], and the guest
/// frames its results on the console ([`super::guest`]).
pub const CONSOLE_PLAN_PATH: &str = "/kbench/console.json";

/// A console guest's push to a kbench server
/// ([`crate::console_frames::GuestPush`]), when it has one.
pub const PUSH_PLAN_PATH: &str = "/kbench/push.json";

/// The kernel modules the guest loads first, in their names' order.
pub const MODULES_PATH: &str = "/kbench/modules";

/// Where a `--rootfs` guest mounts its disk.
pub const ROOTFS_MOUNT: &str = "/rootfs";

/// The user's profile files the guest's tests need (`--profiles`); the
/// guest points `KBENCH_PROFILES` at them.
pub const PROFILES_PATH: &str = "/kbench/profiles";

/// The part of the initramfs common to every boot.
#[derive(Debug, Clone)]
pub struct GuestImage {
    base: Vec<u8>,
    /// Host paths of the files besides the binary (loader, libraries).
    pub runtime_files: Vec<PathBuf>,
}

impl GuestImage {
    /// Builds the base from the kbench binary at `exe`, which must run in a
    /// guest of `arch` ([`guest_binary::check`]); `kernel_config` is
    /// the kernel's build configuration, if known, kept as
    /// /boot/config-RELEASE for the guest's snapshot (preempt model).
    /// The guest loads `modules` first (host paths, in load order: the
    /// drivers of its disk and network when the kernel builds them as
    /// modules); with `rootfs` it then mounts a `--rootfs` disk.
    pub fn build(
        exe: &Path,
        arch: ImageArch,
        kernel_config: Option<(&str, &Path)>,
        modules: &[PathBuf],
        rootfs: bool,
    ) -> Result<GuestImage> {
        let cannot = || {
            format!(
                "cannot build the guest's initramfs from the kbench binary {}",
                exe.display()
            )
        };
        let read = |path: &Path| {
            std::fs::read(path)
                .map_err(VmError::os(format!("reading {}", path.display())))
                .map_err(|e| e.at(cannot()))
        };
        let binary = read(exe)?;
        guest_binary::check(exe, &binary, arch).map_err(|e| e.at(cannot()))?;
        let runtime_files = elf::runtime_files(&binary).map_err(|e| e.at(cannot()))?;
        let mut archive = Archive::new();
        for dir in ["/proc", "/sys", "/dev", "/tmp", "/kbench", "/root"] {
            archive.dir(dir);
        }
        // The kernel opens /dev/console as init's stdin, stdout and stderr
        // before anything is mounted: messages then reach the serial log.
        archive.char_dev("/dev/console", 0o600, 5, 1);
        archive.file("/init", 0o755, binary);
        for path in &runtime_files {
            let bytes = read(path)?;
            archive.file(&path.to_string_lossy(), 0o755, bytes);
        }
        archive.file(
            "/etc/os-release",
            0o644,
            b"PRETTY_NAME=\"kbench guest (initramfs)\"\nNAME=kbench\nID=kbench\n".to_vec(),
        );
        if let Some((release, path)) = kernel_config
            && let Ok(config) = std::fs::read(path)
        {
            archive.file(&format!("/boot/config-{release}"), 0o644, config);
        }
        if !modules.is_empty() {
            archive.dir(MODULES_PATH);
        }
        for path in modules {
            let name = path.file_name().expect("a module file").to_string_lossy();
            archive.file(&format!("{MODULES_PATH}/{name}"), 0o644, read(path)?);
        }
        if rootfs {
            archive.dir(ROOTFS_MOUNT);
            archive.file(ROOTFS_PATH, 0o644, Vec::new());
        }
        Ok(GuestImage {
            base: archive.to_bytes(),
            runtime_files,
        })
    }

    /// [`GuestImage::build`] for `kernel`: with its build configuration
    /// when it is beside it (the snapshot's preemption model), and with
    /// the kernel's virtio modules its guest needs for a `rootfs` disk or
    /// its `network` (a LAVA guest's push). A kernel whose network driver
    /// is a module not beside it is refused for the network.
    pub fn of_kernel(
        exe: &Path,
        arch: ImageArch,
        kernel: &KernelImage,
        rootfs: bool,
        network: bool,
    ) -> Result<GuestImage> {
        let config = kernel
            .release
            .as_deref()
            .and_then(|release| find_kernel_config(&kernel.path, release).map(|c| (release, c)));
        let config = config
            .as_ref()
            .map(|(release, path)| (*release, path.as_path()));
        let config_path = config.map(|(_, path)| path);
        let stored = kernel.path.with_file_name(modules::MODULES_DIR);
        let carried = match (rootfs, network) {
            (true, _) => modules::for_kernel(&kernel.path, config_path)?,
            (false, true) if stored.is_dir() => modules::stored(&stored)?,
            (false, _) => Vec::new(),
        };
        let missing = modules::missing(&stored, config_path);
        if network && missing.contains(&"virtio_net") {
            invalid!(
                "the guests of {} cannot reach the network (to push to --server): its drivers {} \
                 are modules that are not beside it; fetch the kernel again (`kbench kernel \
                 fetch`, which now keeps them) or build it with them built in (=y)",
                kernel.path.display(),
                missing.join(", ")
            );
        }
        GuestImage::build(exe, arch, config, &carried, rootfs)
    }

    /// Adds the user's profile `files` under [`PROFILES_PATH`] (an archive
    /// of their own after the base: the kernel unpacks them in order).
    pub fn with_profiles(mut self, files: &[PathBuf]) -> Result<GuestImage> {
        if files.is_empty() {
            return Ok(self);
        }
        let mut archive = Archive::new();
        archive.dir(PROFILES_PATH);
        for path in files {
            let bytes =
                std::fs::read(path).map_err(VmError::os(format!("reading {}", path.display())))?;
            let name = path.file_name().expect("a profile file").to_string_lossy();
            archive.file(&format!("{PROFILES_PATH}/{name}"), 0o644, bytes);
        }
        self.base.extend(archive.to_bytes());
        Ok(self)
    }

    /// The whole initramfs for one boot: the base, then the job (and the
    /// start gate when `gated`).
    pub fn initramfs(&self, job: &AgentJob, gated: bool) -> Vec<u8> {
        let mut bytes = self.base.clone();
        let gate = gated.then(|| (GATE_PATH, Vec::new()));
        bytes.extend(boot_archive(job, gate.into_iter().collect()));
        bytes
    }

    /// The part common to every boot: the binary, its libraries, the
    /// profiles.
    pub fn base(&self) -> &[u8] {
        &self.base
    }

    /// The archive of one boot of a console guest (a LAVA job's): its job
    /// and its plan, which the kernel unpacks after the [`GuestImage::base`]
    /// (compressed or not: Linux unpacks concatenated archives, each
    /// compressed or not).
    pub fn console_archive(
        &self,
        job: &AgentJob,
        plan: &ConsoleBoot,
        push: Option<&GuestPush>,
    ) -> Vec<u8> {
        let mut extra = vec![(CONSOLE_PLAN_PATH, to_json(plan))];
        extra.extend(push.map(|push| (PUSH_PLAN_PATH, to_json(push))));
        boot_archive(job, extra)
    }

    /// Size of the common part, in bytes.
    pub fn base_len(&self) -> usize {
        self.base.len()
    }
}

/// An archive of a boot's job and `extra` files (each a path and its
/// bytes).
fn boot_archive(job: &AgentJob, extra: Vec<(&str, Vec<u8>)>) -> Vec<u8> {
    let mut archive = Archive::new();
    archive.file(JOB_PATH, 0o644, to_json(job));
    for (path, contents) in extra {
        archive.file(path, 0o644, contents);
    }
    archive.to_bytes()
}

fn to_json(value: &impl serde::Serialize) -> Vec<u8> {
    serde_json::to_vec(value).expect("kbench's own types serialize")
}

/// The kernel's configuration next to its image, if there is one: Debian's
/// and kbench's cache layout (`config-RELEASE` beside `vmlinuz-RELEASE`), or
/// a kernel build tree (`.config` three levels above arch/x86/boot/bzImage).
pub fn find_kernel_config(kernel: &Path, release: &str) -> Option<PathBuf> {
    let dir = kernel.parent()?;
    [
        dir.join(format!("config-{release}")),
        dir.join("config"),
        dir.join("../../../.config"),
    ]
    .into_iter()
    .find(|path| path.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::initramfs::{Entry, read_archive};
    use kbench_measure::plan::SamplingPlan;
    use kbench_model::TestKey;

    #[test]
    fn holds_the_binary_its_libraries_and_the_job() {
        let exe = std::env::current_exe().unwrap();
        let image = GuestImage::build(&exe, ImageArch::host(), None, &[], false).unwrap();
        let job = AgentJob {
            snapshot: true,
            tests: vec![TestKey::new("syscall-null")],
            plan: SamplingPlan::default(),
            tools: vec![],
        };
        let bytes = image.initramfs(&job, false);
        let entries = read_archive(&bytes).unwrap();
        let find = |name: &str| entries.iter().find(|(n, _, _)| n == name);
        let (_, mode, Entry::File(init)) = find("init").expect("/init") else {
            panic!("/init is not a file")
        };
        assert_eq!(*mode, 0o100_755);
        assert_eq!(init.len() as u64, exe.metadata().unwrap().len());
        assert_eq!(find("dev/console").unwrap().2, Entry::CharDev(5, 1));
        for dir in ["proc", "sys", "tmp"] {
            assert_eq!(find(dir).unwrap().2, Entry::Dir, "{dir}");
        }
        for file in &image.runtime_files {
            let name = file.to_string_lossy();
            assert!(find(name.trim_start_matches('/')).is_some(), "{name}");
        }
        let (_, _, Entry::File(json)) = find("kbench/job.json").unwrap() else {
            panic!("the job is not a file")
        };
        let back: AgentJob = serde_json::from_slice(json).unwrap();
        assert_eq!(back, job);
        assert!(image.base_len() < bytes.len());
        assert!(find("kbench/gate").is_none(), "an ungated boot has no gate");
        assert!(find("kbench/rootfs").is_none(), "no --rootfs, no disk");
        let gated = read_archive(&image.initramfs(&job, true)).unwrap();
        assert!(
            gated
                .iter()
                .any(|(n, _, e)| n == "kbench/gate" && *e == Entry::File(vec![]))
        );
    }

    #[test]
    fn a_rootfs_guest_carries_its_modules() {
        let dir = tempfile::tempdir().unwrap();
        let module = dir.path().join("01-virtio_blk.ko");
        std::fs::write(&module, b"\x7fELF module").unwrap();
        let exe = std::env::current_exe().unwrap();
        let image = GuestImage::build(&exe, ImageArch::host(), None, &[module], true).unwrap();
        let job = AgentJob {
            snapshot: true,
            tests: vec![],
            plan: SamplingPlan::default(),
            tools: vec![],
        };
        let entries = read_archive(&image.initramfs(&job, false)).unwrap();
        let find = |name: &str| entries.iter().find(|(n, _, _)| n == name).map(|e| &e.2);
        assert_eq!(find("kbench/rootfs"), Some(&Entry::File(vec![])));
        assert_eq!(find("rootfs"), Some(&Entry::Dir));
        assert_eq!(
            find("kbench/modules/01-virtio_blk.ko"),
            Some(&Entry::File(b"\x7fELF module".to_vec()))
        );
    }

    #[test]
    fn a_missing_binary_is_a_clear_error() {
        let error = GuestImage::build(
            Path::new("/no/such/kbench"),
            ImageArch::host(),
            None,
            &[],
            false,
        )
        .unwrap_err();
        let text = format!("{error:#}");
        assert!(
            text.contains("cannot build the guest's initramfs"),
            "{text}"
        );
        assert!(text.contains("/no/such/kbench"), "{text}");
    }
}
