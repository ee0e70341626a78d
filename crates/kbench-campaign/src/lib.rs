//! Campaigns: two or more kernels measured on one machine, one boot per
//! invocation, alternating in pairs of random order, with no one at the
//! keyboard. `start` checks everything, saves the plan, installs a hook
//! that runs at every boot and switches to the first kernel (kexec by
//! default, or the user's boot-loader command). At each boot the hook
//! ([`resume`]) checks the kernel against the plan, waits for the machine
//! to settle, runs the boot's `kbench run`, and switches to the next; after
//! the last it removes itself and returns to the kernel the user started
//! from. The runs land in a result set named after the campaign, one boot
//! each, which `kbench compare` decides with boots as the unit.
//!
//! - [`start`] checks and makes the first switch; [`kernels`] resolves
//!   and checks images and initrds.
//! - [`resume`] is the hook's work, deciding each step with [`decide`]
//!   (pure).
//! - [`switch`] moves to a kernel by kexec ([`kexec`], with the command
//!   line of [`cmdline`]) or a boot-loader command, the [`watchdog`]
//!   armed across it.
//! - [`hook`] is the systemd unit or rc.local block, [`settle`] the wait
//!   after boot, [`invocation`] the boot's `kbench run` and its runs.
//! - [`plan`] orders the boots, [`decided`] adds `--until-decided`'s
//!   boots, [`state`] keeps the JSON state in the store.

mod command;
mod error;
#[cfg(test)]
mod testing;

pub mod cmdline;
pub mod decide;
pub mod decided;
pub mod hook;
pub mod invocation;
pub mod kernels;
pub mod kexec;
pub mod plan;
pub mod resume;
pub mod settle;
pub mod start;
pub mod state;
pub mod switch;
pub mod watchdog;

pub use error::{CampaignError, Result};
pub use resume::resume;
pub use start::{StartRequest, start};

use error::refuse;
use kbench_model::campaign::Campaign;
use kbench_store::Database;
use resume::Teller;

/// Stops running campaign `name`: its hook goes and a loaded kexec kernel
/// is unloaded, so the next boot is the boot loader's default. Nothing
/// reboots. The campaign as saved.
pub fn stop(store: &mut dyn Database, name: &str, out: &mut dyn FnMut(&str)) -> Result<Campaign> {
    let mut campaign = state::load(store, name)?;
    if !campaign.state.is_running() {
        refuse!(
            "campaign {name} is not running: it has ended already (`kbench campaign show {name}`)"
        );
    }
    let reason = "stopped by `kbench campaign stop`".to_string();
    resume::stop(store, &mut campaign, reason, &mut Teller { out })?;
    Ok(campaign)
}
