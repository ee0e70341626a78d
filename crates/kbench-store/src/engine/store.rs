//! The [`Store`] trait for every [`Sql`] backend: validation, SQL and
//! messages, once for SQLite and PostgreSQL.
//!
//! Every write commits before it returns: a single statement in autocommit,
//! or a short transaction. Find-or-create steps insert with
//! `ON CONFLICT DO NOTHING` and read again, so two writers creating the same
//! result set, identifier or test at once (possible on PostgreSQL) both end
//! up with the one row.

use super::{
    Fail, Param, Res, Row, Sql, args, first_int, jobs, live, parse_options, rows, texts,
    transaction, with,
};
use crate::validate;
use crate::{
    BisectInfo, IdentifierData, Job, JobSpec, LiveBatch, LiveOutcome, Push, PushOutcome, Result,
    ResultSetData, ResultSetSummary, RunContents, RunId, RunInfo, RunRecord, RunStatus, Scope,
    Store, StoreError, TestId, TestOutcome, TestOutcomeKind, TokenInfo, WorkerInfo,
};
use kbench_model::{Direction, Sample, SystemSnapshot, TestKey, TestSpec, now_ms, validate_name};
use std::collections::{BTreeMap, HashMap};
use std::sync::OnceLock;

pub(super) fn check_name(what: &str, name: &str) -> Res<()> {
    validate_name(what, name).map_err(|msg| Fail::Store(StoreError::Invalid(msg)))
}

/// A rule of [`crate::validate`] applied on a write path: `Invalid`, with
/// `place` (what was being written) before what is wrong, and nothing
/// written.
pub(super) fn valid(check: Result<(), String>, place: impl FnOnce() -> String) -> Res<()> {
    check.map_err(|why| {
        Fail::Store(StoreError::Invalid(format!(
            "{}: {why}; nothing was stored",
            place()
        )))
    })
}

/// A test's key from its `benchmark, options, metric` columns at `first`.
fn read_key(row: &dyn Row, first: usize) -> Res<TestKey> {
    Ok(TestKey {
        benchmark: row.req_text(first)?,
        options: parse_options(&row.req_text(first + 1)?)?,
        metric: row.req_text(first + 2)?,
    })
}

fn read_direction(text: &str, what: impl std::fmt::Display) -> Res<Direction> {
    Direction::parse(text)
        .ok_or_else(|| Fail::Damaged(format!("{what} has an unknown direction {text:?}")))
}

/// `what` as JSON; `what` names it in the message ("run details").
pub(super) fn to_json<T: serde::Serialize>(what: &str, value: &T) -> Res<String> {
    serde_json::to_string(value).map_err(|err| {
        Fail::Store(StoreError::Database(format!(
            "cannot encode {what} as JSON: {err}"
        )))
    })
}

