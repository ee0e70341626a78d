//! The embedded store: one SQLite file (WAL mode), its schema in
//! `sqlite/schema_v*.sql` (one script a version, each saying what it adds),
//! opening and migrations in `sqlite/open.rs`. The store's logic is shared
//! with PostgreSQL (`engine/`); this file only runs its SQL.
//!
//! Every write method commits before it returns (autocommit for single
//! statements, a short immediate transaction otherwise), so a killed run
//! keeps every sample whose `add_sample` returned.

mod open;

use crate::engine::{DbError, Fail, Param, Res, Row, SampleBlock, Sql, args};
use crate::{Opening, StoreError};
use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::{Connection, ErrorCode, params_from_iter};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

pub(crate) use open::MIGRATIONS;

/// Results in a SQLite database file.
#[derive(Debug)]
pub struct SqliteStore {
    conn: Connection,
    path: PathBuf,
    /// The path as messages show it.
    name: String,
    /// Locks held (see [`Sql::try_lock`]): files under `PATH.locks/`, each
    /// flock-ed while it stays open here.
    locks: Vec<(i64, std::fs::File)>,
}

impl SqliteStore {
    /// Opens the database at `path`, creating the file and its directories
    /// when missing and migrating an older schema. A file that is not a
    /// kbench database is `Corrupt` and left byte for byte as it was; one
    /// from a newer kbench is `TooNew`; a place that cannot be written is
    /// `Open`.
    pub fn open(path: &Path) -> crate::Result<SqliteStore> {
        Self::open_with(path, Opening::LOCAL)
    }

    /// [`SqliteStore::open`] as `opening` says: whether a missing file is
    /// created, an existing one checked, and how durable commits are.
    pub fn open_with(path: &Path, opening: Opening) -> crate::Result<SqliteStore> {
        let conn = open::open(path, opening)?;
        Ok(SqliteStore {
            conn,
            path: path.to_path_buf(),
            name: path.display().to_string(),
            locks: Vec::new(),
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl rusqlite::ToSql for Param<'_> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::Borrowed(match *self {
            Param::Null => ValueRef::Null,
            Param::Int(value) => ValueRef::Integer(value),
            Param::Real(value) => ValueRef::Real(value),
            Param::Text(text) => ValueRef::Text(text.as_bytes()),
            Param::Blob(bytes) => ValueRef::Blob(bytes),
        }))
    }
}

impl Row for rusqlite::Row<'_> {
    fn int(&self, column: usize) -> Res<Option<i64>> {
        Ok(self.get(column)?)
    }

    fn real(&self, column: usize) -> Res<Option<f64>> {
        Ok(self.get(column)?)
    }

    fn text(&self, column: usize) -> Res<Option<String>> {
        Ok(self.get(column)?)
    }

    fn blob(&self, column: usize) -> Res<Option<Vec<u8>>> {
        Ok(self.get(column)?)
    }
}

impl Sql for SqliteStore {
    fn name(&self) -> &str {
        &self.name
    }

    fn execute(&mut self, sql: &str, args: &[Param]) -> Res<u64> {
        let changed = self
            .conn
            .prepare_cached(sql)?
            .execute(params_from_iter(args))?;
        Ok(changed as u64)
    }

    fn query(
        &mut self,
        sql: &str,
        args: &[Param],
        each: &mut dyn FnMut(&dyn Row) -> Res<()>,
    ) -> Res<()> {
        let mut stmt = self.conn.prepare_cached(sql)?;
        let mut rows = stmt.query(params_from_iter(args))?;
        while let Some(row) = rows.next()? {
            each(row)?;
        }
        Ok(())
    }

    fn insert_blocks(&mut self, blocks: &[SampleBlock]) -> Res<()> {
        insert_rows(self, blocks)
    }

    fn begin_write(&mut self) -> Res<()> {
        Ok(self.conn.execute_batch("BEGIN IMMEDIATE")?)
    }

    /// A deferred transaction: in WAL mode its reads share one snapshot.
    fn begin_read(&mut self) -> Res<()> {
        Ok(self.conn.execute_batch("BEGIN DEFERRED")?)
    }

    fn commit(&mut self) -> Res<()> {
        Ok(self.conn.execute_batch("COMMIT")?)
    }

    fn rollback(&mut self) -> Res<()> {
        Ok(self.conn.execute_batch("ROLLBACK")?)
    }

