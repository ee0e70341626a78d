//! `kbench history`: Change points across a result set's identifiers in version order.

use std::path::PathBuf;
use std::process::ExitCode;

/// Change points across a result set's identifiers in version order
#[derive(Debug, clap::Args)]
pub struct HistoryArgs {}

pub fn history(_args: HistoryArgs, _db: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    anyhow::bail!("kbench history is not built yet")
}
