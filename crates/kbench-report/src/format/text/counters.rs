//! One identifier's counters and monitors, test by test, like `perf stat`:
//! the mean per operation, the unit and name, and the CI over rounds.

use crate::format::common;
use kbench_analysis::counters::CounterDocument;
use kbench_analysis::number;
use std::fmt::Write;

pub(super) fn text(doc: &CounterDocument) -> String {
    let mut out = String::new();
    if doc.tests.is_empty() {
        let _ = writeln!(
            out,
            "'{}' in result set '{}' has no counters or monitors: they are recorded by \
             `kbench run` unless --no-counters and --monitor none are given.",
            doc.identifier, doc.result_set
        );
    }
    for test in &doc.tests {
        let rounds = test.rows.iter().map(|r| r.summary.n).max().unwrap_or(0);
        let _ = writeln!(
            out,
            "\n Counters and monitors of '{}' on '{}' (per operation, mean of {rounds} round(s)):\n",
            test.test, doc.identifier
        );
        let value_width = test
            .rows
            .iter()
            .map(|r| common::width(&number::count(r.summary.mean)))
            .max()
            .unwrap_or(0)
            .max(12);
        let unit_width = test
            .rows
            .iter()
            .map(|r| common::width(&r.unit))
            .max()
            .unwrap_or(0);
        let label_width = test
            .rows
            .iter()
            .map(|r| common::width(name(&r.label)))
            .max()
            .unwrap_or(0);
        for row in &test.rows {
            let ci = common::ci_text(row.summary.ci.relative_half_width());
            let _ = writeln!(
                out,
                "  {} {}  {}  ( {ci} )",
                common::right(&number::count(row.summary.mean), value_width),
                common::left(&row.unit, unit_width),
                common::left(name(&row.label), label_width),
            );
        }
    }
    for missing in &doc.unavailable {
        let _ = writeln!(out, "\n  {missing}");
    }
    out
}

/// The label without its "/op": the unit column says it.
fn name(label: &str) -> &str {
    label.strip_suffix("/op").unwrap_or(label)
}
