//! The facts of the system header every report opens with (docs/reports.md,
//! item 4): per identifier what it ran on, and the facts that differ
//! between identifiers called out, since a differing cmdline or governor
//! explains many "regressions". The formats lay them out.

use kbench_model::SystemSnapshot;
use kbench_model::results::{IdentifierData, RunRecord};
use serde::Serialize;

/// One fact whose value is not the same for all identifiers.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Difference {
    pub fact: String,
    /// (identifier, value) for every identifier with a system snapshot.
    pub values: Vec<(String, String)>,
}

/// The snapshot an identifier's results were measured under: its newest
/// run's.
pub fn snapshot_of(runs: &[RunRecord]) -> Option<&SystemSnapshot> {
    runs.last().map(|run| &run.info.snapshot)
}

/// [`snapshot_of`], when it records any fact: an imported sample's run
/// has an empty snapshot, which says nothing of its system.
pub fn recorded_snapshot(runs: &[RunRecord]) -> Option<&SystemSnapshot> {
    snapshot_of(runs).filter(|snapshot| !snapshot.facts().is_empty())
}

/// The headline facts of a snapshot ([`HEADLINE_FACTS`]), in fact order.
pub fn headline_facts(snapshot: &SystemSnapshot) -> Vec<(String, String)> {
    snapshot
        .facts()
        .into_iter()
        .filter(|(label, _)| HEADLINE_FACTS.contains(&label.as_str()))
        .collect()
}

/// Facts that are measurements, not settings: they differ between any two
/// runs and say nothing about the systems being different.
const MEASURED_FACTS: &[&str] = &["Steal time"];

/// Facts (wrapper included) that differ between the identifiers that
/// recorded a system snapshot, in fact order: one that some of them lack
/// differs too (its value empty there). An identifier without a snapshot
/// has no facts to differ in.
pub fn differences(identifiers: &[IdentifierData]) -> Vec<Difference> {
    let facts: Vec<(String, Vec<(String, String)>)> = identifiers
        .iter()
        .filter_map(|id| {
            let mut facts = recorded_snapshot(&id.runs)?.facts();
            let wrapper = id.runs.last().and_then(|r| r.info.wrapper.clone());
            facts.push((
                "Wrapper".to_string(),
                wrapper.unwrap_or_else(|| "none".into()),
            ));
            Some((id.name.clone(), facts))
        })
        .collect();
    let mut labels: Vec<&String> = vec![];
    for (label, _) in facts.iter().flat_map(|(_, list)| list) {
        if !labels.contains(&label) && !MEASURED_FACTS.contains(&label.as_str()) {
            labels.push(label);
        }
    }
    labels
        .into_iter()
        .filter_map(|label| {
            let values: Vec<(String, String)> = facts
                .iter()
                .map(|(name, list)| {
                    let value = list
                        .iter()
                        .find(|(l, _)| l == label)
                        .map(|(_, v)| v.clone());
                    (name.clone(), value.unwrap_or_default())
                })
                .collect();
            let all_same = values.windows(2).all(|w| w[0].1 == w[1].1);
            (!all_same).then(|| Difference {
                fact: label.clone(),
                values,
            })
        })
        .collect()
}

/// The facts of the one-line system description (OpenBenchmarking style); the rest
/// shows up only where identifiers differ.
pub const HEADLINE_FACTS: &[&str] = &[
    "Processor",
    "Motherboard",
    "Memory",
    "Disk",
    "Network",
    "OS",
    "Rootfs",
    "Kernel",
    "Compiler",
    "File-System",
    "Virtualization",
];
