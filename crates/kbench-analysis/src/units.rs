//! The units an identifier's rounds were measured in: its boots, or its
//! runs (one `kbench run`, `kbench vm run`, ... invocation each). Rounds
//! of one run share that spell of the machine, and runs of one boot share
//! the boot's kernel layout and allocator state, so a comparison of
//! identifiers measured apart replicates units, not rounds
//! (docs/statistics.md, "Measured apart").
//!
//! A stored run is one round of its invocation. The invocation is told by
//! the process that wrote it (its pid) on the host's boot, and runs of one
//! invocation follow each other; the boot by the measuring system's boot
//! id (a VM guest's own). Runs stored before kbench recorded boot ids have
//! none: each of their invocations is then counted as a boot of its own.

use crate::sides::rounds;
use kbench_model::TestKey;
use kbench_model::results::{IdentifierData, RunRecord};
use kbench_stats::Samples;
use kbench_stats::compare::{Unit, UnitKind};

/// The level both sides of a comparison can be replicated at: boots when
/// each side ran in at least two known boots (kernel drift between boots
/// is then seen), else runs.
pub fn common_level(a: &IdentifierData, b: &IdentifierData) -> UnitKind {
    let replicated = |identifier: &IdentifierData| boots(identifier) >= 2;
    match replicated(a) && replicated(b) {
        true => UnitKind::Boot,
        false => UnitKind::Run,
    }
}

/// How many distinct known boots the identifier's runs measured in.
pub fn boots(identifier: &IdentifierData) -> usize {
    distinct(
        identifier
            .runs
            .iter()
            .map(|run| run.info.snapshot.boot_id.as_str())
            .filter(|id| !id.is_empty()),
    )
}

/// How many runs (invocations) the identifier's stored rounds came from.
pub fn runs(identifier: &IdentifierData) -> usize {
    runs_of(&identifier.runs)
}

/// How many runs (invocations) these stored rounds came from.
pub fn runs_of(rounds: &[RunRecord]) -> usize {
    unit_indices(rounds, UnitKind::Run)
        .last()
        .map_or(0, |last| last + 1)
}

/// How many distinct items there are.
pub fn distinct<T: Ord>(items: impl Iterator<Item = T>) -> usize {
    let mut items: Vec<T> = items.collect();
    items.sort_unstable();
    items.dedup();
    items.len()
}

/// Whether some of the identifier's runs were stored without a boot id.
pub fn without_boot_ids(identifier: &IdentifierData) -> bool {
    identifier
        .runs
        .iter()
        .any(|run| run.info.snapshot.boot_id.is_empty())
}

/// The identifier's units of `key` at `level`, in the order they began:
/// consecutive stored runs of one boot (or one invocation) form a unit,
/// and each unit holds the logs of the means of its rounds that measured
/// `key`. Units without a round of `key` are left out; `None` when a
/// round's mean is not positive (no log: the metric has no usable side), or
/// a sample belongs to no stored run.
pub fn units_of(identifier: &IdentifierData, key: &TestKey, level: UnitKind) -> Option<Vec<Unit>> {
    let unit_of_run = unit_indices(&identifier.runs, level);
    // (unit index, its start, its rounds' samples), in order.
    let mut grouped: Vec<(usize, i64, Vec<Samples>)> = Vec::new();
    for ((run, _round), values) in rounds(identifier, key) {
        let round = Samples::new(values).ok()?;
        // Samples of no stored run (a set built without runs): no units.
        let unit = *unit_of_run.get(run)?;
        match grouped.last_mut() {
            Some((last, _, rounds)) if *last == unit => rounds.push(round),
            _ => grouped.push((unit, identifier.runs[run].info.started_at_ms, vec![round])),
        }
    }
    grouped
        .into_iter()
        .map(|(_, start_ms, rounds)| {
            Some(Unit {
                start_ms,
                round_logs: Samples::round_means(&rounds).ok()?.ln().ok()?,
            })
        })
        .collect()
}

/// The invocation that stored a run: its process on the host's boot (the
/// measuring system's own boot when it is no VM guest).
pub fn invocation(run: &RunRecord) -> (String, u32) {
    let host = run.info.host.as_ref().unwrap_or(&run.info.snapshot);
    (host.boot_id.clone(), run.info.pid)
}

