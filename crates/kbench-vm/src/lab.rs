//! From what `kbench vm run` and `vm compare` are asked to the guests
//! ready to boot: every input checked (kernels, identifiers, machine,
//! qemu), each kernel's guest image built, and then the accelerator chosen
//! (KVM or TCG, with a probe boot when asked), before anything is measured.
//! [`Lab::measure`] and [`Lab::measure_duet`] boot them.

use super::accel_memo::ProbeMemo;
use super::error::{Result, VmError, invalid};
use super::event::{LabEvent, Note};
use super::guest_disk;
use super::image::GuestImage;
use super::kernel_fetch::KernelCache;
use super::kernel_image::{ImageArch, KernelImage};
use super::launcher::{VmLauncher, VmSpec};
use super::qemu::{self, Accel, AccelChoice, Machine};
use super::rootfs::RootfsCache;
use kbench_catalog::profile::Profiles;
use kbench_measure::plan::SamplingPlan;
use kbench_measure::runner::RunRequest;
use kbench_model::TestKey;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// What to measure: kernels, tests and the machine they boot in.
#[derive(Debug, Clone)]
pub struct LabRequest {
    /// Each kernel (a bzImage path, or the release of a cached kernel) and
    /// the identifier to store it as (default: its release); the first is
    /// the baseline.
    pub kernels: Vec<(String, Option<String>)>,
    pub set: String,
    /// The tests as the user named them (built-ins, profiles, suites).
    pub names: Vec<String>,
    /// The user's profile directories (`--profiles`), besides the
    /// built-in profiles.
    pub profile_dirs: Vec<PathBuf>,
    pub plan: SamplingPlan,
    pub machine: MachineRequest,
    /// Go on after a test FAILED (`--keep-going`); else the boots stop
    /// after the one it failed in.
    pub keep_going: bool,
}

/// The machine as the user asked for it (`--memory`, `--cpus`, ...).
#[derive(Debug, Clone)]
pub struct MachineRequest {
    /// "1G", "512M", or MiB; default: what the profiles need, at least 1G.
    pub memory: Option<String>,
    /// Default: the CPUs this process may use.
    pub cpus: Option<u32>,
    /// Seconds of silence (boot included) before a guest is killed.
    pub timeout: f64,
    pub accel: AccelChoice,
    /// Extra kernel command line.
    pub append: Option<String>,
    /// Default: `qemu-system-x86_64` on PATH (`qemu-system-aarch64` for
    /// arm64 kernels).
    pub qemu: Option<PathBuf>,
    /// The kbench binary the guests run as init (`--guest-kbench`);
    /// default: the running one, or for a guest of another architecture a
    /// cross-build beside it ([`crate::guest_binary`]).
    pub guest_kbench: Option<PathBuf>,
    /// Where cached kernels are found by release.
    pub cache: KernelCache,
    /// An ext4 image (or a cached rootfs id) the guest mounts and chroots
    /// into (`--rootfs`); default: the rootfs of the profiles' packages,
    /// when any test is a profile's.
    pub rootfs: Option<String>,
    /// Where rootfs images are cached and built.
    pub rootfs_cache: RootfsCache,
}

/// One kernel to boot, under its identifier.
pub(crate) struct Guest {
    pub(crate) identifier: String,
    pub(crate) kernel: KernelImage,
    pub(crate) launcher: VmLauncher,
}

/// Every kernel checked and its guest built; the accelerator is chosen
/// next ([`Guests::choose_accel`]).
pub struct Guests {
    guests: Vec<Guest>,
    set: String,
    tests: Vec<TestKey>,
    plan: SamplingPlan,
    accel: AccelChoice,
    stop: Arc<AtomicBool>,
    keep_going: bool,
    /// Stored with every run besides the accelerator's (the rootfs).
    notes: Vec<String>,
    /// The KVM probe's answer for this host boot.
    probe_memo: ProbeMemo,
}

/// Everything checked and ready to boot.
pub struct Lab {
    pub(crate) guests: Vec<Guest>,
    /// The request every kernel's runs share; each has its identifier.
    pub(crate) request: RunRequest,
    pub(crate) stop: Arc<AtomicBool>,
    pub(crate) accel: Accel,
}

