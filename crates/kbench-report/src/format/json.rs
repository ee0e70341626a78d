//! `json`: the report as the `kbench.compare/1` document
//! ([`crate::comparison::SCHEMA`]), pretty-printed. The document is the
//! serialized [`ComparisonReport`]: fields are only ever added within a
//! version. JSON has no infinity: an unbounded confidence limit (a side with
//! one observation) is `null` (kbench-stats' `Estimate`), and any other
//! non-finite number serde_json writes as `null` too, so the output always
//! parses. Never coloured.

use super::{Format, Style};
use crate::comparison::ComparisonReport;

pub struct Json;

impl Format for Json {
    fn name(&self) -> &'static str {
        "json"
    }

    fn render(&self, report: &ComparisonReport, _style: Style) -> String {
        // Plain data (strings, numbers, string-keyed maps): cannot fail.
        let mut text =
            serde_json::to_string_pretty(report).expect("a comparison report serializes");
        text.push('\n');
        text
    }
}
