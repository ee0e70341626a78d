//! `kbench lava job`: one LAVA job that boots kernel A, runs kbench's
//! tests once, boots B, runs them again, A again ..., each boot a deploy,
//! boot and test of its own namespace. Each boot's initramfs is kbench's
//! guest ([`kbench_vm::image`]) with the boot's plan (identifier, place,
//! expected release), so its results come back framed on the console
//! ([`kbench_vm::console_frames`]). The kernels and initramfs files are
//! written beside the definition, which names them under the URL the lab
//! fetches them from. Each initramfs is the guest's common part, gzipped
//! once per kernel, then the boot's own small archive (Linux unpacks
//! concatenated archives, compressed or not). Profile tests run in a
//! root filesystem, as under `kbench vm`: the rootfs of their packages
//! (or `--rootfs`), written once as qcow2 (its used blocks only), which
//! each boot deploys afresh, and each kernel's initramfs carries the
//! virtio modules that mount it. On a U-Boot board ([`crate::board`])
//! each kernel comes with its device tree, and each initramfs with
//! U-Boot's header.

use crate::board;
use crate::definition::{self, BootMethod, Machine, PlannedBoot, Settings};
use crate::error::{LavaError, Result, refuse};
use crate::yaml;
use kbench_catalog::profile::Profiles;
use kbench_measure::agent::AgentJob;
use kbench_measure::plan::SamplingPlan;
use kbench_vm::GuestImage;
use kbench_vm::console_frames::{ConsoleBoot, GuestPush, parse_address};
use kbench_vm::guest_disk;
use kbench_vm::kernel_fetch::KernelCache;
use kbench_vm::kernel_image::ImageArch;
use kbench_vm::rootfs::{RootfsCache, RootfsStep};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::process::Command;

/// What `kbench lava job` is asked.
#[derive(Debug, Clone)]
pub struct JobRequest {
    /// Each kernel (an image path, or a cached kernel's release) and its
    /// identifier (default: its release); the first is the baseline.
    pub kernels: Vec<(String, Option<String>)>,
    /// The tests as the user named them (built-ins, profiles, suites).
    pub names: Vec<String>,
    /// The user's profile directories (`--profiles`).
    pub profile_dirs: Vec<PathBuf>,
    pub plan: SamplingPlan,
    /// Boots of each kernel, alternating.
    pub boots: u32,
    /// The directory the job's files are written to.
    pub out: PathBuf,
    /// The guest's CPUs.
    pub cpus: Option<u32>,
    /// Where the lab fetches those files from (default: `file://` + out).
    pub artifacts_url: Option<String>,
    pub settings: Settings,
    /// The guest's memory as given (`--memory`); default: what the
    /// profiles need.
    pub memory: Option<String>,
    /// The kbench binary the guests run ([`kbench_vm::guest_binary`]).
    pub guest_kbench: Option<PathBuf>,
    pub cache: KernelCache,
    /// `--rootfs`: an ext4 image or a cached rootfs id.
    pub rootfs: Option<String>,
    pub rootfs_cache: RootfsCache,
    /// Each guest pushes its boot to a kbench server once it has measured.
    pub push: Option<GuestPush>,
    /// A board's device tree: one for every kernel, or one per kernel.
    pub dtbs: Vec<PathBuf>,
}

/// What was written.
#[derive(Debug, Clone, Serialize)]
pub struct WrittenJob {
    /// The job definition (YAML), to submit.
    pub definition: PathBuf,
    pub boots: Vec<PlannedBoot>,
    pub tests: Vec<String>,
    /// What the user should know: the rootfs the boots run in, a memory
    /// below the profiles' needs.
    pub notes: Vec<String>,
}

/// The guest's CPUs on the qemu device when `--cpus` is not given.
const DEFAULT_CPUS: u32 = 2;

/// The job's definition file name in the output directory.
pub const DEFINITION_FILE: &str = "job.yaml";

/// The rootfs's file in the output directory.
pub const ROOTFS_FILE: &str = "rootfs.qcow2";

