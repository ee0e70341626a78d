//! The level of analysis a summary states for a compared identifier, in
//! one line from its metrics' `analysis`: measured apart and decided on
//! units ([`apart_notes::shape`]: "measured apart (1 and 1 runs): one run
//! on a side, so the host's drift widens each CI: the default run drift,
//! 3.5 % (...)"), measured together and paired block by block, or
//! compared as independent samples. Kinds that mix are each counted.

use crate::apart_notes;
use kbench_stats::{Analysis, Comparison, Verdict};

/// The level of analysis of `comparisons` (one identifier's metrics);
/// CANNOT DECIDE ones count only when nothing else was compared. `None`
/// when nothing was compared.
pub fn describe(comparisons: &[&Comparison]) -> Option<String> {
    let decidable: Vec<&Comparison> = comparisons
        .iter()
        .copied()
        .filter(|c| c.verdict != Verdict::CannotDecide)
        .collect();
    let comparisons = if decidable.is_empty() {
        comparisons
    } else {
        &decidable
    };
    let of = |kind: fn(&Analysis) -> bool| -> Vec<&Comparison> {
        comparisons
            .iter()
            .copied()
            .filter(|c| kind(&c.analysis))
            .collect()
    };
    let levelled = of(|a| matches!(a, Analysis::Levels { .. }));
    let blocked = of(|a| matches!(a, Analysis::Blocked { .. }));
    let independent = of(|a| matches!(a, Analysis::Independent));
    let most_blocks = blocked
        .iter()
        .filter_map(|c| match c.analysis {
            Analysis::Blocked { blocks } => Some(blocks),
            _ => None,
        })
        .max();
    let kinds: Vec<(usize, String)> = [
        (levelled.len(), apart_notes::shape(&levelled)),
        (
            blocked.len(),
            most_blocks
                .map(|n| format!("measured together, paired block by block (up to {n} blocks)")),
        ),
        (
            independent.len(),
            Some("compared as independent samples (Welch's t-test on logs)".to_string()),
        ),
    ]
    .into_iter()
    .filter(|(n, _)| *n > 0)
    .filter_map(|(n, text)| Some((n, text?)))
    .collect();
    match kinds.as_slice() {
        [] => None,
        [(_, only)] => Some(only.clone()),
        several => Some(
            several
                .iter()
                .map(|(n, text)| format!("{text} ({n} metric{})", if *n == 1 { "" } else { "s" }))
                .collect::<Vec<_>>()
                .join("; "),
        ),
    }
}
