//! `kbench kernel`: Fetch and list kernels for `kbench vm`.

use std::path::PathBuf;
use std::process::ExitCode;

/// Fetch and list kernels for `kbench vm`
#[derive(Debug, clap::Subcommand)]
pub enum KernelCommand {}

pub fn kernel(_command: KernelCommand, _db: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    anyhow::bail!("kbench kernel is not built yet")
}
