//! [`Editing`]: what a result set's author changes after measuring, each
//! change in one write transaction, checked first: on an error nothing
//! changed. Samples are only ever removed with their identifier.

use super::check::{check_factors, check_name, check_text};
use super::convert::{from_json, narrow, to_json};
use super::records::{FIND_IDENTIFIER, missing_set};
use super::{
    Fail, Res, Sql, args, blocks, first_int, identifier_lock_key, rows, texts, transaction, with,
};
use crate::{Editing, Removed, Result, RunId, StoreError};
use kbench_model::now_ms;
use std::collections::BTreeMap;

/// The id of result set `set`; `NotFound` naming those that exist.
fn set_id(db: &mut dyn Sql, set: &str) -> Res<i64> {
    match first_int(db, "SELECT id FROM result_sets WHERE name = ?1", args![set])? {
        Some(id) => Ok(id),
        None => Err(missing_set(db, set)?),
    }
}

/// The id of identifier `name` of the set; `NotFound` with the closest
/// name ("did you mean") and every name it has.
fn identifier_id(db: &mut dyn Sql, set_id: i64, set: &str, name: &str) -> Res<i64> {
    if let Some(id) = first_int(db, FIND_IDENTIFIER, args![set_id, name])? {
        return Ok(id);
    }
    let names = identifier_names(db, set_id)?;
    let closest = names
        .iter()
        .min_by_key(|known| strsim::damerau_levenshtein(name, known))
        .filter(|known| strsim::damerau_levenshtein(name, known) <= name.chars().count() / 2 + 1)
        .map(|known| format!("; did you mean \"{known}\"?"))
        .unwrap_or_default();
    Err(Fail::Store(StoreError::NotFound(format!(
        "there is no identifier \"{name}\" in result set \"{set}\" (it holds: {}){closest}",
        quoted(&names)
    ))))
}

/// The set's identifiers in their order.
fn identifier_names(db: &mut dyn Sql, set_id: i64) -> Res<Vec<String>> {
    texts(
        db,
        "SELECT name FROM identifiers WHERE set_id = ?1 ORDER BY position, id",
        args![set_id],
    )
}

fn quoted(names: &[String]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("\"{n}\"")).collect();
    quoted.join(", ")
}

/// Takes the lock `kbench run` holds while measuring the identifier, so
/// that a run going on is neither renamed nor removed under it.
fn not_measured(db: &mut dyn Sql, set: &str, name: &str) -> Res<()> {
    if db.try_lock(identifier_lock_key(set, name))? {
        return Ok(());
    }
    Err(Fail::Store(StoreError::Conflict(format!(
        "identifier \"{name}\" of result set \"{set}\" is being measured (a `kbench run` holds \
         it); nothing was changed. Retry when that run has ended"
    ))))
}

fn invalid(message: String) -> Fail {
    Fail::Store(StoreError::Invalid(message))
}

fn describe(
    db: &mut dyn Sql,
    set: &str,
    title: Option<&str>,
    description: Option<&str>,
) -> Res<()> {
    let id = set_id(db, set)?;
    for (column, text) in [("title", title), ("description", description)] {
        let Some(text) = text else { continue };
        let stored = (!text.is_empty()).then_some(text);
        let sql = format!("UPDATE result_sets SET {column} = ?2 WHERE id = ?1");
        db.execute(&sql, args![id, stored])?;
    }
    Ok(())
}

fn rename(db: &mut dyn Sql, set: &str, old: &str, new: &str) -> Res<()> {
    let set_id = set_id(db, set)?;
    let id = identifier_id(db, set_id, set, old)?;
    if first_int(db, FIND_IDENTIFIER, args![set_id, new])?.is_some() {
        return Err(Fail::Store(StoreError::Conflict(format!(
            "result set \"{set}\" already has an identifier \"{new}\"; nothing was changed. \
             Choose another name, or remove that one first (kbench set remove)"
        ))));
    }
    not_measured(db, set, old)?;
    db.execute(
        "UPDATE identifiers SET name = ?2 WHERE id = ?1",
        args![id, new],
    )?;
    Ok(())
}

fn order(db: &mut dyn Sql, set: &str, first: &[String]) -> Res<Vec<String>> {
    let set_id = set_id(db, set)?;
    let mut ids = Vec::new();
    for (at, name) in first.iter().enumerate() {
        if first[..at].contains(name) {
            return Err(invalid(format!(
                "identifier \"{name}\" is named twice; name each once. Nothing was changed"
            )));
        }
        ids.push(identifier_id(db, set_id, set, name)?);
    }
    let mut order: Vec<String> = first.to_vec();
    order.extend(
        identifier_names(db, set_id)?
            .into_iter()
            .filter(|name| !first.contains(name)),
    );
    for (position, name) in order.iter().enumerate() {
        db.execute(
            "UPDATE identifiers SET position = ?3 WHERE set_id = ?1 AND name = ?2",
            args![set_id, name, position as i64],
        )?;
    }
    Ok(order)
}

