//! Flags of `kbench lava`.

use super::common::{SamplingArgs, UploadArgs};
use super::vm::{CacheArg, ComparedKernels, GuestKbenchArg, GuestRootfsArgs};
use clap::{Args, Subcommand, ValueEnum};
use kbench_lava::definition::{BootMethod, Settings};
use kbench_lava::job::JobRequest;
use kbench_vm::console_frames::GuestPush;
use std::path::PathBuf;

/// Compare kernels on a LAVA lab: write the job that boots them in turn, and read its results back
#[derive(Debug, Subcommand)]
pub enum LavaCommand {
    /// Write a LAVA job that boots each kernel --boots times, alternating (A B A B ...), each boot
    /// running the tests once in kbench's initramfs
    Job(Box<LavaJobArgs>),
    /// Store a finished LAVA job's results, read from its log, in a result set (one run per boot)
    Import(LavaImportArgs),
    /// Submit a job to a LAVA server through its REST API; with --into, follow it to its end and
    /// store its results
    Submit(LavaSubmitArgs),
}

#[derive(Debug, Args)]
#[command(
    after_help = "Example:\n  kbench lava job --kernel 6.1.0-57-cloud-amd64 --kernel \
6.12.118+deb12-cloud-amd64 syscall-null open-close --boots 3 --out job/ \\\n      \
--artifacts-url http://files.lab.example/kbench/job\n  lava-run --job-id 1 --output-dir out \
--device qemu.yaml job/job.yaml > job.log     # or submit job/job.yaml to a LAVA server\n  \
kbench lava import job.log --into lab\n  kbench compare lab\n\nThe directory gets each kernel \
(kernel1, kernel2, ...), each boot's initramfs (boot1.initrd, ...: kbench as /init, gzipped, then the tests and \
the boot's plan) and job.yaml, which names them under --artifacts-url: publish the directory \
there for the lab's workers (by default the definition names the files by file://, which \
`lava-run` on this machine reads). Each boot is a deploy, boot and test of its own namespace \
(boot1, boot2, ...). The guest checks that it booted the kernel its plan names; it frames its \
samples on the console (each line numbered, with its length and a CRC-32), and prints one \
`kbench-case TEST pass MEDIAN UNIT` line per test, which LAVA's monitors record as a test case \
with a measurement for LAVA's own dashboard. Profile tests run in a root filesystem, as under \
`kbench vm`: --rootfs, or the one of their packages (built unless cached), written once as \
rootfs.qcow2 (qemu-img), of which every boot deploys a fresh copy. With --server the guests also \
push their boots to a kbench server once measured; reading the log back later stores nothing \
twice there. On a board, --boot-method u-boot --device-type BOARD --dtb BOARD.dtb deploys each \
boot's kernel (an arm64 Image), initramfs (behind U-Boot's legacy header) and device tree by \
TFTP for the board's U-Boot to boot, every boot on the first one's serial console. docs/lab.md \
has the whole path."
)]
pub struct LavaJobArgs {
    #[command(flatten)]
    pub compared: ComparedKernels,

