//! Flags of `kbench campaign`.

use crate::{Cli, Command, CompareArgs, RunArgs};
use clap::{Args, Parser, Subcommand};
use kbench_campaign::StartRequest;
use kbench_model::campaign::{Settle, Switch};
use std::path::PathBuf;

/// Measure kernels one boot at a time on this machine, alternating, resumed at every boot
#[derive(Debug, Subcommand)]
pub enum CampaignCommand {
    /// Plan the boots, install the boot hook and switch to the first kernel (this reboots)
    #[command(
        after_help = "Each boot runs `kbench run TESTS [-- RUN OPTIONS]` once, into the result \
set NAME as the boot's kernel (its name before '='). Boots alternate in rounds, each round every \
kernel once in a random order drawn from a recorded seed; `kbench compare NAME` then decides with \
boots as the unit.\n\n\
A kernel is NAME=RELEASE (installed: /boot/vmlinuz-RELEASE and its initrd) or NAME=PATH of an \
image. Switching is kexec_file_load with the command line this machine booted with, plus panic=N \
and a marker, then a kexec reboot (`systemctl kexec` under systemd); or your boot-loader command \
with --switch-command. A hook (a systemd unit, or /etc/rc.local without systemd) resumes the \
campaign at every boot: it checks the running kernel against the plan (a wrong kernel is not \
measured; the switch is tried once more, then the campaign stops), waits for the machine to \
settle, measures, and switches on. After the last boot it removes itself and returns to the \
kernel you started from. A hardware watchdog (/dev/watchdog), where there is one, is armed across \
each switch. A boot cut short by a crash or power loss is measured again; its partial runs are \
kept, marked aborted.\n\n\
Everything is checked before anything switches: the images and initrds, that kexec works here, \
that the hook can be installed (root), and that no other campaign runs.\n\n\
Examples:\n  kbench campaign start tlb --kernel old=6.1.0-57-amd64 --kernel new=6.12.9-amd64 \\\n      \
--boots 4 syscall-null pipe-lat\n  kbench campaign start fix --kernel base=/boot/vmlinuz-6.12 \
--kernel fix=./bzImage --initrd fix=/boot/initrd.img-6.12 \\\n      --boots 6 --until-decided 12 \
quick -- --rounds 3\n  kbench campaign start grub --kernel a=6.1.0-57-amd64 --kernel b=6.12.9-amd64 \
\\\n      --switch-command \"grub-reboot 'Advanced options for Debian GNU/Linux>Debian GNU/Linux, with \
Linux {release}' && reboot\" quick"
    )]
    Start(Box<CampaignStartArgs>),
    /// A campaign's kernels, each boot's status and log, and the comparison once measured
    Show(CampaignShowArgs),
    /// Every campaign: kernels and progress
    List(crate::JsonArg),
    /// End a running campaign: remove its hook and unload a loaded kexec kernel (nothing reboots)
    Stop(CampaignNameArg),
    /// The boot hook's work: resume the running campaign at this boot (run by the hook)
    #[command(hide = true)]
    Resume,
}

#[derive(Debug, Args)]
pub struct CampaignStartArgs {
    /// The campaign's name, and its result set's
    #[arg(value_name = "NAME")]
    pub name: String,

    /// A kernel compared: NAME=RELEASE (installed in /boot) or NAME=PATH of an image; two or
    /// more, the first is the baseline
    #[arg(long = "kernel", value_name = "NAME=RELEASE|PATH", required = true,
          value_parser = name_value)]
    pub kernels: Vec<(String, String)>,

    /// The initrd of kernel NAME (default: /boot/initrd.img-RELEASE where it exists)
    #[arg(long = "initrd", value_name = "NAME=PATH", value_parser = name_value)]
    pub initrds: Vec<(String, String)>,

    /// Boots per kernel
    #[arg(long, value_name = "K", default_value_t = 4)]
    pub boots: u32,

    /// Add boots while the comparison's plan says more would decide an inconclusive metric, up
    /// to N boots per kernel
    #[arg(long, value_name = "N")]
    pub until_decided: Option<u32>,

    /// Switch kernels with this boot-loader command instead of kexec, run by `sh -c` with
    /// {name}, {release}, {image} and {initrd} replaced; it must reboot
    #[arg(long, value_name = "CMD")]
    pub switch_command: Option<String>,

    /// Parameters added to the command line of kexec'd kernels
    #[arg(
        long,
        value_name = "PARAMS",
        conflicts_with = "switch_command",
        default_value = ""
    )]
    pub append: String,

    /// panic=N on kexec'd kernels: a kernel that panics reboots (to your default) after N s
    #[arg(long, value_name = "SECONDS", default_value_t = 10)]
    pub panic: u32,

    /// How long a switched-to kernel has to run the hook; after it, a boot in another kernel
    /// ends the campaign (and the watchdog's timeout)
    #[arg(long, value_name = "SECONDS", default_value_t = 600)]
    pub hook_timeout: u64,

    /// Settled: the 1-minute load average at most this
    #[arg(long, value_name = "LOAD", default_value_t = 0.5)]
    pub settle_load: f64,

    /// Settled: up at least this many seconds
    #[arg(long, value_name = "SECONDS", default_value_t = 60.0)]
    pub settle_uptime: f64,

    /// The longest wait to settle; the boot is then measured anyway, and says so
    #[arg(long, value_name = "SECONDS", default_value_t = 600.0)]
    pub settle_timeout: f64,

    /// Seed of the boots' order (default: random, recorded)
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,

    /// Tests or suites each boot runs, as `kbench run` takes them
    #[arg(value_name = "TEST", required = true)]
    pub tests: Vec<String>,

    /// Options of `kbench run` for each boot, after `--` (e.g. -- --rounds 3 --max-time 2)
    #[arg(last = true, value_name = "RUN OPTIONS")]
    pub run_options: Vec<String>,
}

