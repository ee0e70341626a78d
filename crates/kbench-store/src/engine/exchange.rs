//! [`Exchange`]: whole result sets imported or pushed, each in one
//! transaction (all or nothing), and live uploads ([`live`]).
//!
//! [`live`]: super::live

use super::check::{check_factors, check_id, check_name, check_text, check_uid};
use super::convert::{narrow, to_i64, to_json};
use super::records::{
    FIND_IDENTIFIER, INSERT_IDENTIFIER, ensure_set, ensure_test, insert_new_run, insert_samples,
    upsert_outcome,
};
use super::{Fail, Res, Sql, args, first_int, live, transaction, with};
use crate::{
    Exchange, LiveBatch, LiveOutcome, Push, PushOutcome, Result, ResultSetData, StoreError,
};
use kbench_model::{TestKey, now_ms};
use std::collections::HashMap;

/// Writes a whole result set; inside a write transaction.
fn import_set(db: &mut dyn Sql, data: &ResultSetData) -> Res<()> {
    let set_id = ensure_set(db, &data.name)?;
    // A title or description the set has already is kept.
    db.execute(
        "UPDATE result_sets SET title = COALESCE(title, ?2), \
         description = COALESCE(description, ?3) WHERE id = ?1",
        args![set_id, data.title.as_deref(), data.description.as_deref()],
    )?;
    let mut test_ids = HashMap::new();
    for spec in &data.tests {
        test_ids.insert(&spec.key, ensure_test(db, set_id, &data.name, spec)?);
    }
    let test_of = |key: &TestKey, identifier: &str| {
        test_ids.get(key).copied().ok_or_else(|| {
            Fail::Store(StoreError::NotFound(format!(
                "identifier \"{identifier}\" has results of test {key}, which is not among the \
                 result set's tests; nothing was imported"
            )))
        })
    };
    let db_name = db.name().to_string();
    for identifier in &data.identifiers {
        let name = &identifier.name;
        let exists = || {
            Fail::Store(StoreError::Conflict(format!(
                "identifier \"{name}\" already exists in result set \"{}\" of {db_name}; nothing was \
                 imported. Rename it in the import or import into another result set",
                data.name,
            )))
        };
        if first_int(db, FIND_IDENTIFIER, args![set_id, name])?.is_some() {
            return Err(exists());
        }
        if identifier.runs.is_empty() && !identifier.samples.is_empty() {
            return Err(Fail::Store(StoreError::Conflict(format!(
                "identifier \"{name}\" has samples but no run to hold them; nothing was imported"
            ))));
        }
        let identifier_id =
            first_int(db, INSERT_IDENTIFIER, args![set_id, name])?.ok_or_else(exists)?;
        if !identifier.factors.is_empty() {
            db.execute(
                "UPDATE identifiers SET factors_json = ?2 WHERE id = ?1",
                args![
                    identifier_id,
                    &to_json("an identifier's factors", &identifier.factors)?
                ],
            )?;
        }
        let mut runs = Vec::new();
        for run in &identifier.runs {
            let id = insert_new_run(
                db,
                identifier_id,
                run.status,
                &run.info,
                run.ended_at_ms,
                "nothing was imported. That run was imported or uploaded before: store each run once",
            )?;
            for outcome in &run.outcomes {
                upsert_outcome(db, id, test_of(&outcome.test, name)?, outcome)?;
            }
            runs.push(id);
        }
        for (key, samples) in &identifier.samples {
            let test = test_of(key, name)?;
            let owners = identifier.runs_of_samples(key);
            // Consecutive samples of the same run go in together.
            let mut start = 0;
            while start < samples.len() {
                let run = owners[start];
                let len = owners[start..]
                    .iter()
                    .position(|&owner| owner != run)
                    .unwrap_or(samples.len() - start);
                insert_samples(db, runs[run], test, &samples[start..start + len])?;
                start += len;
            }
        }
    }
    Ok(())
}

/// The names and run uids of a result set to import.
fn check_set_data(data: &ResultSetData) -> Res<()> {
    check_name("result set", &data.name)?;
    check_text("title", data.title.as_deref(), false)?;
    check_text("description", data.description.as_deref(), true)?;
    for identifier in &data.identifiers {
        check_name("identifier", &identifier.name)?;
        check_factors(&identifier.factors)?;
        for run in &identifier.runs {
            check_uid(&run.info)?;
        }
    }
    Ok(())
}

/// Claims the push id, then imports; inside a write transaction. On
/// PostgreSQL a second push of the same id at once waits on the first's
/// row lock in the INSERT, then finds it committed (or rolled back, and
/// claims it itself).
fn push_set(db: &mut dyn Sql, push: &Push, data: &ResultSetData) -> Res<PushOutcome> {
    let samples = data.sample_count() as u64;
    let claimed = db.execute(
        "INSERT INTO pushes (id, set_name, digest, samples, token_name, pushed_at_ms) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (id) DO NOTHING",
        args![
            push.id,
            &data.name,
            push.digest,
            to_i64("sample count", samples)?,
            push.token,
            now_ms()
        ],
    )?;
    if claimed == 0 {
        let mut found = None;
        db.query(
            "SELECT set_name, digest, samples, pushed_at_ms FROM pushes WHERE id = ?1",
            args![push.id],
            &mut |row| {
                found = Some((
                    row.req_text(0)?,
                    row.req_text(1)?,
                    row.req_int(2)?,
                    row.req_int(3)?,
                ));
                Ok(())
            },
        )?;
        let (result_set, digest, samples, pushed_at_ms) =
            found.ok_or_else(|| Fail::Damaged(format!("push {} vanished", push.id)))?;
        if digest != push.digest {
            return Err(Fail::Store(StoreError::Conflict(format!(
                "push id {} was already used for another document (into result set \"{result_set}\"); \
                 nothing was stored. Give every new document a new push id",
                push.id
            ))));
        }
        return Ok(PushOutcome::AlreadyStored {
            result_set,
            samples: narrow("sample count", samples)?,
            pushed_at_ms,
        });
    }
    import_set(db, data)?;
    Ok(PushOutcome::Stored { samples })
}

impl<S: Sql> Exchange for S {
    fn import(&mut self, data: &ResultSetData) -> Result<()> {
        with(self, "importing a result set", |db| {
            check_set_data(data)?;
            transaction(db, true, |db| import_set(db, data))
        })
    }

    fn push(&mut self, push: &Push, data: &ResultSetData) -> Result<PushOutcome> {
        with(self, "storing pushed samples", |db| {
            check_id("push id", push.id)?;
            check_set_data(data)?;
            transaction(db, true, |db| push_set(db, push, data))
        })
    }

    fn append_live(&mut self, set: &str, batch: &LiveBatch, token: &str) -> Result<LiveOutcome> {
        with(self, "storing live samples", |db| {
            live::check(set, batch)?;
            transaction(db, true, |db| live::append(db, set, batch, token))
        })
    }
}