/// Checks the request, writes each kernel, the rootfs the tests need and
/// each boot's initramfs into `out`, and the definition beside them;
/// `observe` hears a rootfs build's steps.
pub fn write(request: &JobRequest, observe: &mut dyn FnMut(&RootfsStep)) -> Result<WrittenJob> {
    if request.boots < 2 {
        refuse!(
            "--boots {} is too few: each kernel needs two boots or more, so that the comparison \
             sees how much boots of one kernel differ",
            request.boots
        );
    }
    if let Some(push) = &request.push {
        check_push(push)?;
    }
    let (kernels, arch) = kbench_vm::lab::resolve_kernels(&request.kernels, &request.cache)?;
    let dtbs = board_device_trees(request, kernels.len(), arch)?;
    let profiles = Profiles::load(&request.profile_dirs)?;
    let tests = kbench_catalog::expand_with(&request.names, &profiles)?;
    let (memory_mib, memory_note) =
        guest_disk::memory_mib(request.memory.as_deref(), &profiles, &tests)?;
    let exe = kbench_vm::guest_binary::find(arch, request.guest_kbench.as_deref())?;
    let disk = guest_disk::choose(
        arch,
        request.rootfs.as_deref(),
        &request.rootfs_cache,
        &profiles,
        &tests,
        observe,
    )?;
    std::fs::create_dir_all(&request.out).map_err(LavaError::os(format!(
        "creating the job's directory {}",
        request.out.display()
    )))?;
    let out = std::path::absolute(&request.out)
        .map_err(LavaError::os("resolving the job's directory"))?;
    let base_url = match &request.artifacts_url {
        Some(url) => url.trim_end_matches('/').to_string(),
        None => format!("file://{}", out.display()),
    };
    let job = AgentJob {
        snapshot: true,
        tools: tests.clone(),
        tests: tests.clone(),
        plan: request.plan.clone(),
    };
    let own_profiles = guest_disk::own_profile_files(&profiles, &tests);
    if let Some(disk) = &disk {
        qcow2(&disk.image, &out.join(ROOTFS_FILE))?;
    }
    let rootfs_url = disk.as_ref().map(|_| format!("{base_url}/{ROOTFS_FILE}"));
    // A board's card is its own, not qemu's virtio-net: its driver is the
    // kernel's, built in.
    let virtio_net = request.push.is_some() && request.settings.method == BootMethod::Qemu;
    let mut images = Vec::new();
    for (index, (identifier, kernel)) in kernels.iter().enumerate() {
        let file = format!("kernel{}", index + 1);
        copy(&kernel.path, &out.join(&file))?;
        if let Some(dtb) = dtbs.get(index).or(dtbs.first()) {
            copy(dtb, &out.join(format!("{file}.dtb")))?;
        }
        let guest = GuestImage::of_kernel(&exe, arch, kernel, disk.is_some(), virtio_net)?
            .with_profiles(&own_profiles)?;
        let compressed = gzip(guest.base())?;
        images.push((identifier, kernel, file, (guest, compressed)));
    }
    let mut boots = Vec::new();
    let total = request.boots * kernels.len() as u32;
    for boot in 1..=total {
        let (identifier, kernel, kernel_file, (guest, image)) =
            &images[(boot as usize - 1) % images.len()];
        let plan = ConsoleBoot {
            identifier: identifier.to_string(),
            boot,
            boots: total,
            release: kernel.release.clone(),
            round: Some((boot - 1) / images.len() as u32),
        };
        let initrd_file = format!("boot{boot}.initrd");
        let mut bytes = image.clone();
        bytes.extend(guest.console_archive(&job, &plan, request.push.as_ref()));
        if request.settings.method == BootMethod::UBoot {
            bytes = board::uboot_ramdisk(&bytes, &format!("kbench boot{boot}"))?;
        }
        std::fs::write(out.join(&initrd_file), bytes).map_err(LavaError::os(format!(
            "writing {}",
            out.join(&initrd_file).display()
        )))?;
        boots.push(PlannedBoot {
            boot,
            identifier: plan.identifier,
            release: plan.release,
            kernel_url: format!("{base_url}/{kernel_file}"),
            initrd_url: format!("{base_url}/{initrd_file}"),
            rootfs_url: rootfs_url.clone(),
            dtb_url: (!dtbs.is_empty()).then(|| format!("{base_url}/{kernel_file}.dtb")),
        });
    }
    let machine = Machine {
        arch,
        cpus: request.cpus.unwrap_or(DEFAULT_CPUS),
        memory_mib,
    };
    let definition = definition::job(&machine, &request.settings, &boots, &tests, &request.plan);
    let path = out.join(DEFINITION_FILE);
    std::fs::write(&path, yaml::to_yaml(&definition))
        .map_err(LavaError::os(format!("writing {}", path.display())))?;
    Ok(WrittenJob {
        definition: path,
        boots,
        tests: tests.iter().map(|t| t.to_string()).collect(),
        notes: disk
            .map(|d| d.note)
            .into_iter()
            .chain(memory_note)
            .collect(),
    })
}

