//! What the show, compare and history models read of a result set: the
//! tests that are results (never a monitor or a secondary metric), the chosen
//! identifiers, and one identifier's samples of a test grouped into rounds,
//! as kbench-stats' comparison side.

use kbench_model::results::{IdentifierData, ResultSetData};
use kbench_model::{TestKey, TestSpec};
use kbench_stats::{Samples, Side, Summary};
use std::collections::BTreeMap;

/// The stored identifiers named in `order`, in that order (names checked).
pub(crate) fn chosen<'a>(data: &'a ResultSetData, order: &[String]) -> Vec<&'a IdentifierData> {
    order
        .iter()
        .map(|name| {
            data.identifiers
                .iter()
                .find(|i| &i.name == name)
                .expect("checked")
        })
        .collect()
}

/// The tests whose name contains `filter` (all without one); never an
/// interference monitor, which is no result.
pub(crate) fn filtered_specs<'a>(
    data: &'a ResultSetData,
    filter: Option<&str>,
) -> Vec<&'a TestSpec> {
    data.tests
        .iter()
        .filter(|spec| kbench_model::is_result_metric(&spec.key.metric))
        .filter(|spec| shown(spec, filter))
        .collect()
}

/// Whether the test's name contains `filter` (always without one).
pub(crate) fn shown(spec: &TestSpec, filter: Option<&str>) -> bool {
    kbench_model::results::test_matches(&spec.key, filter)
}

/// The summary of a side's observations.
pub(crate) fn summary_of(side: Option<&Side>) -> Option<Summary> {
    side.map(|s| Summary::of(s.observations()))
}

/// Rounds a side's observations come from; 0 without a side.
pub(crate) fn rounds_of(side: Option<&Side>) -> usize {
    side.map_or(0, Side::rounds)
}

/// The identifier's sample values of one test per round
/// ([`IdentifierData::rounds`]).
pub(crate) fn rounds(
    identifier: &IdentifierData,
    key: &TestKey,
) -> BTreeMap<(usize, u32), Vec<f64>> {
    identifier
        .rounds(key)
        .into_iter()
        .map(|(round, samples)| (round, samples.iter().map(|s| s.value).collect()))
        .collect()
}

/// The identifier's samples of one test as a comparison side: per-round
/// observations when measured in several [`rounds`]; `None` without a
/// usable sample.
pub(crate) fn side_of(identifier: &IdentifierData, key: &TestKey) -> Option<Side> {
    let rounds: Vec<Samples> = rounds(identifier, key)
        .into_values()
        .filter_map(|v| Samples::new(v).ok())
        .collect();
    match rounds.len() {
        0 => None,
        1 => Side::new(rounds.into_iter().next().expect("one")).ok(),
        _ => Side::from_rounds(&rounds).ok(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kbench_model::results::{RunId, RunInfo, RunRecord, RunStatus};

    fn run(id: i64) -> RunRecord {
        RunRecord {
            id: RunId(id),
            status: RunStatus::Complete,
            info: RunInfo::default(),
            ended_at_ms: None,
            outcomes: vec![],
        }
    }

    /// Two runs measured at once (two machines, or before runs were locked)
    /// may both number their samples round 0: they are two rounds, not one.
    #[test]
    fn a_round_is_one_runs_samples_of_one_round_number() {
        let key = TestKey::new("a");
        let samples = [[10.0, 11.0], [20.0, 21.0], [30.0, 31.0]];
        let runs = vec![run(1), run(2), run(3)];
        let identifier = crate::fixtures::of_runs("i", runs, key.clone(), &samples);
        let side = side_of(&identifier, &key).unwrap();
        assert_eq!(side.rounds(), 3);
        assert_eq!(side.observations().as_slice(), &[10.5, 20.5, 30.5]);
    }
}
