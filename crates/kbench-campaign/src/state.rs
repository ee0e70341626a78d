//! The campaign's state in the store: one JSON document per campaign
//! ([`kbench_model::campaign::Campaign`]), saved after every step.

use crate::error::{CampaignError, Result};
use kbench_model::campaign::Campaign;
use kbench_store::Campaigns;

/// Saves `campaign`, on the disk before returning: committed, then the
/// file systems synced, since SQLite's write-ahead log is not synced at
/// each commit and a campaign's machine may lose power at any step (the
/// runs committed so far go to the disk with it).
pub fn save(store: &mut dyn Campaigns, campaign: &Campaign) -> Result<()> {
    let json = serde_json::to_string(campaign).expect("a campaign serializes");
    store.save_campaign(&campaign.name, &json)?;
    // SAFETY: sync(2) has no preconditions.
    unsafe { libc::sync() };
    Ok(())
}

fn parse(name: &str, json: &str) -> Result<Campaign> {
    serde_json::from_str(json).map_err(|e| {
        CampaignError::Invalid(format!(
            "the saved state of campaign {name} cannot be read ({e}): it was written by another \
             kbench version; `kbench campaign stop {name}` removes its hook"
        ))
    })
}

/// Campaign `name`; an error naming the campaigns there are when absent.
pub fn load(store: &mut dyn Campaigns, name: &str) -> Result<Campaign> {
    match store.load_campaign(name)? {
        Some(json) => parse(name, &json),
        None => {
            let names: Vec<String> = store.campaigns()?.into_iter().map(|c| c.name).collect();
            Err(CampaignError::Invalid(match names.is_empty() {
                true => format!("there is no campaign {name}: none was started with this database"),
                false => format!(
                    "there is no campaign {name}; there are: {}",
                    names.join(", ")
                ),
            }))
        }
    }
}

/// Every campaign, by name.
pub fn list(store: &mut dyn Campaigns) -> Result<Vec<Campaign>> {
    store
        .campaigns()?
        .into_iter()
        .map(|saved| parse(&saved.name, &saved.state_json))
        .collect()
}

/// The campaign still running, if any (there is at most one).
pub fn running(store: &mut dyn Campaigns) -> Result<Option<Campaign>> {
    Ok(list(store)?.into_iter().find(|c| c.state.is_running()))
}
