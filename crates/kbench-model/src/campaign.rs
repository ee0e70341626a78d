//! A campaign's state (`kbench campaign`): kernels measured one boot at a
//! time on one machine, alternating, with a hook that resumes the campaign
//! after each boot. kbench-campaign drives it and keeps it in the store as
//! JSON after every step; reports render it. Only its shape lives here.

use serde::{Deserialize, Serialize};

/// The kernel parameter whose value marks a boot as a campaign's kexec:
/// `kbench.boot=CAMPAIGN/BOOT/SWITCH`. The kernel passes a dotted
/// parameter it does not know over, and keeps it in /proc/cmdline.
pub const BOOT_MARKER: &str = "kbench.boot";

/// The `schema` of a campaign's JSON document.
pub const CAMPAIGN_SCHEMA: &str = "kbench.campaign/1";

/// Everything a campaign knows: what it was asked, its plan, and each
/// boot's fate so far.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Campaign {
    pub schema: String,
    /// Its name, which is also the result set its runs go into.
    pub name: String,
    pub created_at_ms: i64,
    /// The kernels compared, in the order given; the first is the baseline.
    pub kernels: Vec<CampaignKernel>,
    /// The kernel the machine ran when the campaign started, returned to
    /// at its end.
    pub origin: OriginKernel,
    pub switch: Switch,
    /// The arguments of `kbench run` each boot runs, as the user gave them
    /// (`--into` and `--as` are the campaign's).
    pub run_args: Vec<String>,
    pub settle: Settle,
    /// `panic=` on the command line of kernels the campaign kexecs: a
    /// kernel that panics reboots after this many seconds.
    pub panic_s: u32,
    /// How long a switched-to kernel has to run the hook; past it, a boot
    /// in another kernel ends the campaign.
    pub hook_timeout_s: u64,
    pub hook: Hook,
    /// The kbench binary and the database the hook resumes with.
    pub kbench: String,
    pub db: String,
    /// The seed of the boots' order (each pair of boots in a random order).
    pub seed: u64,
    /// Boots per kernel planned at the start.
    pub boots_per_kernel: u32,
    /// `--until-decided`: the cap of boots per kernel the campaign may
    /// extend itself to; `None` without it.
    pub until_decided: Option<u32>,
    /// The planned boots in order, each with what happened to it.
    pub boots: Vec<Boot>,
    pub state: CampaignState,
    /// What happened, in order, for people.
    pub log: Vec<LogEntry>,
}

/// One of the kernels compared.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CampaignKernel {
    /// Its identifier in the result set.
    pub name: String,
    pub image: String,
    pub initrd: Option<String>,
    /// Its release, read from the image (what `uname -r` says once booted).
    pub release: String,
}

/// The kernel the campaign started from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OriginKernel {
    pub release: String,
    /// Its image and initrd where found (`BOOT_IMAGE=`, or
    /// /boot/vmlinuz-RELEASE); without an image the return is a reboot.
    pub image: Option<String>,
    pub initrd: Option<String>,
    /// Its command line (/proc/cmdline), the base of every kexec's.
    pub cmdline: String,
}

/// How the campaign moves the machine to the next kernel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Switch {
    /// `kexec_file_load` of the kernel and initrd with the origin's command
    /// line, `panic=`, a marker and `append`; then a kexec reboot.
    Kexec { append: String },
    /// The user's boot-loader command, run by `sh -c` with `{name}`,
    /// `{release}`, `{image}` and `{initrd}` replaced.
    Command { command: String },
}

/// When the machine counts as settled after a boot.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Settle {
    /// The 1-minute load average at most.
    pub max_load: f64,
    /// Seconds since boot at least.
    pub min_uptime_s: f64,
    /// The longest wait; the invocation then runs unsettled, and says so.
    pub timeout_s: f64,
}

/// Where the hook that resumes the campaign at boot is installed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Hook {
    /// A systemd unit (systemd is PID 1), enabled by a symbolic link.
    Systemd { unit: String, link: String },
    /// A block of lines in /etc/rc.local (no systemd).
    RcLocal { path: String },
}

