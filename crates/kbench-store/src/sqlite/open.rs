//! Opening a result database without ever damaging someone else's file.
//!
//! An existing file is judged before anything can write to it: its header is
//! read with plain file I/O, then SQLite looks at it through a read-only
//! (and, when no write-ahead log is beside it, `immutable`) connection, so
//! that neither the file nor `-wal`/`-shm` companions appear or change when
//! the file turns out not to be ours. Only a fresh file, an empty SQLite
//! database or a kbench database is then opened for writing, switched to WAL
//! and migrated.

use crate::engine::blocks::{pack, parts};
use crate::engine::{SampleRow, TABLES, migration_failed, pending, too_new};
use crate::{Opening, Result, StoreError};
use rusqlite::{Connection, ErrorCode, OpenFlags, TransactionBehavior};
use std::fmt::Write as _;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Scripts that bring the schema from version `i` to `i + 1`, in order.
/// Append new versions; never edit one that has shipped. PostgreSQL has the
/// same scripts in its dialect (`postgres/schema_v*.sql`).
pub(crate) const MIGRATIONS: &[&str] = &[
    include_str!("schema_v1.sql"),
    include_str!("schema_v2.sql"),
    include_str!("schema_v3.sql"),
    include_str!("schema_v4.sql"),
    include_str!("schema_v5.sql"),
    include_str!("schema_v6.sql"),
    include_str!("schema_v7.sql"),
    include_str!("schema_v8.sql"),
    include_str!("schema_v9.sql"),
    include_str!("schema_v10.sql"),
    include_str!("schema_v11.sql"),
    include_str!("schema_v12.sql"),
];

/// The version whose script makes `sample_blocks`: the old rows are packed
/// into it after that script ([`pack_sample_rows`]).
const BLOCKS_VERSION: i64 = 10;

/// The schema version this build writes (`PRAGMA user_version`).
const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// Marks the file as kbench's in the SQLite header ("kbnc"), so another
/// application's database is told apart from ours.
const APPLICATION_ID: i32 = 0x6B62_6E63;

/// How long a statement waits for another process's lock before failing.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// The first 16 bytes of every SQLite 3 database.
const MAGIC: &[u8; 16] = b"SQLite format 3\0";

/// Opens the kbench database at `path` (creating it when missing and
/// `opening.create`), in WAL mode with foreign keys on, migrated to the
/// current schema.
pub(super) fn open(path: &Path, opening: Opening) -> Result<Connection> {
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_dir() => {
            return Err(open_error(
                path,
                "it is a directory; give a file name such as results.db",
            ));
        }
        // An empty file (e.g. made by `touch` or mktemp) is a new database.
        Ok(meta) if meta.len() > 0 => check_existing(path, opening.check)?,
        // An empty file would become a database; a missing one would
        // appear with its directories.
        Ok(_) if !opening.create => return Err(no_database(path)),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound && !opening.create => {
            return Err(no_database(path));
        }
        Ok(_) => {}
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => create_parent(path)?,
        Err(err) => return Err(open_error(path, &format!("{err}; {WHERE_INSTEAD}"))),
    }
    let mut flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    if opening.create {
        flags |= OpenFlags::SQLITE_OPEN_CREATE;
    }
    let mut conn = Connection::open_with_flags(path, flags).map_err(|e| opening_failed(path, e))?;
    configure(&conn, path, opening.durable)?;
    migrate(&mut conn, path)?;
    // Room for every statement the store prepares (with the sample INSERTs
    // of 1, 2, 4 ... 256 rows), so add_sample's INSERT stays compiled
    // however the calls interleave.
    conn.set_prepared_statement_cache_capacity(64);
    Ok(conn)
}

const WHERE_INSTEAD: &str = "choose a writable location with --db or KBENCH_DB";

fn open_error(path: &Path, reason: &str) -> StoreError {
    StoreError::Open {
        db: path.display().to_string(),
        reason: reason.to_string(),
    }
}

fn no_database(path: &Path) -> StoreError {
    open_error(
        path,
        "there is no kbench database there; `kbench run` or `kbench import` makes one \
         (or give another with --db or KBENCH_DB)",
    )
}

fn corrupt(path: &Path, reason: String) -> StoreError {
    StoreError::Corrupt {
        db: path.display().to_string(),
        reason,
    }
}

/// A SQLite error while opening: damage is `Corrupt`, anything else `Open`.
fn opening_failed(path: &Path, err: rusqlite::Error) -> StoreError {
    match err.sqlite_error_code() {
        Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt) => {
            corrupt(path, format!("SQLite cannot read it ({err})"))
        }
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => open_error(
            path,
            &format!("{err}; another process held it locked for over 5 s, retry when it is done"),
        ),
        _ => open_error(path, &format!("{err}; {WHERE_INSTEAD}")),
    }
}