/// Stored JSON read back; `what` names it in the message ("a run's notes").
pub(super) fn from_json<T: serde::de::DeserializeOwned>(what: &str, text: &str) -> Res<T> {
    serde_json::from_str(text)
        .map_err(|err| Fail::Damaged(format!("{what} is not readable: {err}")))
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
pub(super) fn narrow<T: TryFrom<i64>>(what: &str, value: i64) -> Res<T> {
    T::try_from(value).map_err(|_| Fail::Damaged(format!("{what} {value} is out of range")))
}

/// How many columns [`RUN_COLUMNS`] has; a query's own columns follow them.
const RUN_COLUMN_COUNT: usize = 12;

/// The columns [`read_run`] reads, after `r.`.
macro_rules! run_columns {
    () => {
        "r.id, r.status, r.started_at_ms, r.ended_at_ms, r.pid, r.wrapper, r.tool_version, \
         r.snapshot_json, r.host_json, r.notes_json, r.steal_percent, r.uid"
    };
}

/// A run from [`run_columns!`], without its outcomes (read after the query,
/// see [`Sql::query`]).
fn read_run(row: &dyn Row) -> Res<RunRecord> {
    let id = RunId(row.req_int(0)?);
    let status = row.req_text(1)?;
    let mut snapshot = from_json::<SystemSnapshot>("a run's snapshot", &row.req_text(7)?)?;
    if let Some(steal) = row.real(10)? {
        snapshot.steal_percent = Some(steal);
    }
    Ok(RunRecord {
        id,
        status: RunStatus::parse(&status).ok_or_else(|| {
            Fail::Damaged(format!("run {} has an unknown status {status:?}", id.0))
        })?,
        info: RunInfo {
            snapshot,
            host: row
                .text(8)?
                .map(|text| from_json("a run's host snapshot", &text))
                .transpose()?,
            wrapper: row.text(5)?,
            tool_version: row.req_text(6)?,
            notes: from_json("a run's notes", &row.req_text(9)?)?,
            started_at_ms: row.req_int(2)?,
            pid: narrow("pid", row.req_int(4)?)?,
            uid: row.text(11)?,
        },
        ended_at_ms: row.int(3)?,
        outcomes: Vec::new(),
    })
}

/// Fills in how each ended test of each run ended, in test order.
fn add_outcomes(db: &mut dyn Sql, runs: &mut [RunRecord]) -> Res<()> {
    for run in runs {
        db.query(
            "SELECT t.benchmark, t.options, t.metric, o.kind, o.detail \
             FROM test_outcomes o JOIN tests t ON t.id = o.test_id \
             WHERE o.run_id = ?1 ORDER BY t.position, t.id",
            args![run.id.0],
            &mut |row| {
                let kind = row.req_text(3)?;
                run.outcomes.push(TestOutcome {
                    test: read_key(row, 0)?,
                    kind: TestOutcomeKind::parse(&kind)
                        .ok_or_else(|| Fail::Damaged(format!("unknown test outcome {kind:?}")))?,
                    detail: row.req_text(4)?,
                });
                Ok(())
            },
        )?;
    }
    Ok(())
}

/// The id `select` finds, else the one `insert ... ON CONFLICT DO NOTHING
/// RETURNING id` makes, else (another writer inserted it meanwhile) the one
/// `select` finds now.
fn find_or_insert(
    db: &mut dyn Sql,
    select: &str,
    select_args: &[Param],
    insert: &str,
    insert_args: &[Param],
) -> Res<i64> {
    if let Some(id) = first_int(db, select, select_args)? {
        return Ok(id);
    }
    if let Some(id) = first_int(db, insert, insert_args)? {
        return Ok(id);
    }
    first_int(db, select, select_args)?
        .ok_or_else(|| Fail::Damaged("a row just inserted by another writer is gone".into()))
}

/// The id of result set `name`, created when new.
pub(super) fn ensure_set(db: &mut dyn Sql, name: &str) -> Res<i64> {
    find_or_insert(
        db,
        "SELECT id FROM result_sets WHERE name = ?1",
        args![name],
        "INSERT INTO result_sets (name, created_at_ms) VALUES (?1, ?2) \
         ON CONFLICT (name) DO NOTHING RETURNING id",
        args![name, now_ms()],
    )
}

const FIND_IDENTIFIER: &str = "SELECT id FROM identifiers WHERE set_id = ?1 AND name = ?2";

/// Adds an identifier after the set's last one (`None` when it exists).
const INSERT_IDENTIFIER: &str = "INSERT INTO identifiers (set_id, name, position) \
     VALUES (?1, ?2, (SELECT COALESCE(MAX(position) + 1, 0) FROM identifiers WHERE set_id = ?1)) \
     ON CONFLICT (set_id, name) DO NOTHING RETURNING id";

/// The id of identifier `name` of the set, created after its last when new.
pub(super) fn ensure_identifier(db: &mut dyn Sql, set_id: i64, name: &str) -> Res<i64> {
    find_or_insert(
        db,
        FIND_IDENTIFIER,
        args![set_id, name],
        INSERT_IDENTIFIER,
        args![set_id, name],
    )
}

/// A test of a set as stored: its id, unit and direction.
pub(super) struct StoredTest {
    pub id: i64,
    unit: String,
    direction: Direction,
}

/// The test `key` of the set, if stored.
pub(super) fn find_test(db: &mut dyn Sql, set_id: i64, key: &TestKey) -> Res<Option<StoredTest>> {
    let mut found = None;
    db.query(
        "SELECT id, unit, direction FROM tests \
         WHERE set_id = ?1 AND benchmark = ?2 AND options = ?3 AND metric = ?4",
        args![set_id, &key.benchmark, &key.options_text(), &key.metric],
        &mut |row| {
            found = Some((row.req_int(0)?, row.req_text(1)?, row.req_text(2)?));
            Ok(())
        },
    )?;
    found
        .map(|(id, unit, direction)| {
            Ok(StoredTest {
                id,
                unit,
                direction: read_direction(&direction, format_args!("test {key}"))?,
            })
        })
        .transpose()
}

/// The id of a test of the set, created after the set's last test when new;
/// `Conflict` when it exists with another unit or direction.
pub(super) fn ensure_test(db: &mut dyn Sql, set_id: i64, set: &str, spec: &TestSpec) -> Res<i64> {
    valid(validate::test_spec(spec), || {
        format!("test {} of result set \"{set}\"", spec.key)
    })?;
    let options = spec.key.options_text();
    let key = &spec.key;
    // Twice at most: the second time finds what another writer inserted.
    for _ in 0..2 {
        if let Some(StoredTest {
            id,
            unit,
            direction: stored,
        }) = find_test(db, set_id, key)?
        {
            if unit != spec.unit || stored != spec.direction {
                return Err(Fail::Store(StoreError::Conflict(format!(
                    "test {key} is stored in result set \"{set}\" in {unit} ({}), but is now reported in {} ({}); \
                     a test keeps its unit and direction: fix the benchmark or use a new result set",
                    stored.phrase(),
                    spec.unit,
                    spec.direction.phrase()
                ))));
            }
            return Ok(id);
        }
        let inserted = first_int(
            db,
            "INSERT INTO tests (set_id, benchmark, options, metric, unit, direction, position) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, \
                     (SELECT COALESCE(MAX(position) + 1, 0) FROM tests WHERE set_id = ?1)) \
             ON CONFLICT (set_id, benchmark, options, metric) DO NOTHING RETURNING id",
            args![
                set_id,
                &key.benchmark,
                &options,
                &key.metric,
                &spec.unit,
                spec.direction.as_str()
            ],
        )?;
        if let Some(id) = inserted {
            return Ok(id);
        }
    }
    Err(Fail::Damaged(format!(
        "test {key} was inserted and is gone"
    )))
}

/// Stores a new run; `None` when a run with its uid is stored already.
pub(super) fn insert_run(
    db: &mut dyn Sql,
    identifier_id: i64,
    status: RunStatus,
    info: &RunInfo,
    ended_at_ms: Option<i64>,
) -> Res<Option<RunId>> {
    valid(validate::run_times(info.started_at_ms, ended_at_ms), || {
        format!("run {}", info.uid.as_deref().unwrap_or("(without uid)"))
    })?;
    let host = info
        .host
        .as_ref()
        .map(|host| to_json("the host snapshot", host))
        .transpose()?;
    let id = first_int(
        db,
        "INSERT INTO runs (identifier_id, status, started_at_ms, ended_at_ms, pid, wrapper, \
                           tool_version, snapshot_json, host_json, notes_json, uid) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11) \
         ON CONFLICT (uid) DO NOTHING RETURNING id",
        args![
            identifier_id,
            status.as_str(),
            info.started_at_ms,
            ended_at_ms,
            info.pid,
            info.wrapper.as_ref(),
            &info.tool_version,
            &to_json("the system snapshot", &info.snapshot)?,
            host.as_ref(),
            &to_json("the run's notes", &info.notes)?,
            info.uid.as_ref()
        ],
    )?;
    Ok(id.map(RunId))
}

/// Where a stored run is, found by its uid.
pub(super) struct RunOwner {
    pub run: RunId,
    pub identifier_id: i64,
    set: String,
    identifier: String,
}

impl RunOwner {
    /// "run UID is run N of identifier "I" in result set "S" of DB", for
    /// messages.
    pub fn describe(&self, uid: &str, db: &str) -> String {
        format!(
            "run {uid} is run {} of identifier \"{}\" in result set \"{}\" of {db}",
            self.run.0, self.identifier, self.set
        )
    }
}

/// The run with this uid, if stored.
pub(super) fn run_by_uid(db: &mut dyn Sql, uid: &str) -> Res<Option<RunOwner>> {
    let mut found = None;
    db.query(
        "SELECT r.id, r.identifier_id, s.name, i.name FROM runs r \
         JOIN identifiers i ON i.id = r.identifier_id \
         JOIN result_sets s ON s.id = i.set_id WHERE r.uid = ?1",
        args![uid],
        &mut |row| {
            found = Some(RunOwner {
                run: RunId(row.req_int(0)?),
                identifier_id: row.req_int(1)?,
                set: row.req_text(2)?,
                identifier: row.req_text(3)?,
            });
            Ok(())
        },
    )?;
    Ok(found)
}

/// Stores a new run; a uid stored already is a `Conflict` saying where that
/// run is, then `instead` (what was not done and what to do).
fn insert_new_run(
    db: &mut dyn Sql,
    identifier_id: i64,
    status: RunStatus,
    info: &RunInfo,
    ended_at_ms: Option<i64>,
    instead: &str,
) -> Res<RunId> {
    if let Some(id) = insert_run(db, identifier_id, status, info, ended_at_ms)? {
        return Ok(id);
    }
    let uid = info.uid.as_deref().unwrap_or_default();
    let owner = run_by_uid(db, uid)?
        .ok_or_else(|| Fail::Damaged(format!("run {uid} was refused as stored and is gone")))?;
    Err(Fail::Store(StoreError::Conflict(format!(
        "{}; {instead}",
        owner.describe(uid, db.name())
    ))))
}

/// A sample as [`validate::sample`] wants it (NaN would be stored as NULL
/// by SQLite, a value <= 0 has no log for the ratios).
fn check_value(run: RunId, sample: &Sample) -> Res<()> {
    valid(validate::sample(sample), || {
        format!("a sample of run {}", run.0)
    })
}

/// Stores a sample only when its run and test belong to the same result
/// set, so `load` never meets a sample of a foreign test.
fn insert_sample(db: &mut dyn Sql, run: RunId, test: i64, sample: &Sample) -> Res<()> {
    check_value(run, sample)?;
    let stored = db.execute(
        "INSERT INTO samples (run_id, test_id, round, value, iterations, at_ms) \
         SELECT r.id, t.id, CAST(?3 AS BIGINT), CAST(?4 AS DOUBLE PRECISION), \
                CAST(?5 AS BIGINT), CAST(?6 AS BIGINT) \
         FROM runs r \
         JOIN identifiers i ON i.id = r.identifier_id \
         JOIN tests t ON t.set_id = i.set_id \
         WHERE r.id = ?1 AND t.id = ?2",
        args![
            run.0,
            test,
            sample.round,
            sample.value,
            to_i64("iteration count", sample.iterations)?,
            sample.at_ms
        ],
    )?;
    if stored == 0 {
        return Err(Fail::Store(StoreError::NotFound(format!(
            "run {} and test {test} are not both in {} within one result set; the sample was not stored",
            run.0,
            db.name()
        ))));
    }
    Ok(())
}

/// The most samples one multi-row INSERT holds (6 parameters each, well
/// under SQLite's 32766 and PostgreSQL's 65535).
const BATCH: usize = 256;

const _: () = assert!(
    BATCH.is_power_of_two(),
    "insert_samples splits by powers of two"
);

/// `INSERT INTO samples ... VALUES (..), (..)` for `rows` rows, a power of
/// two up to [`BATCH`].
fn batch_insert_sql(rows: usize) -> &'static str {
    static SQL: OnceLock<Vec<String>> = OnceLock::new();
    let all = SQL.get_or_init(|| {
        (0..=BATCH.ilog2())
            .map(|log| {
                let rows: Vec<String> = (0..1usize << log)
                    .map(|i| {
                        let n = 6 * i;
                        format!(
                            "(?{}, ?{}, ?{}, ?{}, ?{}, ?{})",
                            n + 1,
                            n + 2,
                            n + 3,
                            n + 4,
                            n + 5,
                            n + 6
                        )
                    })
                    .collect();
                format!(
                    "INSERT INTO samples (run_id, test_id, round, value, iterations, at_ms) VALUES {}",
                    rows.join(", ")
                )
            })
            .collect()
    });
    &all[rows.ilog2() as usize]
}

