//! Which rounds of two identifiers were measured in the same blocks: runs
//! of one interleaved session (`kbench run --variant`, the session id in
//! each run's snapshot) with the same round number. Their block medians
//! pair up, and the per-block log ratios feed the blocked analysis. A
//! round's median, not its mean: under load a preempted sample or two
//! moves a 0.2 s round's mean, and on this project's machine the SD of
//! the block log ratios under one busy CPU fell from 4-6 % with means to
//! 2.5-3.7 % with medians (docs/sensitivity.md).

use kbench_model::TestKey;
use kbench_model::results::IdentifierData;
use kbench_stats::Samples;
use std::collections::BTreeMap;

/// Pairs needed before the blocked analysis is used.
const MIN_PAIRED_BLOCKS: usize = 2;

/// ln(current block median / baseline block median) for every block both
/// measured `key` in, in session and round order; `None` with fewer than
/// two such blocks.
pub(crate) fn log_ratios(
    baseline: &IdentifierData,
    current: &IdentifierData,
    key: &TestKey,
) -> Option<Vec<f64>> {
    let (a, b) = (block_medians(baseline, key), block_medians(current, key));
    let ratios: Vec<f64> = a
        .iter()
        .filter_map(|(block, median_a)| Some(b.get(block)?.ln() - median_a.ln()))
        .filter(|r| r.is_finite())
        .collect();
    (ratios.len() >= MIN_PAIRED_BLOCKS).then_some(ratios)
}

/// Median of `key` per (session, round) of the identifier's session runs.
fn block_medians(identifier: &IdentifierData, key: &TestKey) -> BTreeMap<(String, u32), f64> {
    let mut blocks: BTreeMap<(String, u32), Vec<f64>> = BTreeMap::new();
    for ((run, round), samples) in identifier.rounds(key) {
        let session = identifier
            .runs
            .get(run)
            .and_then(|r| r.info.snapshot.variant.as_ref())
            .map(|v| v.session.clone());
        if let Some(session) = session {
            blocks
                .entry((session, round))
                .or_default()
                .extend(samples.iter().map(|s| s.value));
        }
    }
    blocks
        .into_iter()
        .filter_map(|(block, values)| Some((block, Samples::new(values).ok()?.median())))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use kbench_model::results::{RunId, RunInfo, RunRecord, RunStatus};
    use kbench_model::{Sample, SystemSnapshot, VariantRecord};

    fn identifier(name: &str, session: Option<&str>, values: &[(u32, f64)]) -> IdentifierData {
        let key = TestKey::new("t");
        let run = RunRecord {
            id: RunId(1),
            status: RunStatus::Complete,
            info: RunInfo {
                snapshot: SystemSnapshot {
                    variant: session.map(|s| VariantRecord {
                        session: s.into(),
                        ..VariantRecord::default()
                    }),
                    ..SystemSnapshot::default()
                },
                ..RunInfo::default()
            },
            ended_at_ms: None,
            outcomes: vec![],
        };
        let samples = values
            .iter()
            .map(|&(round, value)| Sample {
                value,
                iterations: 1,
                at_ms: 0,
                round,
            })
            .collect();
        IdentifierData {
            name: name.into(),
            factors: Default::default(),
            runs: vec![run],
            sample_runs: BTreeMap::from([(key.clone(), vec![0; values.len()])]),
            samples: BTreeMap::from([(key, samples)]),
        }
    }

    #[test]
    fn blocks_of_one_session_pair_by_round() {
        let a = identifier(
            "a",
            Some("s1"),
            &[(0, 10.0), (0, 90.0), (0, 11.0), (1, 20.0), (2, 5.0)],
        );
        let b = identifier("b", Some("s1"), &[(0, 22.0), (1, 40.0), (3, 1.0)]);
        let ratios = log_ratios(&a, &b, &TestKey::new("t")).unwrap();
        // Blocks 0 and 1 pair (medians 11 and 20 against 22 and 40); the
        // preempted 90 of block 0 moves its mean, not its median.
        assert_eq!(ratios.len(), 2);
        assert!(
            ratios.iter().all(|r| (r - 2f64.ln()).abs() < 1e-12),
            "{ratios:?}"
        );
    }

    #[test]
    fn other_sessions_and_plain_runs_do_not_pair() {
        let a = identifier("a", Some("s1"), &[(0, 1.0), (1, 1.0)]);
        let other = identifier("b", Some("s2"), &[(0, 1.0), (1, 1.0)]);
        let plain = identifier("c", None, &[(0, 1.0), (1, 1.0)]);
        let key = TestKey::new("t");
        assert_eq!(log_ratios(&a, &other, &key), None);
        assert_eq!(log_ratios(&a, &plain, &key), None);
    }
}