    /// Boots of each kernel, alternating; the comparison's unit is the boot
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(2..=50))]
    pub boots: u32,

    /// Directory to write the job's files to
    #[arg(long, value_name = "DIR", default_value = "lava-job")]
    pub out: PathBuf,

    /// The URL the lab's workers fetch the directory's files from [default: file:// and the
    /// directory's absolute path]
    #[arg(long, value_name = "URL")]
    pub artifacts_url: Option<String>,

    /// LAVA's device type the job asks for (a board's, e.g. bcm2711-rpi-4-b, with --boot-method
    /// u-boot)
    #[arg(long, default_value = "qemu")]
    pub device_type: String,

    /// How the device boots each kernel: qemu (LAVA's qemu device type), or u-boot (a board whose
    /// U-Boot loads the kernel, initramfs and --dtb by TFTP; arm64 Images)
    #[arg(long, value_enum, default_value_t = BootMethodArg::Qemu)]
    pub boot_method: BootMethodArg,

    /// The board's device tree blob (.dtb) for --boot-method u-boot: once for every kernel, or
    /// once per --kernel in their order (each kernel its own, e.g. Debian's
    /// /usr/lib/linux-image-RELEASE/broadcom/bcm2711-rpi-4-b.dtb)
    #[arg(long, value_name = "FILE")]
    pub dtb: Vec<PathBuf>,

    /// The job's name [default: "kbench: A vs B (N boots, alternating)"]
    #[arg(long, value_name = "NAME")]
    pub job_name: Option<String>,

    /// Minutes each boot may take to deploy and to reach kbench; LAVA fails the boot after them
    #[arg(long, value_name = "MINUTES", default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=600))]
    pub boot_timeout: u32,

    /// Minutes each boot's tests may take [default: from the sampling plan: --max-time per test,
    /// plus 15 s each and a minute]
    #[arg(long, value_name = "MINUTES", value_parser = clap::value_parser!(u32).range(1..=1440))]
    pub test_timeout: Option<u32>,

    /// The guest's CPUs on the qemu device (qemu's -smp; a board has its own) [default: 2]
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=256))]
    pub cpus: Option<u32>,

    /// The guest's memory on the qemu device, e.g. 1G or 512M (a number alone is MiB) [default:
    /// 1G, or more when the profiles' tests need it]
    #[arg(long, value_name = "SIZE")]
    pub memory: Option<String>,

    /// More of the job's context, as the device type's template reads it (e.g. cpu=max,
    /// machine=virt); repeat for more
    #[arg(long, value_name = "KEY=VALUE", value_parser = key_value)]
    pub context: Vec<(String, String)>,

    #[command(flatten)]
    pub sampling: SamplingArgs,

    #[command(flatten)]
    pub guest: GuestKbenchArg,

    #[command(flatten)]
    pub cache: CacheArg,

    #[command(flatten)]
    pub disk: GuestRootfsArgs,

    #[command(flatten)]
    pub push: GuestPushArgs,

    /// Print what was written as JSON on stdout: the definition's path, the tests, and each
    /// boot's identifier, release and URLs
    #[arg(long)]
    pub json: bool,
}

/// `--boot-method`: [`BootMethod`] as a flag's value.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum BootMethodArg {
    Qemu,
    #[value(name = "u-boot")]
    UBoot,
}

impl From<BootMethodArg> for BootMethod {
    fn from(arg: BootMethodArg) -> BootMethod {
        match arg {
            BootMethodArg::Qemu => BootMethod::Qemu,
            BootMethodArg::UBoot => BootMethod::UBoot,
        }
    }
}

/// The guests' push to a kbench server (`lava job`).
#[derive(Debug, Args)]
pub struct GuestPushArgs {
    /// Each guest pushes its boot's run to this kbench server once it has measured, the URL as
    /// the guest reaches it (a server on LAVA's qemu worker: http://10.0.2.2:PORT); the job's
    /// log keeps every sample all the same, and reading it back stores nothing twice
    #[arg(long, value_name = "URL", requires = "into")]
    pub server: Option<String>,

    /// API token for --server, with the push scope. It is written into each boot's initramfs,
    /// which the lab publishes: give a token that may only push
    #[arg(long, value_name = "TOKEN", requires = "server")]
    pub token: Option<String>,

    /// The result set the guests push into
    #[arg(long, value_name = "SET", requires = "server")]
    pub into: Option<String>,

    /// The guest's IPv4 address and prefix on the DUT's network, for --server
    #[arg(long, value_name = "ADDRESS/PREFIX", default_value = "10.0.2.15/24")]
    pub guest_address: String,

    /// The gateway of the guest's network, for --server [default: 10.0.2.2, qemu's user network]
    #[arg(long, value_name = "ADDRESS", default_value = "10.0.2.2")]
    pub guest_gateway: std::net::Ipv4Addr,
}

impl GuestPushArgs {
    /// The push these flags ask for, if any.
    fn push(&self) -> Option<GuestPush> {
        Some(GuestPush {
            server: self.server.clone()?,
            token: self.token.clone(),
            set: self.into.clone()?,
            address: self.guest_address.clone(),
            gateway: Some(self.guest_gateway),
        })
    }
}

