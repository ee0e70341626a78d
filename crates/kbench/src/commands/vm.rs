//! `kbench vm`: boot kernels in qemu with kbench as their init and measure
//! in them; `vm compare` boots them in turn (A B A B ...), or both at once
//! (`--duet`), and prints the comparison.

use super::kernel::CacheArg;
use crate::cli::{CompareArgs, SamplingArgs, UploadArgs};
use crate::progress::Progress;
use anyhow::{Context, bail};
use kbench_measure::interleave::{self, BlockPlan, InterleavedRequest};
use kbench_measure::launcher::Launcher;
use kbench_measure::runner::{self, RunRequest, RunSummary};
use kbench_measure::variant::Variant;
use kbench_store::{Database, Recorder, Results};
use kbench_vm::qemu::{self, Accel, AccelChoice, Machine};
use kbench_vm::{GuestImage, KernelImage, VmLauncher, VmSpec, image};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Run benchmarks in a VM that boots a given kernel with kbench as its init
#[derive(Debug, clap::Subcommand)]
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

#[derive(Debug, clap::Args)]
#[command(
    after_help = format!("Examples:\n  kbench vm run --kernel ./arch/x86/boot/bzImage quick --as 6.10-rc5 --into v610\n  \
kbench vm run --kernel 6.1.0-57-cloud-amd64 syscall-null pipe-lat --rounds 1\n\n{AFTER_HELP}")
)]
pub struct VmRunArgs {
    /// The kernel: a bzImage path, or the release of a kernel from `kbench kernel fetch`
    #[arg(long, value_name = "PATH|RELEASE")]
    pub kernel: String,

    /// Suites, benchmark ids or tests with options, e.g. quick, pipe-lat, 'ctxsw[procs=8,size=16]'
    #[arg(value_name = "NAME", default_value = "quick")]
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

#[derive(Debug, clap::Args)]
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
    /// A kernel (bzImage path or cached release); give two or more, the first is the baseline
    #[arg(long = "kernel", value_name = "PATH|RELEASE", required = true)]
    pub kernels: Vec<String>,

    /// Suites, benchmark ids or tests with options
    #[arg(value_name = "NAME", default_value = "quick")]
    pub names: Vec<String>,

    /// Identifiers, one per --kernel in the same order (default: each guest kernel's release)
    #[arg(long = "as", value_name = "IDENTIFIER")]
    pub identifiers: Vec<String>,

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

    /// Practical threshold in percent for the comparison's verdicts
    #[arg(long, value_name = "PERCENT", default_value_t = 1.0)]
    pub threshold: f64,
}

/// The machine the kernels boot in.
#[derive(Debug, clap::Args)]
pub struct VmOptions {
    /// Guest memory, e.g. 1G or 512M (a number alone is MiB)
    #[arg(long, value_name = "SIZE", default_value = "1G")]
    pub memory: String,

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

    /// The qemu-system-x86_64 to run (default: the one on PATH)
    #[arg(long, value_name = "PATH", env = "KBENCH_QEMU")]
    pub qemu: Option<PathBuf>,

    #[command(flatten)]
    pub cache: CacheArg,
}

pub fn vm(command: VmCommand, db: &super::Db) -> anyhow::Result<ExitCode> {
    match command {
        VmCommand::Run(args) => {
            let kernels = [(args.kernel.clone(), args.identifier.clone())];
            let upload = super::run::upload_target(&args.upload)?;
            let (lab, mut store) = Lab::prepare(
                &kernels,
                &args.names,
                &args.into,
                &args.sampling,
                &args.vm,
                db,
            )?;
            let (done, uploaded) =
                kbench_fleet::mirror::mirrored(store.as_mut(), upload.as_ref(), |store| {
                    lab.measure(store, args.rounds)
                });
            let ended = done.and_then(|mut done| {
                let (request, summary) = done.pop().expect("one kernel");
                super::run::report(store.as_mut(), &request, &summary, args.json)
            });
            super::run::with_upload(ended, uploaded.as_ref())
        }
        VmCommand::Compare(args) => compare(args, db),
    }
}

