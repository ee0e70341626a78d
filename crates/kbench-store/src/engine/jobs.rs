//! The lab's job queue: jobs submitted for workers, leased by one worker
//! at a time for a while and renewed while it works, leased again when a
//! lease runs out (the worker died) and failed after
//! [`MAX_JOB_ATTEMPTS`] such losses; and the workers as last seen.
//!
//! Tags (of jobs and workers) are stored comma-separated: their check
//! (`kbench_model::validate_id`) keeps commas out of them.

use super::check::{check_id, check_name};
use super::convert::{from_json, narrow, to_json};
use super::{Fail, Res, Row, Sql, args, first_int, rows, transaction, with};
use crate::{
    Job, JobLease, JobQueue, JobSpec, JobState, MAX_JOB_ATTEMPTS, Result, StoreError, WorkerInfo,
};
use kbench_model::now_ms;

/// [`JobSpec::check`], as a step of a store operation.
fn check_spec(spec: &JobSpec) -> Res<()> {
    spec.check()
        .map_err(|msg| Fail::Store(StoreError::Invalid(msg)))
}

/// A worker's name (as a result set's) and its tags (as a job's).
fn check_worker(worker: &str, tags: &[String]) -> Res<()> {
    check_name("worker", worker)?;
    tags.iter().try_for_each(|tag| check_id("tag", tag))
}

/// A lease must last: `lease_ms` must be positive.
fn check_lease(lease_ms: i64) -> Res<()> {
    if lease_ms <= 0 {
        return Err(Fail::Store(StoreError::Invalid(format!(
            "a lease of {lease_ms} ms ends before it starts; give the time a worker may stay \
             silent before its job is given to another (e.g. 60 s)"
        ))));
    }
    Ok(())
}

fn tags_text(tags: &[String]) -> String {
    tags.join(",")
}

fn read_tags(text: &str) -> impl Iterator<Item = &str> {
    text.split(',').filter(|tag| !tag.is_empty())
}

fn submit(db: &mut dyn Sql, spec: &JobSpec) -> Res<i64> {
    first_int(
        db,
        "INSERT INTO jobs (spec_json, tags, set_name, identifier, state, attempts, \
                           submitted_at_ms) \
         VALUES (?1, ?2, ?3, ?4, 'queued', 0, ?5) RETURNING id",
        args![
            &to_json("the job", spec)?,
            &tags_text(&spec.tags),
            &spec.set,
            &spec.identifier,
            now_ms()
        ],
    )?
    .ok_or_else(|| Fail::Damaged("a job was inserted without an id".into()))
}

/// The columns [`read_job`] reads.
const JOB_COLUMNS: &str = "id, spec_json, state, attempts, worker, lease_expires_at_ms, \
                           submitted_at_ms, started_at_ms, finished_at_ms, message, token_name";

fn read_job(row: &dyn Row) -> Res<Job> {
    let id = row.req_int(0)?;
    let state = row.req_text(2)?;
    Ok(Job {
        id,
        spec: from_json(&format!("job {id}'s spec"), &row.req_text(1)?)?,
        state: JobState::parse(&state)
            .ok_or_else(|| Fail::Damaged(format!("job {id} has an unknown state {state:?}")))?,
        attempts: narrow("attempts", row.req_int(3)?)?,
        worker: row.text(4)?,
        lease_expires_at_ms: row.int(5)?,
        submitted_at_ms: row.req_int(6)?,
        started_at_ms: row.int(7)?,
        finished_at_ms: row.int(8)?,
        message: row.text(9)?,
        token: row.text(10)?,
    })
}

/// Every job, newest first.
fn list(db: &mut dyn Sql) -> Res<Vec<Job>> {
    rows(
        db,
        &format!("SELECT {JOB_COLUMNS} FROM jobs ORDER BY id DESC"),
        args![],
        read_job,
    )
}