impl LavaJobArgs {
    /// The request these flags make, with the user's profile directories.
    pub fn request(&self, profile_dirs: &[PathBuf]) -> Result<JobRequest, String> {
        let kernels = self.compared.pairs().map_err(|e| e.to_string())?;
        Ok(JobRequest {
            kernels,
            names: self.compared.names.clone(),
            profile_dirs: profile_dirs.to_vec(),
            plan: self.sampling.plan().map_err(|e| e.to_string())?,
            boots: self.boots,
            out: self.out.clone(),
            cpus: self.cpus,
            artifacts_url: self.artifacts_url.clone(),
            settings: Settings {
                device_type: self.device_type.clone(),
                method: self.boot_method.into(),
                job_name: self.job_name.clone(),
                boot_minutes: self.boot_timeout,
                test_minutes: self.test_timeout,
                pushes: self.push.server.is_some(),
                context: self.context.clone(),
            },
            memory: self.memory.clone(),
            guest_kbench: self.guest.guest_kbench.clone(),
            cache: self.cache.cache(),
            rootfs: self.disk.rootfs.clone(),
            rootfs_cache: self.disk.rootfs_cache.cache(),
            push: self.push.push(),
            dtbs: self.dtb.clone(),
        })
    }
}

/// `KEY=VALUE`.
fn key_value(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((key, value)) if !key.is_empty() => Ok((key.to_string(), value.to_string())),
        _ => Err(format!("'{text}' is not KEY=VALUE")),
    }
}

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  lava-run --job-id 1 --output-dir out --device qemu.yaml \
job/job.yaml > job.log\n  kbench lava import job.log --into lab\n  curl -H \"Authorization: \
Token $TOKEN\" https://lava.example/api/v0.2/jobs/1234/logs/ | kbench lava import - --into lab\n\n\
The log is lava-run's standard output, a LAVA server's job log (output.yaml, \
/api/v0.2/jobs/ID/logs/), or a plain serial log. Each boot's framed block is checked frame by \
frame (number, length, CRC-32): a boot whose block is damaged or cut short keeps the tests that \
arrived whole, and says so. A boot that came up in another kernel than its plan's measured \
nothing and is listed as refused; a boot LAVA failed is listed with LAVA's error. A boot stored \
already (same identifier and guest boot id) is not stored twice, so a log can be imported again, \
and runs a guest pushed are not doubled. With --server the runs go to a kbench server too."
)]
pub struct LavaImportArgs {
    /// The job's log; - reads standard input
    #[arg(value_name = "LOG")]
    pub log: PathBuf,

    /// Result set to store into
    #[arg(long, value_name = "SET")]
    pub into: String,

    #[command(flatten)]
    pub upload: UploadArgs,

    /// Print each boot's outcome as JSON on stdout
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
#[command(
    after_help = "Example:\n  kbench lava submit job/job.yaml --url https://lava.example \
--lava-token $LAVA_TOKEN --into lab\n\nPOSTs the definition to /api/v0.2/jobs/ with `Authorization: \
Token KEY` and prints each job's id and page. With --into it then reads the job's state every \
--poll seconds (a progress line says it), and when the job has finished fetches its log \
(/api/v0.2/jobs/ID/logs/) and stores it as `kbench lava import` does. A job that ended \
Incomplete or Canceled is said with LAVA's failure comment and error; whatever boots it finished \
are stored. LAVA's refusals are shown as LAVA words them: an unknown device type (400), a bad \
token (401), a token whose user may not submit (403); nothing is stored then. Prints one line \
per job: its id and its page."
)]
pub struct LavaSubmitArgs {
    /// The job definition (job.yaml of `kbench lava job`)
    #[arg(value_name = "JOB.yaml")]
    pub definition: PathBuf,

    /// The LAVA server, http[s]://HOST[:PORT]
    #[arg(long, value_name = "URL", env = "KBENCH_LAVA_URL")]
    pub url: String,

    /// LAVA API token (LAVA's web interface, API > Tokens); --token is kbench server's
    #[arg(
        long,
        value_name = "KEY",
        env = "KBENCH_LAVA_TOKEN",
        hide_env_values = true
    )]
    pub lava_token: Option<String>,

    /// Follow the job(s) to the end and store the results in this result set
    #[arg(long, value_name = "SET")]
    pub into: Option<String>,

    /// Seconds between two reads of a followed job's state
    #[arg(long, value_name = "SECONDS", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub poll: u64,

    #[command(flatten)]
    pub upload: UploadArgs,
}
