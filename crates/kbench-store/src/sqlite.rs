//! The embedded store: one SQLite file (WAL mode), schema in
//! `sqlite/schema_v1.sql` and `schema_v2.sql` (bisection state), opening
//! and migrations in `sqlite/open.rs`.
//!
//! Every write method commits before it returns (autocommit for single
//! statements, a short immediate transaction otherwise), so a killed run
//! keeps every sample whose `add_sample` returned.

mod open;

use crate::{
    IdentifierData, Result, ResultSetData, ResultSetSummary, RunId, RunInfo, RunRecord, RunStatus,
    Store, StoreError, TestId, TestOutcome, TestOutcomeKind,
};
use kbench_model::{Direction, Sample, SystemSnapshot, TestKey, TestSpec, now_ms, validate_name};
use rusqlite::{
    Connection, ErrorCode, OptionalExtension, Row, Transaction, TransactionBehavior, params,
};
use std::collections::{BTreeMap, HashMap};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Results in a SQLite database file.
#[derive(Debug)]
pub struct SqliteStore {
    conn: Connection,
    path: PathBuf,
}

impl SqliteStore {
    /// Opens the database at `path`, creating the file and its directories
    /// when missing and migrating an older schema. A file that is not a
    /// kbench database is `Corrupt` and left byte for byte as it was; one
    /// from a newer kbench is `TooNew`; a place that cannot be written is
    /// `Open`.
    pub fn open(path: &Path) -> Result<SqliteStore> {
        let conn = open::open(path)?;
        Ok(SqliteStore {
            conn,
            path: path.to_path_buf(),
        })
    }

