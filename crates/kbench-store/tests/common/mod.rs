//! What the store tests share: a throwaway database of either kind, and
//! the records they write.
//!
//! PostgreSQL tests run when `KBENCH_TEST_POSTGRES_URL` names a database
//! (`.ci/postgres.sh` starts one); each test gets a schema of its own there,
//! chosen through the URL's search_path and dropped afterwards. Without the
//! variable they are skipped, except under `CI=true`, where they fail: CI
//! must exercise PostgreSQL.

#![allow(dead_code)] // each test binary uses its own subset

use kbench_model::{Direction, Sample, SystemSnapshot, TestKey, TestSpec};
use kbench_store::{
    Database, JobSpec, Location, RunInfo, StoreError, TestOutcome, TestOutcomeKind,
};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};

/// The schema version this build writes.
pub const SCHEMA_VERSION: i64 = 12;

/// What schema version 12 added (campaigns, runs' abort time), dropped
/// again: a database as version 11 left it. Every older version's undoing
/// starts with it.
pub const UNDO_V12: &str = "DROP TABLE campaigns; ALTER TABLE runs DROP COLUMN aborted_at_ms;";

/// What schema version 11 added (host calibrations), dropped again: a
/// database as version 10 left it, after [`UNDO_V12`].
pub const UNDO_V11: &str = "DROP TABLE calibration_drifts; DROP TABLE calibrations;";

/// What schema version 9 added (each run's sample count), dropped again:
/// a database as version 8 left it.
pub const UNDO_V9: &str = "ALTER TABLE runs DROP COLUMN sample_count;";

/// What schema version 7 added (indexes), dropped again: a database as
/// version 6 left it.
pub const UNDO_V7: &str = "DROP INDEX identifiers_by_set; DROP INDEX tests_by_set;";

/// What schema version 6 added, dropped again: a database as version 5
/// left it.
pub const UNDO_V6: &str = "ALTER TABLE result_sets DROP COLUMN title; \
                           ALTER TABLE result_sets DROP COLUMN description; \
                           ALTER TABLE identifiers DROP COLUMN factors_json;";

/// The number of samples in a row of `sample_blocks` (32 bytes each), as
/// SQL both databases read (an integer, whose SUM is a BIGINT).
pub const SAMPLES_IN_BLOCK: &str = "LENGTH(samples) / 32";

pub const POSTGRES_ENV: &str = "KBENCH_TEST_POSTGRES_URL";

/// A database for one test, removed when dropped.
pub struct TestDb {
    /// What `--db` would be given: a path or a URL.
    pub location: String,
    kind: Kind,
}

enum Kind {
    Sqlite {
        path: PathBuf,
        _dir: tempfile::TempDir,
    },
    Postgres {
        /// The server's database, without this test's search_path.
        base: String,
        schema: String,
    },
}

/// The server's URL, `None` (skip) outside CI when unset.
pub fn postgres_url() -> Option<String> {
    match std::env::var(POSTGRES_ENV) {
        Ok(url) if !url.is_empty() => Some(url),
        _ if std::env::var("CI").as_deref() == Ok("true") => panic!(
            "CI=true but {POSTGRES_ENV} is unset: CI must test the PostgreSQL store; \
             .ci/run starts a server with .ci/postgres.sh"
        ),
        _ => {
            eprintln!(
                "skipped: set {POSTGRES_ENV} (e.g. bash .ci/postgres.sh cargo test) to test PostgreSQL"
            );
            None
        }
    }
}

/// A plain client on `url`, to set up what the store would not write.
pub fn client(url: &str) -> postgres::Client {
    postgres::Client::connect(url, postgres::NoTls)
        .unwrap_or_else(|e| panic!("cannot connect to {}: {e}", kbench_store::redact(url)))
}