/// The device trees of a board's kernels (none on qemu), checked with
/// the rest of what a board job needs: a board's device type, arm64
/// Images (U-Boot's `booti`), one device tree for all kernels or one per
/// kernel, and none of qemu's own settings.
fn board_device_trees(
    request: &JobRequest,
    kernels: usize,
    arch: ImageArch,
) -> Result<Vec<PathBuf>> {
    let dtbs = &request.dtbs;
    if request.settings.method == BootMethod::Qemu {
        if !dtbs.is_empty() {
            refuse!(
                "--dtb is for boards (--boot-method u-boot): qemu makes its machine's device \
                 tree itself"
            );
        }
        return Ok(Vec::new());
    }
    if request.settings.device_type == "qemu" {
        refuse!(
            "--boot-method u-boot boots a board, and LAVA's qemu device type has no U-Boot: give \
             the board's device type with --device-type (e.g. bcm2711-rpi-4-b)"
        );
    }
    if arch != ImageArch::Arm64 {
        refuse!(
            "--boot-method u-boot boots arm64 Images (U-Boot's booti); these kernels are {}: \
             give arm64 kernels, or use the qemu device type for x86_64",
            arch.name()
        );
    }
    if request.memory.is_some() || request.cpus.is_some() {
        refuse!(
            "--memory and --cpus are the qemu device's: a board has its own CPUs and memory; \
             leave them out with --boot-method u-boot"
        );
    }
    if dtbs.is_empty() || (dtbs.len() != 1 && dtbs.len() != kernels) {
        refuse!(
            "--boot-method u-boot needs the board's device tree: give --dtb once for every \
             kernel, or once per --kernel in their order ({} given for {kernels} kernels)",
            dtbs.len()
        );
    }
    dtbs.iter().try_for_each(|dtb| board::check_dtb(dtb))?;
    Ok(dtbs.clone())
}

/// A push the guests can make: an http URL whose host is an IPv4 address
/// (the initramfs has neither a resolver nor CA certificates), a token, a
/// result set's name, an address with its prefix.
fn check_push(push: &GuestPush) -> Result<()> {
    let host = push
        .server
        .strip_prefix("http://")
        .map(|rest| rest.split(['/', ':']).next().unwrap_or_default());
    if host.is_none_or(|host| host.parse::<std::net::Ipv4Addr>().is_err()) {
        refuse!(
            "--server {} is not an http:// URL with an IPv4 address: the guests have no name \
             resolver and no CA certificates; give the kbench server's address as the guests \
             reach it (from LAVA's qemu device: http://10.0.2.2:PORT)",
            push.server
        );
    }
    if push.token.is_none() {
        refuse!(
            "--server needs --token: a kbench server takes pushes with a token of the push \
             scope (`kbench token create --name dut --scope push` on its database)"
        );
    }
    kbench_model::validate_name("result set", &push.set).map_err(LavaError::Invalid)?;
    parse_address(&push.address)
        .map_err(|e| LavaError::Invalid(format!("--guest-address: {e}")))?;
    Ok(())
}

/// The rootfs `image` (ext4, raw) as qcow2 at `to`: only its used blocks,
/// a fraction of a sparse image that LAVA would copy whole to each boot.
fn qcow2(image: &Path, to: &Path) -> Result<()> {
    let converted = Command::new("qemu-img")
        .args(["convert", "-O", "qcow2"])
        .arg(image)
        .arg(to)
        .output();
    match converted {
        Ok(out) if out.status.success() => Ok(()),
        Ok(out) => refuse!(
            "qemu-img could not convert the rootfs {} to qcow2 ({}): {}",
            image.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ),
        Err(error) => refuse!(
            "running qemu-img to write the rootfs as qcow2 failed ({error}); install it \
             (Debian: apt-get install qemu-utils)"
        ),
    }
}

/// `bytes` gzip-compressed (fast: the binary compresses to a half either
/// way), which the kernel unpacks itself, padded for what follows.
fn gzip(bytes: &[u8]) -> Result<Vec<u8>> {
    use std::io::Write;
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder
        .write_all(bytes)
        .map_err(LavaError::os("compressing an initramfs"))?;
    let mut compressed = encoder
        .finish()
        .map_err(LavaError::os("compressing an initramfs"))?;
    // The archive that follows must start on 4 bytes: the kernel skips
    // the zeros between archives, and reads a cpio only at such an offset.
    compressed.resize(compressed.len().next_multiple_of(4), 0);
    Ok(compressed)
}

fn copy(from: &Path, to: &Path) -> Result<()> {
    std::fs::copy(from, to)
        .map(drop)
        .map_err(LavaError::os(format!(
            "copying {} to {}",
            from.display(),
            to.display()
        )))
}