impl Guests {
    /// Checks every input (names, kernels, qemu), builds each kernel's
    /// guest image and the rootfs profiles need (`observe` hears its
    /// build), before anything boots. Serial logs of failed boots go to
    /// `log_dir`; once `stop` is raised, running guests are killed.
    pub fn prepare(
        request: &LabRequest,
        log_dir: &Path,
        stop: Arc<AtomicBool>,
        observe: &mut dyn FnMut(LabEvent),
    ) -> Result<Guests> {
        kbench_model::validate_name("result set", &request.set).map_err(VmError::Invalid)?;
        let vm = &request.machine;
        let profiles = Profiles::load(&request.profile_dirs)?;
        let tests = kbench_catalog::expand_with(&request.names, &profiles)?;
        let own_profiles = guest_disk::own_profile_files(&profiles, &tests);
        let (memory_mib, memory_note) =
            guest_disk::memory_mib(vm.memory.as_deref(), &profiles, &tests)?;
        if !(vm.timeout.is_finite() && vm.timeout >= 1.0) {
            invalid!("--timeout {} must be at least 1 second", vm.timeout);
        }
        let (images, arch) = resolve_kernels(&request.kernels, &vm.cache)?;
        let qemu = qemu::find_qemu(vm.qemu.as_deref(), arch)?;
        let exe = crate::guest_binary::find(arch, vm.guest_kbench.as_deref())?;
        if let Some(note) = memory_note {
            observe(LabEvent::Note(Note::Warning(note)));
        }
        let rootfs = guest_disk::choose(
            arch,
            vm.rootfs.as_deref(),
            &vm.rootfs_cache,
            &profiles,
            &tests,
            &mut |step| observe(LabEvent::Rootfs(step.clone())),
        )?;
        let machine = Machine {
            arch,
            accel: Accel::Tcg,
            memory_mib,
            cpus: vm.cpus.unwrap_or_else(|| {
                std::thread::available_parallelism().map_or(1, |n| n.get() as u32)
            }),
            append: vm.append.clone(),
            disk: rootfs.as_ref().map(|disk| disk.image.clone()),
        };
        let mut guests = Vec::new();
        for (identifier, kernel) in images {
            let guest_image = GuestImage::of_kernel(&exe, arch, &kernel, rootfs.is_some(), false)?
                .with_profiles(&own_profiles)?;
            // Its size is what each boot copies into guest memory (README,
            // "Install": the dist build's smaller binary).
            tracing::debug!(
                "guest initramfs for {identifier}: {} bytes ({} and {} runtime files)",
                guest_image.base_len(),
                exe.display(),
                guest_image.runtime_files.len()
            );
            let spec = VmSpec {
                qemu: qemu.clone(),
                kernel: kernel.clone(),
                machine: machine.clone(),
                timeout: Duration::from_secs_f64(vm.timeout),
                log_dir: log_dir.to_path_buf(),
            };
            guests.push(Guest {
                identifier,
                kernel,
                launcher: VmLauncher::new(spec, Arc::new(guest_image)).with_stop(stop.clone()),
            });
        }
        Ok(Guests {
            guests,
            set: request.set.clone(),
            tests,
            plan: request.plan.clone(),
            accel: vm.accel,
            stop,
            keep_going: request.keep_going,
            notes: rootfs.into_iter().map(|disk| disk.note).collect(),
            probe_memo: ProbeMemo::beside(&vm.cache),
        })
    }

    /// Chooses KVM or TCG (a short boot of the first kernel tells whether
    /// KVM works, unless the choice was forced) and says which; a raised
    /// stop flag by then is [`VmError::Interrupted`].
    pub fn choose_accel(self, observer: &mut dyn FnMut(LabEvent)) -> Result<Lab> {
        let Guests {
            mut guests,
            set,
            tests,
            plan,
            accel,
            stop,
            keep_going,
            notes,
            probe_memo,
        } = self;
        let arch = guests[0].kernel.arch;
        let decision = qemu::decide_accel(accel, qemu::kvm_device(arch), || {
            let qemu = guests[0].launcher.spec().qemu.clone();
            probe_memo.kvm_works(&qemu, || {
                observer(LabEvent::Note(Note::Probing {
                    kernel: guests[0].kernel.path.clone(),
                }));
                guests[0].launcher.probe_kvm()
            })
        })?;
        if stop.load(Ordering::SeqCst) {
            return Err(VmError::Interrupted);
        }
        for guest in &mut guests {
            guest.launcher.set_accel(decision.accel);
        }
        match decision.accel {
            Accel::Kvm => observer(LabEvent::Note(Note::UsingKvm)),
            Accel::Tcg => {
                for note in &decision.notes {
                    observer(LabEvent::Note(Note::Warning(note.clone())));
                }
            }
        }
        let request = RunRequest {
            set,
            identifier: String::new(), // set per kernel when measuring
            tests,
            plan,
            rounds: 1,
            adaptive: None,
            wrapper: Some(guests[0].launcher.spec().machine.describe()),
            notes: decision.notes.iter().cloned().chain(notes).collect(),
            host: Some(kbench_measure::snapshot(Path::new("."))),
            keep_going,
            replayed: None,
        };
        Ok(Lab {
            guests,
            request,
            stop,
            accel: decision.accel,
        })
    }
}