/// The unit of each run (an index counting up from 0): a new unit starts
/// where a run's key differs from the run before it.
fn unit_indices(runs: &[RunRecord], level: UnitKind) -> Vec<usize> {
    let key = |run: &RunRecord| -> (String, u32) {
        match level {
            UnitKind::Boot if !run.info.snapshot.boot_id.is_empty() => {
                (run.info.snapshot.boot_id.clone(), 0)
            }
            _ => invocation(run),
        }
    };
    let mut indices = Vec::with_capacity(runs.len());
    let mut unit = 0;
    for (i, run) in runs.iter().enumerate() {
        if i > 0 && key(run) != key(&runs[i - 1]) {
            unit += 1;
        }
        indices.push(unit);
    }
    indices
}

#[cfg(test)]
mod tests {
    use super::*;
    use kbench_model::SystemSnapshot;
    use kbench_model::results::{RunId, RunInfo, RunStatus};

    /// A stored run (one round) by process `pid` in boot `boot`.
    fn run(id: i64, pid: u32, boot: &str) -> RunRecord {
        RunRecord {
            id: RunId(id),
            status: RunStatus::Complete,
            info: RunInfo {
                snapshot: SystemSnapshot {
                    boot_id: boot.into(),
                    ..SystemSnapshot::default()
                },
                pid,
                started_at_ms: id * 1000,
                ..RunInfo::default()
            },
            ended_at_ms: None,
            outcomes: vec![],
        }
    }

    /// An identifier whose run `i` measured `key` in two samples around
    /// `values[i]`.
    fn identifier(runs: Vec<RunRecord>, values: &[f64]) -> IdentifierData {
        let samples: Vec<[f64; 2]> = values.iter().map(|&v| [v - 1.0, v + 1.0]).collect();
        crate::fixtures::of_runs("i", runs, TestKey::new("syscall-null"), &samples)
    }

    /// Each unit's round means (back from their logs, rounded).
    fn means(units: Option<Vec<Unit>>) -> Vec<Vec<f64>> {
        units
            .expect("positive means")
            .iter()
            .map(|u| {
                u.round_logs
                    .as_slice()
                    .iter()
                    .map(|l| l.exp().round())
                    .collect()
            })
            .collect()
    }

    #[test]
    fn rounds_of_one_invocation_are_one_unit() {
        // Two `kbench run --rounds 2` in one boot, then one in another.
        let id = identifier(
            vec![
                run(1, 7, "b1"),
                run(2, 7, "b1"),
                run(3, 9, "b1"),
                run(4, 9, "b1"),
                run(5, 7, "b2"),
            ],
            &[10.0, 11.0, 20.0, 21.0, 30.0],
        );
        let key = TestKey::new("syscall-null");
        let by_run = units_of(&id, &key, UnitKind::Run).unwrap();
        assert_eq!(
            means(Some(by_run.clone())),
            [vec![10.0, 11.0], vec![20.0, 21.0], vec![30.0]]
        );
        assert_eq!(by_run[1].start_ms, 3000);
        let by_boot = units_of(&id, &key, UnitKind::Boot).unwrap();
        assert_eq!(
            means(Some(by_boot)),
            [vec![10.0, 11.0, 20.0, 21.0], vec![30.0]]
        );
        assert_eq!(boots(&id), 2);
        assert!(!without_boot_ids(&id));
    }

    #[test]
    fn old_runs_without_boot_ids_are_told_apart_by_their_process() {
        let id = identifier(
            vec![run(1, 7, ""), run(2, 7, ""), run(3, 8, "")],
            &[1.0, 2.0, 3.0],
        );
        let key = TestKey::new("syscall-null");
        assert_eq!(boots(&id), 0);
        assert!(without_boot_ids(&id));
        for level in [UnitKind::Run, UnitKind::Boot] {
            assert_eq!(
                means(units_of(&id, &key, level)),
                [vec![1.0, 2.0], vec![3.0]]
            );
        }
    }

    #[test]
    fn a_vm_run_is_one_invocation_of_many_boots() {
        let mut runs = vec![run(1, 7, "g1"), run(2, 7, "g2")];
        for r in &mut runs {
            r.info.host = Some(SystemSnapshot {
                boot_id: "host".into(),
                ..SystemSnapshot::default()
            });
        }
        let id = identifier(runs, &[5.0, 6.0]);
        let key = TestKey::new("syscall-null");
        assert_eq!(means(units_of(&id, &key, UnitKind::Run)), [vec![5.0, 6.0]]);
        assert_eq!(
            means(units_of(&id, &key, UnitKind::Boot)),
            [vec![5.0], vec![6.0]]
        );
        let other = identifier(vec![run(3, 8, "g3")], &[5.0]);
        assert_eq!(common_level(&id, &other), UnitKind::Run);
        assert_eq!(common_level(&id, &id), UnitKind::Boot);
    }
}
