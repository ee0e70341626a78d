//! Moving the machine to a kernel: to a planned boot's (with `panic=` and
//! the boot's marker on a kexec), or back to the origin at the end. The
//! state is saved by the caller between [`prepare`] and [`perform`], so a
//! machine that never comes back still says where it was going.

use crate::cmdline::{kexec_cmdline, return_cmdline};
use crate::command;
use crate::error::{Result, refuse};
use crate::kexec;
use kbench_model::campaign::{BootStatus, Campaign, Hook, Switch};
use std::path::Path;

/// Where a switch goes.
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    pub name: String,
    pub release: String,
    pub image: Option<String>,
    pub initrd: Option<String>,
    /// The kexec command line (unused by a boot-loader command).
    pub cmdline: String,
}

/// Marks boot `index` as switched to once more, now; its target.
pub fn prepare(campaign: &mut Campaign, index: usize, now_ms: i64) -> Target {
    let panic_s = campaign.panic_s;
    let (name, origin) = (campaign.name.clone(), campaign.origin.cmdline.clone());
    let append = match &campaign.switch {
        Switch::Kexec { append } => append.clone(),
        Switch::Command { .. } => String::new(),
    };
    let kernel = campaign.kernels[campaign.boots[index].kernel].clone();
    let boot = &mut campaign.boots[index];
    boot.switches += 1;
    boot.status = BootStatus::Switching;
    boot.switched_at_ms = Some(now_ms);
    let marker = format!("{name}/{}/{}", index + 1, boot.switches);
    boot.marker = Some(marker.clone());
    Target {
        name: kernel.name,
        release: kernel.release,
        image: Some(kernel.image),
        initrd: kernel.initrd,
        cmdline: kexec_cmdline(&origin, panic_s, &marker, &append),
    }
}

/// The origin, as the target of the return.
pub fn origin(campaign: &Campaign) -> Target {
    let origin = &campaign.origin;
    Target {
        name: "origin".into(),
        release: origin.release.clone(),
        image: origin.image.clone(),
        initrd: origin.initrd.clone(),
        cmdline: return_cmdline(&origin.cmdline),
    }
}

/// Loads `target` where it is a kexec (the kernel checks the image here),
/// so that a refusal comes before anything is saved as switched.
pub fn load(campaign: &Campaign, target: &Target) -> Result<()> {
    match (&campaign.switch, &target.image) {
        (Switch::Kexec { .. }, Some(image)) => kexec::load(
            Path::new(image),
            target.initrd.as_deref().map(Path::new),
            &target.cmdline,
        ),
        _ => Ok(()),
    }
}

/// Switches to `target` (loaded by [`load`]): the kexec reboot, the
/// boot-loader command, or a plain reboot for an origin without an image.
/// Returns when the reboot is under way.
pub fn perform(campaign: &Campaign, target: &Target, tell: &mut dyn FnMut(String)) -> Result<()> {
    let systemd = matches!(campaign.hook, Hook::Systemd { .. });
    match (&campaign.switch, &target.image) {
        (Switch::Kexec { .. }, Some(_)) => {
            tell(format!(
                "kexec into {} ({}) with: {}",
                target.name, target.release, target.cmdline
            ));
            kexec::reboot(systemd)
        }
        (Switch::Kexec { .. }, None) => {
            tell(format!(
                "rebooting into the boot loader's default kernel (the origin {} has no image to kexec)",
                target.release
            ));
            match systemd {
                true => command::run("systemctl", &["reboot"]),
                false => command::run("reboot", &[]),
            }
        }
        (Switch::Command { command }, _) => {
            let line = fill(command, target);
            tell(format!(
                "switching to {} ({}): {line}",
                target.name, target.release
            ));
            command::run("sh", &["-c", &line])
        }
    }
}

/// `command` with `{name}`, `{release}`, `{image}` and `{initrd}` of
/// `target` in place.
pub fn fill(command: &str, target: &Target) -> String {
    command
        .replace("{name}", &target.name)
        .replace("{release}", &target.release)
        .replace("{image}", target.image.as_deref().unwrap_or(""))
        .replace("{initrd}", target.initrd.as_deref().unwrap_or(""))
}

/// Refuses a boot-loader command that is empty.
pub fn check_command(command: &str) -> Result<()> {
    if command.trim().is_empty() {
        refuse!(
            "--switch-command is empty: give the command that boots a kernel, e.g. \"grub-reboot 'Advanced options for Debian GNU/Linux>Debian GNU/Linux, with Linux {{release}}' && reboot\""
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::campaign;

    #[test]
    fn a_prepared_switch_counts_and_marks_the_boot() {
        let mut c = campaign(&[1, 0]);
        let target = prepare(&mut c, 0, 5_000);
        assert_eq!(target.release, "6.12");
        assert_eq!(target.cmdline, "root=/dev/vda panic=10 kbench.boot=c/1/1");
        let again = prepare(&mut c, 0, 9_000);
        assert!(
            again.cmdline.ends_with("kbench.boot=c/1/2"),
            "{}",
            again.cmdline
        );
        let boot = &c.boots[0];
        assert_eq!(
            (boot.switches, boot.status, boot.switched_at_ms),
            (2, BootStatus::Switching, Some(9_000))
        );
        assert_eq!(origin(&c).cmdline, "root=/dev/vda");
    }

    #[test]
    fn a_boot_loader_command_gets_the_targets_names() {
        let c = campaign(&[1, 0]);
        let target = origin(&c);
        assert_eq!(
            fill(
                "grub-reboot 'Linux {release}' && reboot # {name} {image}",
                &target
            ),
            "grub-reboot 'Linux 6.1' && reboot # origin /boot/vmlinuz-6.1"
        );
        assert!(check_command("  ").is_err());
    }
}