/// Job `id`; `NotFound` saying which ids exist.
fn get(db: &mut dyn Sql, id: i64) -> Res<Job> {
    let mut found = None;
    db.query(
        &format!("SELECT {JOB_COLUMNS} FROM jobs WHERE id = ?1"),
        args![id],
        &mut |row| {
            found = Some(read_job(row)?);
            Ok(())
        },
    )?;
    if let Some(job) = found {
        return Ok(job);
    }
    let mut range = None;
    db.query("SELECT MIN(id), MAX(id) FROM jobs", args![], &mut |row| {
        range = row.int(0)?.zip(row.int(1)?);
        Ok(())
    })?;
    let known = match range {
        Some((first, last)) => format!("its jobs are numbered {first} to {last}"),
        None => "it holds no jobs yet".to_string(),
    };
    Err(Fail::Store(StoreError::NotFound(format!(
        "there is no job {id} in {}; {known}",
        db.name()
    ))))
}

/// A job a worker may lease at `?1` (now): queued, or running with its
/// lease expired and fewer than `?2` ([`MAX_JOB_ATTEMPTS`]) leases so far.
const LEASABLE: &str = "(state = 'queued' OR (state = 'running' AND lease_expires_at_ms < ?1 \
                        AND attempts < ?2))";

/// Leases the oldest job `worker` may take (its tags all among `tags`),
/// after failing the jobs that lost too many workers; inside a write
/// transaction. Records the worker as seen, holding the job or none.
fn lease(
    db: &mut dyn Sql,
    worker: &str,
    token: &str,
    tags: &[String],
    lease_ms: i64,
) -> Res<Option<Job>> {
    let now = now_ms();
    claim_name(db, worker, token)?;
    fail_abandoned(db, now)?;
    let mut candidates = Vec::new();
    db.query(
        &format!("SELECT id, tags FROM jobs WHERE {LEASABLE} ORDER BY id"),
        args![now, MAX_JOB_ATTEMPTS],
        &mut |row| {
            if read_tags(&row.req_text(1)?).all(|tag| tags.iter().any(|have| have == tag)) {
                candidates.push(row.req_int(0)?);
            }
            Ok(())
        },
    )?;
    // Read without locks, so another worker may have taken a candidate
    // since (it is no longer leasable) or be taking it now (it is locked,
    // and skipped on PostgreSQL).
    let claim = format!(
        "SELECT id FROM jobs WHERE id = ?3 AND {LEASABLE}{}",
        db.skip_locked()
    );
    let mut leased = None;
    for id in candidates {
        if first_int(db, &claim, args![now, MAX_JOB_ATTEMPTS, id])?.is_some() {
            leased = Some(id);
            break;
        }
    }
    if let Some(id) = leased {
        db.execute(
            "UPDATE jobs SET state = 'running', worker = ?2, attempts = attempts + 1, \
             lease_expires_at_ms = ?3, started_at_ms = ?4, token_name = ?5 WHERE id = ?1",
            args![id, worker, now.saturating_add(lease_ms), now, token],
        )?;
        // The worker that lost the job (its lease expired) holds it no more.
        db.execute(
            "UPDATE workers SET job_id = NULL WHERE job_id = ?1 AND name <> ?2",
            args![id, worker],
        )?;
    }
    db.execute(
        "INSERT INTO workers (name, tags, last_seen_ms, job_id, token_name) \
         VALUES (?1, ?2, ?3, ?4, ?5) \
         ON CONFLICT (name) DO UPDATE SET tags = excluded.tags, \
         last_seen_ms = excluded.last_seen_ms, job_id = excluded.job_id, \
         token_name = excluded.token_name",
        args![worker, &tags_text(tags), now, leased, token],
    )?;
    leased.map(|id| get(db, id)).transpose()
}

/// Makes the worker name `worker` this token's, unless it is another's
/// (`Forbidden`): a name names one worker, and only its token acts as it.
/// A name seen before tokens owned names is taken by the first to lease.
fn claim_name(db: &mut dyn Sql, worker: &str, token: &str) -> Res<()> {
    let mut owner: Option<String> = None;
    db.query(
        "SELECT token_name FROM workers WHERE name = ?1",
        args![worker],
        &mut |row| {
            owner = row.text(0)?;
            Ok(())
        },
    )?;
    match owner {
        Some(owner) if owner != token => Err(Fail::Store(StoreError::Forbidden(format!(
            "worker name \"{worker}\" belongs to another API token's worker in {}; token \
             \"{token}\" cannot lease as it. Give this worker a name of its own (--name)",
            db.name()
        )))),
        _ => Ok(()),
    }
}

