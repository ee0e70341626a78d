//! The `--kernel` side of a bisection: which built-in test is bisected
//! (with its unit and direction), qemu and the guest's image found before
//! anything is written, and the [`KernelBench`] that boots each commit's
//! image in a VM as `kbench vm` does: KVM when a probe boot with the first
//! image works, else emulated.

use super::error::{BisectError, Result, invalid};
use super::git::{Repo, Worktree};
use super::kernel::{KernelBench, KernelBuild};
use super::progress::Progress;
use kbench_measure::launcher::Launcher;
use kbench_measure::plan::SamplingPlan;
use kbench_model::{Direction, TestKey};
use kbench_vm::accel_memo::ProbeMemo;
use kbench_vm::kernel_fetch::KernelCache;
use kbench_vm::kernel_image::ImageArch;
use kbench_vm::qemu::{self, Accel, AccelChoice, Machine};
use kbench_vm::{GuestImage, KernelImage, VmLauncher, VmSpec};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// How long one boot may take before it counts as hung.
const BOOT_TIMEOUT: Duration = Duration::from_secs(120);

/// Memory of each VM.
const MEMORY_MIB: u32 = 1024;

/// `--kernel`: the built kernel booted in a VM, running one built-in
/// test; one boot is one round of its samples.
#[derive(Debug, Clone)]
pub struct KernelMeasure {
    /// How each commit's kernel is built.
    pub build: KernelBuild,
    /// Built-in benchmarks (`--bench`); the first test, or the one
    /// `metric` names, is bisected.
    pub benches: Vec<String>,
    /// Which of the tests to bisect, and its metric (`pipe-lat:p99`).
    pub metric: Option<String>,
    /// The kbench binary the guest runs as its init (`--guest-kbench`);
    /// default: the running one, or an arm64 guest's cross-build.
    pub guest_kbench: Option<PathBuf>,
    /// Where the VMs' console logs go.
    pub log_dir: PathBuf,
}

/// A [`KernelMeasure`] checked: the test, and what boots a kernel.
pub(crate) struct KernelSetup {
    pub test: TestKey,
    pub unit: String,
    pub better: Direction,
    pub build: KernelBuild,
    arch: ImageArch,
    qemu: PathBuf,
    guest: Arc<GuestImage>,
    log_dir: PathBuf,
}