/// A name no other test (in this or another process) uses.
pub fn unique_name(prefix: &str) -> String {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    format!(
        "{prefix}_{}_{}_{nanos}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// `url` with `key=value` added to its query.
pub fn with_param(url: &str, key: &str, value: &str) -> String {
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}{key}={value}")
}

impl TestDb {
    pub fn sqlite() -> TestDb {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nested/dir/results.db");
        TestDb {
            location: path.display().to_string(),
            kind: Kind::Sqlite { path, _dir: dir },
        }
    }

    /// A fresh schema in the test server's database; `None` to skip.
    pub fn postgres() -> Option<TestDb> {
        let base = postgres_url()?;
        let schema = unique_name("kbt");
        client(&base)
            .batch_execute(&format!("CREATE SCHEMA {schema}"))
            .unwrap();
        Some(TestDb {
            location: with_param(&base, "options", &format!("-csearch_path%3D{schema}")),
            kind: Kind::Postgres { base, schema },
        })
    }

    /// Another empty database of the same kind; `None` to skip.
    pub fn another(&self) -> Option<TestDb> {
        match self.kind {
            Kind::Sqlite { .. } => Some(TestDb::sqlite()),
            Kind::Postgres { .. } => TestDb::postgres(),
        }
    }

    pub fn is_postgres(&self) -> bool {
        matches!(self.kind, Kind::Postgres { .. })
    }

    pub fn try_open(&self) -> Result<Box<dyn Database>, StoreError> {
        Location::parse(&self.location)?.open()
    }

    /// Opens the store, as a new kbench process would.
    pub fn open(&self) -> Box<dyn Database> {
        self.try_open()
            .unwrap_or_else(|e| panic!("cannot open {}: {e}", self.location))
    }

    /// Runs SQL on the database behind the store's back.
    pub fn raw(&self, sql: &str) {
        match &self.kind {
            Kind::Sqlite { path, .. } => rusqlite::Connection::open(path)
                .unwrap()
                .execute_batch(sql)
                .unwrap(),
            Kind::Postgres { .. } => client(&self.location).batch_execute(sql).unwrap(),
        }
    }

    /// What schema version 10 changed, undone: every block of
    /// `sample_blocks` unpacked into a row of version 9's `samples` (in
    /// run, test and block order), and `sample_blocks` dropped.
    pub fn undo_v10(&self) {
        let id = match self.kind {
            Kind::Sqlite { .. } => "id INTEGER PRIMARY KEY",
            Kind::Postgres { .. } => "id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY",
        };
        let blocks: Vec<(i64, i64, Vec<u8>)> = {
            let sql =
                "SELECT run_id, test_id, samples FROM sample_blocks ORDER BY run_id, test_id, part";
            match &self.kind {
                Kind::Sqlite { path, .. } => rusqlite::Connection::open(path)
                    .unwrap()
                    .prepare(sql)
                    .unwrap()
                    .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
                    .unwrap()
                    .map(Result::unwrap)
                    .collect(),
                Kind::Postgres { .. } => client(&self.location)
                    .query(sql, &[])
                    .unwrap()
                    .iter()
                    .map(|r| (r.get(0), r.get(1), r.get(2)))
                    .collect(),
            }
        };
        self.raw(&format!(
            "CREATE TABLE samples ({id}, run_id BIGINT NOT NULL, test_id BIGINT NOT NULL, \
             round BIGINT NOT NULL, value DOUBLE PRECISION NOT NULL, \
             iterations BIGINT NOT NULL, at_ms BIGINT NOT NULL); \
             CREATE INDEX samples_by_test_run ON samples (test_id, run_id); \
             CREATE INDEX samples_by_run_round ON samples (run_id, round); \
             DROP TABLE sample_blocks;"
        ));
        let insert = "INSERT INTO samples (run_id, test_id, round, value, iterations, at_ms) \
                      VALUES ($1, $2, $3, $4, $5, $6)";
        let mut sqlite = match &self.kind {
            Kind::Sqlite { path, .. } => Some(rusqlite::Connection::open(path).unwrap()),
            Kind::Postgres { .. } => None,
        };
        let mut pg = sqlite.is_none().then(|| client(&self.location));
        for (run, test, bytes) in blocks {
            for sample in bytes.chunks_exact(32) {
                let field =
                    |i: usize| i64::from_be_bytes(sample[8 * i..8 * i + 8].try_into().unwrap());
                let (round, value, iterations, at_ms) = (
                    field(0),
                    f64::from_bits(field(1) as u64),
                    field(2),
                    field(3),
                );
                if let Some(conn) = &mut sqlite {
                    conn.execute(
                        insert,
                        rusqlite::params![run, test, round, value, iterations, at_ms],
                    )
                    .unwrap();
                }
                if let Some(client) = &mut pg {
                    client
                        .execute(insert, &[&run, &test, &round, &value, &iterations, &at_ms])
                        .unwrap();
                }
            }
        }
    }

    /// What schema version 8 changed, undone: a database as version 7
    /// left it, its samples with their foreign keys (SQLite: the table made
    /// again, as version 8 does).
    pub fn undo_v8(&self) -> &'static str {
        match self.kind {
            Kind::Sqlite { .. } => {
                "CREATE TABLE samples_v7 (\
                     id INTEGER PRIMARY KEY, \
                     run_id BIGINT NOT NULL REFERENCES runs (id), \
                     test_id BIGINT NOT NULL REFERENCES tests (id), \
                     round INTEGER NOT NULL, value DOUBLE PRECISION NOT NULL, \
                     iterations BIGINT NOT NULL, at_ms BIGINT NOT NULL); \
                 INSERT INTO samples_v7 SELECT * FROM samples; \
                 DROP TABLE samples; \
                 ALTER TABLE samples_v7 RENAME TO samples; \
                 CREATE INDEX samples_by_test_run ON samples (test_id, run_id); \
                 CREATE INDEX samples_by_run_round ON samples (run_id, round);"
            }
            Kind::Postgres { .. } => {
                "ALTER TABLE samples \
                 ADD CONSTRAINT samples_run_id_fkey FOREIGN KEY (run_id) REFERENCES runs (id), \
                 ADD CONSTRAINT samples_test_id_fkey FOREIGN KEY (test_id) REFERENCES tests (id);"
            }
        }
    }

    /// The foreign keys of the samples' table (none since version 8):
    /// `samples` up to version 9, `sample_blocks` since.
    pub fn sample_foreign_keys(&self) -> i64 {
        ["samples", "sample_blocks"]
            .iter()
            .map(|table| {
                self.count(&match self.kind {
                    Kind::Sqlite { .. } => {
                        format!("SELECT COUNT(*) FROM pragma_foreign_key_list('{table}')")
                    }
                    Kind::Postgres { .. } => format!(
                        "SELECT COUNT(*) FROM pg_constraint \
                         WHERE conrelid = to_regclass('{table}') AND contype = 'f'"
                    ),
                })
            })
            .sum()
    }

    /// The one integer `sql` returns, read behind the store's back.
    pub fn count(&self, sql: &str) -> i64 {
        match &self.kind {
            Kind::Sqlite { path, .. } => rusqlite::Connection::open(path)
                .unwrap()
                .query_row(sql, [], |r| r.get(0))
                .unwrap(),
            Kind::Postgres { .. } => client(&self.location).query_one(sql, &[]).unwrap().get(0),
        }
    }

    /// Blocks of samples whose run or test is gone (none, ever).
    pub fn orphan_samples(&self) -> i64 {
        self.count(
            "SELECT COUNT(*) FROM sample_blocks s WHERE NOT EXISTS \
             (SELECT 1 FROM runs r WHERE r.id = s.run_id) OR NOT EXISTS \
             (SELECT 1 FROM tests t WHERE t.id = s.test_id)",
        )
    }

    /// How many samples are stored, read from their blocks behind the
    /// store's back.
    pub fn stored_samples(&self) -> i64 {
        self.count(&format!(
            "SELECT COALESCE(SUM({SAMPLES_IN_BLOCK}), 0) FROM sample_blocks"
        ))
    }

    /// The schema version the database records.
    pub fn schema_version(&self) -> i64 {
        match &self.kind {
            Kind::Sqlite { path, .. } => rusqlite::Connection::open(path)
                .unwrap()
                .pragma_query_value(None, "user_version", |r| r.get(0))
                .unwrap(),
            Kind::Postgres { .. } => client(&self.location)
                .query_one(
                    "SELECT COALESCE(MAX(version), 0)::bigint FROM kbench_schema_version",
                    &[],
                )
                .unwrap()
                .get(0),
        }
    }

    /// Makes the database claim schema version `version`.
    pub fn set_schema_version(&self, version: i64) {
        match &self.kind {
            Kind::Sqlite { path, .. } => rusqlite::Connection::open(path)
                .unwrap()
                .pragma_update(None, "user_version", version)
                .unwrap(),
            Kind::Postgres { .. } => self.raw(&format!(
                "DELETE FROM kbench_schema_version WHERE version > {version}; \
                 INSERT INTO kbench_schema_version VALUES ({version}, 0, 'test') \
                 ON CONFLICT DO NOTHING"
            )),
        }
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        if let Kind::Postgres { base, schema } = &self.kind {
            // Best effort: a leftover schema in a throwaway server is harmless.
            if let Ok(mut client) = postgres::Client::connect(base, postgres::NoTls) {
                let _ = client.batch_execute(&format!("DROP SCHEMA {schema} CASCADE"));
            }
        }
    }
}

