//! Runs uploaded while they go on ([`Exchange::append_live`]), checked as
//! every write path is ([`crate::validate`]): each batch
//! carries the run's uid and, per test, where its samples start among the
//! run's samples of that test, so that a retried batch or a resumed upload
//! stores only what the store lacks. A batch of a lab job's run is stored
//! only while its worker holds the job's lease ([`jobs::hold`]), so a run
//! that changed workers has one writer.
//!
//! [`Exchange::append_live`]: crate::Exchange::append_live

use super::check::{check_id, check_name, valid};
use super::records::{
    ensure_identifier, ensure_set, ensure_test, find_test, insert_run, insert_samples, run_by_uid,
    upsert_outcome,
};
use super::{Fail, Res, Sql, args, blocks, jobs};
use crate::{LiveBatch, LiveOutcome, RunId, StoreError, validate};
use kbench_model::TestKey;
use std::collections::HashMap;

/// What can be told of a batch without the database: its names, its uid,
/// and that its run info names no other uid.
pub(super) fn check(set: &str, batch: &LiveBatch) -> Res<()> {
    check_name("result set", set)?;
    check_name("identifier", &batch.identifier)?;
    check_id("run uid", &batch.run_uid)?;
    let run = || format!("the batch of run {}", batch.run_uid);
    valid(
        validate::run_times(batch.info.started_at_ms, batch.ended_at_ms),
        run,
    )?;
    valid(validate::steal_percent(batch.steal_percent), run)?;
    match &batch.info.uid {
        Some(uid) if *uid != batch.run_uid => Err(Fail::Store(StoreError::Invalid(format!(
            "the batch is for run {} but its info names run {uid}; send info.uid equal to \
             run_uid, or leave it out",
            batch.run_uid
        )))),
        _ => Ok(()),
    }
}

/// Stores a batch into `set`; inside a write transaction, after [`check`].
pub(super) fn append(
    db: &mut dyn Sql,
    set: &str,
    batch: &LiveBatch,
    token: &str,
) -> Res<LiveOutcome> {
    // Before any write: a refused lease leaves nothing behind, and a held
    // one keeps the job this worker's until the batch is stored.
    if let Some(lease) = &batch.lease {
        jobs::hold(db, lease, token)?;
    }
    let set_id = ensure_set(db, set)?;
    let identifier_id = ensure_identifier(db, set_id, &batch.identifier)?;
    let run = find_or_create_run(db, set, identifier_id, batch)?;
    // First, as it locks the run's row: a second batch of this run at once
    // (PostgreSQL) waits here until this one commits, then counts the
    // samples this one stored; a removal of the identifier waits for this
    // batch, or, done first, leaves no row to lock and nothing is stored
    // (no foreign key on the samples table does it: schema version 8).
    let locked = db.execute(
        "UPDATE runs SET status = ?2, ended_at_ms = ?3, \
         steal_percent = CAST(?4 AS DOUBLE PRECISION), pid = ?5 WHERE id = ?1",
        args![
            run.0,
            batch.status.as_str(),
            batch.ended_at_ms,
            batch.steal_percent,
            batch.info.pid
        ],
    )?;
    if locked == 0 {
        return Err(Fail::Store(StoreError::Conflict(format!(
            "run {} of identifier \"{}\" was removed from result set \"{set}\" while this \
             batch came in; nothing of the batch was stored",
            batch.run_uid, batch.identifier
        ))));
    }
    let tests = test_ids(db, set_id, set, batch)?;
    let mut outcome = LiveOutcome {
        stored: 0,
        skipped: 0,
    };
    for part in &batch.samples {
        let test = tests[&part.test];
        let stored = blocks::stored_count(db, run.0, test)?;
        if part.first > stored {
            return Err(Fail::Store(StoreError::Conflict(format!(
                "{} has {stored} samples of test {} in run {}, and this batch starts at sample \
                 {}: storing it would leave a gap, so nothing of the batch was stored. Resend \
                 from sample {stored}",
                db.name(),
                part.test,
                batch.run_uid,
                part.first
            ))));
        }
        // Samples before `stored` are there already (a retry, a resume).
        let have = usize::try_from(stored - part.first)
            .unwrap_or(usize::MAX)
            .min(part.samples.len());
        insert_samples(db, run, test, &part.samples[have..])?;
        outcome.skipped += have as u64;
        outcome.stored += (part.samples.len() - have) as u64;
    }
    for test_outcome in &batch.outcomes {
        upsert_outcome(db, run, tests[&test_outcome.test], test_outcome)?;
    }
    Ok(outcome)
}

/// The run with the batch's uid in this identifier, created from the
/// batch's info when new; `Conflict` when the uid is another
/// identifier's run.
fn find_or_create_run(
    db: &mut dyn Sql,
    set: &str,
    identifier_id: i64,
    batch: &LiveBatch,
) -> Res<RunId> {
    let uid = &batch.run_uid;
    // Twice at most: the second time finds what another writer inserted.
    for _ in 0..2 {
        if let Some(owner) = run_by_uid(db, uid)? {
            if owner.identifier_id != identifier_id {
                return Err(Fail::Store(StoreError::Conflict(format!(
                    "{}, not of identifier \"{}\" in result set \"{set}\": nothing of the batch \
                     was stored. A run belongs to one identifier; upload it where it began",
                    owner.describe(uid, db.name()),
                    batch.identifier
                ))));
            }
            return Ok(owner.run);
        }
        let mut info = batch.info.clone();
        info.uid = Some(uid.clone());
        if let Some(run) = insert_run(db, identifier_id, batch.status, &info, batch.ended_at_ms)? {
            return Ok(run);
        }
    }
    Err(Fail::Damaged(format!("run {uid} was inserted and is gone")))
}

/// The id of every test the batch names: those in `batch.tests` are
/// created as needed (a unit or direction other than stored is a
/// `Conflict`), the others must be stored in the set already.
fn test_ids<'a>(
    db: &mut dyn Sql,
    set_id: i64,
    set: &str,
    batch: &'a LiveBatch,
) -> Res<HashMap<&'a TestKey, i64>> {
    let mut ids = HashMap::new();
    for spec in &batch.tests {
        ids.insert(&spec.key, ensure_test(db, set_id, set, spec)?);
    }
    let named = batch
        .samples
        .iter()
        .map(|part| &part.test)
        .chain(batch.outcomes.iter().map(|outcome| &outcome.test));
    for key in named {
        if ids.contains_key(key) {
            continue;
        }
        let test = find_test(db, set_id, key)?.ok_or_else(|| {
            Fail::Store(StoreError::Invalid(format!(
                "the batch of run {} names test {key}, which is neither in its tests nor \
                 stored in result set \"{set}\"; nothing of the batch was stored. List the \
                 test's unit and direction in tests",
                batch.run_uid
            )))
        })?;
        ids.insert(key, test.id);
    }
    Ok(ids)
}