fn compare(mut args: VmCompareArgs, db: &super::Db) -> anyhow::Result<ExitCode> {
    if args.kernels.len() < 2 {
        bail!(
            "vm compare needs two or more --kernel options (the first is the baseline); for one kernel use `kbench vm run`"
        );
    }
    if args.duet {
        if args.kernels.len() != 2 {
            bail!(
                "--duet boots two kernels at once (the baseline and one other), but {} --kernel \
                 options are given",
                args.kernels.len()
            );
        }
        match args.vm.cpus {
            Some(cpus) if cpus != 1 => bail!(
                "--duet gives each guest one CPU of the host's, so --cpus {cpus} cannot be; drop \
                 --cpus"
            ),
            _ => args.vm.cpus = Some(1),
        }
        super::variants::check_duet_machine(&kbench_catalog::expand(&args.names)?)?;
    }
    if !args.identifiers.is_empty() && args.identifiers.len() != args.kernels.len() {
        bail!(
            "{} --as for {} --kernel: give one identifier per kernel, in the same order, or none",
            args.identifiers.len(),
            args.kernels.len()
        );
    }
    let kernels: Vec<(String, Option<String>)> = args
        .kernels
        .iter()
        .enumerate()
        .map(|(i, kernel)| (kernel.clone(), args.identifiers.get(i).cloned()))
        .collect();
    let (lab, mut store) = Lab::prepare(
        &kernels,
        &args.names,
        &args.into,
        &args.sampling,
        &args.vm,
        db,
    )?;
    let done = match args.duet {
        true => lab.measure_duet(
            store.as_mut(),
            args.blocks
                .map_or(super::variants::MIN_BLOCKS, |b| b as usize),
        )?,
        false => lab.measure(store.as_mut(), args.rounds)?,
    };
    drop((lab, store));
    if done.iter().any(|(_, summary)| summary.interrupted) {
        return Ok(ExitCode::from(super::run::EXIT_INTERRUPTED));
    }
    let identifiers: Vec<String> = done.iter().map(|(r, _)| r.identifier.clone()).collect();
    eprintln!(
        "\nStored {} {} of {} in result set '{}'; `kbench compare {}` shows this again.\n",
        args.blocks.unwrap_or(args.rounds),
        if args.duet { "block(s)" } else { "round(s)" },
        identifiers.join(", "),
        args.into,
        args.into
    );
    Ok(super::compare::compare(
        CompareArgs {
            set: args.into.clone(),
            identifiers: identifiers[1..].to_vec(),
            baseline: Some(identifiers[0].clone()),
            format: args.format.clone(),
            threshold: args.threshold,
            fail_on_regression: false,
            metric: None,
            output: None,
            color: "auto".to_string(),
        },
        db,
    ))
}

/// One kernel to boot, under its identifier.
struct Guest {
    identifier: String,
    kernel: KernelImage,
    launcher: VmLauncher,
}

/// Everything checked and ready to boot.
struct Lab {
    guests: Vec<Guest>,
    request: RunRequest,
    stop: Arc<AtomicBool>,
    accel: Accel,
}

