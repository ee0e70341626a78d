//! A console boot's agent events stored as one run: replayed to
//! kbench-measure's runner as a recorded agent
//! ([`kbench_measure::launcher::Recorded`]), so that it is stored as a live
//! guest's run is. Both ends of a LAVA boot use it: the guest, which
//! pushes its boot to a kbench server once it has measured, and `kbench
//! lava import`, which reads the job's log back. The run's uid comes from
//! its result set, identifier and guest's boot id, and its round from the boot's place in the job,
//! so a boot that arrives both ways is one run on the server.

use crate::console_frames::BlockHeader;
use kbench_measure::launcher::Recorded;
use kbench_measure::runner::{self, ReplayedRun, RunRequest, RunSummary};
use kbench_model::AgentEvent;
use kbench_store::RunSink;
use sha2::{Digest, Sha256};
use std::sync::atomic::AtomicBool;

/// The uid of the run of boot `boot_id` (its guest's) of `identifier` in
/// result set `set`: the same wherever it is computed, and another in
/// another set (a database holds each uid once).
pub fn run_uid(set: &str, identifier: &str, boot_id: &str) -> String {
    let mut hash = Sha256::new();
    for part in [set, identifier, boot_id] {
        hash.update(part.as_bytes());
        hash.update([0]);
    }
    let hex: String = hash.finalize()[..16]
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect();
    format!("boot-{hex}")
}

/// The boot id the guest's snapshot gives, if its events hold one.
pub fn boot_id(events: &[AgentEvent]) -> Option<&str> {
    events.iter().find_map(|event| match event {
        AgentEvent::Snapshot { snapshot } => Some(snapshot.boot_id.as_str()),
        _ => None,
    })
}

/// Stores the boot `header` introduces, its `events` (and why they stop
/// short, if they do), as one run in `set` with `note`.
pub fn store(
    store: &mut dyn RunSink,
    set: &str,
    header: &BlockHeader,
    (events, cut): (Vec<AgentEvent>, Option<String>),
    note: String,
) -> kbench_measure::Result<RunSummary> {
    let request = RunRequest {
        set: set.to_string(),
        identifier: header.plan.identifier.clone(),
        tests: header.job.tests.clone(),
        plan: header.job.plan.clone(),
        rounds: 1,
        adaptive: None,
        wrapper: None,
        notes: vec![note],
        host: None,
        // The guest ran every test; all of them are read.
        keep_going: true,
        replayed: boot_id(&events).map(|id| ReplayedRun {
            uid: run_uid(set, &header.plan.identifier, id),
            round: header.plan.round,
        }),
    };
    let recorded = Recorded::new(header.job.clone(), events, cut);
    let never = AtomicBool::new(false);
    runner::execute(store, &recorded, &request, &mut |_| {}, &never)
}