    /// A passive checkpoint: SQLite syncs the write-ahead log before it
    /// copies what it can into the database file (and syncs that too when
    /// nothing holds a frame back), and waits for no one.
    fn sync(&mut self) -> Res<()> {
        let _: (i64, i64, i64) =
            self.conn
                .query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |row| {
                    Ok((row.get(0)?, row.get(1)?, row.get(2)?))
                })?;
        Ok(())
    }

    /// An flock on `PATH.locks/KEY` (SQLite's own locks are per file, not
    /// per identifier); released when this store is dropped or its process
    /// dies, so a killed run leaves no stale lock.
    fn try_lock(&mut self, key: i64) -> Res<bool> {
        if self.locks.iter().any(|(held, _)| *held == key) {
            return Ok(true);
        }
        let mut dir = self.path.clone().into_os_string();
        dir.push(".locks");
        let dir = PathBuf::from(dir);
        let fail = |err: std::io::Error| {
            Fail::Store(StoreError::Database(format!(
                "cannot take a lock in {}: {err}; check that the database's directory is writable",
                dir.display()
            )))
        };
        std::fs::create_dir_all(&dir).map_err(fail)?;
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(dir.join(format!("{key:016x}")))
            .map_err(fail)?;
        match file.try_lock() {
            Ok(()) => {
                self.locks.push((key, file));
                Ok(true)
            }
            Err(std::fs::TryLockError::WouldBlock) => Ok(false),
            Err(std::fs::TryLockError::Error(err)) => Err(fail(err)),
        }
    }

    fn skip_locked(&self) -> &'static str {
        ""
    }

    fn key_share(&self) -> &'static str {
        ""
    }

    fn describe(&self, doing: &str, err: DbError) -> StoreError {
        match err {
            DbError::Sqlite(err) => sql_error(&self.name, doing, err),
            DbError::Postgres(err) => StoreError::Database(format!("{doing}: {err}")),
        }
    }
}

/// The most blocks one multi-row INSERT holds (4 parameters each, well
/// under SQLite's 32766).
const BATCH: usize = 256;

const _: () = assert!(
    BATCH.is_power_of_two(),
    "insert_rows splits by powers of two"
);

/// `INSERT INTO sample_blocks ... VALUES (..), (..)` for `rows` rows, a
/// power of two up to [`BATCH`].
fn batch_insert_sql(rows: usize) -> &'static str {
    static SQL: OnceLock<Vec<String>> = OnceLock::new();
    let all = SQL.get_or_init(|| {
        (0..=BATCH.ilog2())
            .map(|log| {
                let rows: Vec<String> = (0..1usize << log)
                    .map(|i| {
                        let n = 4 * i;
                        format!("(?{}, ?{}, ?{}, ?{})", n + 1, n + 2, n + 3, n + 4)
                    })
                    .collect();
                format!(
                    "INSERT INTO sample_blocks (run_id, test_id, part, samples) VALUES {}",
                    rows.join(", ")
                )
            })
            .collect()
    });
    &all[rows.ilog2() as usize]
}

/// Inserts blocks in order, in multi-row INSERTs: [`BATCH`] rows at a
/// time, then the rest in the powers of two it adds up to (13 rows: 8, 4
/// and 1), so that a few prepared statements serve every count in a few
/// statements.
fn insert_rows(db: &mut dyn Sql, blocks: &[SampleBlock]) -> Res<()> {
    let mut params = Vec::with_capacity(4 * BATCH);
    let mut rest = blocks;
    while !rest.is_empty() {
        let count = BATCH.min(1 << rest.len().ilog2());
        let (chunk, after) = rest.split_at(count);
        rest = after;
        params.clear();
        for block in chunk {
            params.extend_from_slice(args![
                block.run,
                block.test,
                block.part,
                block.samples.as_slice()
            ]);
        }
        db.execute(batch_insert_sql(count), &params)?;
    }
    Ok(())
}

/// A SQLite error with the file, what was being done and, where there is
/// one, what to do about it.
fn sql_error(db: &str, doing: &str, err: rusqlite::Error) -> StoreError {
    let hint = match err.sqlite_error_code() {
        Some(ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase) => {
            return StoreError::Corrupt {
                db: db.to_string(),
                reason: format!("{doing}: {err}"),
            };
        }
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => {
            "; another process held it locked for over 5 s, retry when that one is done"
        }
        Some(ErrorCode::DiskFull) => "; free space on its file system and retry",
        Some(ErrorCode::ReadOnly | ErrorCode::PermissionDenied | ErrorCode::CannotOpen) => {
            "; check that the file and its directory are writable"
        }
        _ => "",
    };
    StoreError::Database(format!("{doing} in {db}: {err}{hint}"))
}