/// Stores the samples of one test in one run, in order, in multi-row
/// INSERTs: [`BATCH`] rows at a time, then the rest in the powers of two it
/// adds up to (13 samples: 8, 4 and 1), so that a few prepared statements
/// serve every count in a few round trips. The caller knows that the run
/// and the test belong to one result set (it made or checked both in the
/// same transaction).
pub(super) fn insert_samples(
    db: &mut dyn Sql,
    run: RunId,
    test: i64,
    samples: &[Sample],
) -> Res<()> {
    let mut params = Vec::with_capacity(6 * BATCH);
    let mut rest = samples;
    while !rest.is_empty() {
        let rows = BATCH.min(1 << rest.len().ilog2());
        let (chunk, after) = rest.split_at(rows);
        rest = after;
        params.clear();
        for sample in chunk {
            check_value(run, sample)?;
            params.extend_from_slice(args![
                run.0,
                test,
                sample.round,
                sample.value,
                to_i64("iteration count", sample.iterations)?,
                sample.at_ms
            ]);
        }
        db.execute(batch_insert_sql(rows), &params)?;
    }
    Ok(())
}

pub(super) fn upsert_outcome(
    db: &mut dyn Sql,
    run: RunId,
    test: i64,
    outcome: &TestOutcome,
) -> Res<()> {
    db.execute(
        "INSERT INTO test_outcomes (run_id, test_id, kind, detail) VALUES (?1, ?2, ?3, ?4) \
         ON CONFLICT (run_id, test_id) DO UPDATE SET kind = excluded.kind, detail = excluded.detail",
        args![run.0, test, outcome.kind.as_str(), &outcome.detail],
    )?;
    Ok(())
}

