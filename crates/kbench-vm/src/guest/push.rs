//! A console guest's boot pushed to a kbench server once it has measured
//! (`kbench lava job --server`): its card given its address, its events
//! stored as one run in a database of its own in /tmp and mirrored to the
//! server as `kbench run --server` mirrors a run
//! ([`kbench_fleet::mirror`]). The run's uid is the boot's
//! ([`crate::console_replay`]), so reading the job's log back later
//! stores nothing twice on the server. A push that fails says why and
//! changes nothing else: the log keeps every sample.

use crate::console_frames::{BlockHeader, GuestPush, parse_address};
use kbench_model::AgentEvent;
use kbench_store::Location;
use std::path::PathBuf;

/// The guest's own database, on its tmpfs.
const PUSH_DB: &str = "/tmp/kbench-push.db";

/// Pushes the boot `header` introduces, its `events`, as `plan` says;
/// what came of it goes to the console.
pub(super) fn push(plan: &GuestPush, header: &BlockHeader, events: Vec<AgentEvent>) {
    match try_push(plan, header, events) {
        Ok(done) => eprintln!("kbench guest: {done}"),
        Err(why) => eprintln!(
            "kbench guest: pushing to {} failed: {why}; the job's log keeps every sample \
             (`kbench lava import --server` sends them)",
            plan.server
        ),
    }
}

fn try_push(
    plan: &GuestPush,
    header: &BlockHeader,
    events: Vec<AgentEvent>,
) -> Result<String, String> {
    let (address, prefix) = parse_address(&plan.address)?;
    let card = super::network::card_up(address, prefix, plan.gateway)
        .map_err(|e| format!("setting up the network ({e})"))?;
    let upload = kbench_fleet::upload::Upload::connect(&plan.server, plan.token.as_deref())
        .map_err(|e| e.to_string())?;
    let mut local = Location::Sqlite(PathBuf::from(PUSH_DB))
        .open()
        .map_err(|e| e.to_string())?;
    let note = format!(
        "booted by LAVA, one run per boot ({} of them): pushed by its guest",
        header.plan.boots
    );
    let (stored, uploaded) = kbench_fleet::mirror::mirrored(&mut *local, Some(&upload), |store| {
        crate::console_replay::store(store, &plan.set, header, (events, None), note)
    });
    stored.map_err(|e| e.to_string())?;
    let uploaded = uploaded.expect("an upload was given");
    match &uploaded.error {
        None => Ok(format!(
            "pushed {} sample(s) to {} through {card} ({address}/{prefix})",
            uploaded.stored, uploaded.url
        )),
        Some(error) => Err(format!(
            "{} of {} sample(s) reached it: {error}",
            uploaded.stored, uploaded.queued
        )),
    }
}
