//! The model of `kbench show`: a result set's identifiers, system header
//! and per-test summary (n, mean, median, SD, 95 % CI of the mean, whether
//! the CI target was met), and what the interference monitors saw (they
//! are listed there, not as tests). Serialized, it is the `kbench.show/1`
//! document of docs/json.md; the formats lay it out.

use crate::{header, interference, sides};
use kbench_model::results::{
    IdentifierData, ResultSetData, ResultSetSummary, RunRecord, SetPart, TestOutcome,
    TestOutcomeKind,
};
use kbench_model::{Direction, TestKey, TestSpec};
use kbench_stats::{Samples, Summary};
use serde::Serialize;
use std::collections::BTreeMap;

pub const SCHEMA: &str = "kbench.show/1";

/// What `kbench show` reads of the set: with `--counters`, the one
/// identifier it shows (the one named, else the first stored); otherwise
/// the whole set, as every view lists every identifier.
pub fn part(counters: &Option<Option<String>>) -> SetPart {
    match counters {
        None => SetPart::all(),
        Some(name) => SetPart {
            identifiers: Some(name.iter().cloned().collect()),
            first: name.is_none(),
            metric_filter: None,
        },
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct ShowDocument {
    pub schema: &'static str,
    pub result_set: String,
    /// The set's title and description (`kbench set edit`), when it has them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub identifiers: Vec<IdentifierEntry>,
    pub differences: Vec<header::Difference>,
    pub tests: Vec<TestEntry>,
    /// Per identifier what its interference monitors saw, then disturbed
    /// rounds and differing machine speed ([`crate::interference`]).
    pub interference: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct IdentifierEntry {
    pub name: String,
    /// Its factors of a designed experiment (`--factor`), when it has any.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub factors: BTreeMap<String, String>,
    pub samples: usize,
    pub runs: Vec<RunRecord>,
}

#[derive(Debug, Clone, Serialize)]
pub struct TestEntry {
    pub test: String,
    /// "Redis 7.0.15 - Test: GET - Parallel Connections: 50" for a profile
    /// test whose runs recorded its tool ([`crate::title`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    pub benchmark: String,
    pub options: BTreeMap<String, String>,
    pub metric: String,
    pub unit: String,
    pub direction: Direction,
    pub results: Vec<ResultEntry>,
}

/// One identifier's numbers for one test.
#[derive(Debug, Clone, Serialize)]
pub struct ResultEntry {
    pub identifier: String,
    /// `None` when the identifier has no sample of this test.
    pub summary: Option<Summary>,
    pub rounds: usize,
    /// How the test ended in the identifier's newest run that ran it.
    pub outcome: Option<TestOutcomeKind>,
    pub outcome_detail: Option<String>,
}

/// Builds the show document of a whole result set.
pub fn document(data: &ResultSetData) -> ShowDocument {
    ShowDocument {
        schema: SCHEMA,
        result_set: data.name.clone(),
        title: data.title.clone(),
        description: data.description.clone(),
        identifiers: data
            .identifiers
            .iter()
            .map(|id| IdentifierEntry {
                name: id.name.clone(),
                factors: id.factors.clone(),
                samples: id.sample_count(),
                runs: id.runs.clone(),
            })
            .collect(),
        differences: header::differences(&data.identifiers),
        tests: data
            .tests
            .iter()
            .filter(|spec| kbench_model::is_result_metric(&spec.key.metric))
            .map(|spec| test_entry(spec, &data.identifiers))
            .collect(),
        interference: data
            .identifiers
            .iter()
            .filter_map(interference::summary_line)
            .chain(interference::notes(&data.identifiers))
            .collect(),
    }
}

fn test_entry(spec: &TestSpec, identifiers: &[IdentifierData]) -> TestEntry {
    TestEntry {
        test: spec.key.to_string(),
        title: crate::title::title(&spec.key, identifiers),
        benchmark: spec.key.benchmark.clone(),
        options: spec.key.options.clone(),
        metric: spec.key.metric.clone(),
        unit: spec.unit.clone(),
        direction: spec.direction,
        results: identifiers
            .iter()
            .map(|id| result_entry(spec, id))
            .collect(),
    }
}

fn result_entry(spec: &TestSpec, identifier: &IdentifierData) -> ResultEntry {
    let samples = identifier.samples.get(&spec.key);
    let summary = samples
        .and_then(|s| Samples::new(s.iter().map(|x| x.value).collect()).ok())
        .map(|s| Summary::of(&s));
    // Rounds as compare counts them.
    let rounds = sides::rounds(identifier, &spec.key).len();
    let outcome = identifier
        .runs
        .iter()
        .rev()
        .flat_map(|run| &run.outcomes)
        .find(|o| o.test.same_test(&spec.key));
    ResultEntry {
        identifier: identifier.name.clone(),
        summary,
        rounds,
        outcome: outcome.map(|o| o.kind),
        outcome_detail: outcome.map(|o| o.detail.clone()),
    }
}
/// The `kbench.run/1` document: what one `kbench run` stored.
#[derive(Debug, Serialize)]
pub struct RunDocument {
    pub schema: &'static str,
    pub result_set: String,
    pub identifier: String,
    pub interrupted: bool,
    /// Stopped at a FAILED test (without `--keep-going`).
    pub stopped_at_failure: bool,
    /// How many tests the run was to measure.
    pub tests: usize,
    pub samples_stored: usize,
    pub outcomes: Vec<TestOutcome>,
    pub show: ShowDocument,
}

/// The `kbench.sets/1` document: the result sets of a store, what
/// `kbench show` without a set lists.
#[derive(Debug, Serialize)]
pub struct SetList {
    pub schema: &'static str,
    pub result_sets: Vec<ResultSetSummary>,
}

impl SetList {
    pub fn new(result_sets: Vec<ResultSetSummary>) -> SetList {
        SetList {
            schema: "kbench.sets/1",
            result_sets,
        }
    }
}

impl RunDocument {
    /// The lines a run ends with, after its summary: how many samples it
    /// stored where, or that it was interrupted and how to resume; then
    /// the tests that FAILED, if any.
    pub fn ending(&self) -> String {
        let stored = if self.interrupted {
            format!(
                "\nInterrupted: {} sample(s) stored. Run the same command again to resume.",
                self.samples_stored
            )
        } else {
            format!(
                "\nStored {} sample(s) under '{}' in result set '{}'.",
                self.samples_stored, self.identifier, self.result_set
            )
        };
        match self.failed() {
            Some(failed) => format!("{stored}\n{failed}"),
            None => stored,
        }
    }

    /// The line naming the tests that FAILED ([`failed_line`]), if any.
    pub fn failed(&self) -> Option<String> {
        failed_line(&self.outcomes, self.tests, self.stopped_at_failure)
    }
}

/// "2 of 50 tests FAILED: a, b", each failed test named once however many
/// rounds it failed in, and when the run stopped at the first, that it
/// did and how to go on; `None` when no test failed.
pub fn failed_line(outcomes: &[TestOutcome], tests: usize, stopped: bool) -> Option<String> {
    let mut failed: Vec<&TestKey> = Vec::new();
    for outcome in outcomes
        .iter()
        .filter(|o| o.kind == TestOutcomeKind::Failed)
    {
        if !failed.contains(&&outcome.test) {
            failed.push(&outcome.test);
        }
    }
    if failed.is_empty() {
        return None;
    }
    let names: Vec<String> = failed.iter().map(ToString::to_string).collect();
    let plural = if tests == 1 { "" } else { "s" };
    let stopped = match stopped {
        true => "; the run stopped there (--keep-going measures the other tests too)",
        false => "",
    };
    Some(format!(
        "{} of {tests} test{plural} FAILED: {}{stopped}",
        failed.len(),
        names.join(", ")
    ))
}

/// The result set cut down to `identifier` and the tests a run measured
/// (any metric of them): what a run's summary shows.
pub fn of_run(mut data: ResultSetData, identifier: &str, tests: &[TestKey]) -> ResultSetData {
    data.identifiers.retain(|i| i.name == identifier);
    data.tests
        .retain(|spec| tests.iter().any(|t| t.same_test(&spec.key)));
    data
}
