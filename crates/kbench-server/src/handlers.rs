//! The API's handlers. Store calls go through [`crate::Stores::with`].

use crate::AppState;
use crate::auth;
use crate::error::ApiError;
use axum::Json;
use axum::body::{Body, to_bytes};
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use kbench_report::comparison::{self, CompareRequest};
use kbench_report::format::{self, Style};
use kbench_report::history::{self, HistoryRequest};
use kbench_store::{Push, PushOutcome, exchange};
use serde::Deserialize;

/// The header carrying the client's push id.
pub const PUSH_ID_HEADER: &str = "idempotency-key";

pub async fn not_found() -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        "no such API path; see README \"Shared lab\" for the routes under /api/v1",
    )
}

pub async fn list_sets(State(state): State<AppState>) -> Result<Response, ApiError> {
    let result_sets = state.stores.with(|store| Ok(store.result_sets()?)).await?;
    Ok(Json(serde_json::json!({
        "schema": "kbench.sets/1",
        "result_sets": result_sets,
    }))
    .into_response())
}

/// The token's name, or 401 (checked before the body is read).
async fn authorize(state: &AppState, headers: &HeaderMap) -> Result<String, ApiError> {
    let unauthorized = |why: &str| {
        ApiError::new(
            StatusCode::UNAUTHORIZED,
            format!(
                "{why}; writing needs `Authorization: Bearer TOKEN` with a token from `kbench token create`"
            ),
        )
    };
    let Some(value) = headers.get(header::AUTHORIZATION) else {
        return Err(unauthorized("no Authorization header"));
    };
    let token = value
        .to_str()
        .ok()
        .and_then(auth::bearer)
        .ok_or_else(|| unauthorized("the Authorization header is not `Bearer TOKEN`"))?;
    let hash = auth::sha256_hex(token.as_bytes());
    let name = state
        .stores
        .with(move |store| Ok(store.token_by_hash(&hash)?))
        .await?;
    name.ok_or_else(|| unauthorized("the token is unknown or revoked"))
}

fn too_large(limit: usize) -> ApiError {
    ApiError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        format!(
            "the request body is over the server's limit of {limit} bytes (kbench serve --max-body); nothing was stored. Push fewer identifiers at a time"
        ),
    )
}

pub async fn push_samples(
    State(state): State<AppState>,
    Path(set): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    let token = authorize(&state, &headers).await?;
    let limit = state.max_body;
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|len| len > limit as u64) {
        return Err(too_large(limit));
    }
    let push_id = headers
        .get(PUSH_ID_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
        .ok_or_else(|| {
            ApiError::bad_request(
                "the Idempotency-Key header is missing: give each push a unique id (kbench push does), \
                 and the same id when retrying it",
            )
        })?;
    let bytes = to_bytes(body, limit).await.map_err(|_| too_large(limit))?;
    let text = std::str::from_utf8(&bytes)
        .map_err(|e| ApiError::bad_request(format!("the body is not UTF-8 JSON: {e}")))?;
    let data = exchange::parse(text, Some(&set)).map_err(|e| {
        ApiError::bad_request(format!(
            "not a valid kbench.samples/1 document: {e}; nothing was stored"
        ))
    })?;
    let digest = auth::sha256_hex(&bytes);
    let id = push_id.clone();
    let outcome = state
        .stores
        .with(move |store| {
            let push = Push {
                id: &id,
                digest: &digest,
                token: &token,
            };
            Ok(store.push(&push, &data)?)
        })
        .await?;
    Ok(match outcome {
        PushOutcome::Stored { samples } => (
            StatusCode::CREATED,
            Json(serde_json::json!({
                "status": "stored",
                "push_id": push_id,
                "result_set": set,
                "samples": samples,
                "message": format!("stored {samples} sample(s) into result set \"{set}\""),
            })),
        )
            .into_response(),
        PushOutcome::AlreadyStored {
            result_set,
            samples,
            pushed_at_ms,
        } => (
            StatusCode::OK,
            Json(serde_json::json!({
                "status": "already_stored",
                "push_id": push_id,
                "result_set": result_set,
                "samples": samples,
                "pushed_at_ms": pushed_at_ms,
                "message": format!("already stored: push {push_id} was stored before; nothing was written"),
            })),
        )
            .into_response(),
    })
}

