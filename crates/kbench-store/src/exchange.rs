//! The raw-sample exchange format `kbench.samples/1` of `kbench export` and
//! `kbench import` (docs/samples-format.md): a whole result set with every
//! run and raw sample, so an export imports back to the same data.
//!
//! Import is strict: unknown fields (outside the free-form `snapshot`), what
//! every write path refuses ([`crate::validate`]: NaN, infinite or
//! non-positive values, zero iterations, negative times, runs ending before
//! they start, test names over 128 characters), empty sample lists, a test
//! given twice in one `samples` object, duplicate identifiers or tests, an
//! identifier with neither or both of `runs` and `samples`, and samples of
//! undeclared tests are rejected with the JSON line or the path of the
//! offending element. [`stream::import`] reads a document into a store as
//! it streams in, with the same checks.

pub mod stream;

use crate::{
    IdentifierData, ResultSetData, RunId, RunInfo, RunRecord, RunStatus, TestOutcome, validate,
};
use kbench_model::{Direction, Sample, TestKey, TestSpec};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashSet};

pub const SCHEMA: &str = "kbench.samples/1";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SamplesFile {
    pub schema: String,
    /// The result set it came from; `import --into` may name another.
    #[serde(default)]
    pub result_set: Option<String>,
    /// The set's title and description (`kbench set edit`), when it has them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub tests: Vec<TestEntry>,
    pub identifiers: Vec<IdentifierEntry>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TestEntry {
    /// `bench[k=v,...]` with `:metric` when not the main one.
    pub test: String,
    pub unit: String,
    pub direction: Direction,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IdentifierEntry {
    pub name: String,
    /// Its factors of a designed experiment, name -> level.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub factors: BTreeMap<String, String>,
    /// Runs with their samples; an identifier may give `samples` alone
    /// instead, and one run is made for them.
    #[serde(default)]
    pub runs: Vec<RunEntry>,
    /// Samples not tied to a run (bring-your-own data), by test name.
    #[serde(
        default,
        skip_serializing_if = "BTreeMap::is_empty",
        deserialize_with = "unique_keys"
    )]
    pub samples: BTreeMap<String, Vec<SampleEntry>>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunEntry {
    pub status: RunStatus,
    #[serde(default)]
    pub info: RunInfo,
    #[serde(default)]
    pub ended_at_ms: Option<i64>,
    #[serde(default)]
    pub outcomes: Vec<TestOutcome>,
    /// This run's samples by test name.
    #[serde(deserialize_with = "unique_keys")]
    pub samples: BTreeMap<String, Vec<SampleEntry>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SampleEntry {
    pub value: f64,
    #[serde(default = "one")]
    pub iterations: u64,
    #[serde(default)]
    pub at_ms: i64,
    #[serde(default)]
    pub round: u32,
}

fn one() -> u64 {
    1
}

/// A JSON object read into a map, refusing a key given twice (serde's own
/// map keeps the last one silently, and so would drop samples).
fn unique_keys<'de, D, V>(deserializer: D) -> Result<BTreeMap<String, V>, D::Error>
where
    D: serde::Deserializer<'de>,
    V: Deserialize<'de>,
{
    struct Unique<V>(std::marker::PhantomData<V>);

    impl<'de, V: Deserialize<'de>> serde::de::Visitor<'de> for Unique<V> {
        type Value = BTreeMap<String, V>;

        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("an object of sample lists by test name")
        }

        fn visit_map<A: serde::de::MapAccess<'de>>(
            self,
            mut map: A,
        ) -> Result<Self::Value, A::Error> {
            let mut all = BTreeMap::new();
            while let Some((key, value)) = map.next_entry::<String, V>()? {
                if all.contains_key(&key) {
                    return Err(serde::de::Error::custom(format!(
                        "test {key:?} is given twice; give each test's samples once, in one list"
                    )));
                }
                all.insert(key, value);
            }
            Ok(all)
        }
    }

    deserializer.deserialize_map(Unique(std::marker::PhantomData))
}

/// A file that cannot be imported; says where and what.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ExchangeError(pub String);

