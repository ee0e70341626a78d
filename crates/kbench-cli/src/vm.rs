//! Flags of `kbench vm` and `kbench kernel`.

use super::common::{SamplingArgs, UploadArgs};
use super::results::CompareArgs;
use clap::{Args, Subcommand};
use kbench_analysis::thresholds::{DEFAULT_THRESHOLD, Thresholds};
use kbench_catalog::suite::DEFAULT_SUITE;
use kbench_vm::kernel_fetch::KernelCache;
use kbench_vm::kernel_image::ImageArch;
use kbench_vm::qemu::AccelChoice;
use kbench_vm::{LabRequest, MachineRequest};
use std::path::PathBuf;

/// Run benchmarks in a VM that boots a given kernel with kbench as its init
#[derive(Debug, Subcommand)]
pub enum VmCommand {
    /// Boot a kernel in qemu with kbench as its init and measure in it
    Run(VmRunArgs),
    /// Compare kernels: boot them in turn (A B A B ...) for --rounds rounds, or both at once
    /// (--duet), then print the comparison
    Compare(VmCompareArgs),
}

const AFTER_HELP: &str = "The guest is the kernel with an initramfs holding this kbench binary \
(and its libraries) as /init and the job; every sample streams to the host over the guest's \
second serial port and is stored at once. All tests of a round run in one boot. KVM is used when \
/dev/kvm works (a probe boot tells); else qemu emulates (TCG), which the output and the stored \
runs say: absolute numbers are then not the host's, but kernel-to-kernel differences are real \
code-path differences.\n\nA guest that panics or hangs is killed after --timeout seconds of \
silence; its serial log is kept next to the database (vm-logs/) and its last lines are shown; \
the run is marked failed and the samples before are kept.\n\nA kernel of your own needs \
(=y): BLK_DEV_INITRD, DEVTMPFS, TMPFS, SERIAL_8250 and SERIAL_8250_CONSOLE; Debian's cloud \
kernels (`kbench kernel fetch`) have them.";

#[derive(Debug, Args)]
#[command(
    after_help = format!("Examples:\n  kbench vm run --kernel ./arch/x86/boot/bzImage quick --as 6.10-rc5 --into v610\n  \
kbench vm run --kernel 6.1.0-57-cloud-amd64 syscall-null pipe-lat --rounds 1\n\n{AFTER_HELP}")
)]
pub struct VmRunArgs {
    /// The kernel: a bzImage or arm64 Image path, or the release of a kernel from `kbench kernel
    /// fetch`
    #[arg(long, value_name = "PATH|RELEASE")]
    pub kernel: String,

    /// Suites, benchmark ids or tests with options, e.g. quick, pipe-lat, 'ctxsw[procs=8,size=16]'
    #[arg(value_name = "NAME", default_value = DEFAULT_SUITE)]
    pub names: Vec<String>,

    /// Identifier of this kernel's column (default: the guest kernel's release)
    #[arg(long = "as", value_name = "IDENTIFIER")]
    pub identifier: Option<String>,

    /// Result set to store into
    #[arg(long, value_name = "SET", default_value = "default")]
    pub into: String,

    /// Boots of the kernel, each a round running every test once
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub rounds: u32,

    #[command(flatten)]
    pub sampling: SamplingArgs,

    #[command(flatten)]
    pub vm: VmOptions,

    #[command(flatten)]
    pub upload: UploadArgs,

    /// Print the run's result as JSON on stdout (schema kbench.run/1)
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
#[command(
    after_help = format!("Example:\n  kbench kernel fetch debian:6.1 debian:6.12\n  \
kbench vm compare --kernel 6.1.0-57-cloud-amd64 --kernel 6.12.117+deb12-cloud-amd64 quick --rounds 3 --into deb\n\n\
Rounds interleave the kernels (round 1: A, B; round 2: A, B; ...) so that drift of the machine \
cancels out; compare treats the round as the unit of replication.\n\n\
With --duet the two kernels boot at the same time, each guest (one vCPU) in a qemu pinned to a \
host CPU of its own, which one drawn per block: one boot of each per test and block, --blocks \
blocks. Each guest waits until both have booted, and both start on one signal. Both then see \
the same interference, and compare pairs them block by block \
(Bulej et al., \"Duet Benchmarking\", ICPE 2020). Single-task tests only (the syscall, file and \
memory families).\n\n{AFTER_HELP}")
)]
pub struct VmCompareArgs {
    #[command(flatten)]
    pub compared: ComparedKernels,