#[derive(Debug, Deserialize)]
pub struct CompareQuery {
    format: Option<String>,
    baseline: Option<String>,
    /// Comma-separated identifiers to compare with the baseline.
    identifiers: Option<String>,
    /// Percent.
    threshold: Option<f64>,
    metric: Option<String>,
}

fn threshold(percent: Option<f64>) -> Result<f64, ApiError> {
    let percent = percent.unwrap_or(1.0);
    if !(percent.is_finite() && (0.0..100.0).contains(&percent)) {
        return Err(ApiError::bad_request(format!(
            "threshold {percent} must be a percentage from 0 to below 100"
        )));
    }
    Ok(percent / 100.0)
}

fn content_type(format: &str) -> &'static str {
    match format {
        "json" => "application/json",
        "html" => "text/html; charset=utf-8",
        "svg" => "image/svg+xml",
        "csv" => "text/csv; charset=utf-8",
        _ => "text/plain; charset=utf-8",
    }
}

fn list(text: Option<&str>) -> Vec<String> {
    text.unwrap_or("")
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

pub async fn compare(
    State(state): State<AppState>,
    Path(set): Path<String>,
    Query(query): Query<CompareQuery>,
) -> Result<Response, ApiError> {
    let name = query.format.clone().unwrap_or_else(|| "json".into());
    // `Format` is not Send: looked up here to check the name, and again
    // after the awaits to render.
    if format::by_name(&name).is_none() {
        let names: Vec<&str> = format::all().iter().map(|f| f.name()).collect();
        return Err(ApiError::bad_request(format!(
            "unknown format '{name}'; choose one of: {}",
            names.join(", ")
        )));
    }
    let request = CompareRequest {
        baseline: query.baseline.clone(),
        identifiers: list(query.identifiers.as_deref()),
        threshold: threshold(query.threshold)?,
        metric_filter: query.metric.clone(),
    };
    let data = state
        .stores
        .with(move |store| Ok(store.load(&set)?))
        .await?;
    let report = tokio::task::spawn_blocking(move || comparison::build(&data, &request))
        .await
        .map_err(|e| ApiError::internal(e.to_string()))?
        .map_err(|e| ApiError::bad_request(format!("{e:#}")))?;
    if report.identifiers.len() < 2 {
        return Err(ApiError::bad_request(format!(
            "result set '{}' has only '{}'; push a second identifier to compare",
            report.result_set, report.baseline
        )));
    }
    let formatter = format::by_name(&name).ok_or_else(|| ApiError::internal("format vanished"))?;
    let text = formatter.render(&report, Style { color: false });
    Ok(([(header::CONTENT_TYPE, content_type(&name))], text).into_response())
}

#[derive(Debug, Deserialize)]
pub struct HistoryQuery {
    format: Option<String>,
    /// Comma-separated identifiers in version order.
    order: Option<String>,
    threshold: Option<f64>,
    metric: Option<String>,
}

pub async fn history(
    State(state): State<AppState>,
    Path(set): Path<String>,
    Query(query): Query<HistoryQuery>,
) -> Result<Response, ApiError> {
    let name = query.format.clone().unwrap_or_else(|| "json".into());
    if !history::FORMATS.contains(&name.as_str()) {
        return Err(ApiError::bad_request(format!(
            "unknown format '{name}'; choose one of: {}",
            history::FORMATS.join(", ")
        )));
    }
    let request = HistoryRequest {
        order: list(query.order.as_deref()),
        metric_filter: query.metric.clone(),
        threshold: threshold(query.threshold)?,
    };
    let data = state
        .stores
        .with(move |store| Ok(store.load(&set)?))
        .await?;
    let format = name.clone();
    let text = tokio::task::spawn_blocking(move || {
        history::build(&data, &request).map(|report| history::render(&report, &format))
    })
    .await
    .map_err(|e| ApiError::internal(e.to_string()))?
    .map_err(|e| ApiError::bad_request(format!("{e:#}")))?
    .unwrap_or_default();
    Ok(([(header::CONTENT_TYPE, content_type(&name))], text).into_response())
}