/// One planned boot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Boot {
    /// Index in [`Campaign::kernels`].
    pub kernel: usize,
    pub status: BootStatus,
    /// Switches made to reach it (a wrong kernel gets one more).
    pub switches: u32,
    pub switched_at_ms: Option<i64>,
    /// The marker of the last kexec to it (`kbench.boot=` on its command
    /// line): a boot carrying it came from that kexec.
    pub marker: Option<String>,
    /// Whether the hardware watchdog was armed across the last switch to
    /// it (the hook disarms it).
    #[serde(default)]
    pub watchdog: bool,
    /// The boot it was measured in.
    pub boot_id: Option<String>,
    pub via: Option<BootVia>,
    pub started_at_ms: Option<i64>,
    pub ended_at_ms: Option<i64>,
    pub settled: Option<Settled>,
    /// The runs its invocation stored.
    pub runs: Vec<i64>,
    /// How its invocation ended: "exit status 0", ...
    pub exit: Option<String>,
    /// Invocations cut short by the machine going down, redone since.
    pub aborted: Vec<Aborted>,
    /// Boots that came up in another kernel than planned.
    pub wrong: Vec<WrongKernel>,
}

impl Boot {
    /// A boot of kernel `kernel` not yet switched to.
    pub fn planned(kernel: usize) -> Boot {
        Boot {
            kernel,
            status: BootStatus::Planned,
            switches: 0,
            switched_at_ms: None,
            marker: None,
            watchdog: false,
            boot_id: None,
            via: None,
            started_at_ms: None,
            ended_at_ms: None,
            settled: None,
            runs: Vec::new(),
            exit: None,
            aborted: Vec::new(),
            wrong: Vec::new(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BootStatus {
    Planned,
    /// Switched to; its kernel is booting.
    Switching,
    /// Its invocation is running (or was, when the machine went down).
    Measuring,
    Done,
}

impl BootStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            BootStatus::Planned => "planned",
            BootStatus::Switching => "switching",
            BootStatus::Measuring => "measuring",
            BootStatus::Done => "done",
        }
    }
}

/// How a boot started.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BootVia {
    /// The campaign's kexec: the firmware was skipped.
    Kexec,
    /// Through the firmware: a boot loader command, or a reset.
    Firmware,
}

impl BootVia {
    pub fn as_str(self) -> &'static str {
        match self {
            BootVia::Kexec => "kexec",
            BootVia::Firmware => "firmware",
        }
    }
}

/// How the wait for a settled machine ended.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Settled {
    pub settled: bool,
    pub waited_s: f64,
    pub load: f64,
    pub uptime_s: f64,
}

/// An invocation the machine went down in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Aborted {
    pub boot_id: String,
    /// Its runs, marked aborted in the store (kept, left out of reports).
    pub runs: Vec<i64>,
    pub found_at_ms: i64,
}

/// A boot that came up in another kernel than the one switched to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WrongKernel {
    pub release: String,
    pub boot_id: String,
    pub at_ms: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "state")]
pub enum CampaignState {
    Running,
    /// Every boot measured; the machine was sent back to the origin.
    Finished {
        at_ms: i64,
    },
    /// Ended early (`campaign stop`, a kernel that would not boot, ...).
    Stopped {
        at_ms: i64,
        reason: String,
    },
}

impl CampaignState {
    pub fn is_running(&self) -> bool {
        matches!(self, CampaignState::Running)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LogEntry {
    pub at_ms: i64,
    /// The boot it is about (index in [`Campaign::boots`]), if one.
    pub boot: Option<usize>,
    pub text: String,
}

impl Campaign {
    /// The kernel of boot `index`.
    pub fn kernel_of(&self, index: usize) -> &CampaignKernel {
        &self.kernels[self.boots[index].kernel]
    }

    /// The first boot not done, if any.
    pub fn current(&self) -> Option<usize> {
        self.boots
            .iter()
            .position(|boot| boot.status != BootStatus::Done)
    }

    /// Boots done of kernel `kernel`.
    pub fn done_of(&self, kernel: usize) -> usize {
        self.boots
            .iter()
            .filter(|boot| boot.kernel == kernel && boot.status == BootStatus::Done)
            .count()
    }

    /// Whether every kernel has a measured boot (a comparison can be made).
    pub fn every_kernel_measured(&self) -> bool {
        (0..self.kernels.len()).all(|kernel| self.done_of(kernel) > 0)
    }

    /// Notes `text` in the log, about boot `boot` if one.
    pub fn note(&mut self, at_ms: i64, boot: Option<usize>, text: String) {
        self.log.push(LogEntry { at_ms, boot, text });
    }
}
