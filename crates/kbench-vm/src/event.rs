//! What a [`Lab`](crate::lab::Lab) tells its caller as it prepares and
//! boots: the runner's progress, and notes for the user, each one line of
//! text ([`Note`]'s `Display`). The library prints nothing itself.

use super::launcher::BootTimes;
use super::qemu::Accel;
use super::rootfs::RootfsStep;
use kbench_measure::runner::RunEvent;
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

/// One thing the lab tells its observer.
#[derive(Debug, Clone, PartialEq)]
pub enum LabEvent {
    /// A line for the user.
    Note(Note),
    /// A run of `tests` tests starts (one boot, or a duet's blocks).
    Started { tests: usize },
    /// The runner's progress in it.
    Run(RunEvent),
    /// The run ended, stored or not.
    Ended,
    /// A step of building the rootfs the profiles need, or finding it
    /// cached.
    Rootfs(RootfsStep),
}

/// A line for the user.
#[derive(Debug, Clone, PartialEq)]
pub enum Note {
    /// A short boot under KVM tells whether KVM works.
    Probing {
        kernel: PathBuf,
    },
    UsingKvm,
    /// What the user should know: why TCG, or a guest that says it runs
    /// another release than its image's.
    Warning(String),
    /// One kernel boots for its turn of a round.
    Booting {
        round: u32,
        rounds: u32,
        kernel: PathBuf,
        identifier: String,
        accel: Accel,
        tests: usize,
    },
    /// A duet's two kernels boot together, once per test and block.
    BootingDuet {
        identifiers: [String; 2],
        accel: Accel,
        blocks: usize,
        tests: usize,
        seed: u64,
    },
    /// The times of the boot that just ended.
    Booted(BootTimes),
    /// The stop flag ended the measuring; what was stored is kept.
    Interrupted {
        duet: bool,
    },
}

impl fmt::Display for Note {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Note::Probing { kernel } => write!(
                f,
                "Probing KVM with a short boot of {} ...",
                kernel.display()
            ),
            Note::UsingKvm => write!(f, "Using KVM."),
            Note::Warning(text) => write!(f, "kbench: WARNING: {text}"),
            Note::Booting {
                round,
                rounds,
                kernel,
                identifier,
                accel,
                tests,
            } => write!(
                f,
                "Round {round} of {rounds}: booting {} as '{identifier}' ({}, {tests} test(s))",
                kernel.display(),
                label(*accel)
            ),
            Note::BootingDuet {
                identifiers: [a, b],
                accel,
                blocks,
                tests,
                seed,
            } => write!(
                f,
                "Booting '{a}' and '{b}' at once, each on a CPU of its own ({}): {blocks} blocks \
                 of each of {tests} test(s), seed {seed}",
                label(*accel)
            ),
            Note::Booted(boot) => {
                let seconds = |d: Option<Duration>| {
                    d.map_or("-".to_string(), |d| format!("{:.1} s", d.as_secs_f64()))
                };
                if let Some(log) = &boot.died_first {
                    writeln!(
                        f,
                        "  boot: the guest died before its agent started (serial log kept at \
                         {}); booted it once more",
                        log.display()
                    )?;
                }
                write!(
                    f,
                    "  boot: agent up after {}, first sample after {}, qemu ended after {}",
                    seconds(boot.agent),
                    seconds(boot.first_sample),
                    seconds(Some(boot.total))
                )
            }
            Note::Interrupted { duet: false } => write!(
                f,
                "\nInterrupted: the samples so far are kept. Run the same command again to resume."
            ),
            Note::Interrupted { duet: true } => write!(
                f,
                "\nInterrupted: the samples so far are kept; the same command measures a new \
                 session."
            ),
        }
    }
}

/// "KVM", or "TCG, emulated", for the boot lines.
fn label(accel: Accel) -> &'static str {
    match accel {
        Accel::Kvm => "KVM",
        Accel::Tcg => "TCG, emulated",
    }
}
