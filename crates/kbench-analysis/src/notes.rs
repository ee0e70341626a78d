//! A comparison's notes: what the reader must know besides the numbers
//! (how comparisons were paired or measured apart, metrics of one round,
//! what would decide more, the notes stored with the runs, disturbed
//! rounds). Each is said once: a note that holds for several identifiers
//! names them together, and counts them instead when it holds for every
//! one ("All 12 identifiers: ..."); identifiers measured apart and
//! decided alike share one line.

use crate::apart;
use crate::apart_notes;
use crate::header::recorded_snapshot;
use crate::named;
use crate::units;
use kbench_model::results::IdentifierData;
use kbench_stats::{Analysis, Comparison, Verdict, Warning};

/// What the notes read of a comparison's metrics: per metric its
/// threshold (a fraction) and, per identifier (the baseline first), its
/// comparison against the baseline; and whether some identifier's metric
/// was measured in one round.
pub(crate) struct Measured<'a> {
    pub metrics: Vec<(f64, Vec<Option<&'a Comparison>>)>,
    pub one_round: bool,
}

/// The notes of the comparison of `measured` between `identifiers` (the
/// baseline first); `prior_notes` say what the report knows of the
/// calibrations it did not use.
pub(crate) fn of(
    measured: &Measured,
    identifiers: &[IdentifierData],
    prior_notes: Vec<String>,
) -> Vec<String> {
    let mut notes = vec![];
    let compared = || {
        measured
            .metrics
            .iter()
            .flat_map(|(_, row)| row.iter().skip(1).flatten().copied())
    };
    let counted = |kind: fn(&Analysis) -> bool| compared().filter(|c| kind(&c.analysis)).count();
    let blocked = counted(|a| matches!(a, Analysis::Blocked { .. }));
    let levelled = counted(|a| matches!(a, Analysis::Levels { .. }));
    let all = compared().count();
    if blocked > 0 {
        notes.push(format!(
            "{blocked} of {all} comparisons paired block by block (measured in the same \
             interleaved blocks): the change is the Hodges-Lehmann shift of the per-block log \
             ratios of round medians, with the signed-rank CI and p; the others compare \
             independent rounds."
        ));
    }
    // Rounds as independent observations: measured together in one block.
    let independent = all - blocked - levelled;
    if measured.one_round && independent > 0 {
        notes.push(
            "Some metrics were measured in one round: drift between invocations cannot be ruled out \
             (use `kbench run --rounds N`)."
                .to_string(),
        );
    }
    notes.extend(measured_apart(measured, identifiers));
    notes.extend(prior_notes);
    let mixed = compared().any(|c| {
        c.warnings
            .iter()
            .any(|w| matches!(w, Warning::MixedRounds { .. }))
    });
    if mixed {
        notes.push(
            "Some metrics were measured in several rounds on one side and in one round on the \
             other: they are not compared (CANNOT DECIDE), since round means and raw samples are \
             different units; measure the one-round side with `kbench run --rounds N`."
                .to_string(),
        );
    }
    // Each run note once, with the identifiers that have it.
    let mut run_notes: Vec<(&str, Vec<&str>)> = vec![];
    for id in identifiers {
        for note in id.runs.iter().flat_map(|r| &r.info.notes) {
            match run_notes.iter_mut().find(|(n, _)| n == note) {
                Some((_, names)) if names.contains(&id.name.as_str()) => {}
                Some((_, names)) => names.push(&id.name),
                None => run_notes.push((note, vec![&id.name])),
            }
        }
    }
    notes.extend(
        run_notes.into_iter().map(|(note, named)| {
            format!("{}: {note}", named::identifiers(&named, identifiers.len()))
        }),
    );
    notes.extend(crate::interference::notes(identifiers));
    notes
}

/// The identifiers compared with the baseline measured apart, decided
/// alike, in column order, and their comparisons.
struct Alike<'a> {
    shape: String,
    currents: Vec<&'a IdentifierData>,
    comparisons: Vec<&'a Comparison>,
}