/// The export of a loaded result set. Samples go with the run they were
/// measured in, found by time (the newest run started at or before).
pub fn export(data: &ResultSetData) -> SamplesFile {
    SamplesFile {
        schema: SCHEMA.to_string(),
        result_set: Some(data.name.clone()),
        title: data.title.clone(),
        description: data.description.clone(),
        tests: data
            .tests
            .iter()
            .map(|spec| TestEntry {
                test: spec.key.to_string(),
                unit: spec.unit.clone(),
                direction: spec.direction,
            })
            .collect(),
        identifiers: data.identifiers.iter().map(export_identifier).collect(),
    }
}

fn export_identifier(identifier: &IdentifierData) -> IdentifierEntry {
    let mut runs: Vec<RunEntry> = identifier
        .runs
        .iter()
        .map(|run| RunEntry {
            status: run.status,
            info: run.info.clone(),
            ended_at_ms: run.ended_at_ms,
            outcomes: run.outcomes.clone(),
            samples: BTreeMap::new(),
        })
        .collect();
    let mut loose: BTreeMap<String, Vec<SampleEntry>> = BTreeMap::new();
    for (key, samples) in &identifier.samples {
        let owners = identifier.runs_of_samples(key);
        for (sample, owner) in samples.iter().zip(owners) {
            let entry = SampleEntry {
                value: sample.value,
                iterations: sample.iterations,
                at_ms: sample.at_ms,
                round: sample.round,
            };
            let target = match runs.get_mut(owner) {
                Some(run) => &mut run.samples,
                None => &mut loose,
            };
            target.entry(key.to_string()).or_default().push(entry);
        }
    }
    IdentifierEntry {
        name: identifier.name.clone(),
        factors: identifier.factors.clone(),
        runs,
        samples: loose,
    }
}

/// Parses and checks a file's text; `into` overrides its result set name.
pub fn parse(text: &str, into: Option<&str>) -> Result<ResultSetData, ExchangeError> {
    // serde_json's message ends with the line and column.
    let file: SamplesFile = serde_json::from_str(text).map_err(|e| ExchangeError(e.to_string()))?;
    to_result_set(&file, into)
}

/// Checks a parsed file and turns it into the store's shape.
pub fn to_result_set(
    file: &SamplesFile,
    into: Option<&str>,
) -> Result<ResultSetData, ExchangeError> {
    check_schema(&file.schema)?;
    let name = set_name(into, file.result_set.as_deref())?;
    check_text("title", file.title.as_deref())?;
    check_text("description", file.description.as_deref())?;
    let tests = test_specs(&file.tests)?;
    let mut checked = Identifiers::new(&tests);
    let identifiers = file
        .identifiers
        .iter()
        .map(|entry| checked.next(entry))
        .collect::<Result<_, _>>()?;
    Ok(ResultSetData {
        name,
        title: file.title.clone(),
        description: file.description.clone(),
        tests,
        identifiers,
    })
}

fn check_schema(schema: &str) -> Result<(), ExchangeError> {
    if schema == SCHEMA {
        Ok(())
    } else {
        Err(ExchangeError(format!(
            "schema: is {schema:?}; this kbench reads {SCHEMA:?}"
        )))
    }
}

/// The result set imported into: `into`, else the file's.
fn set_name(into: Option<&str>, file: Option<&str>) -> Result<String, ExchangeError> {
    into.or(file).map(str::to_string).ok_or_else(|| {
        ExchangeError("result_set: missing; give one in the file or with --into".to_string())
    })
}

/// The set's `title` (one line) or `description` (lines).
fn check_text(what: &str, text: Option<&str>) -> Result<(), ExchangeError> {
    text.map_or(Ok(()), |text| {
        kbench_model::validate_text(what, text, what == "description")
            .map_err(|e| ExchangeError(format!("{what}: {e}")))
    })
}

/// The `tests` list, each parsed and checked once.
fn test_specs(entries: &[TestEntry]) -> Result<Vec<TestSpec>, ExchangeError> {
    let fail = |path: String, what: &str| Err(ExchangeError(format!("{path}: {what}")));
    let mut tests: Vec<TestSpec> = Vec::new();
    for (i, entry) in entries.iter().enumerate() {
        let key = TestKey::parse(&entry.test)
            .map_err(|e| ExchangeError(format!("tests[{i}].test: {e}")))?;
        if tests.iter().any(|t| t.key == key) {
            return fail(
                format!("tests[{i}].test"),
                &format!("{key} is listed twice"),
            );
        }
        let spec = TestSpec {
            key,
            unit: entry.unit.clone(),
            direction: entry.direction,
        };
        validate::test_spec(&spec).map_err(|e| ExchangeError(format!("tests[{i}]: {e}")))?;
        tests.push(spec);
    }
    Ok(tests)
}

