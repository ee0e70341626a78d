//! `kbench install`: Install the Debian packages that external benchmark profiles need.

use std::path::PathBuf;
use std::process::ExitCode;

/// Install the Debian packages that external benchmark profiles need
#[derive(Debug, clap::Args)]
pub struct InstallArgs {}

pub fn install(_args: InstallArgs, _db: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    anyhow::bail!("kbench install is not built yet")
}
