//! The shared store: a PostgreSQL database, reached with the synchronous
//! `postgres` client (the store's role traits are synchronous). The
//! store's logic and SQL are the SQLite store's (`engine/`);
//! this file connects, migrates and runs the statements.
//!
//! Schema: `postgres/schema_v*.sql`, the SQLite scripts in PostgreSQL's
//! dialect, one migration per version. `kbench_schema_version` holds a row
//! per applied version; a database at a newer version than this build's is
//! refused (`TooNew`) and left as it is. Migrations run in one transaction
//! under an advisory lock, so two kbench processes opening a new database
//! at once do not both create the tables.
//!
//! Durability: every write commits before it returns (autocommit for one
//! statement, a short transaction otherwise; `import` in one transaction),
//! so a killed run keeps each sample whose `add_sample` returned.
//!
//! No TLS (`NoTls`): the lab's server is on loopback or a trusted network,
//! and a TLS stack (OpenSSL through native-tls, or rustls with its crypto
//! backend) would be the largest dependency of the binary for it. A URL
//! asking for `sslmode=require` gets an `Open` error saying so; reach a
//! remote server through an SSH tunnel.

use crate::StoreError;
use crate::engine::{
    DbError, Fail, Param, Res, Row, SampleBlock, Sql, TABLES, args, first_int, migration_failed,
    pending,
};
use crate::location::PostgresUrl;
use kbench_model::now_ms;
use postgres::binary_copy::BinaryCopyInWriter;
use postgres::error::SqlState;
use postgres::fallible_iterator::FallibleIterator;
use postgres::types::{ToSql, Type};
use postgres::{Client, NoTls, Statement};
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// Scripts that bring the schema from version `i` to `i + 1`, in order:
/// the same migrations as SQLite's, in PostgreSQL's dialect.
const MIGRATIONS: &[&str] = &[
    include_str!("postgres/schema_v1.sql"),
    include_str!("postgres/schema_v2.sql"),
    include_str!("postgres/schema_v3.sql"),
    include_str!("postgres/schema_v4.sql"),
    include_str!("postgres/schema_v5.sql"),
    include_str!("postgres/schema_v6.sql"),
    include_str!("postgres/schema_v7.sql"),
    include_str!("postgres/schema_v8.sql"),
    include_str!("postgres/schema_v9.sql"),
    include_str!("postgres/schema_v10.sql"),
    include_str!("postgres/schema_v11.sql"),
    include_str!("postgres/schema_v12.sql"),
];

const _: () = assert!(
    MIGRATIONS.len() == crate::sqlite::MIGRATIONS.len(),
    "every schema version exists in both dialects"
);

const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// The table of applied schema versions, made before the first migration.
const VERSION_TABLE: &str = "CREATE TABLE kbench_schema_version (
    version        BIGINT PRIMARY KEY,
    applied_at_ms  BIGINT NOT NULL,
    kbench_version TEXT   NOT NULL
)";

/// The advisory lock migrations hold ("kbnc", as SQLite's application id).
const MIGRATION_LOCK: i64 = 0x6B62_6E63;

/// Results in a PostgreSQL database.
pub struct PostgresStore {
    client: Client,
    url: PostgresUrl,
    /// Prepared statements by their SQL text (in `?N` form).
    statements: HashMap<String, Statement>,
    /// An operation met a lost connection: reconnect before the next one.
    lost: bool,
    /// When an operation last began, to check a connection left idle.
    last_used: Instant,
}

/// A connection idle this long is checked (an empty query) before use: the
/// server may have closed it meanwhile (a restart), and finding out before
/// the operation rather than failing it costs one round trip.
const IDLE_CHECK: Duration = Duration::from_millis(100);
/// How long that check waits for the server's answer before reconnecting.
const CHECK_TIMEOUT: Duration = Duration::from_secs(10);

impl std::fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresStore")
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

impl PostgresStore {
    /// Connects to the database at `url` (`postgres://...`), creating the
    /// tables in an empty database and migrating an older schema.
    pub fn open(url: &str) -> crate::Result<PostgresStore> {
        Self::connect(&PostgresUrl::parse(url)?)
    }

