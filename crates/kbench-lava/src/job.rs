//! `kbench lava job`: one LAVA job that boots kernel A, runs kbench's
//! tests once, boots B, runs them again, A again ..., each boot a deploy,
//! boot and test of its own namespace. Each boot's initramfs is kbench's
//! guest ([`kbench_vm::image`]) with the boot's plan (identifier, place,
//! expected release), so its results come back framed on the console
//! ([`kbench_vm::console_frames`]). The kernels and initramfs files are
//! written beside the definition, which names them under the URL the lab
//! fetches them from. Each initramfs is the guest's common part, gzipped
//! once per kernel, then the boot's own small archive (Linux unpacks
//! concatenated archives, compressed or not).

use crate::definition::{self, PlannedBoot, Settings};
use crate::error::{LavaError, Result, refuse};
use crate::yaml;
use kbench_measure::agent::AgentJob;
use kbench_measure::plan::SamplingPlan;
use kbench_model::TestKey;
use kbench_vm::console_frames::ConsoleBoot;
use kbench_vm::image::find_kernel_config;
use kbench_vm::kernel_fetch::KernelCache;
use kbench_vm::kernel_image::ImageArch;
use kbench_vm::{GuestImage, KernelImage};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// What `kbench lava job` is asked.
#[derive(Debug, Clone)]
pub struct JobRequest {
    /// Each kernel (an image path, or a cached kernel's release) and its
    /// identifier (default: its release); the first is the baseline.
    pub kernels: Vec<(String, Option<String>)>,
    /// The tests as the user named them (built-ins and suites).
    pub names: Vec<String>,
    pub plan: SamplingPlan,
    /// Boots of each kernel, alternating.
    pub boots: u32,
    /// The directory the job's files are written to.
    pub out: PathBuf,
    /// Where the lab fetches those files from (default: `file://` + out).
    pub artifacts_url: Option<String>,
    pub settings: Settings,
    /// The kbench binary the guests run ([`kbench_vm::guest_binary`]).
    pub guest_kbench: Option<PathBuf>,
    pub cache: KernelCache,
}

/// What was written.
#[derive(Debug, Clone, Serialize)]
pub struct WrittenJob {
    /// The job definition (YAML), to submit.
    pub definition: PathBuf,
    pub boots: Vec<PlannedBoot>,
    pub tests: Vec<String>,
}

/// The job's definition file name in the output directory.
pub const DEFINITION_FILE: &str = "job.yaml";

/// Checks the request, writes each kernel and each boot's initramfs into
/// `out`, and the definition beside them.
pub fn write(request: &JobRequest) -> Result<WrittenJob> {
    if request.boots < 2 {
        refuse!(
            "--boots {} is too few: each kernel needs two boots or more, so that the comparison \
             sees how much boots of one kernel differ",
            request.boots
        );
    }
    let (kernels, arch) = kbench_vm::lab::resolve_kernels(&request.kernels, &request.cache)?;
    let tests = built_in_tests(&request.names)?;
    let exe = kbench_vm::guest_binary::find(arch, request.guest_kbench.as_deref())?;
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
    let mut images = Vec::new();
    for (index, (identifier, kernel)) in kernels.iter().enumerate() {
        let file = format!("kernel{}", index + 1);
        copy(&kernel.path, &out.join(&file))?;
        let guest = guest_image(&exe, arch, kernel)?;
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
        };
        let initrd_file = format!("boot{boot}.initrd");
        let mut bytes = image.clone();
        bytes.extend(guest.console_archive(&job, &plan));
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
        });
    }
    let definition = definition::job(arch, &request.settings, &boots, &tests, &request.plan);
    let path = out.join(DEFINITION_FILE);
    std::fs::write(&path, yaml::to_yaml(&definition))
        .map_err(LavaError::os(format!("writing {}", path.display())))?;
    Ok(WrittenJob {
        definition: path,
        boots,
        tests: tests.iter().map(|t| t.to_string()).collect(),
    })
}

/// The tests named, each a built-in benchmark: a LAVA boot runs kbench's
/// initramfs, which has no root filesystem for a profile's tools.
fn built_in_tests(names: &[String]) -> Result<Vec<TestKey>> {
    let tests = kbench_catalog::expand(names)?;
    let mut profiles: Vec<String> = tests
        .iter()
        .filter(|test| kbench_bench::find(&test.benchmark).is_none())
        .map(|test| test.benchmark.clone())
        .collect();
    profiles.dedup();
    if !profiles.is_empty() {
        refuse!(
            "{} {} a profile's test, which needs a root filesystem with its tools; a LAVA boot \
             runs kbench's initramfs only, so give it built-in benchmarks (`kbench list`)",
            profiles.join(", "),
            if profiles.len() == 1 { "is" } else { "are" }
        );
    }
    Ok(tests)
}

/// The guest image of `kernel`, with its build configuration when it is
/// beside it (the snapshot's preemption model).
fn guest_image(exe: &Path, arch: ImageArch, kernel: &KernelImage) -> Result<GuestImage> {
    let config = kernel
        .release
        .as_deref()
        .and_then(|release| find_kernel_config(&kernel.path, release).map(|c| (release, c)));
    let config = config.as_ref().map(|(r, path)| (*r, path.as_path()));
    Ok(GuestImage::build(exe, arch, config, None)?)
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
