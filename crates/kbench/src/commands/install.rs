//! `kbench install`: the Debian packages external benchmark profiles need.

use crate::cli::InstallArgs;
use kbench_catalog::install;
use kbench_catalog::profile::Profiles;
use std::path::PathBuf;
use std::process::ExitCode;

pub fn install(args: InstallArgs, profile_dirs: &[PathBuf]) -> anyhow::Result<ExitCode> {
    let profiles = Profiles::load(profile_dirs)?;
    if args.print {
        println!(
            "{}",
            install::command_line(&profiles.packages_of(&args.names)?)
        );
        return Ok(ExitCode::SUCCESS);
    }
    let steps = crate::progress::Steps::new(install::InstallStep::TOTAL);
    let packages = install::install(&profiles, &args.names, args.update, &mut |step| {
        steps.step(step.number(), step.to_string())
    })?;
    steps.finish();
    eprintln!(
        "Installed {}: {} can run (`kbench run {}`).",
        packages.join(" "),
        args.names.join(", "),
        args.names.join(" ")
    );
    Ok(ExitCode::SUCCESS)
}
