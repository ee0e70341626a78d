//! `kbench run --redo-disturbed`: the rounds of this invocation that ran
//! disturbed (kbench-analysis' `interference::disturbed_rounds` on the
//! stored set, which the caller reads) are run again as new rounds,
//! through [`runner::execute`], once each and at most
//! [`MAX_REDO_PER_TEST`] per test. The disturbed rounds stay stored; the
//! redo runs carry [`REDO_NOTE`], by which compare finds the replacements
//! and leaves out as many disturbed rounds (`interference::replaced_rounds`).
//! A redo round that runs disturbed too is not run again.

use crate::error::Result;
use crate::launcher::Launcher;
use crate::runner::{self, RunEvent, RunRequest, RunSummary};
use kbench_analysis::interference::{DisturbedRound, disturbed_rounds};
use kbench_model::results::ResultSetData;
use kbench_model::{REDO_NOTE, TestKey};
use kbench_store::RunSink;
use std::sync::atomic::{AtomicBool, Ordering};

/// Redo rounds per test and invocation, at most: a machine that stays
/// busy is reported, not measured without end.
pub const MAX_REDO_PER_TEST: usize = 2;

/// Runs again the disturbed rounds among `summary.runs` (what
/// [`runner::execute`] of `request` just did, as `stored` now holds it),
/// adding the new runs, outcomes and samples to `summary`. Returns the
/// rounds run again.
pub fn redo_disturbed(
    store: &mut dyn RunSink,
    launcher: &dyn Launcher,
    request: &RunRequest,
    stored: &ResultSetData,
    observer: &mut dyn FnMut(RunEvent),
    stop: &AtomicBool,
    summary: &mut RunSummary,
) -> Result<Vec<DisturbedRound>> {
    if summary.interrupted {
        return Ok(vec![]);
    }
    let Some(identifier) = stored
        .identifiers
        .iter()
        .find(|i| i.name == request.identifier)
    else {
        return Ok(vec![]);
    };
    let ours = |d: &DisturbedRound| {
        identifier
            .runs
            .get(d.run)
            .is_some_and(|run| summary.runs.contains(&run.id))
    };
    let mut redone: Vec<DisturbedRound> = Vec::new();
    for disturbed in disturbed_rounds(identifier).into_iter().filter(ours) {
        let already = redone.iter().filter(|r| r.test.same_test(&disturbed.test));
        if already.count() < MAX_REDO_PER_TEST {
            redone.push(disturbed);
        }
    }
    // Pass k runs, in one new round, every test with more than k rounds
    // to run again.
    for pass in 0..MAX_REDO_PER_TEST {
        let tests: Vec<TestKey> = request
            .tests
            .iter()
            .filter(|test| redone.iter().filter(|r| r.test.same_test(test)).count() > pass)
            .cloned()
            .collect();
        if tests.is_empty() || stop.load(Ordering::SeqCst) {
            break;
        }
        let mut notes = request.notes.clone();
        notes.push(REDO_NOTE.to_string());
        let again = RunRequest {
            tests,
            rounds: 1,
            notes,
            ..request.clone()
        };
        let done = runner::execute(store, launcher, &again, observer, stop)?;
        summary.runs.extend(done.runs);
        summary.outcomes.extend(done.outcomes);
        summary.samples += done.samples;
        if done.interrupted {
            summary.interrupted = true;
            break;
        }
    }
    Ok(redone)
}

#[cfg(test)]
mod tests;
