//! `kbench install`: the Debian packages external benchmark profiles need,
//! through apt-get, non-interactively.

use crate::cli::InstallArgs;
use anyhow::{Context, bail};
use kbench_catalog::profile::Profiles;
use kbench_catalog::programs::find_program;
use kbench_measure::profile::command::effective_uid;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

pub fn install(args: InstallArgs, profile_dirs: &[PathBuf]) -> anyhow::Result<ExitCode> {
    let profiles = Profiles::load(profile_dirs)?;
    let packages = profiles.packages_of(&args.names)?;
    let command_line = format!(
        "apt-get install -y --no-install-recommends {}",
        packages.join(" ")
    );
    if args.print {
        println!("{command_line}");
        return Ok(ExitCode::SUCCESS);
    }
    if find_program("apt-get").is_none() {
        bail!(
            "apt-get was not found: kbench install knows Debian packages only; install these \
             with this system's package manager: {}",
            packages.join(" ")
        );
    }
    if effective_uid() != Some(0) {
        bail!(
            "installing packages needs root: run `sudo kbench install {}`, or as root: \
             DEBIAN_FRONTEND=noninteractive {command_line}",
            args.names.join(" ")
        );
    }
    if args.update || !has_package_lists(Path::new("/var/lib/apt/lists")) {
        apt_get(&["update", "-q"])?;
    }
    let mut install = vec!["install", "-y", "--no-install-recommends"];
    install.extend(packages.iter().map(String::as_str));
    apt_get(&install)?;
    // Whatever apt-get said, the programs are what the runs need.
    let mut missing = Vec::new();
    for name in &args.names {
        let base = name.split('[').next().unwrap_or(name);
        let profile = profiles
            .profile(base)
            .or_else(|| profiles.test(base).map(|(p, _)| p))
            .expect("packages_of found it");
        let absent = profiles.missing_programs(profile);
        if !absent.is_empty() {
            missing.push(kbench_catalog::profile::missing_message(profile, &absent));
        }
    }
    if !missing.is_empty() {
        bail!(
            "apt-get installed {} but programs are still missing:\n{}",
            packages.join(" "),
            missing.join("\n")
        );
    }
    eprintln!(
        "Installed {}: {} can run (`kbench run {}`).",
        packages.join(" "),
        args.names.join(", "),
        args.names.join(" ")
    );
    Ok(ExitCode::SUCCESS)
}

fn apt_get(args: &[&str]) -> anyhow::Result<()> {
    let status = Command::new("apt-get")
        .args(args)
        .env("DEBIAN_FRONTEND", "noninteractive")
        .status()
        .context("cannot run apt-get")?;
    if !status.success() {
        bail!(
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