    /// Result set to store into
    #[arg(long, value_name = "SET", default_value = "default")]
    pub into: String,

    /// Rounds; each boots every kernel once, in --kernel order
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=100),
          conflicts_with = "duet")]
    pub rounds: u32,

    /// Boot the two kernels at once, each on a host CPU of its own, one test per boot, and pair
    /// them block by block (see below)
    #[arg(long)]
    pub duet: bool,

    /// Blocks per test with --duet; each boots both kernels once
    #[arg(long, requires = "duet", value_parser = clap::value_parser!(u32).range(6..=200))]
    pub blocks: Option<u32>,

    #[command(flatten)]
    pub sampling: SamplingArgs,

    #[command(flatten)]
    pub vm: VmOptions,

    /// Format of the comparison printed at the end, as for `kbench compare`
    #[arg(long, default_value = "bars")]
    pub format: String,

    /// Practical threshold in percent for the comparison's verdicts, per test too, as for
    /// `kbench compare`
    #[arg(long, value_name = "PERCENT|TEST=PERCENT,..", default_value = DEFAULT_THRESHOLD, value_parser = Thresholds::parse, env = "KBENCH_THRESHOLD")]
    pub threshold: Thresholds,
}

impl VmCompareArgs {
    /// The `kbench compare` of what this command stored: the kernels'
    /// `identifiers` against the first, in this command's format and
    /// thresholds.
    pub fn comparison(&self, identifiers: &[String]) -> CompareArgs {
        CompareArgs {
            set: self.into.clone(),
            identifiers: identifiers[1..].to_vec(),
            baseline: Some(identifiers[0].clone()),
            format: self.format.clone(),
            by: None,
            baseline_level: None,
            threshold: self.threshold.clone(),
            fail_on_regression: false,
            metric: None,
            all_rows: false,
            output: None,
            color: "auto".to_string(),
        }
    }
}

/// The kernels a comparison boots and the tests it runs (`vm compare`,
/// `lava job`).
#[derive(Debug, Args)]
pub struct ComparedKernels {
    /// A kernel (bzImage or arm64 Image path, or cached release); give two or more of one
    /// architecture, the first is the baseline
    #[arg(long = "kernel", value_name = "PATH|RELEASE", required = true)]
    pub kernels: Vec<String>,

    /// Suites, benchmark ids or tests with options
    #[arg(value_name = "NAME", default_value = DEFAULT_SUITE)]
    pub names: Vec<String>,

    /// Identifiers, one per --kernel in the same order (default: each kernel's release)
    #[arg(long = "as", value_name = "IDENTIFIER")]
    pub identifiers: Vec<String>,
}

impl ComparedKernels {
    /// Each kernel with its identifier, checked ([`kbench_vm::lab::compared_kernels`]).
    pub fn pairs(&self) -> kbench_vm::Result<Vec<(String, Option<String>)>> {
        kbench_vm::lab::compared_kernels(&self.kernels, &self.identifiers)
    }
}

/// The machine the kernels boot in.
#[derive(Debug, Args)]
pub struct VmOptions {
    /// Guest memory, e.g. 1G or 512M (a number alone is MiB) [default: what the profiles ask
    /// for, at least 1G]
    #[arg(long, value_name = "SIZE")]
    pub memory: Option<String>,

