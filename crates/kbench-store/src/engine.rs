//! What both databases share: the store's logic, its SQL and its messages
//! are written once here, over the small [`Sql`] trait that `sqlite.rs`
//! and `postgres.rs` implement. Each role trait has its file
//! (`run_sink.rs`, `results.rs` with `outline.rs`, `exchange.rs` with
//! `live.rs`, `editing.rs`, `jobs.rs`, `tokens.rs`, `bisects.rs`,
//! `calibrations.rs`: `impl<S: Sql> Role for S`), over the leaf modules
//! they share: the rows of the schema (`records.rs`), the packed samples
//! (`blocks.rs`), the checks of what is written (`check.rs`) and the
//! conversions of stored values (`convert.rs`).
//!
//! Every write commits before it returns: a single statement in
//! autocommit, or a short transaction.
//!
//! The SQL is the common subset of SQLite and PostgreSQL, with SQLite's
//! numbered parameters `?1`, `?2`...; the PostgreSQL side rewrites them to
//! `$1`, `$2`... once per statement. Parameters whose type the statement
//! alone does not fix are wrapped in `CAST(.. AS ..)` for PostgreSQL's sake.
//!
//! This module is private: its `pub` items are reachable from the backends
//! but not from outside the crate, so [`Sql`] is sealed.

pub mod blocks;
mod calibrations;
mod check;
mod convert;
mod editing;
mod exchange;
mod jobs;
mod live;
mod outline;
#[cfg(test)]
mod recording;
mod records;
mod results;
mod run_sink;
mod saved;
mod tokens;

use crate::{Result, StoreError};
use std::collections::BTreeMap;

/// Tables every kbench schema version has, in both databases (samples
/// were rows of `samples` up to version 9, blocks of `sample_blocks` since).
pub const TABLES: &[&str] = &[
    "result_sets",
    "identifiers",
    "runs",
    "tests",
    "test_outcomes",
];

/// A statement parameter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Param<'a> {
    Null,
    Int(i64),
    Real(f64),
    Text(&'a str),
    Blob(&'a [u8]),
}

impl From<i64> for Param<'_> {
    fn from(value: i64) -> Self {
        Param::Int(value)
    }
}

impl From<u32> for Param<'_> {
    fn from(value: u32) -> Self {
        Param::Int(value.into())
    }
}

impl From<f64> for Param<'_> {
    fn from(value: f64) -> Self {
        Param::Real(value)
    }
}

impl<'a> From<&'a str> for Param<'a> {
    fn from(value: &'a str) -> Self {
        Param::Text(value)
    }
}

impl<'a> From<&'a String> for Param<'a> {
    fn from(value: &'a String) -> Self {
        Param::Text(value)
    }
}

impl<'a> From<&'a [u8]> for Param<'a> {
    fn from(value: &'a [u8]) -> Self {
        Param::Blob(value)
    }
}

impl<'a, T: Into<Param<'a>>> From<Option<T>> for Param<'a> {
    fn from(value: Option<T>) -> Self {
        value.map_or(Param::Null, Into::into)
    }
}

/// A sample as stored, checked (`records::sample_row`); packed into its
/// run and test's block ([`blocks`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SampleRow {
    pub run: i64,
    pub test: i64,
    pub round: u32,
    pub value: f64,
    pub iterations: i64,
    pub at_ms: i64,
}

/// Samples of one test in one run, packed ([`blocks`]): a row of
/// `sample_blocks`, part `part` (from 0) of that run and test's samples.
#[derive(Debug, Clone, PartialEq)]
pub struct SampleBlock {
    pub run: i64,
    pub test: i64,
    pub part: i64,
    pub samples: Vec<u8>,
}

/// `args![a, b]`: the parameters of a statement.
macro_rules! args {
    ($($value:expr),* $(,)?) => {
        &[$($crate::engine::Param::from($value)),*]
    };
}
pub(crate) use args;

/// One result row, read by column index.
pub trait Row {
    fn int(&self, column: usize) -> Res<Option<i64>>;
    fn real(&self, column: usize) -> Res<Option<f64>>;
    fn text(&self, column: usize) -> Res<Option<String>>;
    fn blob(&self, column: usize) -> Res<Option<Vec<u8>>>;
}

impl dyn Row + '_ {
    /// A column that is never NULL.
    pub fn req_int(&self, column: usize) -> Res<i64> {
        self.int(column)?.ok_or_else(|| null_column(column))
    }

    pub fn req_real(&self, column: usize) -> Res<f64> {
        self.real(column)?.ok_or_else(|| null_column(column))
    }

    pub fn req_text(&self, column: usize) -> Res<String> {
        self.text(column)?.ok_or_else(|| null_column(column))
    }

    pub fn req_blob(&self, column: usize) -> Res<Vec<u8>> {
        self.blob(column)?.ok_or_else(|| null_column(column))
    }
}