impl CampaignStartArgs {
    /// The request, with the kbench binary and database the hook resumes
    /// with; `kbench run`'s arguments are checked as `run` parses them.
    pub fn request(self, kbench: PathBuf, db: String) -> Result<StartRequest, String> {
        let mut run_args = self.tests;
        run_args.extend(self.run_options);
        check_run_args(&run_args)?;
        let switch = match self.switch_command {
            Some(command) => Switch::Command { command },
            None => Switch::Kexec {
                append: self.append,
            },
        };
        Ok(StartRequest {
            name: self.name,
            kernels: self.kernels,
            initrds: (self.initrds.into_iter())
                .map(|(name, path)| (name, PathBuf::from(path)))
                .collect(),
            boots_per_kernel: self.boots,
            switch,
            run_args,
            settle: Settle {
                max_load: self.settle_load,
                min_uptime_s: self.settle_uptime,
                timeout_s: self.settle_timeout,
            },
            panic_s: self.panic,
            hook_timeout_s: self.hook_timeout,
            until_decided: self.until_decided,
            seed: self.seed,
            kbench,
            db,
        })
    }
}

/// `NAME=VALUE`, the name checked as identifiers' are.
fn name_value(text: &str) -> Result<(String, String), String> {
    let Some((name, value)) = text.split_once('=') else {
        return Err(format!(
            "{text:?} has no '=': write NAME=VALUE, e.g. old=6.1.0-57-amd64"
        ));
    };
    kbench_model::validate_name("the name", name)?;
    if value.is_empty() {
        return Err(format!("{name}= has nothing after '='"));
    }
    Ok((name.to_string(), value.to_string()))
}

/// Refuses `kbench run` arguments that do not parse, or that set what the
/// campaign sets (the set, the identifier) or measure several
/// identifiers at once.
fn check_run_args(args: &[String]) -> Result<(), String> {
    let line = ["kbench", "run"]
        .into_iter()
        .map(String::from)
        .chain(args.iter().cloned());
    let run: RunArgs = match Cli::try_parse_from(line) {
        Ok(Cli {
            command: Command::Run(run),
            ..
        }) => run,
        Ok(_) => unreachable!("`kbench run ...` parses as run"),
        Err(error) => {
            return Err(format!(
                "each boot's `kbench run {}` does not parse: {}",
                args.join(" "),
                error.render()
            ));
        }
    };
    if run.identifier.is_some() || run.into != "default" {
        return Err("--into and --as are the campaign's: its runs go into the set named after it, as each kernel's name".into());
    }
    if !run.variant.is_empty() || !run.variants.is_empty() || run.duet {
        return Err("--variant, --variants and --duet measure several identifiers in one boot; a campaign measures one kernel per boot".into());
    }
    Ok(())
}

#[derive(Debug, Args)]
pub struct CampaignShowArgs {
    #[command(flatten)]
    pub name: CampaignNameArg,

    /// Print the campaign's JSON document (kbench.campaign/1) on stdout
    #[arg(long)]
    pub json: bool,
}

impl CampaignShowArgs {
    /// `kbench compare NAME`'s arguments: the comparison `show` adds.
    pub fn compare(&self) -> CompareArgs {
        match Cli::parse_from(["kbench", "compare", &self.name.name]).command {
            Command::Compare(args) => args,
            _ => unreachable!("`kbench compare NAME` parses as compare"),
        }
    }
}

#[derive(Debug, Args)]
pub struct CampaignNameArg {
    /// The campaign's name
    #[arg(value_name = "NAME")]
    pub name: String,
}
