//! `json`: the [`HistoryReport`] as the `kbench.history/1` document,
//! pretty-printed; fields are only ever added within a version. An
//! unbounded confidence limit is `null` (kbench-stats' `Estimate`).

use super::HistoryReport;

pub fn to_json(report: &HistoryReport) -> String {
    // Plain data (strings, numbers, string-keyed maps): cannot fail.
    let mut text = serde_json::to_string_pretty(report).expect("a history report serializes");
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::{build, tests};

    #[test]
    fn is_the_report() {
        let text = to_json(&build(&tests::data(), &tests::request()).unwrap());
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(value["schema"], "kbench.history/1");
        let change = &value["metrics"][0]["changes"][0];
        assert_eq!(change["identifier"], "v3");
        assert_eq!(change["verdict"], "regression");
        assert!(change["change_pct"]["ci_low"].as_f64().unwrap() > 9.0);
        assert!(value["metrics"][1]["series"][5]["summary"].is_null());
    }
}
