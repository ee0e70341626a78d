//! `kbench install`: the Debian packages external benchmark profiles need,
//! through apt-get, non-interactively, checked afterwards by the programs
//! the profiles run.

use crate::error::{CatalogError, Result, invalid};
use crate::profile::{Profiles, missing_message};
use crate::programs::{effective_uid, find_program};
use std::path::Path;
use std::process::Command;

/// The apt-get command line that installs `packages`.
pub fn command_line(packages: &[String]) -> String {
    format!(
        "apt-get install -y --no-install-recommends {}",
        packages.join(" ")
    )
}

/// A step of [`install`], as it starts: the caller shows it (a bar, a
/// line), the library draws nothing. apt-get's own output is kept for the
/// error when it fails, so that it does not run over a bar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InstallStep<'a> {
    /// `apt-get update`: asked for, or apt has no package lists.
    Updating,
    Installing(&'a [String]),
    /// Looking for the programs the profiles run.
    Checking,
}

impl InstallStep<'_> {
    /// The steps of an install that updates first.
    pub const TOTAL: u64 = 3;

    /// Its place among the [`InstallStep::TOTAL`] steps, from 1.
    pub fn number(&self) -> u64 {
        match self {
            InstallStep::Updating => 1,
            InstallStep::Installing(_) => 2,
            InstallStep::Checking => 3,
        }
    }
}

impl std::fmt::Display for InstallStep<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            InstallStep::Updating => f.write_str("updating apt's package lists"),
            InstallStep::Installing(packages) => write!(f, "installing {}", packages.join(" ")),
            InstallStep::Checking => f.write_str("checking the profiles' programs"),
        }
    }
}

/// Installs the packages of the profiles (or profile tests) `names`:
/// refreshes apt's lists when asked or when there are none, installs, and
/// checks that every program the profiles need is now there; `observe`
/// hears each step as it starts. Needs root and apt-get; the packages
/// installed on success.
pub fn install(
    profiles: &Profiles,
    names: &[String],
    update: bool,
    observe: &mut dyn FnMut(InstallStep),
) -> Result<Vec<String>> {
    let packages = profiles.packages_of(names)?;
    if find_program("apt-get").is_none() {
        invalid!(
            "apt-get was not found: kbench install knows Debian packages only; install these \
             with this system's package manager: {}",
            packages.join(" ")
        );
    }
    if effective_uid() != Some(0) {
        invalid!(
            "installing packages needs root: run `sudo kbench install {}`, or as root: \
             DEBIAN_FRONTEND=noninteractive {}",
            names.join(" "),
            command_line(&packages)
        );
    }
    if update || !has_package_lists(Path::new("/var/lib/apt/lists")) {
        observe(InstallStep::Updating);
        apt_get(&["update", "-q"])?;
    }
    observe(InstallStep::Installing(&packages));
    let mut install = vec!["install", "-y", "--no-install-recommends"];
    install.extend(packages.iter().map(String::as_str));
    apt_get(&install)?;
    observe(InstallStep::Checking);
    // Whatever apt-get said, the programs are what the runs need.
    let mut missing = Vec::new();
    for name in names {
        let base = name.split('[').next().unwrap_or(name);
        let profile = profiles
            .profile(base)
            .or_else(|| profiles.test(base).map(|(p, _)| p))
            .expect("packages_of found it");
        let absent = profiles.missing_programs(profile);
        if !absent.is_empty() {
            missing.push(missing_message(profile, &absent));
        }
    }
    if !missing.is_empty() {
        invalid!(
            "apt-get installed {} but programs are still missing:\n{}",
            packages.join(" "),
            missing.join("\n")
        );
    }
    Ok(packages)
}

/// Runs apt-get, its output kept: in the error when it fails, in the
/// debug log otherwise.
fn apt_get(args: &[&str]) -> Result<()> {
    tracing::info!("running apt-get {}", args.join(" "));
    let output = Command::new("apt-get")
        .args(args)
        .env("DEBIAN_FRONTEND", "noninteractive")
        .output()
        .map_err(|e| CatalogError::Invalid(format!("cannot run apt-get: {e}")))?;
    let said = String::from_utf8_lossy(&output.stdout) + String::from_utf8_lossy(&output.stderr);
    if !output.status.success() {
        invalid!(
            "`apt-get {}` failed ({}):\n{}",
            args.join(" "),
            output.status,
            said.trim()
        );
    }
    tracing::debug!("apt-get said:\n{}", said.trim());
    Ok(())
}

/// Whether apt has package lists (a fresh container has none).
pub fn has_package_lists(dir: &Path) -> bool {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .any(|e| e.file_name().to_string_lossy().contains("_Packages"))
        })
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_count_up_to_the_total_and_name_the_packages() {
        let packages = ["fio".to_string(), "hyperfine".to_string()];
        let steps = [
            InstallStep::Updating,
            InstallStep::Installing(&packages),
            InstallStep::Checking,
        ];
        let numbers: Vec<u64> = steps.iter().map(InstallStep::number).collect();
        assert_eq!(numbers, [1, 2, InstallStep::TOTAL]);
        assert_eq!(steps[1].to_string(), "installing fio hyperfine");
    }
}