    /// [`PostgresStore::open`] for a checked URL. An unreachable server, a
    /// missing database or refused credentials are `Open` errors naming the
    /// URL without its password and what to do; a database holding tables
    /// named like kbench's that are not is `Corrupt`; a newer schema is
    /// `TooNew`.
    pub fn connect(url: &PostgresUrl) -> crate::Result<PostgresStore> {
        let mut client = url
            .config()
            .connect(NoTls)
            .map_err(|err| connect_error(url.shown(), &err))?;
        migrate(&mut client, url.shown())?;
        Ok(PostgresStore {
            client,
            url: url.clone(),
            statements: HashMap::new(),
            lost: false,
            last_used: Instant::now(),
        })
    }

    /// The URL (its `Display` hides the password).
    pub fn url(&self) -> &PostgresUrl {
        &self.url
    }

    /// The prepared statement for `sql`, prepared on first use.
    fn statement(&mut self, sql: &str) -> Res<Statement> {
        if let Some(statement) = self.statements.get(sql) {
            return Ok(statement.clone());
        }
        let prepared = self.client.prepare(&dollar_params(sql));
        let statement = self.noting_loss(prepared)?;
        self.statements.insert(sql.to_string(), statement.clone());
        Ok(statement)
    }

    /// Passes `result` on, remembering when it says the connection is gone.
    fn noting_loss<T>(&mut self, result: Result<T, postgres::Error>) -> Res<T> {
        result.map_err(|err| {
            self.lost |= connection_lost(&err);
            err.into()
        })
    }

    fn batch(&mut self, sql: &str) -> Res<()> {
        let done = self.client.batch_execute(sql);
        self.noting_loss(done)
    }
}

/// `?1` -> `$1`: the engine's SQLite-style parameters in PostgreSQL's form.
fn dollar_params(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '?' && chars.peek().is_some_and(char::is_ascii_digit) {
            out.push('$');
        } else {
            out.push(c);
        }
    }
    out
}

/// A parameter as the Rust type the statement's parameter type takes.
enum Typed<'a> {
    I64(Option<i64>),
    I32(Option<i32>),
    F64(Option<f64>),
    Text(Option<&'a str>),
    Bytes(Option<&'a [u8]>),
}

impl Typed<'_> {
    fn as_sql(&self) -> &(dyn ToSql + Sync) {
        match self {
            Typed::I64(value) => value,
            Typed::I32(value) => value,
            Typed::F64(value) => value,
            Typed::Text(value) => value,
            Typed::Bytes(value) => value,
        }
    }
}

fn typed<'a>(param: Param<'a>, ty: &Type) -> Res<Typed<'a>> {
    let wrong = || {
        Fail::Store(StoreError::Database(format!(
            "a {ty} parameter was given {param:?}; this is a kbench bug"
        )))
    };
    let int = || match param {
        Param::Null => Ok(None),
        Param::Int(value) => Ok(Some(value)),
        _ => Err(wrong()),
    };
    Ok(if *ty == Type::INT8 {
        Typed::I64(int()?)
    } else if *ty == Type::INT4 {
        Typed::I32(int()?.map(i32::try_from).transpose().map_err(|_| wrong())?)
    } else if *ty == Type::FLOAT8 {
        Typed::F64(match param {
            Param::Null => None,
            Param::Real(value) => Some(value),
            Param::Int(value) => Some(value as f64),
            Param::Text(_) | Param::Blob(_) => return Err(wrong()),
        })
    } else if *ty == Type::BYTEA {
        Typed::Bytes(match param {
            Param::Null => None,
            Param::Blob(bytes) => Some(bytes),
            _ => return Err(wrong()),
        })
    } else {
        Typed::Text(match param {
            Param::Null => None,
            Param::Text(text) => Some(text),
            _ => return Err(wrong()),
        })
    })
}

