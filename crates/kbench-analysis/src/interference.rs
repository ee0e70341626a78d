//! What the interference monitors say (docs/samples-format.md,
//! "Interference monitors"): which rounds ran disturbed and why, which of
//! them `kbench run --redo-disturbed` replaced, and whether the machine's
//! own speed (the control loop) differed between identifiers measured
//! apart. Monitors are never results: reports leave them out of verdicts
//! (see [`kbench_model::is_monitor_metric`]); this module only reads them.
//!
//! A round of a test is disturbed when any of these held:
//! - steal time above [`STEAL_LIMIT_PCT`] of all CPU time: the host ran
//!   something else on our vCPUs;
//! - other runnable tasks on average at least [`runnable_limit`] (half of
//!   the other CPUs, and at least 0.5): the machine was shared with busy
//!   work, whose caches, memory bandwidth, SMT siblings or host vCPUs the
//!   test shares;
//! - its slower control loop (before or after the test) more than
//!   [`SLOW_CONTROL_LIMIT`] above the identifier's median control: the CPU
//!   itself was slow (a slow spell of the host, a lower frequency).

use kbench_model::results::{IdentifierData, ResultSetData};
use kbench_model::{
    MAIN_METRIC, MONITOR_CONTROL, MONITOR_NIVCSW, MONITOR_RUNNING, MONITOR_STEAL, REDO_NOTE,
    TestKey, is_monitor_metric,
};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

/// Steal time above this share of all CPU time (%) disturbs a round.
pub const STEAL_LIMIT_PCT: f64 = 5.0;

/// A control loop this much slower than the identifier's median (0.05 =
/// 5 %) disturbs a round. On a quiet machine the control stays within about
/// 1 % of its median; the slow spells it is meant to see are +9 %.
pub const SLOW_CONTROL_LIMIT: f64 = 0.05;

/// Identifiers whose median controls differ by more than this (0.03 = 3 %)
/// get a note: above the control's own spread between quiet invocations,
/// below the slowdowns kbench is asked to find.
pub const SPEED_DIFFERS_LIMIT: f64 = 0.03;

/// The mean of other runnable tasks at or above which a round on a machine
/// of `cpus` online CPUs is disturbed: half of the CPUs the test does not
/// use, and at least 0.5 (on 2 CPUs: the other CPU busy half the time).
pub fn runnable_limit(cpus: u32) -> f64 {
    ((f64::from(cpus.max(1)) - 1.0) / 2.0).max(0.5)
}

/// One disturbed round of one test.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DisturbedRound {
    /// The test (its main metric's key).
    pub test: TestKey,
    /// The index of its run in [`IdentifierData::runs`].
    pub run: usize,
    pub round: u32,
    pub reasons: Vec<Disturbance>,
}

/// Why a round is disturbed.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Disturbance {
    /// Steal time, % of all CPU time over the test.
    Steal { percent: f64 },
    /// Other runnable tasks on average, and the limit for the run's CPUs.
    Runnable { mean: f64, limit: f64 },
    /// The round's slower control loop against the identifier's median, %.
    SlowControl { slower_pct: f64 },
}

/// What `kbench run --redo-disturbed` says of the rounds it ran again:
/// a line for the count, then one per round with its reasons; nothing when
/// none was.
pub fn redone_text(redone: &[DisturbedRound]) -> String {
    if redone.is_empty() {
        return String::new();
    }
    let mut text = format!("Ran {} disturbed round(s) again:\n", redone.len());
    for round in redone {
        let why: Vec<String> = round.reasons.iter().map(ToString::to_string).collect();
        text += &format!(
            "  {}, stored round {}: {}\n",
            round.test,
            round.round,
            why.join(", ")
        );
    }
    text
}

