//! Two identifiers measured apart: how their comparison is set up (the
//! level both replicate, the host's drift prior, what a unit and a round
//! cost) and what the report says of how they were treated. Identifiers
//! measured together, in one invocation (`kbench run --variant`), are not
//! apart: their rounds interleave, and the blocked or independent analysis
//! compares them (docs/statistics.md, "Measured apart").

use crate::calibration::Prior;
use crate::units::{self, boots, common_level, distinct, invocation};
use kbench_model::results::IdentifierData;
use kbench_model::{Calibration, TestKey};
use kbench_stats::compare::{Costs, Levelled, UnitKind};

/// What starting a run costs (process start, system snapshot, warm-up),
/// in seconds, for the plan's rounds per unit.
const RUN_START_S: f64 = 2.0;
/// What a boot costs, in seconds: a reboot of a server, or a TCG guest's
/// boot here (40-90 s).
const BOOT_S: f64 = 60.0;
/// A round's cost when no run recorded its end (imported runs).
const UNKNOWN_ROUND_S: f64 = 5.0;

/// The comparison of a pair of identifiers measured apart.
#[derive(Debug, Clone, PartialEq)]
pub struct Apart<'a> {
    /// The level both sides are replicated at.
    pub level: UnitKind,
    /// The host's drift for one unit on a side.
    pub prior: Prior<'a>,
    costs: Costs,
}

impl<'a> Apart<'a> {
    /// The set-up for `baseline` against `current`, with the host's drift
    /// from the fitting one of `calibrations` (newest first); `None` when
    /// some invocation measured both (they are interleaved, not apart).
    pub fn of(
        baseline: &IdentifierData,
        current: &IdentifierData,
        calibrations: &'a [Calibration],
    ) -> Option<Apart<'a>> {
        if measured_together(baseline, current) {
            return None;
        }
        let level = common_level(baseline, current);
        // Alternating runs of two kernels means a boot per unit.
        let unit_s = match level {
            UnitKind::Run if !in_different_boots(baseline, current) => RUN_START_S,
            _ => BOOT_S,
        };
        Some(Apart {
            level,
            prior: Prior::choose(calibrations, baseline, current, level),
            costs: Costs {
                unit_s,
                round_s: round_seconds(baseline, current),
            },
        })
    }

    /// The levelled input of `key`: both sides' units; `None` when a side
    /// has no unit of it, or a round mean that is not positive.
    pub fn levelled(
        &self,
        baseline: &IdentifierData,
        current: &IdentifierData,
        key: &TestKey,
    ) -> Option<Levelled> {
        let baseline = units::units_of(baseline, key, self.level)?;
        let current = units::units_of(current, key, self.level)?;
        let drift = self.prior.drift(key);
        Levelled::new(self.level, baseline, current, Some(drift), self.costs).ok()
    }
}

/// Whether one invocation (a known process on a known boot) stored runs
/// of both on one boot of the measuring system: identifiers measured
/// together, in interleaved rounds (`--variant`). `vm compare` stores
/// both kernels from one process too, but each in guest boots of its own:
/// apart.
fn measured_together(baseline: &IdentifierData, current: &IdentifierData) -> bool {
    let known = |identifier: &IdentifierData| -> Vec<((String, u32), String)> {
        identifier
            .runs
            .iter()
            .map(|run| (invocation(run), run.info.snapshot.boot_id.clone()))
            .filter(|((boot, pid), _)| !boot.is_empty() && *pid != 0)
            .collect()
    };
    let theirs = known(current);
    known(baseline).iter().any(|i| theirs.contains(i))
}

/// Whether both sides' runs name their boots and no boot is shared: each
/// unit of one side against the other's then takes a reboot.
fn in_different_boots(baseline: &IdentifierData, current: &IdentifierData) -> bool {
    let ids = |identifier: &IdentifierData| -> Vec<String> {
        identifier
            .runs
            .iter()
            .map(|run| run.info.snapshot.boot_id.clone())
            .collect()
    };
    let (a, b) = (ids(baseline), ids(current));
    let known = |ids: &[String]| ids.iter().all(|id| !id.is_empty());
    known(&a) && known(&b) && !a.iter().any(|id| b.contains(id))
}