/// The parameters typed after the prepared statement's parameter types.
fn bind<'a>(statement: &Statement, args: &[Param<'a>]) -> Res<Vec<Typed<'a>>> {
    args.iter()
        .zip(statement.params())
        .map(|(param, ty)| typed(*param, ty))
        .collect()
}

impl Row for postgres::Row {
    fn int(&self, column: usize) -> Res<Option<i64>> {
        let int4 = self
            .columns()
            .get(column)
            .is_some_and(|c| *c.type_() == Type::INT4);
        Ok(if int4 {
            self.try_get::<_, Option<i32>>(column)?.map(i64::from)
        } else {
            self.try_get(column)?
        })
    }

    fn real(&self, column: usize) -> Res<Option<f64>> {
        Ok(self.try_get(column)?)
    }

    fn text(&self, column: usize) -> Res<Option<String>> {
        Ok(self.try_get(column)?)
    }

    fn blob(&self, column: usize) -> Res<Option<Vec<u8>>> {
        Ok(self.try_get(column)?)
    }
}

impl Sql for PostgresStore {
    fn name(&self) -> &str {
        self.url.shown()
    }

    /// Reconnects after a lost connection (a server restart), found by an
    /// earlier operation or by checking a connection idle for [`IDLE_CHECK`];
    /// prepared statements are prepared again on the new one.
    fn ready(&mut self) -> Res<()> {
        if !self.lost && self.last_used.elapsed() >= IDLE_CHECK {
            self.lost = self.client.is_valid(CHECK_TIMEOUT).is_err();
        }
        self.last_used = Instant::now();
        if self.lost || self.client.is_closed() {
            self.client = self
                .url
                .config()
                .connect(NoTls)
                .map_err(|err| Fail::Store(connect_error(self.url.shown(), &err)))?;
            self.statements.clear();
            self.lost = false;
        }
        Ok(())
    }

    fn execute(&mut self, sql: &str, args: &[Param]) -> Res<u64> {
        let statement = self.statement(sql)?;
        let typed = bind(&statement, args)?;
        let refs: Vec<&(dyn ToSql + Sync)> = typed.iter().map(Typed::as_sql).collect();
        let done = self.client.execute(&statement, &refs);
        self.noting_loss(done)
    }

    fn query(
        &mut self,
        sql: &str,
        args: &[Param],
        each: &mut dyn FnMut(&dyn Row) -> Res<()>,
    ) -> Res<()> {
        let statement = self.statement(sql)?;
        let typed = bind(&statement, args)?;
        let mut failed = Ok(());
        let streamed = (|| {
            let mut rows = self
                .client
                .query_raw(&statement, typed.iter().map(Typed::as_sql))?;
            while let Some(row) = rows.next()? {
                failed = each(&row);
                if failed.is_err() {
                    break;
                }
            }
            Ok(())
        })();
        self.noting_loss(streamed)?;
        failed
    }

    /// One `COPY ... FROM STDIN (FORMAT binary)`: the rows stream to the
    /// server without a statement per batch (a multi-row INSERT of 256
    /// rows binds 1,536 parameters).
    fn insert_blocks(&mut self, blocks: &[SampleBlock]) -> Res<()> {
        if blocks.is_empty() {
            return Ok(());
        }
        let copy = (|| {
            let sink = self.client.copy_in(
                "COPY sample_blocks (run_id, test_id, part, samples) FROM STDIN (FORMAT binary)",
            )?;
            let int = Type::INT8;
            let mut writer =
                BinaryCopyInWriter::new(sink, &[int.clone(), int.clone(), int, Type::BYTEA]);
            for block in blocks {
                writer.write(&[&block.run, &block.test, &block.part, &block.samples])?;
            }
            writer.finish()
        })();
        self.noting_loss(copy).map(drop)
    }

    fn begin_write(&mut self) -> Res<()> {
        self.batch("BEGIN")
    }