/// `NotFound` for a missing run.
fn no_run(db: &dyn Sql, run: RunId) -> Fail {
    Fail::Store(StoreError::NotFound(format!(
        "there is no run {} in {}",
        run.0,
        db.name()
    )))
}

/// `NotFound` when a statement on a run changed nothing.
fn require_run(db: &dyn Sql, changed: u64, run: RunId) -> Res<()> {
    if changed == 0 {
        return Err(no_run(db, run));
    }
    Ok(())
}

/// `NotFound` for a missing result set, naming those that exist.
fn missing_set(db: &mut dyn Sql, set: &str) -> Res<Fail> {
    let names = texts(
        db,
        "SELECT name FROM result_sets ORDER BY created_at_ms, id",
        args![],
    )?;
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
    Ok(Fail::Store(StoreError::NotFound(format!(
        "there is no result set \"{set}\" in {}; {known}",
        db.name()
    ))))
}

/// The tests a query of `id, benchmark, options, metric, unit, direction`
/// finds, in its order, and their keys by id.
fn read_tests(
    db: &mut dyn Sql,
    sql: &str,
    args: &[Param],
) -> Res<(Vec<TestSpec>, HashMap<i64, TestKey>)> {
    let mut tests = Vec::new();
    let mut keys = HashMap::new();
    db.query(sql, args, &mut |row| {
        let key = read_key(row, 1)?;
        let direction = read_direction(&row.req_text(5)?, "a test")?;
        keys.insert(row.req_int(0)?, key.clone());
        tests.push(TestSpec {
            key,
            unit: row.req_text(4)?,
            direction,
        });
        Ok(())
    })?;
    Ok((tests, keys))
}

/// A sample from its `value, iterations, at_ms, round` columns at `first`.
fn read_sample(row: &dyn Row, first: usize) -> Res<Sample> {
    Ok(Sample {
        value: row
            .real(first)?
            .ok_or_else(|| Fail::Damaged("a sample has no value".into()))?,
        iterations: narrow("iteration count", row.req_int(first + 1)?)?,
        at_ms: row.req_int(first + 2)?,
        round: narrow("round", row.req_int(first + 3)?)?,
    })
}