/// The identifiers of a file, checked in order as they come: each one's
/// place, name (given once) and contents, of the declared tests.
struct Identifiers {
    declared: HashSet<TestKey>,
    seen: HashSet<String>,
}

impl Identifiers {
    fn new(tests: &[TestSpec]) -> Identifiers {
        Identifiers {
            declared: tests.iter().map(|t| t.key.clone()).collect(),
            seen: HashSet::new(),
        }
    }

    /// The next identifier, checked and in the store's shape.
    fn next(&mut self, entry: &IdentifierEntry) -> Result<IdentifierData, ExchangeError> {
        let path = format!("identifiers[{}]", self.seen.len());
        if self.seen.contains(&entry.name) {
            return Err(ExchangeError(format!(
                "{path}.name: identifier {:?} appears twice",
                entry.name
            )));
        }
        kbench_model::validate_name("identifier", &entry.name)
            .map_err(|e| ExchangeError(format!("{path}.name: {e}")))?;
        let data = identifier_data(entry, &path, &self.declared)?;
        self.seen.insert(entry.name.clone());
        Ok(data)
    }
}

fn identifier_data(
    entry: &IdentifierEntry,
    path: &str,
    tests: &HashSet<TestKey>,
) -> Result<IdentifierData, ExchangeError> {
    match (entry.runs.is_empty(), entry.samples.is_empty()) {
        (true, true) => {
            return Err(ExchangeError(format!(
                "{path}: identifier {:?} has neither runs nor samples; give one of them, or \
                 leave the identifier out",
                entry.name
            )));
        }
        (false, false) => {
            return Err(ExchangeError(format!(
                "{path}: identifier {:?} has both runs and samples; give its samples inside \
                 its runs, or samples alone (one run is then made for them)",
                entry.name
            )));
        }
        _ => {}
    }
    for (name, level) in &entry.factors {
        kbench_model::parse_factor(&format!("{name}={level}"))
            .map_err(|e| ExchangeError(format!("{path}.factors[{name:?}]: {e}")))?;
    }
    let mut runs = Vec::new();
    let mut samples: BTreeMap<TestKey, Vec<Sample>> = BTreeMap::new();
    let mut sample_runs: BTreeMap<TestKey, Vec<usize>> = BTreeMap::new();
    // Samples without a run get a run of their own, first (see below).
    let offset = usize::from(!entry.samples.is_empty());
    let mut add = |group: &BTreeMap<String, Vec<SampleEntry>>,
                   at: &str,
                   run: usize|
     -> Result<(), ExchangeError> {
        for (test, list) in group {
            let place = || format!("{at}.samples[{test:?}]");
            let key = declared(test, tests, place)?;
            if list.is_empty() {
                return Err(ExchangeError(format!(
                    "{}: the sample list is empty",
                    place()
                )));
            }
            let stored = samples.entry(key.clone()).or_default();
            for (k, s) in list.iter().enumerate() {
                let sample = Sample {
                    value: s.value,
                    iterations: s.iterations,
                    at_ms: s.at_ms,
                    round: s.round,
                };
                validate::sample(&sample)
                    .map_err(|e| ExchangeError(format!("{}[{k}]: {e}", place())))?;
                stored.push(sample);
            }
            let owners = sample_runs.entry(key).or_default();
            owners.resize(owners.len() + list.len(), run);
        }
        Ok(())
    };
    for (r, run) in entry.runs.iter().enumerate() {
        let at = format!("{path}.runs[{r}]");
        validate::run_times(run.info.started_at_ms, run.ended_at_ms)
            .map_err(|e| ExchangeError(format!("{at}: {e}")))?;
        for (o, outcome) in run.outcomes.iter().enumerate() {
            if !tests.contains(&outcome.test) {
                return Err(ExchangeError(format!(
                    "{at}.outcomes[{o}]: test {} is not listed in tests",
                    outcome.test
                )));
            }
        }
        add(&run.samples, &at, r + offset)?;
        runs.push(RunRecord {
            id: RunId(0),
            status: run.status,
            info: run.info.clone(),
            ended_at_ms: run.ended_at_ms,
            outcomes: run.outcomes.clone(),
        });
    }
    add(&entry.samples, path, 0)?;
    if !entry.samples.is_empty() {
        // Samples without a run: one imported run holds them, started at
        // (or before) the first of them so every sample falls inside it.
        let first = entry
            .samples
            .values()
            .flatten()
            .map(|s| s.at_ms)
            .min()
            .unwrap_or(0);
        runs.insert(
            0,
            RunRecord {
                id: RunId(0),
                status: RunStatus::Complete,
                info: RunInfo {
                    started_at_ms: first.min(runs.first().map_or(first, |r| r.info.started_at_ms)),
                    notes: vec!["imported samples (no system snapshot)".to_string()],
                    ..RunInfo::default()
                },
                ended_at_ms: None,
                outcomes: vec![],
            },
        );
    }
    Ok(IdentifierData {
        name: entry.name.clone(),
        runs,
        samples,
        sample_runs,
        factors: entry.factors.clone(),
    })
}