/// The kernels `vm compare` (or `lava job`) boots, each with its identifier (`--as`; by
/// default the guest's release): two or more kernels, the first the
/// baseline, and one identifier per kernel or none.
pub fn compared_kernels(
    kernels: &[String],
    identifiers: &[String],
) -> Result<Vec<(String, Option<String>)>> {
    if kernels.len() < 2 {
        invalid!(
            "a comparison needs two or more --kernel options (the first is the baseline); to \
             measure one kernel use `kbench vm run`"
        );
    }
    if !identifiers.is_empty() && identifiers.len() != kernels.len() {
        invalid!(
            "{} --as for {} --kernel: give one identifier per kernel, in the same order, or none",
            identifiers.len(),
            kernels.len()
        );
    }
    let identifier = |i: usize| identifiers.get(i).cloned();
    Ok(kernels
        .iter()
        .enumerate()
        .map(|(i, kernel)| (kernel.clone(), identifier(i)))
        .collect())
}

/// What `vm compare --duet` needs besides any duet's: two kernels, one
/// CPU per guest (`cpus`, when the user gave it), and tests (`names`) that
/// run in one task.
pub fn check_duet(kernels: usize, cpus: Option<u32>, names: &[String]) -> Result<()> {
    if kernels != 2 {
        invalid!(
            "--duet boots two kernels at once (the baseline and one other), but {kernels} --kernel \
             options are given"
        );
    }
    if let Some(cpus) = cpus.filter(|&cpus| cpus != 1) {
        invalid!(
            "--duet gives each guest one CPU of the host's, so --cpus {cpus} cannot be; drop \
             --cpus"
        );
    }
    Ok(kbench_measure::duet::check_machine(
        &kbench_catalog::expand(names)?,
    )?)
}

/// Each kernel (a path, or a cached kernel's release) opened, under its
/// identifier (by default its release), and the one architecture they
/// share: two kernels stored as one identifier, or of two architectures,
/// are refused.
pub fn resolve_kernels(
    kernels: &[(String, Option<String>)],
    cache: &KernelCache,
) -> Result<(Vec<(String, KernelImage)>, ImageArch)> {
    let mut images: Vec<(String, KernelImage)> = Vec::new();
    for (text, identifier) in kernels {
        let image = resolve_kernel(text, cache)?;
        let identifier = match identifier {
            Some(name) => name.clone(),
            None => image.release.clone().ok_or_else(|| {
                VmError::Invalid(format!(
                    "{} holds no version string to name it by; give an identifier with --as",
                    image.path.display()
                ))
            })?,
        };
        kbench_model::validate_name("identifier", &identifier).map_err(VmError::Invalid)?;
        if images.iter().any(|(i, _)| *i == identifier) {
            invalid!(
                "two kernels would both be stored as '{identifier}'; name them apart with --as (one per --kernel)"
            );
        }
        images.push((identifier, image));
    }
    let arch = one_arch(&images)?;
    Ok((images, arch))
}

/// The architecture all the kernels share: a lab boots one kind of guest.
fn one_arch(images: &[(String, KernelImage)]) -> Result<ImageArch> {
    let (first, first_image) = &images[0];
    if let Some((other, image)) = images.iter().find(|(_, i)| i.arch != first_image.arch) {
        invalid!(
            "the kernels are of two architectures: '{first}' ({}) is {} and '{other}' ({}) is {}; \
             compare kernels of one architecture",
            first_image.path.display(),
            first_image.arch.name(),
            image.path.display(),
            image.arch.name()
        );
    }
    Ok(first_image.arch)
}

/// A kernel image path, or the release of a cached kernel.
fn resolve_kernel(text: &str, cache: &KernelCache) -> Result<KernelImage> {
    let path = Path::new(text);
    if path.exists() {
        return Ok(KernelImage::open(path)?);
    }
    if let Some(cached) = cache.get(text) {
        return Ok(KernelImage::open(&cached.vmlinuz)?);
    }
    invalid!(
        "the kernel '{text}' is neither a file nor a release in the kernel cache {}; \
         `kbench kernel list` shows the cached ones, `kbench kernel fetch debian:6.1` fetches one",
        cache.dir.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compared_kernels_are_two_or_more_with_one_identifier_each_or_none() {
        let two = ["a".to_string(), "b".to_string()];
        assert_eq!(
            compared_kernels(&two, &[]).unwrap(),
            [("a".to_string(), None), ("b".to_string(), None)]
        );
        let named = compared_kernels(&two, &["x".into(), "y".into()]).unwrap();
        assert_eq!(named[1], ("b".to_string(), Some("y".to_string())));
        let one = compared_kernels(&two[..1], &[]).unwrap_err().to_string();
        assert!(one.contains("two or more --kernel"), "{one}");
        let short = compared_kernels(&two, &["x".into()])
            .unwrap_err()
            .to_string();
        assert!(short.starts_with("1 --as for 2 --kernel"), "{short}");
    }
}