/// Reads a whole result set; inside a read transaction.
fn load_set(db: &mut dyn Sql, set: &str) -> Res<ResultSetData> {
    let Some(set_id) = first_int(db, "SELECT id FROM result_sets WHERE name = ?1", args![set])?
    else {
        return Err(missing_set(db, set)?);
    };

    let (tests, keys) = read_tests(
        db,
        "SELECT id, benchmark, options, metric, unit, direction FROM tests \
         WHERE set_id = ?1 ORDER BY position, id",
        args![set_id],
    )?;

    let mut identifiers = Vec::new();
    let mut index = HashMap::new();
    db.query(
        "SELECT id, name FROM identifiers WHERE set_id = ?1 ORDER BY position, id",
        args![set_id],
        &mut |row| {
            index.insert(row.req_int(0)?, identifiers.len());
            identifiers.push(IdentifierData {
                name: row.req_text(1)?,
                runs: Vec::new(),
                samples: BTreeMap::new(),
                sample_runs: BTreeMap::new(),
            });
            Ok(())
        },
    )?;
    let owner_of = |index: &HashMap<i64, usize>, id: i64| {
        index
            .get(&id)
            .copied()
            .ok_or_else(|| Fail::Damaged(format!("identifier {id} is not in result set \"{set}\"")))
    };

    let (mut owners, mut runs) = (Vec::new(), Vec::new());
    db.query(
        concat!(
            "SELECT ",
            run_columns!(),
            ", r.identifier_id FROM runs r \
             JOIN identifiers i ON i.id = r.identifier_id WHERE i.set_id = ?1 ORDER BY r.id"
        ),
        args![set_id],
        &mut |row| {
            owners.push(owner_of(&index, row.req_int(RUN_COLUMN_COUNT)?)?);
            runs.push(read_run(row)?);
            Ok(())
        },
    )?;
    add_outcomes(db, &mut runs)?;
    // Each run's position among its identifier's runs.
    let mut run_position = HashMap::new();
    for (owner, run) in owners.into_iter().zip(runs) {
        run_position.insert(run.id.0, identifiers[owner].runs.len());
        identifiers[owner].runs.push(run);
    }

    // Grouped by (identifier, test) first: one key clone per group, not
    // per sample.
    let mut groups: HashMap<(usize, i64), (Vec<Sample>, Vec<usize>)> = HashMap::new();
    db.query(
        "SELECT r.identifier_id, s.run_id, s.test_id, s.value, s.iterations, s.at_ms, s.round \
         FROM samples s JOIN runs r ON r.id = s.run_id \
         JOIN identifiers i ON i.id = r.identifier_id \
         WHERE i.set_id = ?1 ORDER BY s.id",
        args![set_id],
        &mut |row| {
            let owner = owner_of(&index, row.req_int(0)?)?;
            let run = row.req_int(1)?;
            let position = *run_position.get(&run).ok_or_else(|| {
                Fail::Damaged(format!(
                    "a sample's run {run} is not in result set \"{set}\""
                ))
            })?;
            let (samples, runs) = groups.entry((owner, row.req_int(2)?)).or_default();
            samples.push(read_sample(row, 3)?);
            runs.push(position);
            Ok(())
        },
    )?;
    for ((owner, test), (samples, runs)) in groups {
        let key = keys.get(&test).ok_or_else(|| {
            Fail::Damaged(format!(
                "samples refer to test {test} of another result set"
            ))
        })?;
        identifiers[owner].samples.insert(key.clone(), samples);
        identifiers[owner].sample_runs.insert(key.clone(), runs);
    }

    Ok(ResultSetData {
        name: set.to_string(),
        tests,
        identifiers,
    })
}

/// One run with its set, identifier, tests and samples; inside a read
/// transaction.
fn read_run_contents(db: &mut dyn Sql, run: RunId) -> Res<RunContents> {
    let mut found = None;
    db.query(
        concat!(
            "SELECT ",
            run_columns!(),
            ", s.name, i.name FROM runs r \
             JOIN identifiers i ON i.id = r.identifier_id \
             JOIN result_sets s ON s.id = i.set_id WHERE r.id = ?1"
        ),
        args![run.0],
        &mut |row| {
            found = Some((
                read_run(row)?,
                row.req_text(RUN_COLUMN_COUNT)?,
                row.req_text(RUN_COLUMN_COUNT + 1)?,
            ));
            Ok(())
        },
    )?;
    let Some((record, set, identifier)) = found else {
        return Err(no_run(db, run));
    };
    let mut runs = [record];
    add_outcomes(db, &mut runs)?;
    let [record] = runs;
    let (tests, keys) = read_tests(
        db,
        "SELECT id, benchmark, options, metric, unit, direction FROM tests \
         WHERE id IN (SELECT test_id FROM samples WHERE run_id = ?1) \
            OR id IN (SELECT test_id FROM test_outcomes WHERE run_id = ?1) \
         ORDER BY position, id",
        args![run.0],
    )?;
    let mut samples: BTreeMap<TestKey, Vec<Sample>> = BTreeMap::new();
    db.query(
        "SELECT test_id, value, iterations, at_ms, round FROM samples \
         WHERE run_id = ?1 ORDER BY id",
        args![run.0],
        &mut |row| {
            let test = row.req_int(0)?;
            let key = keys.get(&test).ok_or_else(|| {
                Fail::Damaged(format!("a sample of run {} has no test {test}", run.0))
            })?;
            // The samples of a test mostly come in a row: clone its key
            // only when it is new.
            match samples.get_mut(key) {
                Some(list) => list.push(read_sample(row, 1)?),
                None => {
                    samples.insert(key.clone(), vec![read_sample(row, 1)?]);
                }
            }
            Ok(())
        },
    )?;
    Ok(RunContents {
        set,
        identifier,
        record,
        tests,
        samples,
    })
}

