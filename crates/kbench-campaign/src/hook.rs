//! The hook that resumes a campaign at every boot: a systemd unit where
//! systemd is PID 1, else a block in /etc/rc.local, which sysvinit's
//! rc.local script runs last at boot. rc.local rather than cron's
//! @reboot: it needs no cron daemon, and it runs after the other boot
//! scripts, as the unit runs after multi-user.target. Paths are under a
//! root directory, `/` but in tests.

use crate::error::{CampaignError, Result, refuse};
use kbench_model::campaign::Hook;
use std::path::{Path, PathBuf};

/// The unit's file name.
const UNIT: &str = "kbench-campaign.service";
/// The lines around the rc.local block.
const BEGIN: &str = "# kbench campaign: begin";
const END: &str = "# kbench campaign: end";

/// The hook for this system: systemd's unit when it runs (sd_booted: the
/// directory /run/systemd/system exists), else rc.local.
pub fn choose(root: &Path) -> Hook {
    let at = |path: &str| root.join(path).to_string_lossy().into_owned();
    match root.join("run/systemd/system").is_dir() {
        true => Hook::Systemd {
            unit: at(&format!("etc/systemd/system/{UNIT}")),
            link: at(&format!(
                "etc/systemd/system/multi-user.target.wants/{UNIT}"
            )),
        },
        false => Hook::RcLocal {
            path: at("etc/rc.local"),
        },
    }
}

/// The file the hook writes.
fn file(hook: &Hook) -> PathBuf {
    match hook {
        Hook::Systemd { unit, .. } => PathBuf::from(unit),
        Hook::RcLocal { path } => PathBuf::from(path),
    }
}

/// Refuses when the hook cannot be installed (not root, or its directory
/// is not writable), or when one is installed already: another campaign.
pub fn check(hook: &Hook) -> Result<()> {
    if installed(hook) {
        refuse!(
            "a campaign hook is installed already ({}): another campaign is running. See \
             `kbench campaign list`, and stop it with `kbench campaign stop NAME` first",
            file(hook).display()
        );
    }
    let path = file(hook);
    // The nearest directory there is: the hook's own may be made.
    let dir = path
        .ancestors()
        .skip(1)
        .find(|dir| dir.is_dir())
        .unwrap_or(Path::new("/"));
    let writable = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes())
        // SAFETY: access(2) reads the NUL-terminated path.
        .is_ok_and(|dir| unsafe { libc::access(dir.as_ptr(), libc::W_OK) } == 0);
    if !writable {
        refuse!(
            "the campaign cannot install its boot hook: {} is not writable by this user. A \
             campaign reboots the machine and resumes at boot: run it as root (sudo)",
            dir.display()
        );
    }
    Ok(())
}

/// Whether the hook is in place.
pub fn installed(hook: &Hook) -> bool {
    match hook {
        Hook::Systemd { unit, .. } => Path::new(unit).exists(),
        Hook::RcLocal { path } => {
            std::fs::read_to_string(path).is_ok_and(|text| text.contains(BEGIN))
        }
    }
}

/// Installs the hook to run `command` (a shell-quoted command line) at
/// every boot, for campaign `name`.
pub fn install(hook: &Hook, name: &str, command: &str) -> Result<()> {
    match hook {
        Hook::Systemd { unit, link } => {
            let text = format!(
                "# Installed by `kbench campaign start {name}`; removed when it ends.\n\
                 [Unit]\n\
                 Description=kbench campaign {name}: measure this boot, then switch kernels\n\
                 After=multi-user.target\n\n\
                 [Service]\n\
                 Type=exec\n\
                 ExecStart={command}\n\
                 StandardOutput=journal+console\n\
                 StandardError=journal+console\n\n\
                 [Install]\n\
                 WantedBy=multi-user.target\n"
            );
            write(Path::new(unit), &text)?;
            let link = Path::new(link);
            if let Some(dir) = link.parent() {
                std::fs::create_dir_all(dir)
                    .map_err(CampaignError::os(format!("creating {}", dir.display())))?;
            }
            std::os::unix::fs::symlink(unit, link)
                .map_err(CampaignError::os(format!("enabling {}", link.display())))
        }
        Hook::RcLocal { path } => {
            let old = std::fs::read_to_string(path)
                .unwrap_or_else(|_| "#!/bin/sh -e\n\nexit 0\n".to_string());
            let block = format!("{BEGIN} {name}\n{command} >/dev/console 2>&1 &\n{END}\n");
            // Before the script's final `exit 0`, if it has one.
            let text = match old.rfind("\nexit 0") {
                Some(at) => format!("{}\n{block}{}", &old[..at], &old[at + 1..]),
                None => format!("{old}\n{block}"),
            };
            write(Path::new(path), &text)?;
            set_executable(Path::new(path))
        }
    }
}