    fn begin_read(&mut self) -> Res<()> {
        self.batch("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
    }

    fn commit(&mut self) -> Res<()> {
        self.batch("COMMIT")
    }

    fn rollback(&mut self) -> Res<()> {
        self.batch("ROLLBACK")
    }

    /// A session-level advisory lock: held until this connection closes
    /// (the store dropped, its process dead, or the connection lost).
    fn try_lock(&mut self, key: i64) -> Res<bool> {
        let taken = first_int(
            self,
            "SELECT CASE WHEN pg_try_advisory_lock(CAST(?1 AS BIGINT)) THEN 1 ELSE 0 END",
            args![key],
        )?;
        Ok(taken == Some(1))
    }

    fn skip_locked(&self) -> &'static str {
        " FOR UPDATE SKIP LOCKED"
    }

    fn key_share(&self) -> &'static str {
        " FOR KEY SHARE"
    }

    fn describe(&self, doing: &str, err: DbError) -> StoreError {
        let (lost, text) = match err {
            DbError::Postgres(err) => (
                connection_lost(&err),
                format!("{}{}", pg_text(&err), hint(&err)),
            ),
            DbError::Sqlite(err) => (false, err.to_string()),
        };
        let message = format!("{doing} in {}: {text}", self.name());
        if lost {
            StoreError::Unavailable(message)
        } else {
            StoreError::Database(message)
        }
    }
}

/// The error with its causes (the library's own text is only its kind,
/// such as "db error"), on one line.
fn pg_text(err: &postgres::Error) -> String {
    if let Some(db) = err.as_db_error() {
        return db.to_string().replace('\n', "; ");
    }
    let mut text = err.to_string();
    let mut source = std::error::Error::source(err);
    while let Some(cause) = source {
        text.push_str(&format!(": {cause}"));
        source = cause.source();
    }
    text
}

/// Whether the connection is gone (closed, broken, or ended by the server:
/// a FATAL error such as a shutdown or an administrator's termination).
fn connection_lost(err: &postgres::Error) -> bool {
    err.is_closed()
        || err
            .as_db_error()
            .is_some_and(|db| matches!(db.severity(), "FATAL" | "PANIC"))
        || io_cause(err)
}

fn io_cause(err: &postgres::Error) -> bool {
    let mut source = std::error::Error::source(err);
    while let Some(cause) = source {
        if cause.is::<std::io::Error>() {
            return true;
        }
        source = cause.source();
    }
    false
}

/// What to do about an error, where something can be said.
fn hint(err: &postgres::Error) -> &'static str {
    if connection_lost(err) {
        "; the connection to the server was lost (kbench reconnects on its next store operation)"
    } else if err.code() == Some(&SqlState::INSUFFICIENT_PRIVILEGE) {
        "; the user lacks a privilege: make it the database's owner (createdb -O USER NAME) \
         or GRANT it what the message names"
    } else {
        ""
    }
}

/// `Open` for a failed connection, with what to do.
fn connect_error(db: &str, err: &postgres::Error) -> StoreError {
    let code = err.code();
    let io = io_cause(err);
    let text = pg_text(err);
    let what_to_do = if code == Some(&SqlState::INVALID_CATALOG_NAME) {
        "the database does not exist on that server: create it (createdb -h HOST -p PORT -U USER NAME) \
         or fix its name in the URL"
    } else if code == Some(&SqlState::INVALID_PASSWORD)
        || code == Some(&SqlState::INVALID_AUTHORIZATION_SPECIFICATION)
    {
        "the server refused these credentials: fix the user or password in the URL, or let this \
         user in through the server's pg_hba.conf"
    } else if text.contains("TLS") {
        "kbench connects without TLS: drop sslmode=require from the URL and reach the server over \
         loopback, a trusted network or an SSH tunnel"
    } else if io {
        "no PostgreSQL server answered there: start it, or fix the host and port in the URL, or \
         pass a SQLite file with --db"
    } else {
        "check the URL and that the server accepts connections from this machine"
    };
    StoreError::Open {
        db: db.to_string(),
        reason: format!("{text}; {what_to_do}"),
    }
}