/// Writes a whole result set; inside a write transaction.
fn import_set(db: &mut dyn Sql, data: &ResultSetData) -> Res<()> {
    let set_id = ensure_set(db, &data.name)?;
    let mut test_ids = HashMap::new();
    for spec in &data.tests {
        test_ids.insert(&spec.key, ensure_test(db, set_id, &data.name, spec)?);
    }
    let test_of = |key: &TestKey, identifier: &str| {
        test_ids.get(key).copied().ok_or_else(|| {
            Fail::Store(StoreError::NotFound(format!(
                "identifier \"{identifier}\" has results of test {key}, which is not among the \
                 result set's tests; nothing was imported"
            )))
        })
    };
    let db_name = db.name().to_string();
    for identifier in &data.identifiers {
        let name = &identifier.name;
        let exists = || {
            Fail::Store(StoreError::Conflict(format!(
                "identifier \"{name}\" already exists in result set \"{}\" of {db_name}; nothing was \
                 imported. Rename it in the import or import into another result set",
                data.name,
            )))
        };
        if first_int(db, FIND_IDENTIFIER, args![set_id, name])?.is_some() {
            return Err(exists());
        }
        if identifier.runs.is_empty() && !identifier.samples.is_empty() {
            return Err(Fail::Store(StoreError::Conflict(format!(
                "identifier \"{name}\" has samples but no run to hold them; nothing was imported"
            ))));
        }
        let identifier_id =
            first_int(db, INSERT_IDENTIFIER, args![set_id, name])?.ok_or_else(exists)?;
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
                upsert_outcome(db, id, test_of(&outcome.test, name)?, outcome)?;
            }
            runs.push(id);
        }
        for (key, samples) in &identifier.samples {
            let test = test_of(key, name)?;
            let owners = identifier.runs_of_samples(key);
            // Consecutive samples of the same run go in together.
            let mut start = 0;
            while start < samples.len() {
                let run = owners[start];
                let len = owners[start..]
                    .iter()
                    .position(|&owner| owner != run)
                    .unwrap_or(samples.len() - start);
                insert_samples(db, runs[run], test, &samples[start..start + len])?;
                start += len;
            }
        }
    }
    Ok(())
}

/// A push id, run uid or job tag: 1 to 128 of `A-Z a-z 0-9 - _ .` (a
/// UUID, a hash, a counter, a word), safe in URLs, lists and messages.
pub(super) fn check_id(what: &str, id: &str) -> Res<()> {
    let fine = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    if id.is_empty() || id.len() > 128 || !id.chars().all(fine) {
        return Err(Fail::Store(StoreError::Invalid(format!(
            "{what} {id:?} must be 1 to 128 letters, digits, '-', '_' or '.'"
        ))));
    }
    Ok(())
}

/// A run uid, when the run has one.
pub(super) fn check_uid(info: &RunInfo) -> Res<()> {
    info.uid
        .as_deref()
        .map_or(Ok(()), |uid| check_id("run uid", uid))
}

/// The names and run uids of a result set to import.
fn check_set_data(data: &ResultSetData) -> Res<()> {
    check_name("result set", &data.name)?;
    for identifier in &data.identifiers {
        check_name("identifier", &identifier.name)?;
        for run in &identifier.runs {
            check_uid(&run.info)?;
        }
    }
    Ok(())
}

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

/// The columns [`read_token`] reads.
const TOKEN_QUERY: &str = "SELECT name, created_at_ms, revoked_at_ms, scopes FROM api_tokens";

fn read_token(row: &dyn Row) -> Res<TokenInfo> {
    let name = row.req_text(0)?;
    let scopes = Scope::parse_list(&row.req_text(3)?)
        .map_err(|why| Fail::Damaged(format!("token {name:?}'s scopes: {why}")))?;
    Ok(TokenInfo {
        name,
        created_at_ms: row.req_int(1)?,
        revoked_at_ms: row.int(2)?,
        scopes,
    })
}

fn list_sets(db: &mut dyn Sql) -> Res<Vec<ResultSetSummary>> {
    let mut sets = Vec::new();
    let mut ids = HashMap::new();
    db.query(
        "SELECT id, name, created_at_ms, \
           (SELECT COUNT(*) FROM tests t WHERE t.set_id = s.id), \
           (SELECT COUNT(*) FROM samples x JOIN runs r ON r.id = x.run_id \
              JOIN identifiers i ON i.id = r.identifier_id WHERE i.set_id = s.id) \
         FROM result_sets s ORDER BY created_at_ms, id",
        args![],
        &mut |row| {
            ids.insert(row.req_int(0)?, sets.len());
            sets.push(ResultSetSummary {
                name: row.req_text(1)?,
                identifiers: Vec::new(),
                tests: narrow("test count", row.req_int(3)?)?,
                samples: narrow("sample count", row.req_int(4)?)?,
                created_at_ms: row.req_int(2)?,
            });
            Ok(())
        },
    )?;
    db.query(
        "SELECT set_id, name FROM identifiers ORDER BY set_id, position, id",
        args![],
        &mut |row| {
            if let Some(&set) = ids.get(&row.req_int(0)?) {
                sets[set].identifiers.push(row.req_text(1)?);
            }
            Ok(())
        },
    )?;
    Ok(sets)
}

impl<S: Sql> Store for S {
    fn begin_run(&mut self, set: &str, identifier: &str, info: &RunInfo) -> Result<RunId> {
        with(self, "starting a run", |db| {
            check_name("result set", set)?;
            check_name("identifier", identifier)?;
            check_uid(info)?;
            transaction(db, true, |db| {
                let set_id = ensure_set(db, set)?;
                let identifier_id = ensure_identifier(db, set_id, identifier)?;
                insert_new_run(
                    db,
                    identifier_id,
                    RunStatus::Running,
                    info,
                    None,
                    "no run was started. Give every run a new random uid",
                )
            })
        })
    }

