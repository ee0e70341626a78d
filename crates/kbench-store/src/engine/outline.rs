//! [`Results::outline`](crate::Results::outline): a set's counts and one
//! page of its identifiers and tests, without samples. Every statement
//! goes through an index and is bounded by the pages: the set by its name,
//! counts and pages of identifiers and tests by `identifiers_by_set` and
//! `tests_by_set` (schema v7), runs by `runs_by_identifier`, a run's
//! samples counted in `samples_by_run_round`.

use super::convert::narrow;
use super::records::{add_outcomes, missing_set, read_run, run_columns};
use super::results::read_tests;
use super::{Res, Sql, args, first_int, rows};
use crate::outline::{IdentifierOutline, OutlinePages, SetOutline, Window};

/// A window's `LIMIT` and `OFFSET` (beyond `i64`, the end of any list).
fn bounds(window: Window) -> (i64, i64) {
    let big = |n: usize| i64::try_from(n).unwrap_or(i64::MAX);
    (big(window.limit), big(window.offset))
}

/// Reads the outline of `set`; inside a read transaction.
pub(super) fn read_outline(db: &mut dyn Sql, set: &str, pages: OutlinePages) -> Res<SetOutline> {
    let mut found = None;
    db.query(
        "SELECT id, title, description FROM result_sets WHERE name = ?1",
        args![set],
        &mut |row| {
            found = Some((row.req_int(0)?, row.text(1)?, row.text(2)?));
            Ok(())
        },
    )?;
    let Some((set_id, title, description)) = found else {
        return Err(missing_set(db, set)?);
    };
    let count = |db: &mut dyn Sql, table: &str| -> Res<usize> {
        let sql = format!("SELECT COUNT(*) FROM {table} WHERE set_id = ?1");
        narrow("count", first_int(db, &sql, args![set_id])?.unwrap_or(0))
    };
    let identifier_count = count(db, "identifiers")?;
    let test_count = count(db, "tests")?;

    let (limit, offset) = bounds(pages.tests);
    let (tests, _) = read_tests(
        db,
        "SELECT id, benchmark, options, metric, unit, direction FROM tests \
         WHERE set_id = ?1 ORDER BY position, id LIMIT ?2 OFFSET ?3",
        args![set_id, limit, offset],
    )?;

    let (limit, offset) = bounds(pages.identifiers);
    let named = rows(
        db,
        "SELECT id, name FROM identifiers WHERE set_id = ?1 \
         ORDER BY position, id LIMIT ?2 OFFSET ?3",
        args![set_id, limit, offset],
        |row| Ok((row.req_int(0)?, row.req_text(1)?)),
    )?;
    let mut identifiers = Vec::with_capacity(named.len());
    for (id, name) in named {
        let mut runs = rows(
            db,
            concat!(
                "SELECT ",
                run_columns!(),
                " FROM runs r WHERE r.identifier_id = ?1 ORDER BY r.id"
            ),
            args![id],
            read_run,
        )?;
        add_outcomes(db, &mut runs)?;
        let mut run_samples = Vec::with_capacity(runs.len());
        for run in &runs {
            let n = first_int(
                db,
                "SELECT COUNT(*) FROM samples WHERE run_id = ?1",
                args![run.id.0],
            )?;
            run_samples.push(narrow("sample count", n.unwrap_or(0))?);
        }
        identifiers.push(IdentifierOutline {
            name,
            runs,
            run_samples,
        });
    }
    Ok(SetOutline {
        name: set.to_string(),
        title,
        description,
        identifier_count,
        test_count,
        identifiers,
        tests,
    })
}