/// For the identifiers measured apart: one line per group decided alike
/// ([`apart_notes::shape`]) and how the units were told; once, a
/// threshold finer than the units resolve; and for kernels, how to
/// measure what would decide.
fn measured_apart(measured: &Measured, identifiers: &[IdentifierData]) -> Vec<String> {
    let baseline = &identifiers[0];
    let mut groups: Vec<Alike> = vec![];
    let mut thresholds = vec![];
    let mut levelled: Vec<&Comparison> = vec![];
    let mut undecided: Vec<&str> = vec![];
    for (column, current) in identifiers.iter().enumerate().skip(1) {
        let compared: Vec<(&Comparison, f64)> = measured
            .metrics
            .iter()
            .filter_map(|(threshold, row)| Some((row[column]?, *threshold)))
            .collect();
        let comparisons: Vec<&Comparison> = compared.iter().map(|(c, _)| *c).collect();
        let Some(shape) = apart_notes::shape(&comparisons) else {
            continue;
        };
        if comparisons
            .iter()
            .any(|c| c.verdict == Verdict::Inconclusive && c.plan.is_some())
        {
            undecided.push(&current.name);
        }
        levelled.extend(&comparisons);
        thresholds.extend(compared.iter().map(|(_, t)| *t));
        match groups.iter_mut().find(|g| g.shape == shape) {
            Some(group) => {
                group.currents.push(current);
                group.comparisons.extend(comparisons);
            }
            None => groups.push(Alike {
                shape,
                currents: vec![current],
                comparisons,
            }),
        }
    }
    let compared = identifiers.len() - 1;
    let mut notes: Vec<String> = groups
        .iter()
        .filter_map(|group| {
            let line = apart_notes::verdict_line(&group.comparisons)?;
            let named: Vec<&str> = group.currents.iter().map(|c| c.name.as_str()).collect();
            let verb = if named.len() == 1 { "was" } else { "were" };
            Some(format!(
                "{} against '{}' {verb} {line}",
                named::identifiers(&named, compared),
                baseline.name
            ))
        })
        .collect();
    let level = levelled.iter().find_map(|c| match c.analysis {
        Analysis::Levels { unit, .. } => Some(unit),
        _ => None,
    });
    if let Some(level) = level {
        let mut apart: Vec<&IdentifierData> = vec![baseline];
        apart.extend(groups.iter().flat_map(|g| g.currents.iter().copied()));
        notes.extend(apart::identifier_notes(&apart, level));
        notes.extend(
            apart
                .iter()
                .skip(1)
                .filter_map(|current| apart::overlap_note(baseline, current)),
        );
    }
    notes.extend(apart_notes::threshold_note(&levelled, &thresholds));
    notes.extend(kernels_note(identifiers, &undecided));
    notes
}

/// When identifiers measured apart that run another kernel than the
/// baseline (as their snapshots record it) have undecided metrics: more
/// runs decide only when the kernels take turns, and a run of the other
/// kernel takes a boot (`--variant` measures settings of one kernel, not
/// two kernels).
fn kernels_note(identifiers: &[IdentifierData], undecided: &[&str]) -> Option<String> {
    let kernel = |id: &IdentifierData| -> Option<String> {
        let release = &recorded_snapshot(&id.runs)?.kernel_release;
        (!release.is_empty()).then(|| release.clone())
    };
    let (baseline, others) = identifiers.split_first()?;
    let base = kernel(baseline)?;
    // Boots that took turns already (a campaign): the plan's note says
    // how many more would decide.
    let alternated = |id: &IdentifierData| units::boots(baseline) >= 2 && units::boots(id) >= 2;
    let other: Vec<&str> = others
        .iter()
        .filter(|id| undecided.contains(&id.name.as_str()))
        .filter(|id| kernel(id).is_some_and(|k| k != base) && !alternated(id))
        .map(|id| id.name.as_str())
        .collect();
    if other.is_empty() {
        return None;
    }
    let verb = if other.len() == 1 { "runs" } else { "run" };
    Some(format!(
        "{} {verb} another kernel than '{}': more runs decide only when the kernels take \
         turns, so boot the other kernel between runs (A, reboot, B, reboot, A, ...): \
         `kbench campaign start` does that on this machine, `kbench vm compare` in VMs.",
        named::identifiers(&other, identifiers.len() - 1),
        baseline.name
    ))
}
