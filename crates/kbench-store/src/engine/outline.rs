//! [`Results::outline`](crate::Results::outline): a set's counts and one
//! page of its identifiers and tests, without samples, and
//! [`Results::set_overviews`](crate::Results::set_overviews): every set's
//! counts and newest run. Every statement
//! goes through an index and is bounded by the pages: the set by its name,
//! counts and pages of identifiers and tests by `identifiers_by_set` and
//! `tests_by_set` (schema v7), runs by `runs_by_identifier`; no sample is
//! read or counted.

use super::convert::narrow;
use super::records::{identifier_runs, read_tests, set_header};
use super::{Fail, Res, Sql, args, first_int, rows};
use crate::RunStatus;
use crate::outline::{IdentifierOutline, LatestRun, OutlinePages, SetOutline, SetOverview, Window};

/// A window's `LIMIT` and `OFFSET` (beyond `i64`, the end of any list).
fn bounds(window: Window) -> (i64, i64) {
    let big = |n: usize| i64::try_from(n).unwrap_or(i64::MAX);
    (big(window.limit), big(window.offset))
}

/// Reads the outline of `set`; inside a read transaction.
pub(super) fn read_outline(db: &mut dyn Sql, set: &str, pages: OutlinePages) -> Res<SetOutline> {
    let (set_id, title, description) = set_header(db, set)?;
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
        let runs = identifier_runs(db, id)?;
        identifiers.push(IdentifierOutline { name, runs });
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

/// Every set's counts and newest run, oldest set first; inside a read
/// transaction. The counts go through `identifiers_by_set`, `tests_by_set`
/// and `runs_by_identifier`; the newest run is the one of highest id.
pub(super) fn read_overviews(db: &mut dyn Sql) -> Res<Vec<SetOverview>> {
    let mut sets = rows(
        db,
        "SELECT s.id, s.name, s.title, s.created_at_ms, \
           (SELECT COUNT(*) FROM identifiers i WHERE i.set_id = s.id), \
           (SELECT COUNT(*) FROM tests t WHERE t.set_id = s.id), \
           (SELECT COUNT(*) FROM runs r JOIN identifiers i ON i.id = r.identifier_id \
              WHERE i.set_id = s.id) \
         FROM result_sets s ORDER BY s.created_at_ms, s.id",
        args![],
        |row| {
            let overview = SetOverview {
                name: row.req_text(1)?,
                title: row.text(2)?,
                created_at_ms: row.req_int(3)?,
                identifiers: narrow("identifier count", row.req_int(4)?)?,
                tests: narrow("test count", row.req_int(5)?)?,
                runs: narrow("run count", row.req_int(6)?)?,
                latest: None,
            };
            Ok((row.req_int(0)?, overview))
        },
    )?;
    for (id, overview) in &mut sets {
        let latest = rows(
            db,
            "SELECT i.name, r.status, r.started_at_ms, r.ended_at_ms FROM runs r \
             JOIN identifiers i ON i.id = r.identifier_id WHERE r.id = \
               (SELECT MAX(x.id) FROM runs x JOIN identifiers y ON y.id = x.identifier_id \
                WHERE y.set_id = ?1)",
            args![*id],
            |row| {
                let status = row.req_text(1)?;
                Ok(LatestRun {
                    identifier: row.req_text(0)?,
                    status: RunStatus::parse(&status).ok_or_else(|| {
                        Fail::Damaged(format!("a run has an unknown status {status:?}"))
                    })?,
                    started_at_ms: row.req_int(2)?,
                    ended_at_ms: row.int(3)?,
                })
            },
        )?;
        overview.latest = latest.into_iter().next();
    }
    Ok(sets.into_iter().map(|(_, overview)| overview).collect())
}