    /// Guest CPUs (default: the CPUs this process may use)
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=256))]
    pub cpus: Option<u32>,

    /// Kill the guest when it has sent nothing for this many seconds, boot included
    #[arg(long, value_name = "SECONDS", default_value_t = 120.0)]
    pub timeout: f64,

    /// auto: KVM when /dev/kvm works in a probe boot, else TCG (emulated); or force kvm or tcg
    #[arg(long, default_value = "auto", value_parser = ["auto", "kvm", "tcg"])]
    pub accel: String,

    /// Extra kernel command line for the guest, e.g. "mitigations=off"
    #[arg(long, value_name = "ARGS")]
    pub append: Option<String>,

    /// The qemu to run (default: qemu-system-x86_64 on PATH, or qemu-system-aarch64 for arm64
    /// kernels)
    #[arg(long, value_name = "PATH", env = "KBENCH_QEMU")]
    pub qemu: Option<PathBuf>,

    #[command(flatten)]
    pub guest: GuestKbenchArg,

    #[command(flatten)]
    pub cache: CacheArg,

    #[command(flatten)]
    pub disk: GuestRootfsArgs,
}

/// The guest's root filesystem (shared by `vm` and `lava job`).
#[derive(Debug, Args)]
pub struct GuestRootfsArgs {
    /// An ext4 image, or a cached rootfs id, the guest mounts (virtio-blk, writes thrown away at
    /// the boot's end) and runs the tests chrooted in, after loading its kernel's virtio modules;
    /// a bzImage of your own needs CONFIG_VIRTIO_PCI=y and CONFIG_VIRTIO_BLK=y [default: for
    /// profile tests, the rootfs of their packages, built unless cached (`kbench rootfs`); none
    /// for built-ins]
    #[arg(long, value_name = "IMAGE|ID")]
    pub rootfs: Option<String>,

    #[command(flatten)]
    pub rootfs_cache: crate::rootfs::RootfsCacheArg,
}

impl VmOptions {
    /// The lab request of `vm run` and `vm compare`: `kernels` measured on
    /// the tests `names` into `set` with these flags.
    pub fn lab_request(
        &self,
        kernels: Vec<(String, Option<String>)>,
        (names, set): (&[String], &str),
        sampling: &SamplingArgs,
        profile_dirs: &[PathBuf],
    ) -> Result<LabRequest, kbench_measure::MeasureError> {
        Ok(LabRequest {
            plan: sampling.plan()?,
            keep_going: sampling.keep_going,
            names: names.to_vec(),
            profile_dirs: profile_dirs.to_vec(),
            kernels,
            set: set.to_string(),
            machine: self.machine(),
        })
    }

    /// The machine these flags ask for, as kbench-vm takes it.
    pub fn machine(&self) -> MachineRequest {
        MachineRequest {
            memory: self.memory.clone(),
            cpus: self.cpus,
            timeout: self.timeout,
            accel: AccelChoice::parse(&self.accel).expect("clap checked --accel"),
            append: self.append.clone(),
            qemu: self.qemu.clone(),
            guest_kbench: self.guest.guest_kbench.clone(),
            cache: self.cache.cache(),
            rootfs: self.disk.rootfs.clone(),
            rootfs_cache: self.disk.rootfs_cache.cache(),
        }
    }
}

/// Fetch and list kernels for `kbench vm`
#[derive(Debug, Subcommand)]
pub enum KernelCommand {
    /// Download Debian cloud kernels (linux-image-*-cloud-amd64 or -arm64) with apt into the cache
    #[command(
        after_help = "Examples:\n  kbench kernel fetch debian:6.1 debian:6.12   \
# the newest 6.1 and 6.12 cloud kernels apt knows\n  kbench kernel fetch debian:6.1.0-57          \
# one build\n  kbench kernel fetch --arch arm64 debian:6.1  # an arm64 guest's kernel\n\nPrints RELEASE and the full path of its vmlinuz per kernel; a kernel already \
cached is not downloaded again."
    )]
    Fetch(FetchArgs),
    /// List cached kernels: release and the full path of its vmlinuz
    List(ListArgs),
    /// Write the smallest configuration of a Linux tree that boots kbench's guest
    #[command(
        after_help = "Examples:\n  kbench kernel config ~/linux --build-dir ~/linux-build   \
# tinyconfig plus the guest's options\n  kbench kernel config ~/linux --base ~/my.config         \
# your config, with them merged in\n\nThe base (make tinyconfig, make defconfig, or your \
.config) gets the guest's fragment (serial console, initramfs, devtmpfs, ACPI power-off, perf \
events, the benchmarks' syscalls and sockets, virtio-blk and ext4 for --rootfs; the file \
kbench-guest.config beside .config says what each is for) merged in with the tree's \
merge_config.sh, then make olddefconfig, all out of tree (O=): the tree is not written. Every \
option is checked afterwards; one the tree's Kconfig dropped is named. Prints the .config's \
path; then `make -C TREE O=DIR bzImage` builds the kernel `kbench vm run --kernel` boots."
    )]
    Config(ConfigArgs),
}

