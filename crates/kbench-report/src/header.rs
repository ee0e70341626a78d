//! The system header every report opens with (reports.md, item 4): per
//! identifier what it ran on, and the facts that differ between identifiers
//! called out, since a differing cmdline or governor explains many "regressions".

use kbench_model::SystemSnapshot;
use kbench_model::results::{IdentifierData, RunStatus};
use serde::Serialize;

/// One fact whose value is not the same for all identifiers.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Difference {
    pub fact: String,
    /// (identifier, value) for every identifier.
    pub values: Vec<(String, String)>,
}

/// The snapshot an identifier's results were measured under: its newest run's.
pub fn snapshot_of(identifier: &IdentifierData) -> Option<&SystemSnapshot> {
    identifier.runs.last().map(|run| &run.info.snapshot)
}

/// Facts that are measurements, not settings: they differ between any two
/// runs and say nothing about the systems being different.
const MEASURED_FACTS: &[&str] = &["Steal time"];

/// Facts that differ between identifiers (wrapper included), in fact order.
pub fn differences(identifiers: &[IdentifierData]) -> Vec<Difference> {
    let facts: Vec<(String, Vec<(String, String)>)> = identifiers
        .iter()
        .map(|id| {
            let mut facts = snapshot_of(id)
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

/// "1 run (complete)", "3 runs (2 complete, 1 interrupted)".
pub fn runs_text(identifier: &IdentifierData) -> String {
    let count = |status: RunStatus| {
        identifier
            .runs
            .iter()
            .filter(|r| r.status == status)
            .count()
    };
    let parts: Vec<String> = [
        RunStatus::Complete,
        RunStatus::Interrupted,
        RunStatus::Running,
        RunStatus::Failed,
    ]
    .into_iter()
    .filter_map(|s| {
        let n = count(s);
        let label = if s == RunStatus::Running {
            "unfinished"
        } else {
            s.as_str()
        };
        (n > 0).then(|| format!("{n} {label}"))
    })
    .collect();
    let n = identifier.runs.len();
    format!(
        "{n} run{} ({})",
        if n == 1 { "" } else { "s" },
        parts.join(", ")
    )
}

/// The facts of the one-line system description (seed 000 style); the rest
/// shows up only where identifiers differ.
pub const HEADLINE_FACTS: &[&str] = &[
    "Processor",
    "Memory",
    "OS",
    "Kernel",
    "Compiler",
    "File-System",
    "Virtualization",
];

/// The header as text lines.
pub fn text(identifiers: &[IdentifierData]) -> Vec<String> {
    let mut lines = vec![];
    for id in identifiers {
        lines.push(format!("{}: {}", id.name, runs_text(id)));
        if let Some(snapshot) = snapshot_of(id) {
            let facts: Vec<String> = snapshot
                .facts()
                .into_iter()
                .filter(|(label, value)| {
                    !value.is_empty() && HEADLINE_FACTS.contains(&label.as_str())
                })
                .map(|(label, value)| format!("{label}: {value}"))
                .collect();
            lines.push(format!("  {}", facts.join(", ")));
        }
        let notes: Vec<&String> = id.runs.iter().flat_map(|r| &r.info.notes).collect();
        for note in notes {
            lines.push(format!("  NOTE: {note}"));
        }
    }
    let differences = differences(identifiers);
    if identifiers.len() > 1 {
        if differences.is_empty() {
            lines.push(
                "Identifiers ran on identical systems (every recorded fact is equal).".into(),
            );
        } else {
            lines.push("Differences between identifiers:".into());
            for d in differences {
                let values: Vec<String> =
                    d.values.iter().map(|(n, v)| format!("{n} = {v}")).collect();
                lines.push(format!("  {}: {}", d.fact, values.join("; ")));
            }
        }
    }
    lines
}
