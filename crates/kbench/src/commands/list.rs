//! `kbench list`: built-in benchmarks, suites and external profiles.

use super::context::print_json;
use kbench_catalog::listing::Listing;
use kbench_catalog::profile::Profiles;
use std::path::PathBuf;
use std::process::ExitCode;

pub fn list(json: bool, profile_dirs: &[PathBuf]) -> anyhow::Result<ExitCode> {
    let listing = Listing::of(&Profiles::load(profile_dirs)?)?;
    if json {
        print_json(&listing)?;
    } else {
        print!("{}", listing.text());
    }
    Ok(ExitCode::SUCCESS)
}
