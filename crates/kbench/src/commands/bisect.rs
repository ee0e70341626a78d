//! `kbench bisect`: Find the commit that changed a metric: automatic bisection with statistics.

use std::path::PathBuf;
use std::process::ExitCode;

/// Find the commit that changed a metric: automatic bisection with statistics
#[derive(Debug, clap::Args)]
pub struct BisectArgs {}

pub fn bisect(_args: BisectArgs, _db: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    anyhow::bail!("kbench bisect is not built yet")
}