/// Removes the hook; nothing to do when it is gone already.
pub fn remove(hook: &Hook) -> Result<()> {
    match hook {
        Hook::Systemd { unit, link } => {
            for path in [link, unit] {
                match std::fs::remove_file(path) {
                    Err(error) if error.kind() != std::io::ErrorKind::NotFound => {
                        return Err(CampaignError::os(format!("removing {path}"))(error));
                    }
                    _ => {}
                }
            }
            Ok(())
        }
        Hook::RcLocal { path } => {
            let Ok(old) = std::fs::read_to_string(path) else {
                return Ok(());
            };
            let (Some(begin), Some(end)) = (old.find(BEGIN), old.find(END)) else {
                return Ok(());
            };
            let after = end + END.len() + usize::from(old[end + END.len()..].starts_with('\n'));
            write(
                Path::new(path),
                &format!("{}{}", &old[..begin], &old[after..]),
            )
        }
    }
}

fn write(path: &Path, text: &str) -> Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .map_err(CampaignError::os(format!("creating {}", dir.display())))?;
    }
    std::fs::write(path, text).map_err(CampaignError::os(format!("writing {}", path.display())))
}

fn set_executable(path: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).map_err(
        CampaignError::os(format!("making {} executable", path.display())),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_systemd_unit_is_written_enabled_and_removed() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join("run/systemd/system")).unwrap();
        let hook = choose(root.path());
        assert!(matches!(hook, Hook::Systemd { .. }));
        check(&hook).unwrap();
        install(&hook, "c", "/usr/bin/kbench --db /d campaign resume").unwrap();
        let Hook::Systemd { unit, link } = &hook else {
            unreachable!()
        };
        let text = std::fs::read_to_string(link).unwrap();
        assert!(
            text.contains("ExecStart=/usr/bin/kbench --db /d campaign resume"),
            "{text}"
        );
        assert!(installed(&hook));
        let refused = check(&hook).unwrap_err().to_string();
        assert!(refused.contains("another campaign is running"), "{refused}");
        remove(&hook).unwrap();
        assert!(!Path::new(unit).exists() && !Path::new(link).exists());
        remove(&hook).unwrap();
    }

    #[test]
    fn the_rc_local_block_goes_before_exit_and_comes_out_exactly() {
        let root = tempfile::tempdir().unwrap();
        let hook = choose(root.path());
        let Hook::RcLocal { path } = &hook else {
            panic!("no systemd here: {hook:?}")
        };
        let mine = "#!/bin/sh -e\n/usr/local/bin/fan-control &\n\nexit 0\n";
        write(Path::new(path), mine).unwrap();
        install(&hook, "c", "/usr/bin/kbench campaign resume").unwrap();
        let text = std::fs::read_to_string(path).unwrap();
        let block = text.find(BEGIN).unwrap();
        assert!(block < text.rfind("exit 0").unwrap(), "{text}");
        assert!(text.contains("kbench campaign resume >/dev/console 2>&1 &"));
        remove(&hook).unwrap();
        assert_eq!(std::fs::read_to_string(path).unwrap(), mine);
        assert!(!installed(&hook));
    }
}
