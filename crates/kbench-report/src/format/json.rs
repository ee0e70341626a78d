//! `json`: a report as its JSON document, pretty-printed: the serialized
//! model, `kbench.show/1` ([`kbench_analysis::show::SCHEMA`]), `kbench.compare/1`
//! ([`kbench_analysis::comparison::SCHEMA`]), `kbench.history/1`
//! ([`kbench_analysis::history::SCHEMA`]) or `kbench.counters/1`
//! ([`kbench_analysis::counters::SCHEMA`]) of docs/json.md; fields are only ever added
//! within a version. JSON has no infinity: an unbounded confidence limit (a
//! side with one observation) is `null` (kbench-stats' `Estimate`), and any
//! other non-finite number serde_json writes as `null` too, so the output
//! always parses. Never coloured.

use super::render::{Render, Style};
use serde::Serialize;

pub struct Json;

/// Every report's model serializes, so every report has this format.
impl<R: Serialize> Render<R> for Json {
    fn render(&self, model: &R, _style: Style) -> String {
        document(model)
    }
}

/// The model pretty-printed, with a final line break.
fn document(model: &impl Serialize) -> String {
    // Plain data (strings, numbers, string-keyed maps): cannot fail.
    let mut text = serde_json::to_string_pretty(model).expect("a report serializes");
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use kbench_analysis::fixtures::{history_data, history_request};
    use kbench_analysis::history::build;

    #[test]
    fn a_history_is_its_report() {
        let report = build(&history_data(), &history_request()).unwrap();
        let text = Json.render(&report, Style::default());
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(value["schema"], "kbench.history/1");
        let change = &value["metrics"][0]["changes"][0];
        assert_eq!(change["identifier"], "v3");
        assert_eq!(change["verdict"], "regression");
        assert!(change["change_pct"]["ci_low"].as_f64().unwrap() > 9.0);
        assert!(value["metrics"][1]["series"][5]["summary"].is_null());
    }
}