fn create_parent(path: &Path) -> Result<()> {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => std::fs::create_dir_all(dir).map_err(|err| {
            open_error(
                path,
                &format!(
                    "cannot create the directory {} ({err}); {WHERE_INSTEAD}",
                    dir.display()
                ),
            )
        }),
        _ => Ok(()),
    }
}

/// Judges an existing, non-empty file without writing to it: a kbench
/// database of this or an older schema passes; anything else is `Corrupt`
/// (or `TooNew`). `quick_check` reads the whole file: only with `deep`.
fn check_existing(path: &Path, deep: bool) -> Result<()> {
    let mut header = Vec::with_capacity(100);
    std::fs::File::open(path)
        .and_then(|file| file.take(100).read_to_end(&mut header))
        .map_err(|err| open_error(path, &format!("cannot read it ({err})")))?;
    if !header.starts_with(MAGIC) {
        return Err(corrupt(
            path,
            "it is not a SQLite database (no SQLite header)".into(),
        ));
    }
    if header.len() < 100 {
        return Err(corrupt(
            path,
            format!(
                "it is cut short ({} bytes, less than a SQLite header)",
                header.len()
            ),
        ));
    }
    let page_size = match u16::from_be_bytes([header[16], header[17]]) {
        1 => 65536,
        size => u32::from(size),
    };
    if !(512..=65536).contains(&page_size) || !page_size.is_power_of_two() {
        return Err(corrupt(
            path,
            format!("its SQLite header is damaged (page size {page_size})"),
        ));
    }

    let conn = open_read_only(path)?;
    let read = |e: rusqlite::Error| opening_failed(path, e);
    let app_id: i32 = conn
        .pragma_query_value(None, "application_id", |r| r.get(0))
        .map_err(read)?;
    let version: i64 = conn
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .map_err(read)?;
    let tables = table_names(&conn).map_err(read)?;
    if app_id == 0 {
        // Not marked as kbench's: only a blank SQLite database is welcome.
        if version == 0 && tables.is_empty() {
            return Ok(());
        }
        let what = if tables.is_empty() {
            format!("schema version {version} but no kbench mark")
        } else {
            format!("its tables: {}", tables.join(", "))
        };
        return Err(corrupt(
            path,
            format!("it is another application's SQLite database ({what})"),
        ));
    }
    if app_id != APPLICATION_ID {
        return Err(corrupt(
            path,
            format!("it is another application's SQLite database (application id {app_id:#x})"),
        ));
    }
    if version > SCHEMA_VERSION {
        return Err(too_new(
            &path.display().to_string(),
            version,
            SCHEMA_VERSION,
        ));
    }
    let problems = if deep {
        quick_check(&conn).map_err(read)?
    } else {
        Vec::new()
    };
    if !problems.is_empty() {
        return Err(corrupt(
            path,
            format!("SQLite's integrity check failed: {}", problems.join("; ")),
        ));
    }
    // Samples were rows of `samples` before version 10.
    let samples = if version >= BLOCKS_VERSION {
        "sample_blocks"
    } else {
        "samples"
    };
    let missing = TABLES
        .iter()
        .chain([&samples])
        .find(|t| !tables.iter().any(|have| have == *t));
    match missing {
        Some(table) if version >= 1 => Err(corrupt(
            path,
            format!("the kbench table {table} is missing"),
        )),
        _ => Ok(()),
    }
}

/// A connection that cannot write. Without a `-wal` file beside the
/// database nobody has it open in WAL mode, so `immutable=1` reads the file
/// alone and creates no `-wal`/`-shm`; with one, a plain read-only
/// connection sees the log's committed pages too.
fn open_read_only(path: &Path) -> Result<Connection> {
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = if PathBuf::from(wal).exists() {
        Connection::open_with_flags(path, flags)
    } else {
        Connection::open_with_flags(immutable_uri(path), flags | OpenFlags::SQLITE_OPEN_URI)
    }
    .map_err(|e| opening_failed(path, e))?;
    conn.busy_timeout(BUSY_TIMEOUT)
        .map_err(|e| opening_failed(path, e))?;
    Ok(conn)
}