/// Whether a statement on `worker`'s lease of `job`, taken with `token`,
/// changed it (`changed` rows): false when the lease is no longer
/// `worker`'s (it was lost), `Forbidden` when `worker` holds it under
/// another token (a token acts only on the leases its own workers took).
fn acted_on_lease(
    db: &mut dyn Sql,
    changed: u64,
    job: i64,
    worker: &str,
    token: &str,
) -> Res<bool> {
    if changed > 0 {
        return Ok(true);
    }
    let mut holder: Option<String> = None;
    db.query(
        "SELECT token_name FROM jobs WHERE id = ?1 AND worker = ?2 AND state = 'running'",
        args![job, worker],
        &mut |row| {
            holder = row.text(0)?;
            Ok(())
        },
    )?;
    match holder {
        Some(holder) if holder != token => Err(Fail::Store(StoreError::Forbidden(format!(
            "job {job} is leased by worker \"{worker}\" with another API token (\"{holder}\"); \
             token \"{token}\" cannot renew, finish or upload for it. Only the token a lease \
             was taken with acts on it"
        )))),
        _ => Ok(false),
    }
}

/// The lease of a job whose lease was taken with this token, or before
/// leases had owners (NULL), as a condition on `jobs` with the token at
/// parameter `?N`.
fn leased_with(n: usize) -> String {
    format!("COALESCE(token_name, ?{n}) = ?{n}")
}

/// Fails the running jobs whose lease expired after [`MAX_JOB_ATTEMPTS`]
/// leases (each of their workers died), and frees their last worker.
fn fail_abandoned(db: &mut dyn Sql, now: i64) -> Res<()> {
    let fail = format!(
        "UPDATE jobs SET state = 'failed', finished_at_ms = ?1, lease_expires_at_ms = NULL, \
             message = 'lost its worker ' || CAST(attempts AS TEXT) || ' times; last worker ' \
                       || COALESCE(worker, 'unknown') \
             WHERE id IN (SELECT id FROM jobs WHERE state = 'running' \
                          AND lease_expires_at_ms < ?1 AND attempts >= ?2{}) \
             RETURNING id",
        db.skip_locked()
    );
    let failed = rows(db, &fail, args![now, MAX_JOB_ATTEMPTS], |row| {
        row.req_int(0)
    })?;
    for id in failed {
        db.execute(
            "UPDATE workers SET job_id = NULL WHERE job_id = ?1",
            args![id],
        )?;
    }
    Ok(())
}

/// Records `worker` as seen now and, when it held the `released` job, as
/// holding none.
fn seen(db: &mut dyn Sql, worker: &str, token: &str, now: i64, released: Option<i64>) -> Res<()> {
    db.execute(
        &format!(
            "UPDATE workers SET last_seen_ms = ?2, \
             job_id = CASE WHEN job_id = ?3 THEN NULL ELSE job_id END \
             WHERE name = ?1 AND {}",
            leased_with(4)
        ),
        args![worker, now, released, token],
    )?;
    Ok(())
}

/// Extends `worker`'s lease of running `job` (even expired: no other worker
/// took it), taken with `token`; inside a write transaction.
fn renew(db: &mut dyn Sql, job: i64, worker: &str, token: &str, lease_ms: i64) -> Res<bool> {
    let now = now_ms();
    let renewed = db.execute(
        &format!(
            "UPDATE jobs SET lease_expires_at_ms = ?3 \
             WHERE id = ?1 AND worker = ?2 AND state = 'running' AND {}",
            leased_with(4)
        ),
        args![job, worker, now.saturating_add(lease_ms), token],
    )?;
    let renewed = acted_on_lease(db, renewed, job, worker, token)?;
    seen(db, worker, token, now, None)?;
    Ok(renewed)
}