/// The median stored run's length in seconds (a stored run is one round);
/// [`UNKNOWN_ROUND_S`] when none recorded its end.
fn round_seconds(baseline: &IdentifierData, current: &IdentifierData) -> f64 {
    let mut lengths: Vec<f64> = [baseline, current]
        .iter()
        .flat_map(|identifier| &identifier.runs)
        .filter_map(|run| {
            let ended = run.ended_at_ms?;
            let length = (ended - run.info.started_at_ms) as f64 / 1000.0;
            (length > 0.0).then_some(length)
        })
        .collect();
    if lengths.is_empty() {
        return UNKNOWN_ROUND_S;
    }
    lengths.sort_by(f64::total_cmp);
    lengths[lengths.len() / 2]
}

/// What the report says of how the identifiers' units were told, one note
/// per kind naming all it holds for: runs with no record of their process
/// (imported, or written by hand), runs without boot ids (stored before
/// kbench recorded them), and several runs of a kernel comparison in one
/// boot.
pub fn identifier_notes(identifiers: &[&IdentifierData], level: UnitKind) -> Vec<String> {
    let names = |which: &dyn Fn(&IdentifierData) -> bool| -> Option<String> {
        let named: Vec<&str> = identifiers
            .iter()
            .filter(|id| which(id))
            .map(|id| id.name.as_str())
            .collect();
        (!named.is_empty()).then(|| crate::named::identifiers(&named, identifiers.len()))
    };
    let unrecorded = |id: &IdentifierData| {
        id.runs
            .iter()
            .all(|run| run.info.snapshot.imported.is_some() || run.info.pid == 0)
    };
    let mut notes = vec![];
    if let Some(names) = names(&unrecorded) {
        notes.push(format!(
            "{names}: no record of the processes or boots that measured them (imported, or \
             written by hand): each stored run counts as one run, and drift between them and \
             the other side cannot be told from a change."
        ));
    }
    let without_boot_ids = |id: &IdentifierData| !unrecorded(id) && units::without_boot_ids(id);
    if let Some(names) = names(&without_boot_ids) {
        notes.push(format!(
            "{names}: stored without boot ids (before kbench recorded them): each invocation \
             counts as a boot of its own."
        ));
    }
    // Sides in boots of their own (kernels compared): runs of one boot
    // replicate less than they seem to.
    let all_boots = distinct(
        identifiers
            .iter()
            .flat_map(|id| &id.runs)
            .map(|run| run.info.snapshot.boot_id.as_str())
            .filter(|id| !id.is_empty()),
    );
    if level == UnitKind::Run && all_boots > 1 {
        for id in identifiers {
            let invocations = distinct(id.runs.iter().map(invocation));
            if boots(id) == 1 && invocations > 1 {
                notes.push(format!(
                    "'{}' ran its {invocations} runs in one boot: they replicate the runs, not \
                     the boot, so drift between boots of a kernel is not measured; boot again \
                     between runs.",
                    id.name
                ));
            }
        }
    }
    notes
}