/// `file:` URI of `path` with `immutable=1`; every byte but unreserved ones
/// and `/` is percent-encoded.
fn immutable_uri(path: &Path) -> String {
    let bytes = path.as_os_str().as_encoded_bytes();
    // An empty authority keeps a path starting with "//" from being a host.
    let mut uri = String::from(if bytes.starts_with(b"/") {
        "file://"
    } else {
        "file:"
    });
    for &byte in bytes {
        if byte.is_ascii_alphanumeric() || b"/-._~".contains(&byte) {
            uri.push(char::from(byte));
        } else {
            let _ = write!(uri, "%{byte:02X}");
        }
    }
    uri.push_str("?immutable=1");
    uri
}

fn table_names(conn: &Connection) -> rusqlite::Result<Vec<String>> {
    let mut stmt = conn.prepare(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' \
         ORDER BY name",
    )?;
    stmt.query_map([], |row| row.get(0))?.collect()
}

/// `PRAGMA quick_check`'s first complaints, one a line, empty when the file
/// is sound.
fn quick_check(conn: &Connection) -> rusqlite::Result<Vec<String>> {
    let mut stmt = conn.prepare("PRAGMA quick_check(3)")?;
    let rows: Vec<String> = stmt
        .query_map([], |row| row.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    // A row may hold several lines, the first naming the schema ("*** in
    // database main ***").
    Ok(rows
        .iter()
        .flat_map(|row| row.lines())
        .filter(|line| *line != "ok" && !line.starts_with("***"))
        .map(str::to_string)
        .collect())
}

/// WAL lets readers go on while a run writes. synchronous=NORMAL in WAL mode
/// keeps every commit across a killed process (an OS crash or a power cut
/// can lose the last commits) at a fraction of FULL's cost; `durable`
/// (FULL) syncs the log at every commit, so a commit survives those too.
fn configure(conn: &Connection, path: &Path, durable: bool) -> Result<()> {
    let failed = |e| opening_failed(path, e);
    conn.busy_timeout(BUSY_TIMEOUT).map_err(failed)?;
    if conn.is_readonly(rusqlite::MAIN_DB).map_err(failed)? {
        return Err(open_error(
            path,
            "the file is read-only; make it writable or choose another with --db",
        ));
    }
    let mode: String = conn
        .pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get(0))
        .map_err(failed)?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(open_error(
            path,
            &format!(
                "SQLite cannot keep a write-ahead log there (journal mode stays {mode}); \
                 put the database on a local file system"
            ),
        ));
    }
    let synchronous = if durable { "FULL" } else { "NORMAL" };
    conn.pragma_update(None, "synchronous", synchronous)
        .map_err(failed)?;
    conn.pragma_update(None, "foreign_keys", true)
        .map_err(failed)?;
    // A page cache of up to 64 MiB (SQLite's default is 2 MiB), taken only
    // as pages are read: an import of millions of samples inserts into
    // every test's part of the samples index at each identifier, and with
    // a small cache reads each of its pages back from disk every time.
    conn.pragma_update(None, "cache_size", -65536)
        .map_err(failed)?;
    Ok(())
}

/// Applies the missing migrations in one transaction, then marks the file
/// with the schema version and kbench's application id.
fn migrate(conn: &mut Connection, path: &Path) -> Result<()> {
    let failed = |e| opening_failed(path, e);
    let version = |conn: &Connection| -> Result<i64> {
        conn.pragma_query_value(None, "user_version", |r| r.get(0))
            .map_err(failed)
    };
    // Up to date is the common case: no write lock for it.
    if version(conn)? == SCHEMA_VERSION {
        return Ok(());
    }
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(failed)?;
    let found = version(&tx)?;
    let db = path.display().to_string();
    let migrating = |e| migration_failed(&db, found, SCHEMA_VERSION, e);
    for (version, script) in (found + 1..).zip(pending(&db, found, MIGRATIONS)?) {
        tx.execute_batch(script).map_err(migrating)?;
        if version == BLOCKS_VERSION {
            pack_sample_rows(&tx).map_err(migrating)?;
        }
    }
    tx.pragma_update(None, "user_version", SCHEMA_VERSION)
        .map_err(migrating)?;
    tx.pragma_update(None, "application_id", APPLICATION_ID)
        .map_err(migrating)?;
    tx.commit().map_err(migrating)
}