/// Locks `lease`'s job row for the rest of the write transaction if its
/// worker still holds the job (running, even with the lease expired: no
/// other worker took it); else `Conflict`. Called before a lab job's live
/// batch writes anything: with the row locked, a lease of the job waits
/// (SQLite: the write transaction serializes) or passes over it
/// (PostgreSQL: SKIP LOCKED) until the batch is stored, and once another
/// worker has the job, the first one's batches are refused.
pub(super) fn hold(db: &mut dyn Sql, lease: &JobLease, token: &str) -> Res<()> {
    // A no-op UPDATE rather than SELECT ... FOR UPDATE, which SQLite lacks.
    let held = db.execute(
        &format!(
            "UPDATE jobs SET lease_expires_at_ms = lease_expires_at_ms \
             WHERE id = ?1 AND worker = ?2 AND state = 'running' AND {}",
            leased_with(3)
        ),
        args![lease.job, &lease.worker, token],
    )?;
    if !acted_on_lease(db, held, lease.job, &lease.worker, token)? {
        return Err(Fail::Store(StoreError::Conflict(format!(
            "job {} is no longer leased to worker \"{}\" in {} (its lease expired and another \
             worker took the job, or the job ended): nothing of this batch was stored. Only \
             the job's current worker uploads its run; this upload stops",
            lease.job,
            lease.worker,
            db.name()
        ))));
    }
    Ok(())
}

/// Ends `worker`'s running `job`, leased with `token`; inside a write
/// transaction.
fn finish(
    db: &mut dyn Sql,
    job: i64,
    worker: &str,
    token: &str,
    ok: bool,
    message: &str,
) -> Res<bool> {
    let now = now_ms();
    let state = if ok { JobState::Done } else { JobState::Failed };
    let finished = db.execute(
        &format!(
            "UPDATE jobs SET state = ?3, finished_at_ms = ?4, message = ?5, \
             lease_expires_at_ms = NULL \
             WHERE id = ?1 AND worker = ?2 AND state = 'running' AND {}",
            leased_with(6)
        ),
        args![job, worker, state.as_str(), now, message, token],
    )?;
    let finished = acted_on_lease(db, finished, job, worker, token)?;
    seen(db, worker, token, now, Some(job))?;
    Ok(finished)
}

/// Every worker, most recently seen first.
fn workers(db: &mut dyn Sql) -> Res<Vec<WorkerInfo>> {
    rows(
        db,
        "SELECT name, tags, last_seen_ms, job_id, token_name FROM workers \
         ORDER BY last_seen_ms DESC, name",
        args![],
        |row| {
            Ok(WorkerInfo {
                name: row.req_text(0)?,
                tags: read_tags(&row.req_text(1)?).map(str::to_string).collect(),
                last_seen_ms: row.req_int(2)?,
                job: row.int(3)?,
                token: row.text(4)?,
            })
        },
    )
}

impl<S: Sql> JobQueue for S {
    fn submit_job(&mut self, spec: &JobSpec) -> Result<i64> {
        with(self, "submitting a job", |db| {
            check_spec(spec)?;
            submit(db, spec)
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
            check_worker(worker, tags)?;
            check_lease(lease_ms)?;
            transaction(db, true, |db| lease(db, worker, token, tags, lease_ms))
        })
    }

    fn renew_lease(&mut self, job: i64, worker: &str, token: &str, lease_ms: i64) -> Result<bool> {
        with(self, "renewing a job's lease", |db| {
            check_lease(lease_ms)?;
            transaction(db, true, |db| renew(db, job, worker, token, lease_ms))
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
            transaction(db, true, |db| finish(db, job, worker, token, ok, message))
        })
    }

    fn jobs(&mut self) -> Result<Vec<Job>> {
        with(self, "listing jobs", list)
    }

    fn job(&mut self, id: i64) -> Result<Job> {
        with(self, "reading a job", |db| get(db, id))
    }

    fn workers(&mut self) -> Result<Vec<WorkerInfo>> {
        with(self, "listing workers", workers)
    }
}