    fn unfinished_run(&mut self, set: &str, identifier: &str) -> Result<Option<RunRecord>> {
        with(self, "looking for a run to resume", |db| {
            transaction(db, false, |db| {
                let mut found = None;
                db.query(
                    concat!(
                        "SELECT ",
                        run_columns!(),
                        " FROM runs r \
                         JOIN identifiers i ON i.id = r.identifier_id \
                         JOIN result_sets s ON s.id = i.set_id \
                         WHERE s.name = ?1 AND i.name = ?2 ORDER BY r.id DESC LIMIT 1"
                    ),
                    args![set, identifier],
                    &mut |row| {
                        found = Some(read_run(row)?);
                        Ok(())
                    },
                )?;
                let Some(run) = found.filter(|run| {
                    matches!(run.status, RunStatus::Running | RunStatus::Interrupted)
                }) else {
                    return Ok(None);
                };
                let mut runs = [run];
                add_outcomes(db, &mut runs)?;
                let [run] = runs;
                Ok(Some(run))
            })
        })
    }

    fn resume_run(&mut self, run: RunId, pid: u32) -> Result<()> {
        with(self, "resuming a run", |db| {
            let changed = db.execute(
                "UPDATE runs SET status = 'running', pid = ?2, ended_at_ms = NULL WHERE id = ?1",
                args![run.0, pid],
            )?;
            require_run(db, changed, run)
        })
    }

    fn test_id(&mut self, set: &str, spec: &TestSpec) -> Result<TestId> {
        with(self, "registering a test", |db| {
            check_name("result set", set)?;
            transaction(db, true, |db| {
                let set_id = ensure_set(db, set)?;
                ensure_test(db, set_id, set, spec).map(TestId)
            })
        })
    }

    fn add_sample(&mut self, run: RunId, test: TestId, sample: &Sample) -> Result<()> {
        with(self, "storing a sample", |db| {
            insert_sample(db, run, test.0, sample)
        })
    }

    /// Records how `test` ended in `run`; a second call for the same pair
    /// replaces the first. `outcome.test` is not checked against `test`.
    fn end_test(&mut self, run: RunId, test: TestId, outcome: &TestOutcome) -> Result<()> {
        with(self, "recording how a test ended", |db| {
            upsert_outcome(db, run, test.0, outcome)
        })
    }

    fn end_run(&mut self, run: RunId, status: RunStatus, steal_percent: Option<f64>) -> Result<()> {
        with(self, "ending a run", |db| {
            valid(validate::steal_percent(steal_percent), || {
                format!("the end of run {}", run.0)
            })?;
            let changed = db.execute(
                "UPDATE runs SET status = ?2, ended_at_ms = ?3, \
                 steal_percent = CAST(?4 AS DOUBLE PRECISION) WHERE id = ?1",
                args![run.0, status.as_str(), now_ms(), steal_percent],
            )?;
            require_run(db, changed, run)
        })
    }

    fn result_sets(&mut self) -> Result<Vec<ResultSetSummary>> {
        with(self, "listing result sets", |db| {
            transaction(db, false, list_sets)
        })
    }

    fn load(&mut self, set: &str) -> Result<ResultSetData> {
        with(self, "loading a result set", |db| {
            transaction(db, false, |db| load_set(db, set))
        })
    }

    fn import(&mut self, data: &ResultSetData) -> Result<()> {
        with(self, "importing a result set", |db| {
            check_set_data(data)?;
            transaction(db, true, |db| import_set(db, data))
        })
    }

    fn last_round(&mut self, set: &str, identifier: &str) -> Result<Option<u32>> {
        with(self, "finding the last round", |db| {
            let round = first_int(
                db,
                "SELECT MAX(x.round) FROM samples x \
                 JOIN runs r ON r.id = x.run_id \
                 JOIN identifiers i ON i.id = r.identifier_id \
                 JOIN result_sets s ON s.id = i.set_id \
                 WHERE s.name = ?1 AND i.name = ?2",
                args![set, identifier],
            )?;
            round.map(|round| narrow("round", round)).transpose()
        })
    }

    fn ended_tests(&mut self, run: RunId) -> Result<Vec<TestKey>> {
        with(self, "listing a run's ended tests", |db| {
            rows(
                db,
                "SELECT t.benchmark, t.options, t.metric FROM test_outcomes o \
                 JOIN tests t ON t.id = o.test_id WHERE o.run_id = ?1 ORDER BY t.position, t.id",
                args![run.0],
                |row| read_key(row, 0),
            )
        })
    }

    fn save_bisect(&mut self, name: &str, state_json: &str) -> Result<()> {
        with(self, "saving the bisection state", |db| {
            check_name("bisection", name)?;
            db.execute(
                "INSERT INTO bisects (name, state_json, updated_at_ms) VALUES (?1, ?2, ?3) \
                 ON CONFLICT (name) DO UPDATE SET state_json = excluded.state_json, \
                 updated_at_ms = excluded.updated_at_ms",
                args![name, state_json, now_ms()],
            )?;
            Ok(())
        })
    }

    fn load_bisect(&mut self, name: &str) -> Result<Option<String>> {
        with(self, "loading the bisection state", |db| {
            Ok(texts(
                db,
                "SELECT state_json FROM bisects WHERE name = ?1",
                args![name],
            )?
            .pop())
        })
    }

    fn delete_bisect(&mut self, name: &str) -> Result<()> {
        with(self, "forgetting the bisection state", |db| {
            db.execute("DELETE FROM bisects WHERE name = ?1", args![name])?;
            Ok(())
        })
    }