impl Lab {
    /// Checks every input (names, kernels, qemu, the initramfs), opens the
    /// store (returned with the lab) and decides KVM or TCG, before
    /// anything is measured.
    fn prepare(
        kernels: &[(String, Option<String>)],
        names: &[String],
        set: &str,
        sampling: &SamplingArgs,
        vm: &VmOptions,
        db: &super::Db,
    ) -> anyhow::Result<(Lab, Box<dyn Database>)> {
        let plan = super::run::sampling_plan(sampling)?;
        let tests = kbench_catalog::expand(names)?;
        kbench_model::validate_name("result set", set).map_err(anyhow::Error::msg)?;
        let memory_mib = parse_memory(&vm.memory)?;
        if !(vm.timeout.is_finite() && vm.timeout >= 1.0) {
            bail!("--timeout {} must be at least 1 second", vm.timeout);
        }
        let cache = vm.cache.cache();
        let mut images = Vec::new();
        for (text, identifier) in kernels {
            let image = resolve_kernel(text, &cache)?;
            let identifier = match identifier {
                Some(name) => name.clone(),
                None => image.release.clone().with_context(|| {
                    format!(
                        "{} holds no version string to name it by; give an identifier with --as",
                        image.path.display()
                    )
                })?,
            };
            kbench_model::validate_name("identifier", &identifier).map_err(anyhow::Error::msg)?;
            if images
                .iter()
                .any(|(i, _): &(String, KernelImage)| *i == identifier)
            {
                bail!(
                    "two kernels would both be stored as '{identifier}'; name them apart with --as (one per --kernel)"
                );
            }
            images.push((identifier, image));
        }
        let qemu = qemu::find_qemu(vm.qemu.as_deref())?;
        let exe = std::env::current_exe()
            .context("finding the kbench binary to put in the guest's initramfs")?;
        let location = db.location()?;
        let log_dir = location.data_dir().join("vm-logs");
        let machine = Machine {
            accel: Accel::Tcg,
            memory_mib,
            cpus: vm.cpus.unwrap_or_else(|| {
                std::thread::available_parallelism().map_or(1, |n| n.get() as u32)
            }),
            append: vm.append.clone(),
        };
        let stop = Arc::new(AtomicBool::new(false));
        let mut guests = Vec::new();
        for (identifier, kernel) in images {
            let config = kernel.release.as_deref().and_then(|release| {
                image::find_kernel_config(&kernel.path, release).map(|c| (release, c))
            });
            let guest_image = GuestImage::build(
                &exe,
                config
                    .as_ref()
                    .map(|(release, path)| (*release, path.as_path())),
            )?;
            let spec = VmSpec {
                qemu: qemu.clone(),
                kernel: kernel.clone(),
                machine: machine.clone(),
                timeout: Duration::from_secs_f64(vm.timeout),
                log_dir: log_dir.clone(),
            };
            guests.push(Guest {
                identifier,
                kernel,
                launcher: VmLauncher::new(spec, Arc::new(guest_image)).with_stop(stop.clone()),
            });
        }
        let store = location.open()?;
        for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
            signal_hook::flag::register(signal, stop.clone())?;
        }
        let choice = AccelChoice::parse(&vm.accel).expect("clap checked --accel");
        let decision = qemu::decide_accel(choice, qemu::kvm_device(), || {
            eprintln!(
                "Probing KVM with a short boot of {} ...",
                guests[0].kernel.path.display()
            );
            guests[0].launcher.probe_kvm()
        })?;
        if stop.load(Ordering::SeqCst) {
            bail!("interrupted before anything was measured");
        }
        for guest in &mut guests {
            guest.launcher.set_accel(decision.accel);
        }
        match decision.accel {
            Accel::Kvm => eprintln!("Using KVM."),
            Accel::Tcg => {
                for note in &decision.notes {
                    eprintln!("kbench: WARNING: {note}");
                }
            }
        }
        let request = RunRequest {
            set: set.to_string(),
            identifier: String::new(), // set per kernel in `measure`
            tests,
            plan,
            rounds: 1,
            adaptive: None,
            wrapper: Some(guests[0].launcher.spec().machine.describe()),
            notes: decision.notes.clone(),
            host: Some(kbench_measure::sysinfo::snapshot(Path::new("."))),
        };
        let lab = Lab {
            guests,
            request,
            stop,
            accel: decision.accel,
        };
        Ok((lab, store))
    }

    /// Boots every kernel once per round, in order, storing as it goes.
    /// Returns each kernel's request and what its runs did; stops at an
    /// interruption (the summaries say so) or a failed boot (the error).
    fn measure(
        &self,
        store: &mut dyn Recorder,
        rounds: u32,
    ) -> anyhow::Result<Vec<(RunRequest, RunSummary)>> {
        let mut done: Vec<(RunRequest, RunSummary)> = self
            .guests
            .iter()
            .map(|guest| {
                let request = RunRequest {
                    identifier: guest.identifier.clone(),
                    ..self.request.clone()
                };
                (request, RunSummary::default())
            })
            .collect();
        for round in 1..=rounds {
            for (guest, (request, total)) in self.guests.iter().zip(done.iter_mut()) {
                eprintln!(
                    "Round {round} of {rounds}: booting {} as '{}' ({}, {} test(s))",
                    guest.kernel.path.display(),
                    guest.identifier,
                    self.accel_label(),
                    request.tests.len()
                );
                let mut progress = Progress::new(request.tests.len());
                let summary = runner::execute(
                    store,
                    &guest.launcher,
                    request,
                    &mut |e| progress.observe(e),
                    &self.stop,
                );
                progress.finish();
                if let Some(boot) = guest.launcher.boots().last() {
                    let seconds = |d: Option<Duration>| {
                        d.map_or("-".to_string(), |d| format!("{:.1} s", d.as_secs_f64()))
                    };
                    eprintln!(
                        "  boot: agent up after {}, first sample after {}, qemu ended after {}",
                        seconds(boot.agent),
                        seconds(boot.first_sample),
                        seconds(Some(boot.total))
                    );
                }
                let summary = self.interrupted_if_stopped(summary.map_err(anyhow::Error::from))?;
                total.runs.extend(summary.runs);
                total.outcomes.extend(summary.outcomes);
                total.samples += summary.samples;
                if summary.interrupted || self.stop.load(Ordering::SeqCst) {
                    total.interrupted = true;
                    eprintln!(
                        "\nInterrupted: the samples so far are kept. Run the same command again to resume."
                    );
                    return Ok(done);
                }
                warn_if_release_differs(store, request, &guest.kernel)?;
            }
        }
        Ok(done)
    }

    /// "KVM", or "TCG, emulated", for the progress lines.
    fn accel_label(&self) -> &'static str {
        match self.accel {
            Accel::Kvm => "KVM",
            Accel::Tcg => "TCG, emulated",
        }
    }

    /// A measurement that failed because Ctrl-C stopped it (a guest killed
    /// while it booted stored nothing of its round) is an interrupted one.
    fn interrupted_if_stopped(
        &self,
        summary: anyhow::Result<RunSummary>,
    ) -> anyhow::Result<RunSummary> {
        match summary {
            Err(_) if self.stop.load(Ordering::SeqCst) => Ok(RunSummary {
                interrupted: true,
                ..RunSummary::default()
            }),
            other => other,
        }
    }

    /// Boots the two kernels at once for every test and block, each qemu
    /// pinned to a host CPU of its own (which one drawn per block), one test
    /// per boot: `blocks` blocks per test. What each kernel's run did.
    fn measure_duet(
        &self,
        store: &mut dyn Recorder,
        blocks: usize,
    ) -> anyhow::Result<Vec<(RunRequest, RunSummary)>> {
        let variants: Vec<Variant> = self
            .guests
            .iter()
            .map(|g| Variant {
                name: g.identifier.clone(),
                ..Variant::default()
            })
            .collect();
        let pinned: Vec<[VmLauncher; 2]> = self
            .guests
            .iter()
            .map(|g| [g.launcher.for_duet(0), g.launcher.for_duet(1)])
            .collect();
        let requests: Vec<RunRequest> = variants
            .iter()
            .map(|v| {
                let mut request = RunRequest {
                    identifier: v.name.clone(),
                    ..self.request.clone()
                };
                request
                    .notes
                    .extend(super::variants::duet_note(&variants, v, true));
                request
            })
            .collect();
        let seed = super::variants::random_seed()?;
        let request = InterleavedRequest {
            requests: requests.clone(),
            launchers: self
                .guests
                .iter()
                .map(|g| &g.launcher as &dyn Launcher)
                .collect(),
            variants,
            blocks: BlockPlan {
                min_blocks: blocks,
                max_blocks: blocks,
                // No precision target and no time limit: the block count
                // decides, as boots have a fixed cost.
                target_ci: 0.0,
                budget: Duration::from_secs(365 * 86_400),
            },
            seed,
            duet: Some([
                [&pinned[0][0], &pinned[0][1]],
                [&pinned[1][0], &pinned[1][1]],
            ]),
        };
        eprintln!(
            "Booting '{}' and '{}' at once, each on a CPU of its own ({}): {blocks} blocks of \
             each of {} test(s), seed {seed}",
            self.guests[0].identifier,
            self.guests[1].identifier,
            self.accel_label(),
            self.request.tests.len()
        );
        let mut progress = Progress::new(self.request.tests.len());
        let summary =
            interleave::execute(store, &request, &mut |e| progress.observe(e), &self.stop);
        progress.finish();
        let summary = self.interrupted_if_stopped(summary.map_err(anyhow::Error::from))?;
        if summary.interrupted {
            eprintln!(
                "\nInterrupted: the samples so far are kept; the same command measures a new \
                 session."
            );
        }
        for (guest, request) in self.guests.iter().zip(&requests) {
            warn_if_release_differs(store, request, &guest.kernel)?;
        }
        Ok(requests
            .into_iter()
            .map(|request| (request, summary.clone()))
            .collect())
    }
}

