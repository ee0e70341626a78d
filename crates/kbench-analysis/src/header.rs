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
    /// (identifier, value) for every identifier.
    pub values: Vec<(String, String)>,
}

/// The snapshot an identifier's results were measured under: its newest
/// run's.
pub fn snapshot_of(runs: &[RunRecord]) -> Option<&SystemSnapshot> {
    runs.last().map(|run| &run.info.snapshot)
}

/// Facts that are measurements, not settings: they differ between any two
/// runs and say nothing about the systems being different.
const MEASURED_FACTS: &[&str] = &["Steal time"];

/// Facts that differ between identifiers (wrapper included), in fact order.
pub fn differences(identifiers: &[IdentifierData]) -> Vec<Difference> {
    let facts: Vec<(String, Vec<(String, String)>)> = identifiers
        .iter()
        .map(|id| {
            let mut facts = snapshot_of(&id.runs)
                .map(SystemSnapshot::facts)
                .unwrap_or_default();
            let wrapper = id.runs.last().and_then(|r| r.info.wrapper.clone());
            facts.push((
                "Wrapper".to_string(),
                wrapper.unwrap_or_else(|| "none".into()),
            ));
            (id.name.clone(), facts)
        })
        .collect();
    let Some((_, first)) = facts.first() else {
        return vec![];
    };
    first
        .iter()
        .map(|(label, _)| label)
        .filter(|label| !MEASURED_FACTS.contains(&label.as_str()))
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
    "Kernel",
    "Compiler",
    "File-System",
    "Virtualization",
];