    /// `$KBENCH_DB`, else `$XDG_DATA_HOME/kbench/results.db`, else
    /// `$HOME/.local/share/kbench/results.db` (`kbench/results.db` in the
    /// current directory when not even `HOME` is set).
    pub fn default_path() -> PathBuf {
        default_path_from(|name| std::env::var_os(name))
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Runs `f` on the connection and turns its failure into a
    /// `StoreError` naming the file and what was being done.
    fn with<T>(
        &mut self,
        doing: &str,
        f: impl FnOnce(&mut Connection, &Path) -> Res<T>,
    ) -> Result<T> {
        f(&mut self.conn, &self.path).map_err(|fail| match fail {
            Fail::Store(err) => err,
            Fail::Sql(err) => sql_error(&self.path, doing, err),
            Fail::Damaged(reason) => StoreError::Corrupt {
                path: self.path.clone(),
                reason: format!("{doing}: {reason}"),
            },
        })
    }
}

/// [`SqliteStore::default_path`] with the environment passed in.
fn default_path_from(var: impl Fn(&str) -> Option<OsString>) -> PathBuf {
    let var = |name| var(name).filter(|value| !value.is_empty());
    if let Some(db) = var("KBENCH_DB") {
        return db.into();
    }
    // The XDG spec says to ignore a relative XDG_DATA_HOME.
    let data = var("XDG_DATA_HOME")
        .map(PathBuf::from)
        .filter(|dir| dir.is_absolute())
        .or_else(|| var("HOME").map(|home| PathBuf::from(home).join(".local/share")))
        .unwrap_or_default();
    data.join("kbench").join("results.db")
}

/// Why a store operation failed, before the file's path is added.
enum Fail {
    Sql(rusqlite::Error),
    Store(StoreError),
    /// Stored data that cannot be read back (becomes `Corrupt`).
    Damaged(String),
}

type Res<T> = std::result::Result<T, Fail>;

impl From<rusqlite::Error> for Fail {
    fn from(err: rusqlite::Error) -> Fail {
        Fail::Sql(err)
    }
}

impl From<StoreError> for Fail {
    fn from(err: StoreError) -> Fail {
        Fail::Store(err)
    }
}

/// A SQLite error with the file, what was being done and, where there is
/// one, what to do about it.
fn sql_error(path: &Path, doing: &str, err: rusqlite::Error) -> StoreError {
    let hint = match err.sqlite_error_code() {
        Some(ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase) => {
            return StoreError::Corrupt {
                path: path.to_path_buf(),
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
    StoreError::Database(format!("{doing} in {}: {err}{hint}", path.display()))
}

fn check_name(what: &str, name: &str) -> Res<()> {
    validate_name(what, name).map_err(|msg| Fail::Store(StoreError::InvalidName(msg)))
}

/// Options are stored as `k=v,k=v`; a key holding `,` or `=`, or a value
/// holding `,`, could not be read back.
fn check_options(key: &TestKey) -> Res<()> {
    for (k, v) in &key.options {
        if k.contains([',', '=']) || v.contains(',') {
            return Err(Fail::Store(StoreError::InvalidName(format!(
                "option {k:?}={v:?} of benchmark {} holds ',' or '=' where the stored form \
                 k=v,k=v cannot keep it; rename the option or its value",
                key.benchmark
            ))));
        }
    }
    Ok(())
}

fn parse_options(text: &str) -> Res<BTreeMap<String, String>> {
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

/// A test's key from its `benchmark, options, metric` columns at `first`.
fn read_key(row: &Row, first: usize) -> Res<TestKey> {
    let options: String = row.get(first + 1)?;
    Ok(TestKey {
        benchmark: row.get(first)?,
        options: parse_options(&options)?,
        metric: row.get(first + 2)?,
    })
}

fn to_json<T: serde::Serialize>(value: &T) -> Res<String> {
    serde_json::to_string(value).map_err(|err| {
        Fail::Store(StoreError::Database(format!(
            "cannot encode run details as JSON: {err}"
        )))
    })
}

fn from_json<T: serde::de::DeserializeOwned>(column: &str, text: &str) -> Res<T> {
    serde_json::from_str(text)
        .map_err(|err| Fail::Damaged(format!("a run's {column} is not readable: {err}")))
}

fn to_i64(what: &str, value: u64) -> Res<i64> {
    i64::try_from(value).map_err(|_| {
        Fail::Store(StoreError::Database(format!(
            "{what} {value} is too large to store (limit {})",
            i64::MAX
        )))
    })
}

/// Reads a stored integer into a narrower or unsigned type.
fn narrow<T: TryFrom<i64>>(what: &str, value: i64) -> Res<T> {
    T::try_from(value).map_err(|_| Fail::Damaged(format!("{what} {value} is out of range")))
}

/// How many columns [`RUN_COLUMNS`] has; a query's own columns follow them.
const RUN_COLUMN_COUNT: usize = 11;

/// The columns [`read_run`] reads, after `r.`.
const RUN_COLUMNS: &str = "r.id, r.status, r.started_at_ms, r.ended_at_ms, r.pid, r.wrapper, r.tool_version, \
                           r.snapshot_json, r.host_json, r.notes_json, r.steal_percent";

/// A run from [`RUN_COLUMNS`], with its outcomes.
fn read_run(conn: &Connection, row: &Row) -> Res<RunRecord> {
    let id = RunId(row.get(0)?);
    let status: String = row.get(1)?;
    let snapshot: String = row.get(7)?;
    let host: Option<String> = row.get(8)?;
    let notes: String = row.get(9)?;
    let mut snapshot = from_json::<SystemSnapshot>("snapshot", &snapshot)?;
    if let Some(steal) = row.get::<_, Option<f64>>(10)? {
        snapshot.steal_percent = Some(steal);
    }
    Ok(RunRecord {
        id,
        status: RunStatus::parse(&status).ok_or_else(|| {
            Fail::Damaged(format!("run {} has an unknown status {status:?}", id.0))
        })?,
        info: RunInfo {
            snapshot,
            host: host
                .map(|text| from_json("host snapshot", &text))
                .transpose()?,
            wrapper: row.get(5)?,
            tool_version: row.get(6)?,
            notes: from_json("notes", &notes)?,
            started_at_ms: row.get(2)?,
            pid: narrow("pid", row.get(4)?)?,
        },
        ended_at_ms: row.get(3)?,
        outcomes: run_outcomes(conn, id)?,
    })
}

/// How each ended test of a run ended, in test order.
fn run_outcomes(conn: &Connection, run: RunId) -> Res<Vec<TestOutcome>> {
    let mut stmt = conn.prepare_cached(
        "SELECT t.benchmark, t.options, t.metric, o.kind, o.detail \
         FROM test_outcomes o JOIN tests t ON t.id = o.test_id \
         WHERE o.run_id = ?1 ORDER BY t.position",
    )?;
    let mut rows = stmt.query([run.0])?;
    let mut outcomes = Vec::new();
    while let Some(row) = rows.next()? {
        let kind: String = row.get(3)?;
        outcomes.push(TestOutcome {
            test: read_key(row, 0)?,
            kind: TestOutcomeKind::parse(&kind)
                .ok_or_else(|| Fail::Damaged(format!("unknown test outcome {kind:?}")))?,
            detail: row.get(4)?,
        });
    }
    Ok(outcomes)
}

/// The id of result set `name`, created when new.
fn ensure_set(tx: &Transaction, name: &str) -> Res<i64> {
    let found = tx
        .prepare_cached("SELECT id FROM result_sets WHERE name = ?1")?
        .query_row([name], |row| row.get(0))
        .optional()?;
    match found {
        Some(id) => Ok(id),
        None => Ok(tx
            .prepare_cached(
                "INSERT INTO result_sets (name, created_at_ms) VALUES (?1, ?2) RETURNING id",
            )?
            .query_row(params![name, now_ms()], |row| row.get(0))?),
    }
}

fn find_identifier(tx: &Transaction, set_id: i64, name: &str) -> Res<Option<i64>> {
    Ok(tx
        .prepare_cached("SELECT id FROM identifiers WHERE set_id = ?1 AND name = ?2")?
        .query_row(params![set_id, name], |row| row.get(0))
        .optional()?)
}

/// Adds an identifier after the set's last one.
fn insert_identifier(tx: &Transaction, set_id: i64, name: &str) -> Res<i64> {
    Ok(tx
        .prepare_cached(
            "INSERT INTO identifiers (set_id, name, position) \
             VALUES (?1, ?2, (SELECT COALESCE(MAX(position) + 1, 0) FROM identifiers WHERE set_id = ?1)) \
             RETURNING id",
        )?
        .query_row(params![set_id, name], |row| row.get(0))?)
}

/// The id of a test of the set, created after the set's last test when new;
/// `Conflict` when it exists with another unit or direction.
fn ensure_test(tx: &Transaction, set_id: i64, set: &str, spec: &TestSpec) -> Res<i64> {
    check_options(&spec.key)?;
    let options = spec.key.options_text();
    let found: Option<(i64, String, String)> = tx
        .prepare_cached(
            "SELECT id, unit, direction FROM tests \
             WHERE set_id = ?1 AND benchmark = ?2 AND options = ?3 AND metric = ?4",
        )?
        .query_row(
            params![set_id, spec.key.benchmark, options, spec.key.metric],
            |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
        )
        .optional()?;
    let Some((id, unit, direction)) = found else {
        return Ok(tx
            .prepare_cached(
                "INSERT INTO tests (set_id, benchmark, options, metric, unit, direction, position) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, \
                         (SELECT COALESCE(MAX(position) + 1, 0) FROM tests WHERE set_id = ?1)) \
                 RETURNING id",
            )?
            .query_row(
                params![
                    set_id,
                    spec.key.benchmark,
                    options,
                    spec.key.metric,
                    spec.unit,
                    spec.direction.as_str()
                ],
                |row| row.get(0),
            )?);
    };
    let stored = Direction::parse(&direction).ok_or_else(|| {
        Fail::Damaged(format!(
            "test {} has an unknown direction {direction:?}",
            spec.key
        ))
    })?;
    if unit != spec.unit || stored != spec.direction {
        return Err(Fail::Store(StoreError::Conflict(format!(
            "test {} is stored in result set \"{set}\" in {unit} ({}), but is now reported in {} ({}); \
             a test keeps its unit and direction: fix the benchmark or use a new result set",
            spec.key,
            stored.phrase(),
            spec.unit,
            spec.direction.phrase()
        ))));
    }
    Ok(id)
}

fn insert_run(
    tx: &Transaction,
    identifier_id: i64,
    status: RunStatus,
    info: &RunInfo,
    ended_at_ms: Option<i64>,
) -> Res<RunId> {
    let host = info.host.as_ref().map(to_json).transpose()?;
    Ok(RunId(
        tx.prepare_cached(
            "INSERT INTO runs (identifier_id, status, started_at_ms, ended_at_ms, pid, wrapper, \
                               tool_version, snapshot_json, host_json, notes_json) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10) RETURNING id",
        )?
        .query_row(
            params![
                identifier_id,
                status.as_str(),
                info.started_at_ms,
                ended_at_ms,
                info.pid,
                info.wrapper,
                info.tool_version,
                to_json(&info.snapshot)?,
                host,
                to_json(&info.notes)?
            ],
            |row| row.get(0),
        )?,
    ))
}

/// Stores a sample only when its run and test belong to the same result
/// set, so `load` never meets a sample of a foreign test. (PostgreSQL may
/// want casts on the parameters in the SELECT list.)
fn insert_sample(
    conn: &Connection,
    path: &Path,
    run: RunId,
    test: i64,
    sample: &Sample,
) -> Res<()> {
    // SQLite would store NaN as NULL; refuse it with a readable message.
    if sample.value.is_nan() {
        return Err(Fail::Store(StoreError::Database(format!(
            "a sample of run {} is not a number (NaN) and was not stored; the benchmark divided by zero",
            run.0
        ))));
    }
    let stored = conn
        .prepare_cached(
            "INSERT INTO samples (run_id, test_id, round, value, iterations, at_ms) \
             SELECT r.id, t.id, ?3, ?4, ?5, ?6 FROM runs r \
             JOIN identifiers i ON i.id = r.identifier_id \
             JOIN tests t ON t.set_id = i.set_id \
             WHERE r.id = ?1 AND t.id = ?2",
        )?
        .execute(params![
            run.0,
            test,
            sample.round,
            sample.value,
            to_i64("iteration count", sample.iterations)?,
            sample.at_ms
        ])?;
    if stored == 0 {
        return Err(Fail::Store(StoreError::NotFound(format!(
            "run {} and test {test} are not both in {} within one result set; the sample was not stored",
            run.0,
            path.display()
        ))));
    }
    Ok(())
}

fn upsert_outcome(conn: &Connection, run: RunId, test: i64, outcome: &TestOutcome) -> Res<()> {
    conn.prepare_cached(
        "INSERT INTO test_outcomes (run_id, test_id, kind, detail) VALUES (?1, ?2, ?3, ?4) \
         ON CONFLICT (run_id, test_id) DO UPDATE SET kind = excluded.kind, detail = excluded.detail",
    )?
    .execute(params![run.0, test, outcome.kind.as_str(), outcome.detail])?;
    Ok(())
}

/// `NotFound` for a missing run.
fn require_run(changed: usize, run: RunId, path: &Path) -> Res<()> {
    if changed == 0 {
        return Err(Fail::Store(StoreError::NotFound(format!(
            "there is no run {} in {}",
            run.0,
            path.display()
        ))));
    }
    Ok(())
}

/// Samples carry no run id in [`IdentifierData`], so an imported sample goes
/// to the newest run started at or before it (the first run if none).
fn owning_run(runs: &[(i64, RunId)], at_ms: i64) -> RunId {
    runs.iter()
        .rev()
        .find(|(started, _)| *started <= at_ms)
        .unwrap_or(&runs[0])
        .1
}

impl Store for SqliteStore {
    fn begin_run(&mut self, set: &str, identifier: &str, info: &RunInfo) -> Result<RunId> {
        self.with("starting a run", |conn, _| {
            check_name("result set", set)?;
            check_name("identifier", identifier)?;
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let set_id = ensure_set(&tx, set)?;
            let identifier_id = match find_identifier(&tx, set_id, identifier)? {
                Some(id) => id,
                None => insert_identifier(&tx, set_id, identifier)?,
            };
            let run = insert_run(&tx, identifier_id, RunStatus::Running, info, None)?;
            tx.commit()?;
            Ok(run)
        })
    }

    fn unfinished_run(&mut self, set: &str, identifier: &str) -> Result<Option<RunRecord>> {
        self.with("looking for a run to resume", |conn, _| {
            let mut stmt = conn.prepare_cached(&format!(
                "SELECT {RUN_COLUMNS} FROM runs r \
                 JOIN identifiers i ON i.id = r.identifier_id \
                 JOIN result_sets s ON s.id = i.set_id \
                 WHERE s.name = ?1 AND i.name = ?2 ORDER BY r.id DESC LIMIT 1"
            ))?;
            let mut rows = stmt.query([set, identifier])?;
            let Some(row) = rows.next()? else {
                return Ok(None);
            };
            let run = read_run(conn, row)?;
            Ok(matches!(run.status, RunStatus::Running | RunStatus::Interrupted).then_some(run))
        })
    }

    fn resume_run(&mut self, run: RunId, pid: u32) -> Result<()> {
        self.with("resuming a run", |conn, path| {
            let changed = conn
                .prepare_cached(
                    "UPDATE runs SET status = 'running', pid = ?2, ended_at_ms = NULL \
                     WHERE id = ?1",
                )?
                .execute(params![run.0, pid])?;
            require_run(changed, run, path)
        })
    }

    fn test_id(&mut self, set: &str, spec: &TestSpec) -> Result<TestId> {
        self.with("registering a test", |conn, _| {
            check_name("result set", set)?;
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let set_id = ensure_set(&tx, set)?;
            let id = ensure_test(&tx, set_id, set, spec)?;
            tx.commit()?;
            Ok(TestId(id))
        })
    }

    fn add_sample(&mut self, run: RunId, test: TestId, sample: &Sample) -> Result<()> {
        self.with("storing a sample", |conn, path| {
            insert_sample(conn, path, run, test.0, sample)
        })
    }

    /// Records how `test` ended in `run`; a second call for the same pair
    /// replaces the first. `outcome.test` is not checked against `test`.
    fn end_test(&mut self, run: RunId, test: TestId, outcome: &TestOutcome) -> Result<()> {
        self.with("recording how a test ended", |conn, _| {
            upsert_outcome(conn, run, test.0, outcome)
        })
    }

    fn end_run(&mut self, run: RunId, status: RunStatus, steal_percent: Option<f64>) -> Result<()> {
        self.with("ending a run", |conn, path| {
            let changed = conn
                .prepare_cached(
                    "UPDATE runs SET status = ?2, ended_at_ms = ?3, steal_percent = ?4 WHERE id = ?1",
                )?
                .execute(params![run.0, status.as_str(), now_ms(), steal_percent])?;
            require_run(changed, run, path)
        })
    }

    fn result_sets(&mut self) -> Result<Vec<ResultSetSummary>> {
        self.with("listing result sets", |conn, _| {
            let mut sets = Vec::new();
            let mut stmt = conn.prepare_cached(
                "SELECT id, name, created_at_ms, \
                   (SELECT COUNT(*) FROM tests t WHERE t.set_id = s.id), \
                   (SELECT COUNT(*) FROM samples x JOIN runs r ON r.id = x.run_id \
                      JOIN identifiers i ON i.id = r.identifier_id WHERE i.set_id = s.id) \
                 FROM result_sets s ORDER BY created_at_ms, id",
            )?;
            let mut rows = stmt.query([])?;
            while let Some(row) = rows.next()? {
                let id: i64 = row.get(0)?;
                let identifiers = conn
                    .prepare_cached(
                        "SELECT name FROM identifiers WHERE set_id = ?1 ORDER BY position",
                    )?
                    .query_map([id], |row| row.get(0))?
                    .collect::<rusqlite::Result<_>>()?;
                sets.push(ResultSetSummary {
                    name: row.get(1)?,
                    identifiers,
                    tests: narrow("test count", row.get(3)?)?,
                    samples: narrow("sample count", row.get(4)?)?,
                    created_at_ms: row.get(2)?,
                });
            }
            Ok(sets)
        })
    }

    fn load(&mut self, set: &str) -> Result<ResultSetData> {
        self.with("loading a result set", |conn, path| {
            let set_id: Option<i64> = conn
                .prepare_cached("SELECT id FROM result_sets WHERE name = ?1")?
                .query_row([set], |row| row.get(0))
                .optional()?;
            let Some(set_id) = set_id else {
                let names: Vec<String> = conn
                    .prepare_cached("SELECT name FROM result_sets ORDER BY created_at_ms, id")?
                    .query_map([], |row| row.get(0))?
                    .collect::<rusqlite::Result<_>>()?;
                let known = if names.is_empty() {
                    "it holds no result sets yet".to_string()
                } else {
                    format!(
                        "it holds: {}",
                        names
                            .iter()
                            .map(|n| format!("\"{n}\""))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                };
                return Err(Fail::Store(StoreError::NotFound(format!(
                    "there is no result set \"{set}\" in {}; {known}",
                    path.display()
                ))));
            };

            let mut tests = Vec::new();
            let mut keys = HashMap::new();
            let mut stmt = conn.prepare_cached(
                "SELECT id, benchmark, options, metric, unit, direction FROM tests \
                 WHERE set_id = ?1 ORDER BY position",
            )?;
            let mut rows = stmt.query([set_id])?;
            while let Some(row) = rows.next()? {
                let key = read_key(row, 1)?;
                let direction: String = row.get(5)?;
                keys.insert(row.get::<_, i64>(0)?, key.clone());
                tests.push(TestSpec {
                    key,
                    unit: row.get(4)?,
                    direction: Direction::parse(&direction).ok_or_else(|| {
                        Fail::Damaged(format!("unknown test direction {direction:?}"))
                    })?,
                });
            }

            let mut identifiers = Vec::new();
            let mut index = HashMap::new();
            let mut stmt = conn.prepare_cached(
                "SELECT id, name FROM identifiers WHERE set_id = ?1 ORDER BY position",
            )?;
            let mut rows = stmt.query([set_id])?;
            while let Some(row) = rows.next()? {
                index.insert(row.get::<_, i64>(0)?, identifiers.len());
                identifiers.push(IdentifierData {
                    name: row.get(1)?,
                    runs: Vec::new(),
                    samples: BTreeMap::new(),
                });
            }

            let mut stmt = conn.prepare_cached(&format!(
                "SELECT {RUN_COLUMNS}, r.identifier_id FROM runs r \
                 JOIN identifiers i ON i.id = r.identifier_id WHERE i.set_id = ?1 ORDER BY r.id"
            ))?;
            let mut rows = stmt.query([set_id])?;
            while let Some(row) = rows.next()? {
                let owner = index[&row.get::<_, i64>(RUN_COLUMN_COUNT)?];
                identifiers[owner].runs.push(read_run(conn, row)?);
            }

            // Grouped by (identifier, test) first: one key clone per group,
            // not per sample.
            let mut groups: HashMap<(usize, i64), Vec<Sample>> = HashMap::new();
            let mut stmt = conn.prepare_cached(
                "SELECT r.identifier_id, s.test_id, s.value, s.iterations, s.at_ms, s.round \
                 FROM samples s JOIN runs r ON r.id = s.run_id \
                 JOIN identifiers i ON i.id = r.identifier_id \
                 WHERE i.set_id = ?1 ORDER BY s.id",
            )?;
            let mut rows = stmt.query([set_id])?;
            while let Some(row) = rows.next()? {
                let owner = index[&row.get::<_, i64>(0)?];
                groups
                    .entry((owner, row.get(1)?))
                    .or_default()
                    .push(Sample {
                        value: row.get(2)?,
                        iterations: narrow("iteration count", row.get(3)?)?,
                        at_ms: row.get(4)?,
                        round: narrow("round", row.get(5)?)?,
                    });
            }
            for ((owner, test), samples) in groups {
                let key = keys.get(&test).ok_or_else(|| {
                    Fail::Damaged(format!(
                        "samples refer to test {test} of another result set"
                    ))
                })?;
                identifiers[owner].samples.insert(key.clone(), samples);
            }

            Ok(ResultSetData {
                name: set.to_string(),
                tests,
                identifiers,
            })
        })
    }

    fn import(&mut self, data: &ResultSetData) -> Result<()> {
        self.with("importing a result set", |conn, path| {
            check_name("result set", &data.name)?;
            for identifier in &data.identifiers {
                check_name("identifier", &identifier.name)?;
            }
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let set_id = ensure_set(&tx, &data.name)?;
            let mut test_ids = HashMap::new();
            for spec in &data.tests {
                test_ids.insert(&spec.key, ensure_test(&tx, set_id, &data.name, spec)?);
            }
            let test_of = |key: &TestKey, identifier: &str| {
                test_ids.get(key).copied().ok_or_else(|| {
                    Fail::Store(StoreError::NotFound(format!(
                        "identifier \"{identifier}\" has results of test {key}, which is not among the \
                         result set's tests; nothing was imported"
                    )))
                })
            };
            for identifier in &data.identifiers {
                let name = &identifier.name;
                if find_identifier(&tx, set_id, name)?.is_some() {
                    return Err(Fail::Store(StoreError::Conflict(format!(
                        "identifier \"{name}\" already exists in result set \"{}\" of {}; nothing was \
                         imported. Rename it in the import or import into another result set",
                        data.name,
                        path.display()
                    ))));
                }
                if identifier.runs.is_empty() && !identifier.samples.is_empty() {
                    return Err(Fail::Store(StoreError::Conflict(format!(
                        "identifier \"{name}\" has samples but no run to hold them; nothing was imported"
                    ))));
                }
                let identifier_id = insert_identifier(&tx, set_id, name)?;
                let mut runs = Vec::new();
                for run in &identifier.runs {
                    let id = insert_run(&tx, identifier_id, run.status, &run.info, run.ended_at_ms)?;
                    for outcome in &run.outcomes {
                        upsert_outcome(&tx, id, test_of(&outcome.test, name)?, outcome)?;
                    }
                    runs.push((run.info.started_at_ms, id));
                }
                for (key, samples) in &identifier.samples {
                    let test = test_of(key, name)?;
                    for sample in samples {
                        insert_sample(&tx, path, owning_run(&runs, sample.at_ms), test, sample)?;
                    }
                }
            }
            tx.commit()?;
            Ok(())
        })
    }

    fn last_round(&mut self, set: &str, identifier: &str) -> Result<Option<u32>> {
        self.with("finding the last round", |conn, _| {
            let round: Option<i64> = conn
                .prepare_cached(
                    "SELECT MAX(x.round) FROM samples x \
                     JOIN runs r ON r.id = x.run_id \
                     JOIN identifiers i ON i.id = r.identifier_id \
                     JOIN result_sets s ON s.id = i.set_id \
                     WHERE s.name = ?1 AND i.name = ?2",
                )?
                .query_row([set, identifier], |row| row.get(0))?;
            round.map(|round| narrow("round", round)).transpose()
        })
    }

    fn ended_tests(&mut self, run: RunId) -> Result<Vec<TestKey>> {
        self.with("listing a run's ended tests", |conn, _| {
            let mut stmt = conn.prepare_cached(
                "SELECT t.benchmark, t.options, t.metric FROM test_outcomes o \
                 JOIN tests t ON t.id = o.test_id WHERE o.run_id = ?1 ORDER BY t.position",
            )?;
            let mut rows = stmt.query([run.0])?;
            let mut keys = Vec::new();
            while let Some(row) = rows.next()? {
                keys.push(read_key(row, 0)?);
            }
            Ok(keys)
        })
    }

    fn save_bisect(&mut self, name: &str, state_json: &str) -> Result<()> {
        self.with("saving the bisection state", |conn, _| {
            check_name("bisection", name)?;
            conn.prepare_cached(
                "INSERT INTO bisects (name, state_json, updated_at_ms) VALUES (?1, ?2, ?3) \
                 ON CONFLICT (name) DO UPDATE SET state_json = excluded.state_json, \
                 updated_at_ms = excluded.updated_at_ms",
            )?
            .execute(params![name, state_json, now_ms()])?;
            Ok(())
        })
    }

    fn load_bisect(&mut self, name: &str) -> Result<Option<String>> {
        self.with("loading the bisection state", |conn, _| {
            Ok(conn
                .prepare_cached("SELECT state_json FROM bisects WHERE name = ?1")?
                .query_row([name], |row| row.get(0))
                .optional()?)
        })
    }

    fn delete_bisect(&mut self, name: &str) -> Result<()> {
        self.with("forgetting the bisection state", |conn, _| {
            conn.prepare_cached("DELETE FROM bisects WHERE name = ?1")?
                .execute([name])?;
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<OsString> + 'a {
        move |name| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| OsString::from(v))
        }
    }

    #[test]
    fn default_path_prefers_kbench_db_then_xdg_then_home() {
        let all = [
            ("KBENCH_DB", "/x/my.db"),
            ("XDG_DATA_HOME", "/xdg"),
            ("HOME", "/home/u"),
        ];
        assert_eq!(default_path_from(env(&all)), PathBuf::from("/x/my.db"));
        assert_eq!(
            default_path_from(env(&all[1..])),
            PathBuf::from("/xdg/kbench/results.db")
        );
        assert_eq!(
            default_path_from(env(&all[2..])),
            PathBuf::from("/home/u/.local/share/kbench/results.db")
        );
        let relative_xdg = [("XDG_DATA_HOME", "rel"), ("HOME", "/home/u")];
        assert_eq!(
            default_path_from(env(&relative_xdg)),
            PathBuf::from("/home/u/.local/share/kbench/results.db")
        );
        assert_eq!(
            default_path_from(env(&[])),
            PathBuf::from("kbench/results.db")
        );
    }

    #[test]
    fn options_text_round_trips() {
        let key = TestKey::parse("b[a=1,c=x=y]").unwrap();
        assert_eq!(
            parse_options(&key.options_text()).ok(),
            Some(key.options.clone())
        );
        assert_eq!(parse_options("").ok(), Some(BTreeMap::new()));
        let mut bad = TestKey::new("b");
        bad.options.insert("cpus".into(), "0,1".into());
        assert!(check_options(&bad).is_err());
    }
}