/// A note when the two sides' runs overlap in time (measured at once, on
/// two machines or by two processes): they are compared as measured
/// apart all the same.
pub fn overlap_note(baseline: &IdentifierData, current: &IdentifierData) -> Option<String> {
    let span = |identifier: &IdentifierData| -> Vec<(i64, i64)> {
        identifier
            .runs
            .iter()
            .map(|run| {
                let start = run.info.started_at_ms;
                (start, run.ended_at_ms.unwrap_or(start))
            })
            .collect()
    };
    let theirs = span(current);
    let overlap = span(baseline)
        .iter()
        .any(|(s, e)| theirs.iter().any(|(s2, e2)| s < e2 && s2 < e));
    overlap.then(|| {
        format!(
            "'{}' and '{}' have runs that overlap in time: they were compared as measured \
             apart all the same (units of different processes or machines).",
            baseline.name, current.name
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use kbench_model::SystemSnapshot;
    use kbench_model::results::{RunId, RunInfo, RunRecord, RunStatus};

    /// A run of process `pid` measuring in boot `boot`, in a VM guest of
    /// the host boot `host` when given, from second `start` for 10 s.
    fn run(pid: u32, boot: &str, host: Option<&str>, start: i64) -> RunRecord {
        let snapshot = |boot: &str| SystemSnapshot {
            boot_id: boot.into(),
            ..SystemSnapshot::default()
        };
        RunRecord {
            id: RunId(start),
            status: RunStatus::Complete,
            info: RunInfo {
                snapshot: snapshot(boot),
                host: host.map(snapshot),
                pid,
                started_at_ms: start * 1000,
                ..RunInfo::default()
            },
            ended_at_ms: Some(start * 1000 + 10_000),
            outcomes: vec![],
        }
    }

    fn identifier(name: &str, runs: Vec<RunRecord>) -> IdentifierData {
        IdentifierData {
            name: name.into(),
            factors: Default::default(),
            runs,
            samples: Default::default(),
            sample_runs: Default::default(),
        }
    }

    #[test]
    fn variants_of_one_invocation_are_not_apart() {
        let a = identifier("a", vec![run(7, "h", None, 0), run(7, "h", None, 20)]);
        let b = identifier("b", vec![run(7, "h", None, 10), run(7, "h", None, 30)]);
        assert_eq!(Apart::of(&a, &b, &[]), None);
        // Two invocations in one boot: apart, by runs, a run's start cheap.
        let b = identifier("b", vec![run(8, "h", None, 40)]);
        let apart = Apart::of(&a, &b, &[]).unwrap();
        assert_eq!(apart.level, UnitKind::Run);
        assert_eq!(apart.costs.unit_s, RUN_START_S);
        assert_eq!(apart.costs.round_s, 10.0);
    }

    /// `vm compare`: one host process, each kernel in guest boots of its
    /// own, taking turns: apart, by boots.
    #[test]
    fn vm_compare_boots_are_apart() {
        let a = identifier(
            "a",
            vec![run(7, "g1", Some("h"), 0), run(7, "g3", Some("h"), 20)],
        );
        let b = identifier(
            "b",
            vec![run(7, "g2", Some("h"), 10), run(7, "g4", Some("h"), 30)],
        );
        let apart = Apart::of(&a, &b, &[]).unwrap();
        assert_eq!(apart.level, UnitKind::Boot);
        assert_eq!(apart.costs.unit_s, BOOT_S);
        assert_eq!(overlap_note(&a, &b), None);
    }

    #[test]
    fn notes_name_unknown_units_shared_boots_and_overlaps() {
        // One boot per kernel, two runs in each: runs, not boots.
        let a = identifier("a", vec![run(1, "A", None, 0), run(2, "A", None, 20)]);
        let b = identifier("b", vec![run(3, "B", None, 40), run(4, "B", None, 60)]);
        let apart = Apart::of(&a, &b, &[]).unwrap();
        assert_eq!(apart.level, UnitKind::Run);
        assert_eq!(apart.costs.unit_s, BOOT_S);
        let notes = identifier_notes(&[&a, &b], UnitKind::Run);
        assert_eq!(notes.len(), 2, "{notes:?}");
        assert!(notes[0].starts_with("'a' ran its 2 runs in one boot"));
        // Imported runs, no process recorded; and runs overlapping.
        let old = identifier("old", vec![run(0, "", None, 5)]);
        let notes = identifier_notes(&[&a, &old], UnitKind::Run);
        assert!(
            notes[0].starts_with("'old': no record of the processes"),
            "{notes:?}"
        );
        assert!(overlap_note(&a, &old).unwrap().contains("overlap in time"));
    }
}
