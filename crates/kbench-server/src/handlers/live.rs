//! Live uploads: parts of a run going on (`kbench run --upload`), stored
//! as they come; a retried or resumed batch stores only what is missing.

use super::{Api, JsonBody, Writer, json};
use crate::AppState;
use crate::error::ApiError;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use kbench_store::LiveBatch;

impl super::Described for LiveBatch {
    const WHAT: &'static str = "a LiveBatch";
}

/// `POST /result-sets/{set}/live`: 200 `{"stored", "skipped"}`; 409 when
/// the batch would leave a gap (the client re-sends from what the server
/// has), clashes with what is stored, or names a job lease its worker
/// holds no more (that upload stops).
pub async fn append(
    State(state): State<AppState>,
    Api(Path(set)): Api<Path<String>>,
    Writer(_): Writer,
    JsonBody(batch): JsonBody<LiveBatch>,
) -> Result<Response, ApiError> {
    let outcome = state
        .stores
        .with(move |store| Ok(store.append_live(&set, &batch)?))
        .await?;
    Ok(json(
        StatusCode::OK,
        serde_json::json!({ "stored": outcome.stored, "skipped": outcome.skipped }),
    ))
}
