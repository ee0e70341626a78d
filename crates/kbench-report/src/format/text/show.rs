//! The show report for a terminal: the set's counts, per identifier its
//! runs, headline system facts and notes, the differences between
//! identifiers, what the monitors saw, then per test one row per
//! identifier (n, mean, median, SD, 95 % CI, how sampling ended).

use crate::format::{common, systems};
use kbench_analysis::header;
use kbench_analysis::number;
use kbench_analysis::show::{IdentifierEntry, ResultEntry, ShowDocument};
use kbench_model::results::{RunRecord, RunStatus, TestOutcomeKind};
use std::fmt::Write;

pub(super) fn text(doc: &ShowDocument) -> String {
    let mut out = String::new();
    for line in common::title_lines(doc.title.as_deref(), doc.description.as_deref()) {
        let _ = writeln!(out, "{line}");
    }
    let samples: usize = doc.identifiers.iter().map(|i| i.samples).sum();
    let _ = writeln!(
        out,
        "Result set '{}': {} identifier(s), {} test(s), {} sample(s)\n",
        doc.result_set,
        doc.identifiers.len(),
        doc.tests.len(),
        samples
    );
    for line in header_lines(doc) {
        let _ = writeln!(out, "{line}");
    }
    for line in &doc.interference {
        let _ = writeln!(out, "{line}");
    }
    let name_width = doc
        .identifiers
        .iter()
        .map(|i| i.name.chars().count())
        .max()
        .unwrap_or(10)
        .max(10);
    for test in &doc.tests {
        let _ = writeln!(
            out,
            "\n{}  ({}, {})",
            test.test,
            test.unit,
            test.direction.phrase()
        );
        if let Some(title) = &test.title {
            let _ = writeln!(out, "  {title}");
        }
        let _ = writeln!(
            out,
            "  {:<name_width$} {:>6} {:>12} {:>12} {:>10} {:>9}  sampling",
            "identifier", "n", "mean", "median", "SD", "95% CI"
        );
        for result in &test.results {
            let _ = writeln!(out, "  {}", result_line(result, name_width));
        }
    }
    out
}

/// Per identifier its runs, headline facts and notes; then the
/// differences between identifiers.
fn header_lines(doc: &ShowDocument) -> Vec<String> {
    let mut lines = vec![];
    for id in &doc.identifiers {
        lines.extend(identifier_lines(id));
    }
    let unrecorded: Vec<&str> = doc
        .identifiers
        .iter()
        .filter(|id| header::recorded_snapshot(&id.runs).is_none())
        .map(|id| id.name.as_str())
        .collect();
    lines.extend(systems::sentence(
        doc.identifiers.len(),
        &unrecorded,
        !doc.differences.is_empty(),
    ));
    lines.extend(systems::difference_lines(&doc.differences));
    lines
}

fn identifier_lines(id: &IdentifierEntry) -> Vec<String> {
    let mut first = format!("{}: {}", id.name, runs_text(&id.runs));
    if !id.factors.is_empty() {
        let factors: Vec<String> = id.factors.iter().map(|(k, v)| format!("{k}={v}")).collect();
        first.push_str(&format!("; factors {}", factors.join(", ")));
    }
    let mut lines = vec![first];
    if let Some(snapshot) = header::recorded_snapshot(&id.runs) {
        let facts: Vec<String> = header::headline_facts(snapshot)
            .into_iter()
            .map(|(label, value)| format!("{label}: {value}"))
            .collect();
        lines.push(format!("  {}", facts.join(", ")));
    }
    for note in id.runs.iter().flat_map(|r| &r.info.notes) {
        lines.push(format!("  NOTE: {note}"));
    }
    lines
}

/// "1 run (complete)", "3 runs (2 complete, 1 interrupted)".
fn runs_text(runs: &[RunRecord]) -> String {
    let count = |status: RunStatus| runs.iter().filter(|r| r.status == status).count();
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
    let n = runs.len();
    format!(
        "{n} run{} ({})",
        if n == 1 { "" } else { "s" },
        parts.join(", ")
    )
}

fn result_line(result: &ResultEntry, name_width: usize) -> String {
    let name = format!("{:<name_width$}", result.identifier);
    let sampling = match (result.outcome, &result.outcome_detail) {
        (Some(TestOutcomeKind::TargetMet), _) => "target met".to_string(),
        (Some(TestOutcomeKind::BudgetHit), Some(d)) => format!("target missed: {d}"),
        (Some(kind), Some(d)) => format!("{}: {d}", kind.as_str()),
        _ => "unfinished".to_string(),
    };
    let rounds = if result.rounds > 1 {
        format!(", {} rounds", result.rounds)
    } else {
        String::new()
    };
    match &result.summary {
        None => format!("{name} {:>6}  {sampling}", "-"),
        Some(s) => format!(
            "{name} {:>6} {:>12} {:>12} {:>10} {:>9}  {sampling}{rounds}",
            s.n,
            number::value(s.mean),
            number::value(s.median),
            s.sd.map_or("-".to_string(), number::value),
            format!(
                "±{}",
                number::percent(s.ci.relative_half_width()).replace(" %", "%")
            ),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kbench_analysis::fixtures::{identifier, quiet, set};
    use kbench_analysis::show;

    /// `show` lists the measured metric as a test and the monitors as lines
    /// of their own.
    #[test]
    fn show_lists_monitors_apart_from_tests() {
        let data = set(vec![identifier("a", 2, &[quiet(1.0), quiet(1.0)])]);
        let doc = show::document(&data);
        let tests: Vec<&str> = doc.tests.iter().map(|t| t.test.as_str()).collect();
        assert_eq!(tests, ["syscall-null"]);
        assert_eq!(doc.interference.len(), 1, "{:?}", doc.interference);
        assert!(
            doc.interference[0].contains("control loop 1.000 ns/iteration; 0 round(s) disturbed"),
            "{}",
            doc.interference[0]
        );
        let text = text(&doc);
        assert!(
            text.contains("'a' monitors (medians over 2 round(s))"),
            "{text}"
        );
    }
}