impl fmt::Display for Disturbance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Disturbance::Steal { percent } => write!(f, "steal {percent:.1} %"),
            Disturbance::Runnable { mean, limit } => {
                write!(f, "{mean:.2} other runnable tasks (limit {limit:.1})")
            }
            Disturbance::SlowControl { slower_pct } => {
                write!(f, "control loop {slower_pct:.1} % slower than the median")
            }
        }
    }
}

/// The monitor samples of one round of one test. Steal and switches are
/// stored only when above 0, so a round without them had none.
#[derive(Debug, Default)]
struct RoundMonitors {
    steal: f64,
    /// Other runnable tasks: `procs_running` less the agent itself.
    runnable: Option<f64>,
    nivcsw: f64,
    control: Vec<f64>,
}

/// A round of a test: its key, run index and round number.
type RoundId = (TestKey, usize, u32);

/// Every round of every test that has monitor samples.
fn rounds(identifier: &IdentifierData) -> BTreeMap<RoundId, RoundMonitors> {
    let mut rounds: BTreeMap<RoundId, RoundMonitors> = BTreeMap::new();
    for key in identifier.samples.keys() {
        if !is_monitor_metric(&key.metric) {
            continue;
        }
        let test = key.with_metric(MAIN_METRIC);
        for ((run, round), samples) in identifier.rounds(key) {
            let monitors = rounds.entry((test.clone(), run, round)).or_default();
            for sample in samples {
                match key.metric.as_str() {
                    MONITOR_STEAL => monitors.steal = sample.value,
                    MONITOR_RUNNING => monitors.runnable = Some((sample.value - 1.0).max(0.0)),
                    MONITOR_NIVCSW => monitors.nivcsw = sample.value,
                    MONITOR_CONTROL => monitors.control.push(sample.value),
                    _ => {}
                }
            }
        }
    }
    rounds
}

/// The median of the identifier's control loops, all tests and rounds.
pub fn median_control(identifier: &IdentifierData) -> Option<f64> {
    let key_is_control = |key: &&TestKey| key.metric == MONITOR_CONTROL;
    let values: Vec<f64> = identifier
        .samples
        .iter()
        .filter(|(key, _)| key_is_control(key))
        .flat_map(|(_, samples)| samples.iter().map(|s| s.value))
        .collect();
    median(values)
}

fn median(mut values: Vec<f64>) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    Some(if values.len().is_multiple_of(2) {
        (values[mid - 1] + values[mid]) / 2.0
    } else {
        values[mid]
    })
}

/// The rounds of `identifier` that ran disturbed, with why, in (test, run,
/// round) order. Rounds without monitors (stored before kbench recorded
/// them, or imported) are never disturbed.
pub fn disturbed_rounds(identifier: &IdentifierData) -> Vec<DisturbedRound> {
    let median = median_control(identifier);
    rounds(identifier)
        .into_iter()
        .filter_map(|((test, run, round), monitors)| {
            let cpus = identifier
                .runs
                .get(run)
                .map_or(0, |r| r.info.snapshot.cpus_online);
            let reasons = disturbances(&monitors, cpus, median);
            (!reasons.is_empty()).then_some(DisturbedRound {
                test,
                run,
                round,
                reasons,
            })
        })
        .collect()
}

fn disturbances(monitors: &RoundMonitors, cpus: u32, median: Option<f64>) -> Vec<Disturbance> {
    let mut reasons = vec![];
    if monitors.steal > STEAL_LIMIT_PCT {
        reasons.push(Disturbance::Steal {
            percent: monitors.steal,
        });
    }
    let limit = runnable_limit(cpus);
    if let Some(mean) = monitors.runnable.filter(|&m| m >= limit) {
        reasons.push(Disturbance::Runnable { mean, limit });
    }
    let slowest = monitors.control.iter().copied().reduce(f64::max);
    if let Some((slowest, median)) = slowest.zip(median.filter(|&m| m > 0.0)) {
        let slower = slowest / median - 1.0;
        if slower > SLOW_CONTROL_LIMIT {
            reasons.push(Disturbance::SlowControl {
                slower_pct: slower * 100.0,
            });
        }
    }
    reasons
}

