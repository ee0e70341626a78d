//! `kbench rootfs`: build, list and remove the guest root filesystems
//! that hold profiles' packages, for `kbench vm`.

use super::context::print_json;
use crate::cli::{RootfsBuildArgs, RootfsCommand};
use kbench_vm::rootfs;
use std::path::PathBuf;
use std::process::ExitCode;

pub fn rootfs(command: RootfsCommand, profile_dirs: &[PathBuf]) -> anyhow::Result<ExitCode> {
    match command {
        RootfsCommand::Build(args) => build(args, profile_dirs)?,
        RootfsCommand::List(args) if args.json => print_json(&args.cache.cache().list()?)?,
        RootfsCommand::List(args) => args
            .cache
            .cache()
            .list()?
            .iter()
            .for_each(|r| println!("{r}")),
        RootfsCommand::Remove(args) => {
            let cache = args.cache.cache();
            let all = cache.list()?.into_iter().map(|r| r.manifest.id);
            for id in if args.all { all.collect() } else { args.ids } {
                anyhow::ensure!(
                    cache.remove(&id)?,
                    "no rootfs {id} in {}",
                    cache.dir.display()
                );
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Builds unless cached; prints the rootfs id, image and size.
fn build(args: RootfsBuildArgs, profile_dirs: &[PathBuf]) -> anyhow::Result<()> {
    let profiles = kbench_catalog::profile::Profiles::load(profile_dirs)?;
    let mut packages = profiles.packages_of(&args.profiles)?;
    packages.extend(args.packages);
    let free = profiles.guest_needs_of(&args.profiles)?.disk_or_default();
    let request = rootfs::request(args.release, args.architecture, packages, free)?;
    let mut progress = crate::progress::RootfsProgress::default();
    let built = rootfs::build(&args.cache.cache(), &request, &mut |s| progress.observe(s));
    drop(progress);
    println!("{}", built?);
    Ok(())
}
