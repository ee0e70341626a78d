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

/// Installs the packages of the profiles (or profile tests) `names`:
/// refreshes apt's lists when asked or when there are none, installs, and
/// checks that every program the profiles need is now there. Needs root
/// and apt-get; the packages installed on success.
pub fn install(profiles: &Profiles, names: &[String], update: bool) -> Result<Vec<String>> {
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
        apt_get(&["update", "-q"])?;
    }
    let mut install = vec!["install", "-y", "--no-install-recommends"];
    install.extend(packages.iter().map(String::as_str));
    apt_get(&install)?;
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

fn apt_get(args: &[&str]) -> Result<()> {
    tracing::info!("running apt-get {}", args.join(" "));
    let status = Command::new("apt-get")
        .args(args)
        .env("DEBIAN_FRONTEND", "noninteractive")
        .status()
        .map_err(|e| CatalogError::Invalid(format!("cannot run apt-get: {e}")))?;
    if !status.success() {
        invalid!(
            "`apt-get {}` failed ({status}); its output is above",
            args.join(" ")
        );
    }
    Ok(())
}

/// Whether apt has package lists (a fresh container has none).
fn has_package_lists(dir: &Path) -> bool {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .any(|e| e.file_name().to_string_lossy().contains("_Packages"))
        })
        .unwrap_or(false)
}
