//! [`Exchange`]: whole result sets imported or pushed, each in one
//! transaction (all or nothing), and live uploads ([`live`]). A set is
//! written as its tests, then identifier by identifier, so an import that
//! reads a file as it goes ([`Exchange::import_each`]) and one held whole
//! share every statement and check.
//!
//! [`live`]: super::live

use super::blocks::{pack, parts};
use super::check::{check_factors, check_id, check_name, check_text, check_uid};
use super::convert::{narrow, to_i64, to_json};
use super::records::{
    FIND_IDENTIFIER, INSERT_IDENTIFIER, ensure_set, ensure_tests, insert_new_run, sample_row,
    store_new_samples, upsert_outcome,
};
use super::{Fail, Res, Sql, args, first_int, live, store_error, transaction, with};
use crate::{
    Exchange, IdentifierData, LiveBatch, LiveOutcome, Push, PushOutcome, Result, ResultSetData,
    SetHead, SetWriter, StoreError,
};
use kbench_model::{TestKey, now_ms};
use std::collections::HashMap;

/// A result set being written: its row and its tests' rows by key.
struct SetRows {
    name: String,
    id: i64,
    tests: HashMap<TestKey, i64>,
}

/// Finds or makes the set and its tests; inside a write transaction.
fn start_set(db: &mut dyn Sql, head: &SetHead) -> Res<SetRows> {
    check_name("result set", head.name)?;
    let id = ensure_set(db, head.name)?;
    let tests = ensure_tests(db, id, head.name, head.tests)?;
    Ok(SetRows {
        name: head.name.to_string(),
        id,
        tests,
    })
}

/// Gives the set a title and description, keeping those it has already.
fn describe_set(
    db: &mut dyn Sql,
    set: &SetRows,
    title: Option<&str>,
    description: Option<&str>,
) -> Res<()> {
    check_text("title", title, false)?;
    check_text("description", description, true)?;
    db.execute(
        "UPDATE result_sets SET title = COALESCE(title, ?2), \
         description = COALESCE(description, ?3) WHERE id = ?1",
        args![set.id, title, description],
    )?;
    Ok(())
}

/// Writes one identifier, its runs and samples into `set`; inside the
/// set's write transaction.
fn import_identifier(db: &mut dyn Sql, set: &SetRows, identifier: &IdentifierData) -> Res<()> {
    let name = &identifier.name;
    check_name("identifier", name)?;
    check_factors(&identifier.factors)?;
    for run in &identifier.runs {
        check_uid(&run.info)?;
    }
    let test_of = |key: &TestKey| {
        set.tests.get(key).copied().ok_or_else(|| {
            Fail::Store(StoreError::NotFound(format!(
                "identifier \"{name}\" has results of test {key}, which is not among the \
                 result set's tests; nothing was imported"
            )))
        })
    };
    let db_name = db.name().to_string();
    let exists = || {
        Fail::Store(StoreError::Conflict(format!(
            "identifier \"{name}\" already exists in result set \"{}\" of {db_name}; nothing was \
             imported. Rename it in the import or import into another result set",
            set.name,
        )))
    };
    if first_int(db, FIND_IDENTIFIER, args![set.id, name])?.is_some() {
        return Err(exists());
    }
    if identifier.runs.is_empty() && !identifier.samples.is_empty() {
        return Err(Fail::Store(StoreError::Conflict(format!(
            "identifier \"{name}\" has samples but no run to hold them; nothing was imported"
        ))));
    }
    let identifier_id =
        first_int(db, INSERT_IDENTIFIER, args![set.id, name])?.ok_or_else(exists)?;
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
            upsert_outcome(db, id, test_of(&outcome.test)?, outcome)?;
        }
        runs.push(id);
    }
    // Every sample of the identifier goes in at once: the parts of each
    // test's samples in each run.
    let mut blocks = Vec::new();
    for (key, samples) in &identifier.samples {
        let test = test_of(key)?;
        let owners = identifier.runs_of_samples(key);
        let mut of_run = vec![Vec::new(); runs.len()];
        for (sample, owner) in samples.iter().zip(owners) {
            pack(&sample_row(runs[owner], test, sample)?, &mut of_run[owner]);
        }
        for (run, samples) in runs.iter().zip(of_run) {
            if !samples.is_empty() {
                blocks.extend(parts(run.0, test, samples));
            }
        }
    }
    store_new_samples(db, &blocks)
}

/// Writes a whole result set; inside a write transaction.
fn import_set(db: &mut dyn Sql, data: &ResultSetData) -> Res<()> {
    let head = SetHead {
        name: &data.name,
        tests: &data.tests,
    };
    let set = start_set(db, &head)?;
    describe_set(db, &set, data.title.as_deref(), data.description.as_deref())?;
    for identifier in &data.identifiers {
        import_identifier(db, &set, identifier)?;
    }
    Ok(())
}

/// The [`SetWriter`] of [`Exchange::import_each`]: each call writes at once
/// into the open transaction.
struct Writer<'a> {
    db: &'a mut dyn Sql,
    /// The set once started.
    set: Option<SetRows>,
}

impl Writer<'_> {
    /// Runs `write` on the started set.
    fn on_set(&mut self, write: impl FnOnce(&mut dyn Sql, &SetRows) -> Res<()>) -> Result<()> {
        let done = match &self.set {
            Some(set) => write(self.db, set),
            None => Err(Fail::Damaged(
                "a part of a result set was imported before the set itself".to_string(),
            )),
        };
        done.map_err(|fail| store_error(self.db, IMPORTING, fail))
    }
}

impl SetWriter for Writer<'_> {
    fn start(&mut self, head: &SetHead) -> Result<()> {
        let set = start_set(self.db, head).map_err(|fail| store_error(self.db, IMPORTING, fail))?;
        self.set = Some(set);
        Ok(())
    }

    fn describe(&mut self, title: Option<&str>, description: Option<&str>) -> Result<()> {
        self.on_set(|db, set| describe_set(db, set, title, description))
    }

    fn identifier(&mut self, identifier: &IdentifierData) -> Result<()> {
        self.on_set(|db, set| import_identifier(db, set, identifier))
    }
}

const IMPORTING: &str = "importing a result set";

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
        with(self, IMPORTING, |db| {
            transaction(db, true, |db| import_set(db, data))
        })
    }

    fn import_each(
        &mut self,
        feed: &mut dyn FnMut(&mut dyn SetWriter) -> Result<()>,
    ) -> Result<()> {
        with(self, IMPORTING, |db| {
            transaction(db, true, |db| {
                feed(&mut Writer { db, set: None }).map_err(Fail::Store)
            })
        })
    }

    fn push(&mut self, push: &Push, data: &ResultSetData) -> Result<PushOutcome> {
        with(self, "storing pushed samples", |db| {
            check_id("push id", push.id)?;
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