impl KernelSetup {
    /// Resolves the test and finds qemu and the guest's image; writes
    /// nothing.
    pub fn new(
        measure: KernelMeasure,
        progress: &mut dyn FnMut(Progress<'_>),
    ) -> Result<KernelSetup> {
        if let KernelBuild::Command { image, .. } = &measure.build
            && image.is_absolute()
        {
            invalid!(
                "--kernel {} must be a path inside the tree, e.g. arch/x86/boot/bzImage",
                image.display()
            );
        }
        let tests = kbench_catalog::expand(&measure.benches)?;
        let test = match &measure.metric {
            None => tests[0].clone(),
            Some(text) => {
                let wanted =
                    TestKey::parse(text).map_err(|e| BisectError::Invalid(e.to_string()))?;
                match tests.iter().find(|t| t.test_name() == wanted.test_name()) {
                    Some(test) => test.with_metric(&wanted.metric),
                    None => invalid!(
                        "--metric {text} is not among the --bench tests ({})",
                        tests
                            .iter()
                            .map(ToString::to_string)
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                }
            }
        };
        if tests.len() > 1 {
            progress(Progress::Note(&format!(
                "bisecting {test}; the other --bench tests are not run (one metric is bisected)"
            )));
        }
        let Some(info) = kbench_bench::find(&test.benchmark) else {
            invalid!("{} is not a built-in benchmark", test.benchmark);
        };
        let better = info.direction;
        let arch = guest_arch(&measure.build);
        let qemu = qemu::find_qemu(None, arch)?;
        let exe = kbench_vm::guest_binary::find(arch, measure.guest_kbench.as_deref())?;
        let guest = GuestImage::build(&exe, arch, None, &[], false)?;
        Ok(KernelSetup {
            test,
            unit: info.unit.label().to_string(),
            better,
            build: measure.build,
            arch,
            qemu,
            guest: Arc::new(guest),
            log_dir: measure.log_dir,
        })
    }

    /// What the state's fingerprint records of how commits are measured.
    pub fn describe(&self) -> String {
        match &self.build {
            KernelBuild::Command { image, .. } => {
                format!("kernel {} running {}", image.display(), self.test)
            }
            KernelBuild::Linux(_) => format!("kernel built by kbench running {}", self.test),
        }
    }

    /// The workbench: a worktree at `root/tree` with `good` checked out,
    /// kbench's builds in `root/build`, the images copied to
    /// `root/images`, one VM per boot.
    pub fn workbench(
        self,
        repo: &Repo,
        root: &Path,
        good: &str,
        stop: Arc<AtomicBool>,
    ) -> Result<KernelBench> {
        let worktree = Worktree::add(repo, &root.join("tree"), good)?;
        let mut vm = VmBoot {
            qemu: self.qemu,
            guest: self.guest,
            machine: Machine {
                arch: self.arch,
                accel: Accel::Tcg,
                memory_mib: MEMORY_MIB,
                cpus: std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
                append: None,
                disk: None,
            },
            log_dir: self.log_dir,
            stop: stop.clone(),
            accel: None,
        };
        Ok(KernelBench {
            worktree,
            build: self.build,
            root: root.to_path_buf(),
            image_dir: root.join("images"),
            boot: Box::new(move |path, progress| vm.boot(path, progress)),
            test: self.test,
            plan: SamplingPlan {
                max_time: Duration::from_secs(1),
                ..SamplingPlan::default()
            },
            stop,
            launchers: Default::default(),
            current: None,
            images: Default::default(),
            records: Vec::new(),
        })
    }
}

/// Why each commit's image must be of the architecture [`guest_arch`] chose.
const ARCH_FROM_PATH: &str = "the guest (qemu and its kbench) is chosen before the first build, \
    by the architecture --kernel's path names (arch/arm64/... or arch/x86/...; else this \
    machine's)";

/// The architecture of the kernels a bisection boots: the one the image's
/// path in the tree names (`arch/arm64/boot/Image`, a cross-build by the
/// user's `--build`, also below an `O=` directory), else the host's
/// (kbench's own builds are native).
fn guest_arch(build: &KernelBuild) -> ImageArch {
    let KernelBuild::Command { image, .. } = build else {
        return ImageArch::host();
    };
    let parts: Vec<_> = image.components().map(|part| part.as_os_str()).collect();
    parts
        .windows(2)
        .find_map(|pair| match pair[0] == "arch" {
            true if pair[1] == "arm64" => Some(ImageArch::Arm64),
            true if pair[1] == "x86" => Some(ImageArch::X86_64),
            _ => None,
        })
        .unwrap_or_else(ImageArch::host)
}

/// Boots kernel images with `kbench vm`'s launcher; the accelerator is
/// decided at the first boot.
struct VmBoot {
    qemu: PathBuf,
    guest: Arc<GuestImage>,
    machine: Machine,
    log_dir: PathBuf,
    stop: Arc<AtomicBool>,
    /// Decided by the first boot's probe.
    accel: Option<Accel>,
}

impl VmBoot {
    fn boot(
        &mut self,
        path: &Path,
        progress: &mut dyn FnMut(Progress<'_>),
    ) -> Result<Box<dyn Launcher>> {
        let spec = VmSpec {
            qemu: self.qemu.clone(),
            kernel: KernelImage::open(path)?.require(self.machine.arch, ARCH_FROM_PATH)?,
            machine: self.machine.clone(),
            timeout: BOOT_TIMEOUT,
            log_dir: self.log_dir.clone(),
        };
        let mut launcher = VmLauncher::new(spec, self.guest.clone()).with_stop(self.stop.clone());
        let accel = match self.accel {
            Some(accel) => accel,
            None => {
                let memo = ProbeMemo::beside(&KernelCache::new(KernelCache::default_dir()));
                let kvm = qemu::kvm_device(self.machine.arch);
                let decision = qemu::decide_accel(AccelChoice::Auto, kvm, || {
                    memo.kvm_works(&self.qemu, || {
                        progress(Progress::Step(&format!(
                            "probing KVM with a short boot of {} ...",
                            path.display()
                        )));
                        launcher.probe_kvm()
                    })
                })?;
                for note in &decision.notes {
                    progress(Progress::Warning(note));
                }
                *self.accel.insert(decision.accel)
            }
        };
        launcher.set_accel(accel);
        Ok(Box::new(launcher))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_image_path_names_the_guest_architecture() {
        let command = |image: &str| KernelBuild::Command {
            command: "make".into(),
            image: PathBuf::from(image),
        };
        assert_eq!(
            guest_arch(&command("arch/arm64/boot/Image")),
            ImageArch::Arm64
        );
        assert_eq!(
            guest_arch(&command("arch/x86/boot/bzImage")),
            ImageArch::X86_64
        );
        assert_eq!(guest_arch(&command("out/Image")), ImageArch::host());
        assert_eq!(
            guest_arch(&command("build-arm64/arch/arm64/boot/Image")),
            ImageArch::Arm64,
            "an out-of-tree build (O=) keeps the layout"
        );
    }
}
