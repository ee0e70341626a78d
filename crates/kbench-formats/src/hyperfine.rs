//! hyperfine's `--export-json` file: each command a test (its
//! `--parameter-scan` values as options), each timed run of it a round, in
//! seconds, lower is better.

use crate::shared;
use crate::{FormatError, Imported, ReadOptions};
use kbench_model::{Direction, ImportedRecord, TestKey};
use kbench_store::exchange::TestEntry;
use serde::Deserialize;
use std::collections::BTreeMap;

#[derive(Deserialize)]
struct File {
    results: Vec<Command>,
}

/// One benchmarked command; the fields kbench reads (hyperfine writes
/// more: mean, stddev, user, system, ...).
#[derive(Deserialize)]
struct Command {
    command: String,
    times: Option<Vec<f64>>,
    #[serde(default)]
    exit_codes: Vec<Option<i32>>,
    #[serde(default)]
    parameters: BTreeMap<String, String>,
}

pub fn read(text: &str, options: &ReadOptions) -> Result<Imported, FormatError> {
    let file: File = serde_json::from_str(text).map_err(|e| {
        FormatError::new(
            format!("line {}, column {}", e.line(), e.column()),
            format!("not a hyperfine --export-json file: {e}"),
        )
    })?;
    let name = shared::required_identifier(options)?;
    let mut tests = Vec::new();
    let mut samples = BTreeMap::new();
    let mut record = ImportedRecord {
        tool: "hyperfine".to_string(),
        ..ImportedRecord::default()
    };
    let mut notes = Vec::new();
    for (i, command) in file.results.iter().enumerate() {
        let at = format!("results[{i}]");
        let times = command.times.as_deref().unwrap_or_default();
        if times.is_empty() {
            return Err(FormatError::new(
                format!("{at}.times"),
                "missing or empty: kbench imports hyperfine's per-run times (hyperfine 1.6 \
                 and later writes them)",
            ));
        }
        let values = times
            .iter()
            .enumerate()
            .map(|(k, t)| shared::positive_value(*t, &format!("{at}.times[{k}]")))
            .collect::<Result<Vec<f64>, _>>()?;
        let mut key = TestKey::new(shared::name_part(&command.command));
        key.options = command
            .parameters
            .iter()
            .map(|(k, v)| (shared::name_part(k), shared::name_part(v)))
            .collect();
        let test = key.to_string();
        if samples.contains_key(&test) {
            return Err(FormatError::new(
                format!("{at}.command"),
                format!(
                    "{test:?} is benchmarked twice in this file; name each with hyperfine's --command-name"
                ),
            ));
        }
        let failed = command.exit_codes.iter().filter(|c| **c != Some(0)).count();
        if failed > 0 {
            notes.push(format!(
                "{test}: {failed} of {} runs exited non-zero or by a signal (hyperfine -i)",
                command.exit_codes.len()
            ));
        }
        record.tests.insert(
            test.clone(),
            vec![("command".to_string(), command.command.clone())],
        );
        samples.insert(test.clone(), shared::rounds(&values, options.at_ms));
        tests.push(TestEntry {
            test,
            unit: "s".to_string(),
            direction: Direction::Lower,
        });
    }
    Ok(shared::one_run(
        tests,
        &name,
        record,
        options.at_ms,
        notes,
        samples,
    ))
}
