//! Running the system's programs (systemctl, sh, lsinitramfs).

use crate::error::{CampaignError, Result};
use std::process::Command;

/// Runs `program` with `args`; an error says what it printed.
pub fn run(program: &str, args: &[&str]) -> Result<()> {
    output(program, args).map(drop)
}

/// Runs `program` with `args`, returning its standard output; an error
/// says how it ended and what it printed on standard error.
pub fn output(program: &str, args: &[&str]) -> Result<String> {
    tracing::info!("running {program} {}", args.join(" "));
    let out = Command::new(program)
        .args(args)
        .output()
        .map_err(CampaignError::os(format!("running {program}")))?;
    if !out.status.success() {
        return Err(CampaignError::Invalid(format!(
            "`{program} {}` failed ({}): {}",
            args.join(" "),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}