#[derive(Debug, Args)]
pub struct ConfigArgs {
    /// The Linux source tree
    #[arg(value_name = "TREE")]
    pub tree: PathBuf,

    /// The build directory (O=) the .config is written to
    #[arg(
        long = "build-dir",
        value_name = "DIR",
        default_value = "kbench-guest-build"
    )]
    pub build_dir: PathBuf,

    /// tiny (make tinyconfig), default (make defconfig), or the path of a .config of yours
    #[arg(long, value_name = "tiny|default|FILE", default_value = "tiny")]
    pub base: String,

    /// Align every function to 64 bytes (CONFIG_DEBUG_FORCE_FUNCTION_ALIGN_64B), so that a commit
    /// cannot move the alignment of code it does not touch
    #[arg(long)]
    pub align_functions: bool,
}

impl ConfigArgs {
    /// Writes the configuration; its path.
    pub fn write(&self) -> kbench_vm::Result<PathBuf> {
        use kbench_vm::guest_config::{ALIGN_FUNCTIONS, ConfigBase, write};
        let extra = if self.align_functions {
            ALIGN_FUNCTIONS
        } else {
            ""
        };
        write(
            &self.tree,
            &self.build_dir,
            &ConfigBase::parse(&self.base),
            extra,
        )
    }
}

#[derive(Debug, Args)]
pub struct FetchArgs {
    /// Kernels as debian:VERSION, e.g. debian:6.1 debian:6.12
    #[arg(value_name = "KERNEL", required = true)]
    pub kernels: Vec<String>,

    /// The kernels' architecture: amd64 (x86_64) or arm64 (aarch64), whose packages apt knows on
    /// an amd64 host after `dpkg --add-architecture arm64 && apt-get update` [default: this
    /// machine's]
    #[arg(long, value_name = "ARCH", value_parser = parse_arch)]
    pub arch: Option<ImageArch>,

    #[command(flatten)]
    pub cache: CacheArg,
}

impl FetchArgs {
    /// `--arch`, else this machine's.
    pub fn arch(&self) -> ImageArch {
        self.arch.unwrap_or_else(ImageArch::host)
    }
}

/// `--arch`: Debian's name (amd64, arm64) or uname's (x86_64, aarch64).
fn parse_arch(text: &str) -> Result<ImageArch, String> {
    ImageArch::parse(text).ok_or_else(|| {
        format!("'{text}' is not an architecture kbench boots: amd64 (x86_64) or arm64 (aarch64)")
    })
}

#[derive(Debug, Args)]
pub struct ListArgs {
    #[command(flatten)]
    pub cache: CacheArg,

    /// Print JSON on stdout (an array of {release, vmlinuz, config, source})
    #[arg(long)]
    pub json: bool,
}

/// The kbench binary a guest runs (`vm`, `bisect --kernel`, `lava job`).
#[derive(Debug, Args)]
pub struct GuestKbenchArg {
    /// The kbench binary the guest runs as init [default: this one; for arm64 kernels on an
    /// x86_64 host, the static aarch64 cross-build in target/aarch64/ (docs/contributing.md)]
    #[arg(long, value_name = "PATH", env = "KBENCH_GUEST_KBENCH")]
    pub guest_kbench: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct CacheArg {
    /// Kernel cache directory (default: $XDG_CACHE_HOME/kbench/kernels)
    #[arg(long = "kernel-cache", value_name = "DIR", env = "KBENCH_KERNEL_CACHE")]
    pub dir: Option<PathBuf>,
}

impl CacheArg {
    pub fn cache(&self) -> KernelCache {
        KernelCache::new(self.dir.clone().unwrap_or_else(KernelCache::default_dir))
    }
}