/// Creates or upgrades the schema in one transaction. A database whose
/// schema (the first of its search_path) holds tables named like kbench's
/// but no `kbench_schema_version` is `Corrupt` and left alone.
fn migrate(client: &mut Client, db: &str) -> crate::Result<()> {
    let open_failed = |err: postgres::Error| StoreError::Open {
        db: db.to_string(),
        reason: format!(
            "reading its schema version: {}{}",
            pg_text(&err),
            hint(&err)
        ),
    };
    let mut tx = client.transaction().map_err(open_failed)?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .map_err(open_failed)?;
    let row = tx
        .query_one(
            "SELECT current_schema()::text, to_regclass('kbench_schema_version') IS NOT NULL",
            &[],
        )
        .map_err(open_failed)?;
    let Some(schema) = row.get::<_, Option<String>>(0) else {
        return Err(StoreError::Open {
            db: db.to_string(),
            reason:
                "its search_path names no schema that exists: create one (CREATE SCHEMA) or fix \
                     options=-csearch_path=... in the URL"
                    .into(),
        });
    };
    let versioned: bool = row.get(1);
    let found = if versioned {
        tx.query_one(
            "SELECT COALESCE(MAX(version), 0)::bigint FROM kbench_schema_version",
            &[],
        )
        .map_err(open_failed)?
        .get::<_, i64>(0)
    } else {
        let ours: Vec<String> = TABLES
            .iter()
            .chain(&[
                "samples",
                "sample_blocks",
                "bisects",
                "api_tokens",
                "pushes",
                "jobs",
                "workers",
                "calibrations",
                "calibration_drifts",
            ])
            .map(|t| format!("'{t}'"))
            .collect();
        let clash: Vec<String> = tx
            .query(
                &format!(
                    "SELECT tablename::text FROM pg_tables WHERE schemaname = $1 \
                     AND tablename IN ({}) ORDER BY 1",
                    ours.join(", ")
                ),
                &[&schema],
            )
            .map_err(open_failed)?
            .iter()
            .map(|row| row.get(0))
            .collect();
        if !clash.is_empty() {
            return Err(StoreError::Corrupt {
                db: db.to_string(),
                reason: format!(
                    "schema {schema} holds tables named like kbench's ({}) but no \
                     kbench_schema_version table, so they are another application's",
                    clash.join(", ")
                ),
            });
        }
        0
    };
    let scripts = pending(db, found, MIGRATIONS)?;
    if scripts.is_empty() {
        return Ok(());
    }
    let migrating = |err: postgres::Error| {
        migration_failed(db, found, SCHEMA_VERSION, pg_text(&err) + hint(&err))
    };
    if !versioned {
        tx.batch_execute(VERSION_TABLE).map_err(migrating)?;
    }
    for (version, script) in (found + 1..).zip(scripts) {
        tx.batch_execute(script).map_err(migrating)?;
        tx.execute(
            "INSERT INTO kbench_schema_version (version, applied_at_ms, kbench_version) \
             VALUES ($1, $2, $3)",
            &[&version, &now_ms(), &env!("CARGO_PKG_VERSION")],
        )
        .map_err(migrating)?;
    }
    tx.commit().map_err(migrating)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_become_dollar_form() {
        assert_eq!(
            dollar_params("SELECT ?1, ?12 WHERE a = '?' AND b = ?2"),
            "SELECT $1, $12 WHERE a = '?' AND b = $2"
        );
    }

    #[test]
    fn parameters_take_the_statement_types() {
        assert!(matches!(
            typed(Param::Int(3), &Type::INT8),
            Ok(Typed::I64(Some(3)))
        ));
        assert!(matches!(
            typed(Param::Int(3), &Type::INT4),
            Ok(Typed::I32(Some(3)))
        ));
        assert!(typed(Param::Int(i64::MAX), &Type::INT4).is_err());
        assert!(matches!(
            typed(Param::Null, &Type::FLOAT8),
            Ok(Typed::F64(None))
        ));
        assert!(matches!(
            typed(Param::Text("x"), &Type::TEXT),
            Ok(Typed::Text(Some("x")))
        ));
        assert!(typed(Param::Text("x"), &Type::INT8).is_err());
    }
}
