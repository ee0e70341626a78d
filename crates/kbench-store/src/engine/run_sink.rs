//! [`RunSink`]: what a run writes as it goes, and reads back of its
//! identifier to resume.

use super::check::{check_name, check_uid, valid};
use super::records::{
    aborted_at, add_outcomes, count_samples, ensure_identifier, ensure_set, ensure_test,
    insert_new_run, no_run, read_key, read_run, run_columns, sample_row, status_column,
    upsert_outcome,
};
use super::{Fail, Res, Sql, args, blocks, identifier_lock_key, rows, transaction, with};
use crate::validate;
use crate::{
    Result, RunId, RunInfo, RunRecord, RunSink, RunStatus, StoreError, TestId, TestOutcome,
};
use kbench_model::{Sample, TestKey, TestSpec, now_ms};

/// Stores a sample only when its run and test belong to the same result
/// set, so `load` never meets a sample of a foreign test. The run's row is
/// locked against removal ([`Sql::key_share`]) until the sample is in:
/// the samples have no foreign key to do it (schema version 8). The run's
/// `sample_count` counts it (schema version 9). Inside a write transaction.
fn insert_sample(db: &mut dyn Sql, run: RunId, test: i64, sample: &Sample) -> Res<()> {
    // One statement checks the pair and reads the test's last part.
    let sql = format!(
        "SELECT b.part, b.samples FROM (SELECT id, identifier_id FROM runs WHERE id = ?1{}) r \
         JOIN identifiers i ON i.id = r.identifier_id \
         JOIN tests t ON t.set_id = i.set_id AND t.id = ?2 \
         LEFT JOIN sample_blocks b ON b.run_id = r.id AND b.test_id = t.id \
         ORDER BY b.part DESC LIMIT 1",
        db.key_share()
    );
    let row = sample_row(run, test, sample)?;
    let mut last = None;
    db.query(&sql, args![run.0, test], &mut |found| {
        last = Some(blocks::read_last_part(found, run.0, test)?);
        Ok(())
    })?;
    let Some(last) = last else {
        return Err(Fail::Store(StoreError::NotFound(format!(
            "run {} and test {test} are not both in {} within one result set; the sample was not stored",
            run.0,
            db.name()
        ))));
    };
    blocks::extend(db, last, &[row])?;
    count_samples(db, run.0, 1)
}

/// `NotFound` when a statement on a run changed nothing.
fn require_run(db: &dyn Sql, changed: u64, run: RunId) -> Res<()> {
    if changed == 0 {
        return Err(no_run(db, run));
    }
    Ok(())
}

impl<S: Sql> RunSink for S {
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

    fn lock_identifier(&mut self, set: &str, identifier: &str) -> Result<()> {
        with(self, "taking the identifier's lock", |db| {
            if db.try_lock(identifier_lock_key(set, identifier))? {
                return Ok(());
            }
            Err(Fail::Store(StoreError::Conflict(format!(
                "another kbench is measuring identifier \"{identifier}\" of result set \"{set}\" \
                 in {} right now (it holds the identifier's lock); wait for it to end, or measure \
                 under another --as",
                db.name()
            ))))
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
            transaction(db, true, |db| insert_sample(db, run, test.0, sample))
        })
    }

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
            let ended = now_ms();
            let changed = db.execute(
                "UPDATE runs SET status = ?2, ended_at_ms = ?3, \
                 steal_percent = CAST(?4 AS DOUBLE PRECISION), aborted_at_ms = ?5 WHERE id = ?1",
                args![
                    run.0,
                    status_column(status),
                    ended,
                    steal_percent,
                    aborted_at(status, Some(ended))
                ],
            )?;
            require_run(db, changed, run)?;
            // Between rounds nothing is measured: the place to sync.
            db.sync()
        })
    }

    fn last_round(&mut self, set: &str, identifier: &str) -> Result<Option<u32>> {
        with(self, "finding the last round", |db| {
            let mut last = None;
            db.query(
                "SELECT b.samples FROM sample_blocks b \
                 JOIN runs r ON r.id = b.run_id \
                 JOIN identifiers i ON i.id = r.identifier_id \
                 JOIN result_sets s ON s.id = i.set_id \
                 WHERE s.name = ?1 AND i.name = ?2",
                args![set, identifier],
                &mut |row| {
                    let rounds = blocks::unpack(&row.req_blob(0)?)?
                        .into_iter()
                        .map(|s| s.round);
                    last = last.max(rounds.max());
                    Ok(())
                },
            )?;
            Ok(last)
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
}
