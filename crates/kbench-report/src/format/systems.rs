//! The systems a comparison's identifiers ran on, as every format says
//! them: the headline facts of each identifier, what is said of the
//! systems as a whole (identical, or not comparable without snapshots),
//! and for the text formats the facts every identifier shares on one
//! line, then the facts that differ. An identifier without a system
//! snapshot (imported samples) has no facts: no line of empty
//! placeholders, and no claim that it ran on the same system as another.

use kbench_analysis::comparison::IdentifierSystem;
use kbench_analysis::header::{Difference, headline_facts};

/// The facts of an identifier's one-line system description
/// (OpenBenchmarking style): processor, memory, OS, kernel, compiler,
/// filesystem, virtualization, the ones it knows; then the wrapper when
/// there is one.
pub(super) fn system_facts(system: &IdentifierSystem) -> Vec<(String, String)> {
    let mut facts = system
        .snapshot
        .as_ref()
        .map(headline_facts)
        .unwrap_or_default();
    if let Some(wrapper) = &system.wrapper {
        facts.push(("Wrapper".to_string(), wrapper.clone()));
    }
    facts
}

/// What is said of `identifiers` systems as a whole, of which those
/// named in `unrecorded` have no snapshot and `differ` says whether the
/// others' facts differ (the differences are listed apart): `None` when
/// nothing is to be said beside the differences.
pub(crate) fn sentence(identifiers: usize, unrecorded: &[&str], differ: bool) -> Option<String> {
    let quoted: Vec<String> = unrecorded.iter().map(|n| format!("'{n}'")).collect();
    let (names, verb) = match quoted.len() {
        1 => (quoted[0].clone(), "has"),
        _ => (quoted.join(", "), "have"),
    };
    if identifiers < 2 {
        return (!unrecorded.is_empty())
            .then(|| format!("{names} {verb} no system snapshot (imported samples)."));
    }
    Some(match (unrecorded.len(), differ) {
        (n, _) if n == identifiers => "No identifier has a system snapshot (imported samples): \
             their systems cannot be compared."
            .to_string(),
        (0, true) => return None,
        (0, false) => "Identifiers ran on identical systems (every recorded fact is equal).".into(),
        (_, true) => format!("{names} {verb} no system snapshot (imported samples)."),
        (_, false) => format!(
            "The identifiers with a system snapshot ran on identical systems; {names} {verb} \
             none (imported samples)."
        ),
    })
}

/// The names of the identifiers without a system snapshot.
pub(crate) fn unrecorded(systems: &[IdentifierSystem]) -> Vec<&str> {
    systems
        .iter()
        .filter(|s| s.snapshot.is_none())
        .map(|s| s.identifier.as_str())
        .collect()
}

/// The systems as text: the facts every identifier with a snapshot
/// shares, how many runs each has, then what is said of them as a whole
/// and the facts that differ with every identifier's value.
pub(super) fn lines(systems: &[IdentifierSystem], differences: &[Difference]) -> Vec<String> {
    let facts: Vec<Vec<(String, String)>> = systems
        .iter()
        .filter(|s| s.snapshot.is_some())
        .map(system_facts)
        .collect();
    let shared: Vec<String> = facts
        .first()
        .into_iter()
        .flatten()
        .filter(|fact| facts.iter().all(|other| other.contains(fact)))
        .map(|(label, value)| format!("{label}: {value}"))
        .collect();
    let mut lines = vec![];
    if !shared.is_empty() {
        let label = if systems.len() > 1 {
            "System (shared)"
        } else {
            "System"
        };
        lines.push(format!("{label}: {}", shared.join(", ")));
    }
    lines.push(runs_line(systems));
    let unrecorded = unrecorded(systems);
    lines.extend(sentence(
        systems.len(),
        &unrecorded,
        !differences.is_empty(),
    ));
    lines.extend(difference_lines(differences));
    lines
}

/// "Runs: 3 each", or "Runs: v6.9 3, v6.10 2" when they differ.
fn runs_line(systems: &[IdentifierSystem]) -> String {
    match systems {
        [one] => format!("Runs: {}", one.runs),
        [first, ..] if systems.iter().all(|s| s.runs == first.runs) => {
            format!("Runs: {} each", first.runs)
        }
        _ => {
            let each: Vec<String> = systems
                .iter()
                .map(|s| format!("{} {}", s.identifier, s.runs))
                .collect();
            format!("Runs: {}", each.join(", "))
        }
    }
}

/// "Differences between identifiers:" and a line per fact with every
/// identifier's value ("(unknown)" where it has none); nothing without
/// differences.
pub(super) fn difference_lines(differences: &[Difference]) -> Vec<String> {
    if differences.is_empty() {
        return vec![];
    }
    let mut lines = vec!["Differences between identifiers:".to_string()];
    for d in differences {
        let values: Vec<String> = d
            .values
            .iter()
            .map(|(name, value)| format!("{name} = {}", known(value)))
            .collect();
        lines.push(format!("  {}: {}", d.fact, values.join("; ")));
    }
    lines
}

/// A fact's value, or "(unknown)" when it is empty.
pub(crate) fn known(value: &str) -> &str {
    if value.is_empty() { "(unknown)" } else { value }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_snapshot_is_never_an_identical_system() {
        let none = sentence(2, &["a", "b"], false).unwrap();
        assert!(
            none.starts_with("No identifier has a system snapshot"),
            "{none}"
        );
        assert_eq!(
            sentence(2, &[], false).unwrap(),
            "Identifiers ran on identical systems (every recorded fact is equal)."
        );
        assert_eq!(sentence(2, &[], true), None);
        let some = sentence(3, &["c"], false).unwrap();
        assert!(some.contains("'c' has none"), "{some}");
        assert_eq!(
            sentence(1, &["a"], false).unwrap(),
            "'a' has no system snapshot (imported samples)."
        );
        assert_eq!(sentence(1, &[], false), None);
    }
}
