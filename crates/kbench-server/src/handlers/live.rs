//! Live uploads: parts of a run going on (`kbench run --server`), stored
//! as they come; a retried or resumed batch stores only what is missing.

use super::extract::{Api, Caller, JsonBody, json};
use crate::AppState;
use crate::error::ApiError;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use kbench_store::{LiveBatch, Scope};

impl super::extract::Described for LiveBatch {
    const WHAT: &'static str = "a LiveBatch";
}

/// `POST /result-sets/{set}/live`: 200 `{"stored", "skipped"}`; 409 when
/// the batch would leave a gap (the client re-sends from what the server
/// has), clashes with what is stored, or names a job lease its worker
/// holds no more (that upload stops); 403 for a job lease taken with
/// another token. Needs `push`, or `work` for a batch of a job's run.
pub async fn append(
    State(state): State<AppState>,
    Api(Path(set)): Api<Path<String>>,
    caller: Caller,
    JsonBody(batch): JsonBody<LiveBatch>,
) -> Result<Response, ApiError> {
    // A lab job's run is its worker's to upload (the lease says whose);
    // any other run is a push.
    match batch.lease {
        Some(_) => caller.require(Scope::Work, "uploading a job's run")?,
        None => caller.require(Scope::Push, "uploading a run")?,
    }
    let token = caller.0.name;
    let outcome = state
        .stores
        .with(move |store| Ok(store.append_live(&set, &batch, &token)?))
        .await?;
    Ok(json(
        StatusCode::OK,
        serde_json::json!({ "stored": outcome.stored, "skipped": outcome.skipped }),
    ))
}
