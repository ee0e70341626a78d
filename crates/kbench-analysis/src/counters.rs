//! `kbench show SET --counters`: one identifier's counters and monitors
//! per operation, test by test, the way `perf stat` prints them: the mean
//! over rounds with its 95 % CI ([`crate::explain`] says how a round's
//! value is made).

use crate::Error;
use crate::explain::{Secondaries, TestRounds};
use kbench_model::results::{IdentifierData, ResultSetData};
use kbench_model::{SECONDARY_FAMILIES, is_result_metric, secondary_family, secondary_label};
use kbench_stats::Summary;
use serde::Serialize;
use std::collections::BTreeSet;

pub const SCHEMA: &str = "kbench.counters/1";

/// One identifier's secondary metrics.
#[derive(Debug, Clone, Serialize)]
pub struct CounterDocument {
    pub schema: &'static str,
    pub result_set: String,
    pub identifier: String,
    pub tests: Vec<CounterTest>,
    /// What its runs could not record ("instructions/op n/a (no PMU)").
    pub unavailable: Vec<String>,
}

/// One test's secondary metrics, the task's counters first.
#[derive(Debug, Clone, Serialize)]
pub struct CounterTest {
    /// `bench[opts]`.
    pub test: String,
    pub rows: Vec<CounterRow>,
}

#[derive(Debug, Clone, Serialize)]
pub struct CounterRow {
    pub metric: String,
    pub label: String,
    pub unit: String,
    /// Of the per-round values: n is the rounds.
    pub summary: Summary,
}

/// The document of `identifier` (the first stored without one).
pub fn document(data: &ResultSetData, identifier: Option<&str>) -> Result<CounterDocument, Error> {
    let known = || data.identifiers.iter().map(|i| i.name.clone()).collect();
    let chosen: &IdentifierData = match identifier {
        Some(name) => data
            .identifiers
            .iter()
            .find(|i| i.name == name)
            .ok_or_else(|| Error::UnknownIdentifier {
                set: data.name.clone(),
                name: name.to_string(),
                known: known(),
            })?,
        None => data
            .identifiers
            .first()
            .ok_or_else(|| Error::NoIdentifiers {
                set: data.name.clone(),
            })?,
    };
    let mut tests: Vec<CounterTest> = vec![];
    let mut seen: BTreeSet<String> = BTreeSet::new();
    let secondaries = Secondaries::of(data);
    // Each test once, by its first result metric (whose rounds count).
    for result in data
        .tests
        .iter()
        .filter(|s| is_result_metric(&s.key.metric))
    {
        let test = result
            .key
            .with_metric(kbench_model::MAIN_METRIC)
            .to_string();
        if !seen.insert(test.clone()) {
            continue;
        }
        let rounds = TestRounds::of(chosen, &result.key);
        let mut rows: Vec<CounterRow> = secondaries
            .of_test(&result.key)
            .iter()
            .filter_map(|spec| {
                let values = rounds.values(&spec.key)?;
                Some(CounterRow {
                    metric: spec.key.metric.clone(),
                    label: secondary_label(&spec.key.metric),
                    unit: spec.unit.clone(),
                    summary: Summary::of(&values),
                })
            })
            .collect();
        rows.sort_by_key(|row| (family_rank(&row.metric), row.metric.clone()));
        if !rows.is_empty() {
            tests.push(CounterTest { test, rows });
        }
    }
    Ok(CounterDocument {
        schema: SCHEMA,
        result_set: data.name.clone(),
        identifier: chosen.name.clone(),
        tests,
        unavailable: crate::explain::unavailable(&[chosen]),
    })
}

/// Families in [`SECONDARY_FAMILIES`] order: the task's counters first.
fn family_rank(metric: &str) -> usize {
    let family = secondary_family(metric);
    SECONDARY_FAMILIES
        .iter()
        .position(|f| Some(*f) == family)
        .unwrap_or(usize::MAX)
}