/// Whether run `run` of `identifier` was made by `--redo-disturbed`.
fn is_redo_run(identifier: &IdentifierData, run: usize) -> bool {
    identifier
        .runs
        .get(run)
        .is_some_and(|r| r.info.notes.iter().any(|n| n == REDO_NOTE))
}

/// The disturbed rounds that `--redo-disturbed` replaced, which compare
/// leaves out. Rule: each undisturbed round of a test in a redo run
/// replaces one disturbed round of that test, the oldest first; a disturbed
/// round without a replacement stays in.
pub fn replaced_rounds(identifier: &IdentifierData) -> Vec<DisturbedRound> {
    let disturbed = disturbed_rounds(identifier);
    let flagged: BTreeSet<RoundId> = disturbed
        .iter()
        .map(|d| (d.test.clone(), d.run, d.round))
        .collect();
    let mut replacements: BTreeMap<TestKey, usize> = BTreeMap::new();
    for (test, run, round) in rounds(identifier).into_keys() {
        if is_redo_run(identifier, run) && !flagged.contains(&(test.clone(), run, round)) {
            *replacements.entry(test).or_default() += 1;
        }
    }
    disturbed
        .into_iter()
        .filter(|d| match replacements.get_mut(&d.test) {
            Some(left) if *left > 0 => {
                *left -= 1;
                true
            }
            _ => false,
        })
        .collect()
}

/// `data` without the measured samples of replaced rounds
/// ([`replaced_rounds`]); their monitors stay, so the notes still count
/// them.
pub fn without_replaced_rounds(data: &ResultSetData) -> ResultSetData {
    let mut data = data.clone();
    for identifier in &mut data.identifiers {
        let replaced: BTreeSet<RoundId> = replaced_rounds(identifier)
            .into_iter()
            .map(|d| (d.test, d.run, d.round))
            .collect();
        if replaced.is_empty() {
            continue;
        }
        let keys: Vec<TestKey> = identifier.samples.keys().cloned().collect();
        for key in keys.into_iter().filter(|k| !is_monitor_metric(&k.metric)) {
            let test = key.with_metric(MAIN_METRIC);
            let runs = identifier.runs_of_samples(&key);
            let samples = identifier.samples.remove(&key).unwrap_or_default();
            let (kept, kept_runs): (Vec<_>, Vec<_>) = samples
                .into_iter()
                .zip(runs)
                .filter(|(sample, run)| !replaced.contains(&(test.clone(), *run, sample.round)))
                .unzip();
            identifier.samples.insert(key.clone(), kept);
            identifier.sample_runs.insert(key, kept_runs);
        }
    }
    data
}

/// The notes for a report of `identifiers` (the baseline first): per
/// identifier, how many rounds were disturbed and why; per identifier after
/// the first, whether the machine itself ran at another speed than while the
/// first was measured.
pub fn notes(identifiers: &[IdentifierData]) -> Vec<String> {
    let mut notes: Vec<String> = identifiers.iter().filter_map(disturbed_note).collect();
    if let Some((baseline, others)) = identifiers.split_first() {
        notes.extend(
            others
                .iter()
                .filter_map(|other| speed_note(baseline, other)),
        );
    }
    notes
}

