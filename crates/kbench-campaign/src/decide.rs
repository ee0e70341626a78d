//! What the hook does at a boot, decided from the campaign's state and
//! what this boot is: pure, so every case is tested without booting.

use crate::cmdline::marker_of;
use kbench_model::campaign::{BootStatus, BootVia, Campaign, Switch};

/// This boot, as the hook sees it.
#[derive(Debug, Clone)]
pub struct Here {
    pub release: String,
    pub boot_id: String,
    pub cmdline: String,
    pub now_ms: i64,
}

/// The hook's next step.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Boot `index` was measuring when the machine went down (or the hook
    /// died): mark its runs aborted, plan it again, decide again.
    Recover { index: usize },
    /// Measure boot `index` now, in this boot.
    Measure { index: usize, via: BootVia },
    /// Switch to boot `index`'s kernel.
    Switch { index: usize },
    /// This boot runs another kernel than boot `index`'s, within the
    /// hook's timeout, for the first time: note it and switch again.
    Retry { index: usize },
    /// Every boot is measured: return to the origin.
    Finish,
    /// The campaign cannot go on, and why.
    Stop { reason: String },
}

/// The step for `campaign` at the boot `here`.
pub fn next(campaign: &Campaign, here: &Here) -> Step {
    let Some(index) = campaign.current() else {
        return Step::Finish;
    };
    let boot = &campaign.boots[index];
    let kernel = campaign.kernel_of(index);
    let right = here.release == kernel.release;
    match boot.status {
        BootStatus::Measuring => Step::Recover { index },
        BootStatus::Planned | BootStatus::Done if right => Step::Measure {
            index,
            via: BootVia::Firmware,
        },
        BootStatus::Planned | BootStatus::Done => Step::Switch { index },
        BootStatus::Switching if right => Step::Measure {
            index,
            via: match (&campaign.switch, &boot.marker) {
                (Switch::Kexec { .. }, Some(marker))
                    if marker_of(&here.cmdline) == Some(marker.as_str()) =>
                {
                    BootVia::Kexec
                }
                _ => BootVia::Firmware,
            },
        },
        BootStatus::Switching => {
            let waited_s = (here.now_ms - boot.switched_at_ms.unwrap_or(here.now_ms)) / 1000;
            let planned = format!(
                "boot {} of {} should run {} ({}), but the machine came up in {}",
                index + 1,
                campaign.boots.len(),
                kernel.name,
                kernel.release,
                here.release
            );
            if waited_s > campaign.hook_timeout_s as i64 {
                Step::Stop {
                    reason: format!(
                        "{planned} {waited_s} s after the switch, past the hook's timeout of \
                         {} s: {} failed to boot or hung until a reset (its console or \
                         `journalctl -b -1` says why)",
                        campaign.hook_timeout_s, kernel.name
                    ),
                }
            } else if boot.switches >= 2 {
                Step::Stop {
                    reason: format!(
                        "{planned}, after {} switches: {} panics while booting, or the boot \
                         loader chose another kernel (see `journalctl -b -1` and the console)",
                        boot.switches, kernel.name
                    ),
                }
            } else {
                Step::Retry { index }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::campaign;

    fn here(release: &str, cmdline: &str, now_ms: i64) -> Here {
        Here {
            release: release.into(),
            boot_id: "b-now".into(),
            cmdline: cmdline.into(),
            now_ms,
        }
    }

    #[test]
    fn a_switched_boot_in_its_kernel_is_measured_as_kexec_only_with_its_marker() {
        let mut c = campaign(&[0, 1]);
        c.boots[0].status = BootStatus::Switching;
        c.boots[0].marker = Some("c/1/1".into());
        c.boots[0].switched_at_ms = Some(0);
        let via = |cmdline: &str| match next(&c, &here("6.1", cmdline, 30_000)) {
            Step::Measure { index: 0, via } => via,
            other => panic!("{other:?}"),
        };
        assert_eq!(via("root=/dev/vda kbench.boot=c/1/1"), BootVia::Kexec);
        // A reset into the same kernel, or an older kexec's line: firmware.
        assert_eq!(via("root=/dev/vda kbench.boot=c/0/1"), BootVia::Firmware);
    }

    #[test]
    fn a_wrong_kernel_is_retried_once_then_stops_and_late_stops_at_once() {
        let mut c = campaign(&[1, 0]);
        c.boots[0].status = BootStatus::Switching;
        c.boots[0].switches = 1;
        c.boots[0].switched_at_ms = Some(0);
        let wrong = here("6.1", "", 60_000);
        assert_eq!(next(&c, &wrong), Step::Retry { index: 0 });
        c.boots[0].switches = 2;
        let Step::Stop { reason } = next(&c, &wrong) else {
            panic!()
        };
        assert!(
            reason.contains(
                "boot 1 of 2 should run B (6.12), but the machine came up in 6.1, after 2 switches"
            ),
            "{reason}"
        );
        c.boots[0].switches = 1;
        let late = here("6.1", "", (c.hook_timeout_s as i64 + 5) * 1000);
        let Step::Stop { reason } = next(&c, &late) else {
            panic!()
        };
        assert!(reason.contains("past the hook's timeout"), "{reason}");
    }

    #[test]
    fn a_boot_cut_short_is_recovered_then_measured_or_switched_to() {
        let mut c = campaign(&[0, 1]);
        c.boots[0].status = BootStatus::Done;
        c.boots[1].status = BootStatus::Measuring;
        assert_eq!(next(&c, &here("6.12", "", 0)), Step::Recover { index: 1 });
        c.boots[1].status = BootStatus::Planned;
        assert_eq!(
            next(&c, &here("6.12", "", 0)),
            Step::Measure {
                index: 1,
                via: BootVia::Firmware
            }
        );
        assert_eq!(next(&c, &here("6.1", "", 0)), Step::Switch { index: 1 });
        c.boots[1].status = BootStatus::Done;
        assert_eq!(next(&c, &here("6.1", "", 0)), Step::Finish);
    }
}