/// A store at `location` on a thread of its own, doing `work` there.
pub fn on_thread<T: Send + 'static>(
    location: &str,
    work: impl FnOnce(&mut dyn kbench_store::Database) -> T + Send + 'static,
) -> std::thread::JoinHandle<T> {
    let location = location.to_string();
    std::thread::spawn(move || work(Location::parse(&location).unwrap().open().unwrap().as_mut()))
}

/// Whether `handle`'s thread is still blocked after a while.
pub fn still_waiting<T>(handle: &std::thread::JoinHandle<T>) -> bool {
    std::thread::sleep(std::time::Duration::from_millis(500));
    !handle.is_finished()
}

/// Runs each named test function (taking `&TestDb`) once per backend, as
/// `sqlite::NAME` and `postgres::NAME`.
#[allow(unused_macros)]
macro_rules! on_both_backends {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[test]
                fn $name() {
                    super::$name(&crate::common::TestDb::sqlite());
                }
            )*
        }
        mod postgres {
            $(
                #[test]
                fn $name() {
                    if let Some(db) = crate::common::TestDb::postgres() {
                        super::$name(&db);
                    }
                }
            )*
        }
    };
}

pub fn snapshot(kernel: &str) -> SystemSnapshot {
    SystemSnapshot {
        hostname: "bench1".into(),
        kernel_release: kernel.into(),
        kernel_cmdline: "quiet mitigations=auto".into(),
        vulnerabilities: [(
            "spectre_v2".to_string(),
            "Mitigation: Retpolines".to_string(),
        )]
        .into(),
        cpu_model: "AMD EPYC 7B13".into(),
        cpus_online: 2,
        threads_per_core: 2,
        cpu_mhz: 2994.3720000001,
        steal_percent: Some(0.1 + 0.2),
        memory_total_kib: 24 * 1024 * 1024,
        ..SystemSnapshot::default()
    }
}