/// "'b': 2 of 15 rounds ran disturbed (...)", or nothing when none did.
fn disturbed_note(identifier: &IdentifierData) -> Option<String> {
    let disturbed = disturbed_rounds(identifier);
    if disturbed.is_empty() {
        return None;
    }
    let total = rounds(identifier).len();
    let mut why: BTreeMap<&str, usize> = BTreeMap::new();
    for reason in disturbed.iter().flat_map(|d| &d.reasons) {
        let kind = match reason {
            Disturbance::Steal { .. } => "steal time",
            Disturbance::Runnable { .. } => "other runnable tasks",
            Disturbance::SlowControl { .. } => "a slow control loop",
        };
        *why.entry(kind).or_default() += 1;
    }
    let why: Vec<String> = why.iter().map(|(kind, n)| format!("{n} {kind}")).collect();
    let replaced = replaced_rounds(identifier).len();
    let redone = (0..identifier.runs.len()).any(|run| is_redo_run(identifier, run));
    let action = if replaced > 0 {
        format!("{replaced} of them were run again (--redo-disturbed) and are left out of compare")
    } else if redone {
        "the rounds run again (--redo-disturbed) ran disturbed too, so every round stays in"
            .to_string()
    } else {
        "`kbench run --redo-disturbed` runs such rounds again".to_string()
    };
    Some(format!(
        "'{}': {} of {total} round(s) ran disturbed ({}); {action}.",
        identifier.name,
        disturbed.len(),
        why.join(", ")
    ))
}

/// The note when `other`'s median control differs from `baseline`'s by
/// more than [`SPEED_DIFFERS_LIMIT`].
fn speed_note(baseline: &IdentifierData, other: &IdentifierData) -> Option<String> {
    let (base, current) = median_control(baseline).zip(median_control(other))?;
    if !(base > 0.0 && current > 0.0) {
        return None;
    }
    let change = current / base - 1.0;
    if change.abs() <= SPEED_DIFFERS_LIMIT {
        return None;
    }
    let how = if change > 0.0 { "slower" } else { "faster" };
    if measured_together(baseline, other) {
        return Some(format!(
            "The control loop ran {:.1} % {how} in '{}' than in '{}' (medians {:.3} vs {:.3} ns \
             per iteration), though they were measured in the same blocks: the identifier \
             itself changes how fast plain userspace code runs (a kernel's timer, mitigations \
             or emulation, a wrapper), so a change of that size may not be in the path under \
             test.",
            change.abs() * 100.0,
            other.name,
            baseline.name,
            current,
            base
        ));
    }
    Some(format!(
        "The machine itself ran {:.1} % {how} while '{}' was measured than while '{}' was \
         (control loop medians {:.3} vs {:.3} ns per iteration); differences of that size may \
         be the machine, not the change.",
        change.abs() * 100.0,
        other.name,
        baseline.name,
        current,
        base
    ))
}

/// Whether the two were measured in the same interleaved session (their
/// blocks ran side by side, so the machine was the same for both).
fn measured_together(a: &IdentifierData, b: &IdentifierData) -> bool {
    let sessions = |i: &IdentifierData| -> Vec<String> {
        i.runs
            .iter()
            .filter_map(|r| Some(r.info.snapshot.variant.as_ref()?.session.clone()))
            .collect()
    };
    let theirs = sessions(b);
    sessions(a).iter().any(|s| theirs.contains(s))
}

/// One line of what the monitors saw while `identifier` was measured, for
/// `kbench show`; `None` without monitors.
pub fn summary_line(identifier: &IdentifierData) -> Option<String> {
    let rounds = rounds(identifier);
    if rounds.is_empty() {
        return None;
    }
    let of = |pick: fn(&RoundMonitors) -> Option<f64>| {
        median(rounds.values().filter_map(pick).collect())
    };
    let shown = |value: Option<f64>, digits: usize| {
        value.map_or("-".to_string(), |v| format!("{v:.digits$}"))
    };
    Some(format!(
        "'{}' monitors (medians over {} round(s)): steal {} %, other runnable tasks {}, \
         involuntary switches {}, control loop {} ns/iteration; {} round(s) disturbed",
        identifier.name,
        rounds.len(),
        shown(of(|m| Some(m.steal)), 1),
        shown(of(|m| m.runnable), 2),
        shown(of(|m| Some(m.nivcsw)), 0),
        shown(median_control(identifier), 3),
        disturbed_rounds(identifier).len()
    ))
}

#[cfg(test)]
mod tests;