fn null_column(column: usize) -> Fail {
    Fail::Damaged(format!(
        "column {column} of a row is NULL where it never is"
    ))
}

/// A database connection as the store's logic uses it.
pub trait Sql {
    /// The database as messages name it: a file path, or a URL without its
    /// password.
    fn name(&self) -> &str;

    /// Called before each store operation (PostgreSQL reconnects there
    /// after a lost connection).
    fn ready(&mut self) -> Res<()> {
        Ok(())
    }

    /// Runs a statement; the number of rows it changed.
    fn execute(&mut self, sql: &str, args: &[Param]) -> Res<u64>;

    /// Runs a query, calling `each` on every row in order. `each` must not
    /// use the connection (PostgreSQL streams the rows over it).
    fn query(
        &mut self,
        sql: &str,
        args: &[Param],
        each: &mut dyn FnMut(&dyn Row) -> Res<()>,
    ) -> Res<()>;

    /// Inserts blocks of samples of (run, test) pairs that have none yet,
    /// inside the caller's transaction: SQLite in multi-row INSERTs,
    /// PostgreSQL in one binary COPY.
    fn insert_blocks(&mut self, blocks: &[SampleBlock]) -> Res<()>;

    /// Starts a transaction that writes (SQLite takes its write lock now).
    fn begin_write(&mut self) -> Res<()>;

    /// Starts a transaction that only reads: its queries see one snapshot.
    fn begin_read(&mut self) -> Res<()>;

    fn commit(&mut self) -> Res<()>;

    fn rollback(&mut self) -> Res<()>;

    /// Puts what is committed on disk now, whatever the connection's
    /// durability: a run's ended round survives a power cut. SQLite syncs
    /// its write-ahead log (a passive checkpoint); PostgreSQL's commits
    /// are on disk already.
    fn sync(&mut self) -> Res<()> {
        Ok(())
    }

    /// Takes the exclusive lock `key` for as long as this connection stays
    /// open; false when another connection (of this process or another)
    /// holds it. Taking a lock this connection holds is true.
    fn try_lock(&mut self, key: i64) -> Res<bool>;

    /// What ends a `SELECT` of rows a write transaction claims: PostgreSQL
    /// locks them and passes over rows another transaction holds
    /// (` FOR UPDATE SKIP LOCKED`), so workers leasing at once neither wait
    /// for each other nor take the same job; SQLite lets one writer in at a
    /// time anyway (`begin_write`), and has no such clause (empty).
    fn skip_locked(&self) -> &'static str;

    /// What ends a `SELECT` of the run a sample is about to be stored
    /// under: PostgreSQL locks its row against deletion until the
    /// transaction ends (` FOR KEY SHARE`, the lock a foreign key's check
    /// would take; the samples table has none since schema version 8), so
    /// the run is not removed between the check and the insert; SQLite lets
    /// one writer in at a time, and has no such clause (empty).
    fn key_share(&self) -> &'static str;

    /// A database error naming the database, what was being done and, where
    /// there is one, what to do about it.
    fn describe(&self, doing: &str, err: DbError) -> StoreError;
}

/// A failure of the database library itself.
#[derive(Debug)]
pub enum DbError {
    Sqlite(rusqlite::Error),
    Postgres(postgres::Error),
}

/// Why a store operation failed, before the database's name is added.
#[derive(Debug)]
pub enum Fail {
    Db(DbError),
    Store(StoreError),
    /// Stored data that cannot be read back (becomes `Corrupt`).
    Damaged(String),
}

pub type Res<T> = std::result::Result<T, Fail>;

impl From<rusqlite::Error> for Fail {
    fn from(err: rusqlite::Error) -> Fail {
        Fail::Db(DbError::Sqlite(err))
    }
}

impl From<postgres::Error> for Fail {
    fn from(err: postgres::Error) -> Fail {
        Fail::Db(DbError::Postgres(err))
    }
}

impl From<StoreError> for Fail {
    fn from(err: StoreError) -> Fail {
        Fail::Store(err)
    }
}

/// Runs `f` on the database and turns its failure into a `StoreError`
/// naming the database and what was being done.
pub fn with<T>(db: &mut dyn Sql, doing: &str, f: impl FnOnce(&mut dyn Sql) -> Res<T>) -> Result<T> {
    db.ready()
        .and_then(|()| f(db))
        .map_err(|fail| store_error(db, doing, fail))
}

