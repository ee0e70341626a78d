//! `kbench vm`: Run benchmarks in a VM that boots a given kernel with kbench as its init.

use std::path::PathBuf;
use std::process::ExitCode;

/// Run benchmarks in a VM that boots a given kernel with kbench as its init
#[derive(Debug, clap::Subcommand)]
pub enum VmCommand {}

pub fn vm(_command: VmCommand, _db: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    anyhow::bail!("kbench vm is not built yet")
}
