//! The job queue (`kbench job submit`, `kbench worker`) and its workers.
//! A worker leases a job for some seconds, renews the lease while it
//! runs, and finishes it; a lease it lost (it expired and another worker
//! took the job, or the job ended) answers 409, and the worker stops.
//! A submitted job is checked as `kbench job submit` checks it (the
//! server's [`crate::JobCheck`]: names that resolve to benchmarks, suites
//! or profiles, a kernel that is not a path), then by the store (names,
//! rounds, tags); 400 for what either refuses, and nothing is queued.

use super::extract::{Api, Caller, Described, JsonBody, json};
use crate::AppState;
use crate::error::ApiError;
use axum::extract::{Path, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use kbench_store::{Job, JobQueue, JobSpec, JobState, Scope};
use serde::Deserialize;

/// The longest lease a worker may ask for: it renews long jobs.
pub const MAX_LEASE_SECONDS: u64 = 24 * 3600;

impl Described for JobSpec {
    const WHAT: &'static str = "a JobSpec";
}

/// `POST /jobs/lease`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LeaseRequest {
    worker: String,
    /// The worker's tags: it takes jobs whose tags are all among them.
    #[serde(default)]
    tags: Vec<String>,
    lease_seconds: u64,
}

impl Described for LeaseRequest {
    const WHAT: &'static str = "a lease request {\"worker\", \"tags\", \"lease_seconds\"}";
}

/// `POST /jobs/{id}/renew`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RenewRequest {
    worker: String,
    lease_seconds: u64,
}

impl Described for RenewRequest {
    const WHAT: &'static str = "a renewal {\"worker\", \"lease_seconds\"}";
}

/// `POST /jobs/{id}/finish`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FinishRequest {
    worker: String,
    ok: bool,
    #[serde(default)]
    message: String,
}

impl Described for FinishRequest {
    const WHAT: &'static str = "a finish {\"worker\", \"ok\", \"message\"}";
}

/// The lease in milliseconds, from 1 second to [`MAX_LEASE_SECONDS`].
fn lease_ms(seconds: u64) -> Result<i64, ApiError> {
    if !(1..=MAX_LEASE_SECONDS).contains(&seconds) {
        return Err(ApiError::bad_request(format!(
            "lease_seconds: {seconds} is outside 1 to {MAX_LEASE_SECONDS}; ask for a short lease and renew it"
        )));
    }
    Ok(seconds as i64 * 1000)
}

/// 409 for a worker whose lease on job `id` is gone (404 when there is no
/// such job), saying what became of the job.
fn lease_lost(store: &mut dyn JobQueue, id: i64, worker: &str) -> ApiError {
    match store.job(id) {
        Ok(job) => {
            let holder = match (&job.worker, job.state) {
                (Some(other), JobState::Running) => format!(", now leased to '{other}'"),
                _ => String::new(),
            };
            ApiError::conflict(format!(
                "worker '{worker}' no longer holds the lease on job {id} (it is {}{holder}): \
                 its lease expired or the job ended; stop working on it and lease another",
                job.state.as_str()
            ))
        }
        Err(err) => err.into(),
    }
}

fn job_json(status: StatusCode, job: &Job) -> Response {
    json(status, serde_json::json!(job))
}

/// `POST /jobs`: 201 with the queued job.
pub async fn submit(
    State(state): State<AppState>,
    caller: Caller,
    JsonBody(spec): JsonBody<JobSpec>,
) -> Result<Response, ApiError> {
    caller.require(Scope::Submit, "submitting a job")?;
    (state.check_job)(&spec)
        .map_err(|why| ApiError::bad_request(format!("the job was not queued: {why}")))?;
    let job = state
        .stores
        .with(move |store| {
            let id = store.submit_job(&spec)?;
            Ok(store.job(id)?)
        })
        .await?;
    let location = format!("/api/v1/jobs/{}", job.id);
    Ok((
        [(header::LOCATION, location)],
        job_json(StatusCode::CREATED, &job),
    )
        .into_response())
}

/// `GET /jobs`: newest first.
pub async fn list(State(state): State<AppState>) -> Result<Response, ApiError> {
    let jobs = state.stores.with(|store| Ok(store.jobs()?)).await?;
    Ok(json(
        StatusCode::OK,
        serde_json::json!({ "schema": "kbench.jobs/1", "jobs": jobs }),
    ))
}

/// `GET /jobs/{id}`.
pub async fn one(
    State(state): State<AppState>,
    Api(Path(id)): Api<Path<i64>>,
) -> Result<Response, ApiError> {
    let job = state.stores.with(move |store| Ok(store.job(id)?)).await?;
    Ok(job_json(StatusCode::OK, &job))
}

/// `POST /jobs/lease`: 200 with the job leased, 204 when none waits.
pub async fn lease(
    State(state): State<AppState>,
    caller: Caller,
    JsonBody(request): JsonBody<LeaseRequest>,
) -> Result<Response, ApiError> {
    caller.require(Scope::Work, "leasing a job")?;
    let lease_ms = lease_ms(request.lease_seconds)?;
    let token = caller.0.name;
    let leased = state
        .stores
        .with(move |store| Ok(store.lease_job(&request.worker, &token, &request.tags, lease_ms)?))
        .await?;
    Ok(match leased {
        Some(job) => job_json(StatusCode::OK, &job),
        None => StatusCode::NO_CONTENT.into_response(),
    })
}

/// `POST /jobs/{id}/renew`: 200 `{"renewed": true}`, 409 when the lease
/// was lost.
pub async fn renew(
    State(state): State<AppState>,
    Api(Path(id)): Api<Path<i64>>,
    caller: Caller,
    JsonBody(request): JsonBody<RenewRequest>,
) -> Result<Response, ApiError> {
    caller.require(Scope::Work, "renewing a lease")?;
    let lease_ms = lease_ms(request.lease_seconds)?;
    let token = caller.0.name;
    state
        .stores
        .with(move |store| {
            if store.renew_lease(id, &request.worker, &token, lease_ms)? {
                Ok(())
            } else {
                Err(lease_lost(store, id, &request.worker))
            }
        })
        .await?;
    Ok(json(StatusCode::OK, serde_json::json!({ "renewed": true })))
}

/// `POST /jobs/{id}/finish`: 200 with the ended job, 409 when the lease
/// was lost (nothing changed).
pub async fn finish(
    State(state): State<AppState>,
    Api(Path(id)): Api<Path<i64>>,
    caller: Caller,
    JsonBody(request): JsonBody<FinishRequest>,
) -> Result<Response, ApiError> {
    caller.require(Scope::Work, "finishing a job")?;
    let token = caller.0.name;
    let job = state
        .stores
        .with(move |store| {
            if store.finish_job(id, &request.worker, &token, request.ok, &request.message)? {
                Ok(store.job(id)?)
            } else {
                Err(lease_lost(store, id, &request.worker))
            }
        })
        .await?;
    Ok(job_json(StatusCode::OK, &job))
}

/// `GET /workers`: most recently seen first.
pub async fn workers(State(state): State<AppState>) -> Result<Response, ApiError> {
    let workers = state.stores.with(|store| Ok(store.workers()?)).await?;
    Ok(json(
        StatusCode::OK,
        serde_json::json!({ "schema": "kbench.workers/1", "workers": workers }),
    ))
}