    fn push(&mut self, push: &Push, data: &ResultSetData) -> Result<PushOutcome> {
        with(self, "storing pushed samples", |db| {
            check_id("push id", push.id)?;
            check_set_data(data)?;
            transaction(db, true, |db| push_set(db, push, data))
        })
    }

    fn create_token(&mut self, name: &str, secret_sha256: &str, scopes: &[Scope]) -> Result<()> {
        with(self, "creating an API token", |db| {
            check_name("token", name)?;
            if scopes.is_empty() {
                return Err(Fail::Store(StoreError::Invalid(format!(
                    "token \"{name}\" would have no scope; give one or more of {}",
                    Scope::list_text(&Scope::ALL)
                ))));
            }
            let mut scopes = scopes.to_vec();
            scopes.sort();
            scopes.dedup();
            let added = db.execute(
                "INSERT INTO api_tokens (name, secret_sha256, created_at_ms, scopes) \
                 VALUES (?1, ?2, ?3, ?4) ON CONFLICT DO NOTHING",
                args![name, secret_sha256, now_ms(), &Scope::list_text(&scopes)],
            )?;
            if added == 0 {
                return Err(Fail::Store(StoreError::Conflict(format!(
                    "a token named \"{name}\" exists in {} (revoked tokens keep their name); \
                     choose another name",
                    db.name()
                ))));
            }
            Ok(())
        })
    }

    fn revoke_token(&mut self, name: &str) -> Result<()> {
        with(self, "revoking an API token", |db| {
            db.execute(
                "UPDATE api_tokens SET revoked_at_ms = ?2 WHERE name = ?1 AND revoked_at_ms IS NULL",
                args![name, now_ms()],
            )?;
            if first_int(
                db,
                "SELECT created_at_ms FROM api_tokens WHERE name = ?1",
                args![name],
            )?
            .is_none()
            {
                return Err(Fail::Store(StoreError::NotFound(format!(
                    "there is no token \"{name}\" in {}; `kbench token list` shows them",
                    db.name()
                ))));
            }
            Ok(())
        })
    }

    fn tokens(&mut self) -> Result<Vec<TokenInfo>> {
        with(self, "listing API tokens", |db| {
            rows(
                db,
                &format!("{TOKEN_QUERY} ORDER BY created_at_ms, name"),
                args![],
                read_token,
            )
        })
    }

    fn token_by_hash(&mut self, secret_sha256: &str) -> Result<Option<TokenInfo>> {
        with(self, "checking an API token", |db| {
            Ok(rows(
                db,
                &format!("{TOKEN_QUERY} WHERE secret_sha256 = ?1 AND revoked_at_ms IS NULL"),
                args![secret_sha256],
                read_token,
            )?
            .pop())
        })
    }

    fn bisects(&mut self) -> Result<Vec<BisectInfo>> {
        with(self, "listing bisections", |db| {
            rows(
                db,
                "SELECT name, state_json, updated_at_ms FROM bisects ORDER BY name",
                args![],
                |row| {
                    Ok(BisectInfo {
                        name: row.req_text(0)?,
                        state_json: row.req_text(1)?,
                        updated_at_ms: row.req_int(2)?,
                    })
                },
            )
        })
    }

    fn run_contents(&mut self, run: RunId) -> Result<RunContents> {
        with(self, "reading a run", |db| {
            transaction(db, false, |db| read_run_contents(db, run))
        })
    }

    fn append_live(&mut self, set: &str, batch: &LiveBatch, token: &str) -> Result<LiveOutcome> {
        with(self, "storing live samples", |db| {
            live::check(set, batch)?;
            transaction(db, true, |db| live::append(db, set, batch, token))
        })
    }

    fn submit_job(&mut self, spec: &JobSpec) -> Result<i64> {
        with(self, "submitting a job", |db| {
            jobs::check_spec(spec)?;
            jobs::submit(db, spec)
        })
    }

    fn lease_job(
        &mut self,
        worker: &str,
        token: &str,
        tags: &[String],
        lease_ms: i64,
    ) -> Result<Option<Job>> {
        with(self, "leasing a job", |db| {
            jobs::check_worker(worker, tags)?;
            jobs::check_lease(lease_ms)?;
            transaction(db, true, |db| {
                jobs::lease(db, worker, token, tags, lease_ms)
            })
        })
    }

    fn renew_lease(&mut self, job: i64, worker: &str, token: &str, lease_ms: i64) -> Result<bool> {
        with(self, "renewing a job's lease", |db| {
            jobs::check_lease(lease_ms)?;
            transaction(db, true, |db| jobs::renew(db, job, worker, token, lease_ms))
        })
    }

    fn finish_job(
        &mut self,
        job: i64,
        worker: &str,
        token: &str,
        ok: bool,
        message: &str,
    ) -> Result<bool> {
        with(self, "finishing a job", |db| {
            transaction(db, true, |db| {
                jobs::finish(db, job, worker, token, ok, message)
            })
        })
    }

    fn jobs(&mut self) -> Result<Vec<Job>> {
        with(self, "listing jobs", jobs::list)
    }

    fn job(&mut self, id: i64) -> Result<Job> {
        with(self, "reading a job", |db| jobs::get(db, id))
    }

    fn workers(&mut self) -> Result<Vec<WorkerInfo>> {
        with(self, "listing workers", jobs::workers)
    }
}