pub fn info(kernel: &str, started_at_ms: i64) -> RunInfo {
    RunInfo {
        snapshot: snapshot(kernel),
        host: Some(snapshot("host-6.1")),
        wrapper: Some("taskset -c 1".into()),
        tool_version: "0.1.0".into(),
        notes: vec!["emulated".into()],
        started_at_ms,
        pid: 4242,
        uid: None,
    }
}

pub fn spec(text: &str, unit: &str, direction: Direction) -> TestSpec {
    TestSpec {
        key: TestKey::parse(text).unwrap(),
        unit: unit.into(),
        direction,
    }
}

pub fn sample(value: f64, at_ms: i64, round: u32) -> Sample {
    Sample {
        value,
        iterations: 1000,
        at_ms,
        round,
    }
}

pub fn outcome(spec: &TestSpec, kind: TestOutcomeKind) -> TestOutcome {
    TestOutcome {
        test: spec.key.clone(),
        kind,
        detail: format!("{} stopped", spec.key),
    }
}

/// A job of the quick suite on Debian 6.12 into `set`, with `tags`.
pub fn job(set: &str, tags: &[&str]) -> JobSpec {
    JobSpec {
        set: set.into(),
        identifier: "6.18 stock".into(),
        names: vec!["quick".into()],
        kernel: Some("debian:6.12".into()),
        rounds: 3,
        max_time: Some(0.5),
        tags: tags.iter().map(|t| t.to_string()).collect(),
    }
}
