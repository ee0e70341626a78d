//! The rows every role reads or writes alike: result sets, identifiers,
//! tests, runs, samples and outcomes, found or created, and their columns
//! read back.
//!
//! Find-or-create steps insert with `ON CONFLICT DO NOTHING` and read
//! again, so two writers creating the same result set, identifier or test
//! at once (possible on PostgreSQL) both end up with the one row.

use super::check::valid;
use super::convert::{from_json, narrow, to_i64, to_json};
use super::{
    Fail, Param, Res, Row, SampleBlock, SampleRow, Sql, args, blocks, first_int, parse_options,
    rows, texts,
};
use crate::validate;
use crate::{RunId, RunInfo, RunRecord, RunStatus, StoreError, TestOutcome, TestOutcomeKind};
use kbench_model::{Direction, Sample, SystemSnapshot, TestKey, TestSpec, now_ms};
use std::collections::{BTreeMap, HashMap, HashSet};

/// A test's key from its `benchmark, options, metric` columns at `first`.
pub(super) fn read_key(row: &dyn Row, first: usize) -> Res<TestKey> {
    Ok(TestKey {
        benchmark: row.req_text(first)?,
        options: parse_options(&row.req_text(first + 1)?)?,
        metric: row.req_text(first + 2)?,
    })
}

pub(super) fn read_direction(text: &str, what: impl std::fmt::Display) -> Res<Direction> {
    Direction::parse(text)
        .ok_or_else(|| Fail::Damaged(format!("{what} has an unknown direction {text:?}")))
}

/// How many columns [`run_columns!`] has; a query's own columns follow them.
pub(super) const RUN_COLUMN_COUNT: usize = 13;

/// The columns [`read_run`] reads, after `r.`.
macro_rules! run_columns {
    () => {
        "r.id, r.status, r.started_at_ms, r.ended_at_ms, r.pid, r.wrapper, r.tool_version, \
         r.snapshot_json, r.host_json, r.notes_json, r.steal_percent, r.uid, r.aborted_at_ms"
    };
}
pub(super) use run_columns;