fn declared(
    test: &str,
    tests: &HashSet<TestKey>,
    place: impl Fn() -> String,
) -> Result<TestKey, ExchangeError> {
    let key = TestKey::parse(test).map_err(|e| ExchangeError(format!("{}: {e}", place())))?;
    if tests.contains(&key) {
        Ok(key)
    } else {
        Err(ExchangeError(format!(
            "{}: test {key} is not listed in tests",
            place()
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn minimal(samples: &str) -> String {
        format!(
            r#"{{"schema": "kbench.samples/1", "result_set": "s",
                "tests": [{{"test": "app", "unit": "ops/s", "direction": "higher"}}],
                "identifiers": [{{"name": "a", "samples": {{"app": {samples}}}}}]}}"#
        )
    }

    #[test]
    fn accepts_bring_your_own_samples() {
        let data = parse(
            &minimal(r#"[{"value": 10.0}, {"value": 11.0, "round": 1}]"#),
            None,
        )
        .unwrap();
        assert_eq!(data.identifiers[0].runs.len(), 1);
        assert_eq!(data.identifiers[0].samples[&TestKey::new("app")].len(), 2);
    }

    #[test]
    fn rejects_bad_input_with_its_place() {
        let cases = [
            (minimal("[]"), "empty"),
            (
                minimal(r#"[{"value": -1}]"#),
                "samples[\"app\"][0]: value -1",
            ),
            (minimal(r#"[{"value": 1, "at_ms": -5}]"#), "before 1970"),
            (
                minimal(r#"[{"value": 1, "iterations": 0}]"#),
                "iterations is 0",
            ),
            (
                minimal(r#"[{"value": 1}], "app": [{"value": 2}]"#),
                "test \"app\" is given twice",
            ),
            (
                minimal(r#"[{"value": 1}]"#).replace(
                    r#""samples": {"#,
                    r#""runs": [{"status": "complete", "samples": {}}], "samples": {"#,
                ),
                "both runs and samples",
            ),
            (
                minimal(r#"[{"value": 1}]"#).replace(r#", "samples": {"app": [{"value": 1}]}"#, ""),
                "neither runs nor samples",
            ),
            (
                minimal(r#"[{"value": 1}]"#)
                    .replace("\"app\"", &format!("\"{}\"", "a".repeat(129))),
                "tests[0]: the test name",
            ),
            (minimal(r#"[{"value": 1, "colour": 2}]"#), "unknown field"),
            (minimal(r#"[{"value": NaN}]"#), "line"),
            (
                minimal(r#"[{"value": 1}]"#).replace("\"app\": [", "\"other\": ["),
                "not listed",
            ),
        ];
        for (text, needle) in cases {
            let error = parse(&text, None).unwrap_err().to_string();
            assert!(error.contains(needle), "{needle:?} not in {error:?}");
        }
        let twice = minimal(r#"[{"value": 1}]"#).replace(
            r#""identifiers": [{"name": "a""#,
            r#""identifiers": [{"name": "a", "samples": {"app": [{"value": 3}]}}, {"name": "a""#,
        );
        assert!(
            parse(&twice, None)
                .unwrap_err()
                .to_string()
                .contains("appears twice")
        );
    }
}