/// A failure as a `StoreError` naming the database and what was being done.
pub fn store_error(db: &dyn Sql, doing: &str, fail: Fail) -> StoreError {
    match fail {
        Fail::Store(err) => err,
        Fail::Db(err) => db.describe(doing, err),
        Fail::Damaged(reason) => StoreError::Corrupt {
            db: db.name().to_string(),
            reason: format!("{doing}: {reason}"),
        },
    }
}

/// Runs `f` in a transaction, committed when it succeeds and rolled back
/// when it fails.
pub fn transaction<T>(
    db: &mut dyn Sql,
    write: bool,
    f: impl FnOnce(&mut dyn Sql) -> Res<T>,
) -> Res<T> {
    if write {
        db.begin_write()?;
    } else {
        db.begin_read()?;
    }
    let done = f(db).and_then(|value| db.commit().map(|()| value));
    if done.is_err() {
        // A failed COMMIT may leave the transaction open (SQLite when
        // busy); a rollback after an ended one fails harmlessly.
        let _ = db.rollback();
    }
    done
}

/// The first column of the first row, `None` without a row or for NULL.
pub fn first_int(db: &mut dyn Sql, sql: &str, args: &[Param]) -> Res<Option<i64>> {
    let mut found = None;
    db.query(sql, args, &mut |row| {
        if found.is_none() {
            found = Some(row.int(0)?);
        }
        Ok(())
    })?;
    Ok(found.flatten())
}

/// The first column of every row.
pub fn texts(db: &mut dyn Sql, sql: &str, args: &[Param]) -> Res<Vec<String>> {
    rows(db, sql, args, |row| row.req_text(0))
}

/// Every row of a query, each read by `read`, in order.
pub fn rows<T>(
    db: &mut dyn Sql,
    sql: &str,
    args: &[Param],
    mut read: impl FnMut(&dyn Row) -> Res<T>,
) -> Res<Vec<T>> {
    let mut all = Vec::new();
    db.query(sql, args, &mut |row| {
        all.push(read(row)?);
        Ok(())
    })?;
    Ok(all)
}

/// `TooNew` for a database written by a newer kbench.
pub fn too_new(db: &str, found: i64, supported: i64) -> StoreError {
    StoreError::TooNew {
        db: db.to_string(),
        found,
        supported,
    }
}

/// A migration that failed (and was rolled back).
pub fn migration_failed(
    db: &str,
    found: i64,
    target: i64,
    err: impl std::fmt::Display,
) -> StoreError {
    StoreError::Database(format!(
        "cannot upgrade the schema of {db} from version {found} to {target} ({err}); \
         nothing was changed"
    ))
}

/// Which migrations to apply to a database at schema version `found`:
/// `TooNew` past the last, `Corrupt` for a negative version.
pub fn pending<'a>(db: &str, found: i64, migrations: &'a [&'a str]) -> Result<&'a [&'a str]> {
    let supported = migrations.len() as i64;
    if found > supported {
        return Err(too_new(db, found, supported));
    }
    let done = usize::try_from(found).map_err(|_| StoreError::Corrupt {
        db: db.to_string(),
        reason: format!("its schema version {found} is negative"),
    })?;
    Ok(&migrations[done..])
}

/// The lock key of measuring `identifier` of `set` (FNV-1a of both).
pub fn identifier_lock_key(set: &str, identifier: &str) -> i64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in set.bytes().chain([0]).chain(identifier.bytes()) {
        hash = (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
    }
    hash as i64
}

/// Options are stored as `k=v,k=v`; see [`crate::validate::test_spec`].
pub fn parse_options(text: &str) -> Res<BTreeMap<String, String>> {
    if text.is_empty() {
        return Ok(BTreeMap::new());
    }
    text.split(',')
        .map(|pair| {
            pair.split_once('=')
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .ok_or_else(|| Fail::Damaged(format!("test options {text:?} are not k=v,k=v")))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use kbench_model::TestKey;

    #[test]
    fn options_text_round_trips() {
        let key = TestKey::parse("b[a=1,c=x=y]").unwrap();
        assert_eq!(
            parse_options(&key.options_text()).ok(),
            Some(key.options.clone())
        );
        assert_eq!(parse_options("").ok(), Some(BTreeMap::new()));
    }

    #[test]
    fn pending_refuses_newer_and_negative_versions() {
        let all = ["a", "b"];
        assert_eq!(pending("db", 0, &all).unwrap(), &all[..]);
        assert_eq!(pending("db", 2, &all).unwrap(), &[] as &[&str]);
        assert!(matches!(
            pending("db", 3, &all),
            Err(StoreError::TooNew {
                found: 3,
                supported: 2,
                ..
            })
        ));
        assert!(matches!(
            pending("db", -1, &all),
            Err(StoreError::Corrupt { .. })
        ));
    }
}