/// The guest reports its own release; say so when it is not the image's.
fn warn_if_release_differs(
    store: &mut dyn Results,
    request: &RunRequest,
    kernel: &KernelImage,
) -> anyhow::Result<()> {
    let data = store.load(&request.set)?;
    let guest_release = data
        .identifiers
        .iter()
        .find(|i| i.name == request.identifier)
        .and_then(|i| i.runs.last())
        .map(|run| run.info.snapshot.kernel_release.clone());
    if let (Some(guest), Some(image)) = (guest_release, kernel.release.as_deref())
        && guest != image
    {
        eprintln!(
            "kbench: WARNING: {} says it is {image}, but the guest reported {guest}",
            kernel.path.display()
        );
    }
    Ok(())
}

/// A bzImage path, or the release of a cached kernel.
fn resolve_kernel(
    text: &str,
    cache: &kbench_vm::kernel_fetch::KernelCache,
) -> anyhow::Result<KernelImage> {
    let path = Path::new(text);
    if path.exists() {
        return Ok(KernelImage::open(path)?);
    }
    if let Some(cached) = cache.get(text) {
        return Ok(KernelImage::open(&cached.vmlinuz)?);
    }
    bail!(
        "the kernel '{text}' is neither a file nor a release in the kernel cache {}; \
         `kbench kernel list` shows the cached ones, `kbench kernel fetch debian:6.1` fetches one",
        cache.dir.display()
    )
}

/// "1G", "512M", "1024" (MiB) -> MiB.
fn parse_memory(text: &str) -> anyhow::Result<u32> {
    let trimmed = text.trim();
    let (number, factor) = match trimmed.char_indices().last() {
        Some((i, 'G' | 'g')) => (&trimmed[..i], 1024),
        Some((i, 'M' | 'm')) => (&trimmed[..i], 1),
        _ => (trimmed, 1),
    };
    let mib = number
        .trim()
        .parse::<u32>()
        .ok()
        .and_then(|n| n.checked_mul(factor))
        .with_context(|| format!("--memory '{text}' is not a size such as 1G or 512M"))?;
    if mib < 128 {
        bail!("--memory {text} is too small: a guest needs at least 128M");
    }
    Ok(mib)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_sizes() {
        assert_eq!(parse_memory("1G").unwrap(), 1024);
        assert_eq!(parse_memory("512M").unwrap(), 512);
        assert_eq!(parse_memory("2048").unwrap(), 2048);
        assert!(parse_memory("64M").is_err());
        assert!(parse_memory("lots").is_err());
        assert!(parse_memory("").is_err());
    }
}