/// A run from [`run_columns!`], without its outcomes (read after the query,
/// see [`Sql::query`]).
pub(super) fn read_run(row: &dyn Row) -> Res<RunRecord> {
    let id = RunId(row.req_int(0)?);
    let status = row.req_text(1)?;
    let mut snapshot = from_json::<SystemSnapshot>("a run's snapshot", &row.req_text(7)?)?;
    if let Some(steal) = row.real(10)? {
        snapshot.steal_percent = Some(steal);
    }
    let status = match row.int(12)? {
        Some(_) => RunStatus::Aborted,
        None => RunStatus::parse(&status).ok_or_else(|| {
            Fail::Damaged(format!("run {} has an unknown status {status:?}", id.0))
        })?,
    };
    Ok(RunRecord {
        id,
        status,
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
pub(super) fn add_outcomes(db: &mut dyn Sql, runs: &mut [RunRecord]) -> Res<()> {
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
pub(super) fn find_or_insert(
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

pub(super) const FIND_IDENTIFIER: &str =
    "SELECT id FROM identifiers WHERE set_id = ?1 AND name = ?2";

/// Adds an identifier after the set's last one (`None` when it exists).
pub(super) const INSERT_IDENTIFIER: &str = "INSERT INTO identifiers (set_id, name, position) \
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

/// `Conflict` when a test stored in `unit` and `direction` is now reported
/// as `spec` says otherwise.
fn same_unit(unit: &str, direction: Direction, spec: &TestSpec, set: &str) -> Res<()> {
    if unit == spec.unit && direction == spec.direction {
        return Ok(());
    }
    Err(Fail::Store(StoreError::Conflict(format!(
        "test {} is stored in result set \"{set}\" in {unit} ({}), but is now reported in {} ({}); \
         a test keeps its unit and direction: fix the benchmark or use a new result set",
        spec.key,
        direction.phrase(),
        spec.unit,
        spec.direction.phrase()
    ))))
}

/// The most tests one multi-row INSERT of [`ensure_tests`] holds (7
/// parameters each).
const TESTS_PER_INSERT: usize = 256;

/// The ids of a set's tests `specs`, as [`ensure_test`] gives each, in a
/// few statements however many there are (an import's thousands): the
/// set's stored tests are read at once, and the new ones inserted after
/// them, in the order given, by multi-row INSERTs.
pub(super) fn ensure_tests(
    db: &mut dyn Sql,
    set_id: i64,
    set: &str,
    specs: &[TestSpec],
) -> Res<HashMap<TestKey, i64>> {
    let (stored, stored_ids) = read_tests(
        db,
        "SELECT id, benchmark, options, metric, unit, direction FROM tests WHERE set_id = ?1",
        args![set_id],
    )?;
    let id_of: HashMap<&TestKey, i64> = stored_ids.iter().map(|(&id, key)| (key, id)).collect();
    let stored: HashMap<&TestKey, &TestSpec> =
        stored.iter().map(|spec| (&spec.key, spec)).collect();
    let mut ids = HashMap::new();
    let mut new = Vec::new();
    let mut listed = HashSet::new();
    for spec in specs {
        valid(validate::test_spec(spec), || {
            format!("test {} of result set \"{set}\"", spec.key)
        })?;
        match stored.get(&spec.key) {
            Some(old) => {
                same_unit(&old.unit, old.direction, spec, set)?;
                ids.insert(spec.key.clone(), id_of[&spec.key]);
            }
            None if listed.insert(&spec.key) => new.push(spec),
            None => {}
        }
    }
    let mut position = first_int(
        db,
        "SELECT COALESCE(MAX(position) + 1, 0) FROM tests WHERE set_id = ?1",
        args![set_id],
    )?
    .unwrap_or(0);
    for chunk in new.chunks(TESTS_PER_INSERT) {
        let options: Vec<String> = chunk.iter().map(|spec| spec.key.options_text()).collect();
        let mut params = Vec::with_capacity(7 * chunk.len());
        for (spec, options) in chunk.iter().zip(&options) {
            params.extend_from_slice(args![
                set_id,
                &spec.key.benchmark,
                options,
                &spec.key.metric,
                &spec.unit,
                spec.direction.as_str(),
                position
            ]);
            position += 1;
        }
        let rows: Vec<String> = (0..chunk.len())
            .map(|i| {
                let n = 7 * i;
                format!(
                    "(CAST(?{} AS BIGINT), ?{}, ?{}, ?{}, ?{}, ?{}, CAST(?{} AS BIGINT))",
                    n + 1,
                    n + 2,
                    n + 3,
                    n + 4,
                    n + 5,
                    n + 6,
                    n + 7
                )
            })
            .collect();
        db.query(
            &format!(
                "INSERT INTO tests (set_id, benchmark, options, metric, unit, direction, position) \
                 VALUES {} ON CONFLICT (set_id, benchmark, options, metric) DO NOTHING \
                 RETURNING id, benchmark, options, metric",
                rows.join(", ")
            ),
            &params,
            &mut |row| {
                ids.insert(read_key(row, 1)?, row.req_int(0)?);
                Ok(())
            },
        )?;
    }
    // Those another writer inserted in between are found one by one.
    for spec in new {
        if !ids.contains_key(&spec.key) {
            ids.insert(spec.key.clone(), ensure_test(db, set_id, set, spec)?);
        }
    }
    Ok(ids)
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
            return same_unit(&unit, stored, spec, set).map(|()| id);
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

/// What the `status` column holds for `status`: an aborted run is stored
/// as failed, with `aborted_at_ms` set (schema_v12.sql).
pub(super) fn status_column(status: RunStatus) -> &'static str {
    match status {
        RunStatus::Aborted => RunStatus::Failed.as_str(),
        other => other.as_str(),
    }
}

/// When a run of `status` ending at `ended_at_ms` was aborted, for the
/// `aborted_at_ms` column.
pub(super) fn aborted_at(status: RunStatus, ended_at_ms: Option<i64>) -> Option<i64> {
    (status == RunStatus::Aborted).then(|| ended_at_ms.unwrap_or_else(kbench_model::now_ms))
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
                           tool_version, snapshot_json, host_json, notes_json, uid, \
                           aborted_at_ms) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12) \
         ON CONFLICT (uid) DO NOTHING RETURNING id",
        args![
            identifier_id,
            status_column(status),
            info.started_at_ms,
            ended_at_ms,
            info.pid,
            info.wrapper.as_ref(),
            &info.tool_version,
            &to_json("the system snapshot", &info.snapshot)?,
            host.as_ref(),
            &to_json("the run's notes", &info.notes)?,
            info.uid.as_ref(),
            aborted_at(status, ended_at_ms)
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
pub(super) fn insert_new_run(
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

/// A sample's row (run, test, round, value, iterations, at_ms), once the
/// sample is as [`validate::sample`] wants it (NaN would be stored as NULL
/// by SQLite, a value <= 0 has no log for the ratios).
pub(super) fn sample_row(run: RunId, test: i64, sample: &Sample) -> Res<SampleRow> {
    valid(validate::sample(sample), || {
        format!("a sample of run {}", run.0)
    })?;
    Ok(SampleRow {
        run: run.0,
        test,
        round: sample.round,
        value: sample.value,
        iterations: to_i64("iteration count", sample.iterations)?,
        at_ms: sample.at_ms,
    })
}

/// Appends samples of one test to its block in one run, in order. The
/// caller knows that the run and the test belong to one result set (it
/// made or checked both in the same transaction).
pub(super) fn insert_samples(
    db: &mut dyn Sql,
    run: RunId,
    test: i64,
    samples: &[Sample],
) -> Res<()> {
    let rows = samples
        .iter()
        .map(|sample| sample_row(run, test, sample))
        .collect::<Res<Vec<_>>>()?;
    blocks::append(db, run.0, test, &rows)?;
    count_samples(db, run.0, rows.len() as i64)
}

/// Stores blocks of samples of runs made in this transaction, which have
/// none yet, and counts them in their runs' `sample_count` (schema version
/// 9). Every write of samples counts them, here or in [`insert_samples`],
/// so the counts stay exact.
pub(super) fn store_new_samples(db: &mut dyn Sql, new: &[SampleBlock]) -> Res<()> {
    db.insert_blocks(new)?;
    let mut per_run: BTreeMap<i64, u64> = BTreeMap::new();
    for block in new {
        *per_run.entry(block.run).or_default() += blocks::count(block.samples.len());
    }
    for (run, added) in per_run {
        count_samples(db, run, to_i64("sample count", added)?)?;
    }
    Ok(())
}

/// Adds `added` samples to run `run`'s `sample_count`.
pub(super) fn count_samples(db: &mut dyn Sql, run: i64, added: i64) -> Res<()> {
    db.execute(
        "UPDATE runs SET sample_count = sample_count + ?2 WHERE id = ?1",
        args![run, added],
    )?;
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
pub(super) fn no_run(db: &dyn Sql, run: RunId) -> Fail {
    Fail::Store(StoreError::NotFound(format!(
        "there is no run {} in {}",
        run.0,
        db.name()
    )))
}

/// `NotFound` for a missing result set, naming those that exist.
/// Identifier `id`'s runs in the order they were made, with their
/// outcomes.
pub(super) fn identifier_runs(db: &mut dyn Sql, id: i64) -> Res<Vec<RunRecord>> {
    let mut runs = rows(
        db,
        concat!(
            "SELECT ",
            run_columns!(),
            " FROM runs r WHERE r.identifier_id = ?1 AND r.aborted_at_ms IS NULL ORDER BY r.id"
        ),
        args![id],
        read_run,
    )?;
    add_outcomes(db, &mut runs)?;
    Ok(runs)
}

/// Set `set`'s id, title and description; the missing-set error (naming
/// the sets there are) when there is none.
pub(super) fn set_header(
    db: &mut dyn Sql,
    set: &str,
) -> Res<(i64, Option<String>, Option<String>)> {
    let mut found = None;
    db.query(
        "SELECT id, title, description FROM result_sets WHERE name = ?1",
        args![set],
        &mut |row| {
            found = Some((row.req_int(0)?, row.text(1)?, row.text(2)?));
            Ok(())
        },
    )?;
    match found {
        Some(header) => Ok(header),
        None => Err(missing_set(db, set)?),
    }
}

pub(super) fn missing_set(db: &mut dyn Sql, set: &str) -> Res<Fail> {
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
pub(super) fn read_tests(
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