/// Removes the identifier with its runs, their outcomes and samples. The
/// runs go before their samples: deleting a run waits for a transaction
/// storing samples under it (it locks the run's row), so the samples
/// deleted after are all the run has, with no foreign key to check it
/// (samples have none since schema version 8).
fn remove(db: &mut dyn Sql, set: &str, name: &str) -> Res<Removed> {
    let set_id = set_id(db, set)?;
    let id = identifier_id(db, set_id, set, name)?;
    not_measured(db, set, name)?;
    db.execute(
        "DELETE FROM test_outcomes WHERE run_id IN \
         (SELECT id FROM runs WHERE identifier_id = ?1)",
        args![id],
    )?;
    let runs = rows(
        db,
        "DELETE FROM runs WHERE identifier_id = ?1 RETURNING id",
        args![id],
        |row| row.req_int(0),
    )?;
    let mut samples = 0;
    for run in &runs {
        let bytes = rows(
            db,
            "DELETE FROM sample_blocks WHERE run_id = ?1 RETURNING LENGTH(samples)",
            args![*run],
            |row| narrow("a block's length", row.req_int(0)?),
        )?;
        samples += bytes.into_iter().map(blocks::count).sum::<u64>();
    }
    db.execute("DELETE FROM identifiers WHERE id = ?1", args![id])?;
    Ok(Removed {
        runs: runs.len() as u64,
        samples,
    })
}

fn factors(
    db: &mut dyn Sql,
    set: &str,
    identifier: &str,
    levels: &BTreeMap<String, String>,
    unset: &[String],
) -> Res<BTreeMap<String, String>> {
    let set_id = set_id(db, set)?;
    let id = identifier_id(db, set_id, set, identifier)?;
    let mut stored = String::new();
    db.query(
        "SELECT factors_json FROM identifiers WHERE id = ?1",
        args![id],
        &mut |row| {
            stored = row.req_text(0)?;
            Ok(())
        },
    )?;
    let mut factors: BTreeMap<String, String> = from_json("an identifier's factors", &stored)?;
    for name in unset {
        if factors.remove(name).is_none() {
            let names: Vec<String> = factors.keys().cloned().collect();
            return Err(invalid(format!(
                "identifier \"{identifier}\" has no factor \"{name}\" (its factors: {}); \
                 nothing was changed",
                if names.is_empty() {
                    "none".to_string()
                } else {
                    quoted(&names)
                }
            )));
        }
    }
    factors.extend(levels.clone());
    db.execute(
        "UPDATE identifiers SET factors_json = ?2 WHERE id = ?1",
        args![id, &to_json("an identifier's factors", &factors)?],
    )?;
    Ok(factors)
}

fn abort(db: &mut dyn Sql, run: RunId, reason: &str) -> Res<()> {
    let notes = texts(
        db,
        "SELECT notes_json FROM runs WHERE id = ?1",
        args![run.0],
    )?
    .pop()
    .ok_or_else(|| invalid(format!("there is no run {}: nothing was changed", run.0)))?;
    let mut notes: Vec<String> = from_json("a run's notes", &notes)?;
    notes.push(reason.to_string());
    let now = now_ms();
    db.execute(
        "UPDATE runs SET status = 'failed', ended_at_ms = COALESCE(ended_at_ms, ?2), \
         aborted_at_ms = ?2, notes_json = ?3 WHERE id = ?1",
        args![run.0, now, &to_json("a run's notes", &notes)?],
    )?;
    Ok(())
}

impl<S: Sql> Editing for S {
    fn describe_set(
        &mut self,
        set: &str,
        title: Option<&str>,
        description: Option<&str>,
    ) -> Result<()> {
        with(self, "describing a result set", |db| {
            check_text("title", title, false)?;
            check_text("description", description, true)?;
            transaction(db, true, |db| describe(db, set, title, description))
        })
    }

    fn rename_identifier(&mut self, set: &str, old: &str, new: &str) -> Result<()> {
        with(self, "renaming an identifier", |db| {
            check_name("identifier", new)?;
            transaction(db, true, |db| rename(db, set, old, new))
        })
    }

    fn order_identifiers(&mut self, set: &str, first: &[String]) -> Result<Vec<String>> {
        with(self, "ordering identifiers", |db| {
            transaction(db, true, |db| order(db, set, first))
        })
    }

    fn remove_identifier(&mut self, set: &str, identifier: &str) -> Result<Removed> {
        with(self, "removing an identifier", |db| {
            transaction(db, true, |db| remove(db, set, identifier))
        })
    }

    fn abort_run(&mut self, run: RunId, reason: &str) -> Result<()> {
        with(self, "marking a run aborted", |db| {
            transaction(db, true, |db| abort(db, run, reason))
        })
    }

    fn set_factors(
        &mut self,
        set: &str,
        identifier: &str,
        levels: &BTreeMap<String, String>,
        unset: &[String],
    ) -> Result<BTreeMap<String, String>> {
        with(self, "setting factors", |db| {
            check_factors(levels)?;
            transaction(db, true, |db| factors(db, set, identifier, levels, unset))
        })
    }
}