/// Packs the rows of version 9's `samples` into `sample_blocks`, in parts
/// per run and test in row id (measurement) order, then drops `samples`.
fn pack_sample_rows(conn: &Connection) -> rusqlite::Result<()> {
    let mut insert = conn.prepare(
        "INSERT INTO sample_blocks (run_id, test_id, part, samples) VALUES (?1, ?2, ?3, ?4)",
    )?;
    let mut store = |run: i64, test: i64, bytes: Vec<u8>| -> rusqlite::Result<()> {
        for block in parts(run, test, bytes) {
            insert.execute(rusqlite::params![
                block.run,
                block.test,
                block.part,
                block.samples
            ])?;
        }
        Ok(())
    };
    let mut read = conn.prepare(
        "SELECT run_id, test_id, round, value, iterations, at_ms FROM samples \
         ORDER BY run_id, test_id, id",
    )?;
    let mut rows = read.query([])?;
    let mut block: Option<(i64, i64, Vec<u8>)> = None;
    while let Some(row) = rows.next()? {
        let sample = SampleRow {
            run: row.get(0)?,
            test: row.get(1)?,
            round: row.get(2)?,
            value: row.get(3)?,
            iterations: row.get(4)?,
            at_ms: row.get(5)?,
        };
        match &mut block {
            Some((run, test, bytes)) if (*run, *test) == (sample.run, sample.test) => {
                pack(&sample, bytes);
            }
            _ => {
                if let Some((run, test, bytes)) = block.take() {
                    store(run, test, bytes)?;
                }
                let mut bytes = Vec::new();
                pack(&sample, &mut bytes);
                block = Some((sample.run, sample.test, bytes));
            }
        }
    }
    if let Some((run, test, bytes)) = block {
        store(run, test, bytes)?;
    }
    drop(rows);
    drop(read);
    conn.execute_batch("DROP TABLE samples")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn synchronous(conn: &Connection) -> i64 {
        conn.pragma_query_value(None, "synchronous", |r| r.get(0))
            .unwrap()
    }

    #[test]
    fn the_server_syncs_every_commit_and_local_runs_in_normal_mode() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.db");
        // SQLite's numbers: 1 NORMAL, 2 FULL.
        assert_eq!(synchronous(&open(&path, Opening::LOCAL).unwrap()), 1);
        assert_eq!(synchronous(&open(&path, Opening::SERVER).unwrap()), 2);
    }

    /// A kbench database that only `quick_check` finds damaged: a NULL in
    /// a column its schema (rewritten behind SQLite's back) says NOT NULL.
    fn damaged_inside(path: &Path) {
        let conn = open(path, Opening::LOCAL).unwrap();
        conn.execute_batch(
            "CREATE TABLE extra (a); INSERT INTO extra VALUES (NULL);
             PRAGMA writable_schema = ON;
             UPDATE sqlite_master SET sql = 'CREATE TABLE extra (a NOT NULL)' WHERE name = 'extra';
             PRAGMA writable_schema = OFF;",
        )
        .unwrap();
    }

    #[test]
    fn the_whole_file_check_runs_only_when_asked() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.db");
        damaged_inside(&path);
        let checked = open(&path, Opening::SERVER).unwrap_err();
        assert!(
            matches!(&checked, StoreError::Corrupt { reason, .. } if reason.contains("integrity")),
            "{checked:?}"
        );
        let unchecked = Opening {
            check: false,
            ..Opening::SERVER
        };
        open(&path, unchecked).unwrap();
        // The reading commands do not read the whole file to answer a
        // narrow question: what they read is checked as SQLite reads it.
        open(&path, Opening::EXISTING).unwrap();
    }

    /// The samples' table is looked for under the name of the file's
    /// version: a version-10 file without `sample_blocks` is damaged.
    #[test]
    fn a_store_without_its_samples_table_is_damaged() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.db");
        open(&path, Opening::LOCAL)
            .unwrap()
            .execute_batch("DROP TABLE sample_blocks")
            .unwrap();
        let err = open(&path, Opening::LOCAL).unwrap_err();
        assert!(
            matches!(&err, StoreError::Corrupt { reason, .. } if reason.contains("sample_blocks")),
            "{err:?}"
        );
    }

    #[test]
    fn reading_a_missing_or_empty_file_creates_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("no").join("such").join("x.db");
        let err = open(&path, Opening::EXISTING).unwrap_err();
        assert!(
            err.to_string()
                .contains("there is no kbench database there"),
            "{err}"
        );
        assert!(!dir.path().join("no").exists());
        let empty = dir.path().join("empty.db");
        std::fs::write(&empty, b"").unwrap();
        open(&empty, Opening::EXISTING).unwrap_err();
        assert_eq!(std::fs::metadata(&empty).unwrap().len(), 0);
    }

    #[test]
    fn uri_escapes_special_bytes() {
        assert_eq!(
            immutable_uri(Path::new("/a b/x?#%.db")),
            "file:///a%20b/x%3F%23%25.db?immutable=1"
        );
        assert_eq!(
            immutable_uri(Path::new("rel/x.db")),
            "file:rel/x.db?immutable=1"
        );
    }
}
