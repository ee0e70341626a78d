//! A boot's invocation: `kbench run` with the user's arguments, into the
//! campaign's result set as the boot's kernel, started as a child so that
//! it is the same command a user would type; and its runs, found back by
//! the boot's id.

use crate::error::{CampaignError, Result};
use kbench_model::BOOT_VIA_ENV;
use kbench_model::campaign::{BootVia, Campaign};
use kbench_model::results::{RunRecord, SetPart};
use kbench_store::Results;
use std::process::Command;

/// The command line of boot `index`'s invocation, program first.
pub fn command_line(campaign: &Campaign, index: usize) -> Vec<String> {
    let mut line = vec![
        campaign.kbench.clone(),
        "--db".to_string(),
        campaign.db.clone(),
        "run".to_string(),
    ];
    line.extend(campaign.run_args.iter().cloned());
    line.extend([
        "--into".to_string(),
        campaign.name.clone(),
        "--as".to_string(),
        campaign.kernel_of(index).name.clone(),
    ]);
    line
}

/// Runs boot `index`'s invocation to its end, its output on this
/// process's; how it ended ("exit status 0").
pub fn run(campaign: &Campaign, index: usize, via: BootVia) -> Result<String> {
    let line = command_line(campaign, index);
    tracing::info!("running {}", line.join(" "));
    let status = Command::new(&line[0])
        .args(&line[1..])
        .env(BOOT_VIA_ENV, via.as_str())
        .status()
        .map_err(CampaignError::os(format!("running {}", line[0])))?;
    Ok(status.to_string())
}

/// The runs of `identifier` in the campaign's set measured in boot
/// `boot_id` (aborted ones are not read).
pub fn runs_of_boot(
    store: &mut dyn Results,
    campaign: &Campaign,
    identifier: &str,
    boot_id: &str,
) -> Result<Vec<RunRecord>> {
    let exists = store
        .result_sets()?
        .iter()
        .any(|set| set.name == campaign.name);
    if !exists {
        return Ok(Vec::new());
    }
    let part = SetPart {
        identifiers: Some(vec![identifier.to_string()]),
        ..SetPart::default()
    };
    let data = store.load_part(&campaign.name, &part)?;
    Ok(data
        .identifiers
        .into_iter()
        .filter(|id| id.name == identifier)
        .flat_map(|id| id.runs)
        .filter(|run| run.info.snapshot.boot_id == boot_id)
        .collect())
}
