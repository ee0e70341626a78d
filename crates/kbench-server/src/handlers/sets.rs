//! Result sets: the listing, pushes of whole documents, comparisons,
//! histories and exports.

use super::extract::{Api, Caller, RawBody, blocking, json, parse_json};
use crate::AppState;
use crate::auth;
use crate::error::ApiError;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use kbench_analysis::comparison::{self, CompareRequest, ComparisonReport};
use kbench_analysis::history::{self, HistoryReport, HistoryRequest};
use kbench_analysis::thresholds::Thresholds;
use kbench_report::format::{self, Renderer, Report, Style};
use kbench_report::printed;
use kbench_store::exchange::{self, SamplesFile};
use kbench_store::{Push, PushOutcome, ResultSetData, Scope, SetPart};
use serde::Deserialize;

/// The header carrying the client's push id.
pub const PUSH_ID_HEADER: &str = "idempotency-key";

pub async fn list_sets(State(state): State<AppState>) -> Result<Response, ApiError> {
    let result_sets = state.stores.with(|store| Ok(store.result_sets()?)).await?;
    Ok(json(
        StatusCode::OK,
        serde_json::json!({
            "schema": "kbench.sets/1",
            "result_sets": result_sets,
        }),
    ))
}

/// The push id of the `Idempotency-Key` header.
fn push_id(headers: &HeaderMap) -> Result<String, ApiError> {
    headers
        .get(PUSH_ID_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
        .ok_or_else(|| {
            ApiError::bad_request(
                "the Idempotency-Key header is missing: give each push a unique id (kbench push does), \
                 and the same id when retrying it",
            )
        })
}

/// `POST /result-sets/{set}/samples`: stores a kbench.samples/1 document
/// once per push id (201), or answers 200 for a push id stored before.
pub async fn push_samples(
    State(state): State<AppState>,
    Api(Path(set)): Api<Path<String>>,
    caller: Caller,
    headers: HeaderMap,
    RawBody(bytes): RawBody,
) -> Result<Response, ApiError> {
    caller.require(Scope::Push, "pushing samples")?;
    let token = caller.0.name;
    let push_id = push_id(&headers)?;
    let into = set.clone();
    let (data, digest) = blocking(move || {
        let file: SamplesFile = parse_json(&bytes, "a kbench.samples/1 document")?;
        let data = exchange::to_result_set(&file, Some(&into)).map_err(|e| {
            ApiError::bad_request(format!(
                "not a valid kbench.samples/1 document: {e}; nothing was stored"
            ))
        })?;
        Ok((data, auth::sha256_hex(&bytes)))
    })
    .await?;
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
        PushOutcome::Stored { samples } => json(
            StatusCode::CREATED,
            serde_json::json!({
                "status": "stored",
                "push_id": push_id,
                "result_set": set,
                "samples": samples,
                "message": format!("stored {samples} sample(s) into result set \"{set}\""),
            }),
        ),
        PushOutcome::AlreadyStored {
            result_set,
            samples,
            pushed_at_ms,
        } => json(
            StatusCode::OK,
            serde_json::json!({
                "status": "already_stored",
                "push_id": push_id,
                "result_set": result_set,
                "samples": samples,
                "pushed_at_ms": pushed_at_ms,
                "message": format!("already stored: push {push_id} was stored before; nothing was written"),
            }),
        ),
    })
}

#[derive(Debug, Deserialize)]
pub struct ExportQuery {
    /// Only this identifier (none when it is not stored).
    identifier: Option<String>,
}

/// `GET /result-sets/{set}/export`: the set (or one identifier of it) as
/// kbench.samples/1, which `kbench import` and the push route take back.
pub async fn export(
    State(state): State<AppState>,
    Api(Path(set)): Api<Path<String>>,
    Api(Query(query)): Api<Query<ExportQuery>>,
) -> Result<Response, ApiError> {
    let body = state
        .stores
        .with(move |store| {
            let part = SetPart {
                identifiers: query.identifier.clone().map(|name| vec![name]),
                ..SetPart::all()
            };
            let mut data = store.load_part(&set, &part)?;
            if let Some(identifier) = &query.identifier {
                data.identifiers.retain(|i| &i.name == identifier);
            }
            serde_json::to_vec(&exchange::export(&data))
                .map_err(|e| ApiError::internal(format!("serializing the export of {set}: {e}")))
        })
        .await?;
    Ok(([(header::CONTENT_TYPE, "application/json")], body).into_response())
}

#[derive(Debug, Deserialize)]
pub struct CompareQuery {
    pub(crate) format: Option<String>,
    pub(crate) baseline: Option<String>,
    /// Comma-separated identifiers to compare with the baseline.
    pub(crate) identifiers: Option<String>,
    /// Percent.
    pub(crate) threshold: Option<f64>,
    pub(crate) metric: Option<String>,
}

impl CompareQuery {
    /// The comparison asked for (the API's and the dashboard's); 400 for a
    /// bad threshold. What it reads of the set is [`printed::part`]: only
    /// the identifiers compared when they are named; with the store's
    /// calibrations of host drift, for identifiers measured apart.
    pub(crate) async fn request(&self, state: &AppState) -> Result<CompareRequest, ApiError> {
        let threshold = Thresholds::uniform(threshold(self.threshold)?);
        let calibrations = state.stores.with(|store| Ok(store.calibrations()?)).await?;
        Ok(CompareRequest {
            baseline: self.baseline.clone(),
            identifiers: list(self.identifiers.as_deref()),
            threshold,
            metric_filter: self.metric.clone(),
            calibrations,
        })
    }
}

/// Loads the `part` of `set` the report needs and runs `build` on it on
/// the blocking pool: the one path by which the API's reports (compare,
/// history) and the dashboard's pages are built from the store's current
/// data. 404 for an unknown set; an error of `build` (a request that does
/// not fit the set, such as an unknown baseline) is a 400.
pub(crate) async fn from_set<T: Send + 'static>(
    state: &AppState,
    set: String,
    part: SetPart,
    build: impl FnOnce(ResultSetData) -> Result<T, kbench_report::Error> + Send + 'static,
) -> Result<T, ApiError> {
    let data = state
        .stores
        .with(move |store| Ok(store.load_part(&set, &part)?))
        .await?;
    blocking(move || build(data).map_err(|e| ApiError::bad_request(e.to_string()))).await
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

/// The format `name` of report `R`; 400, naming its formats, otherwise.
fn format_of<R: Report>(name: &str) -> Result<Renderer<R>, ApiError> {
    format::find(name).ok_or_else(|| {
        let names: Vec<&str> = format::formats::<R>().iter().map(|f| f.name()).collect();
        ApiError::bad_request(format!(
            "unknown format '{name}'; choose one of: {}",
            names.join(", ")
        ))
    })
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

/// A report in `format`: its content type, and for a page or picture its
/// Content-Security-Policy.
fn report_answer(format: &str, text: String) -> Response {
    let mut answer = ([(header::CONTENT_TYPE, content_type(format))], text).into_response();
    if let Some(policy) = crate::headers::report_policy(format) {
        answer.headers_mut().insert(
            header::CONTENT_SECURITY_POLICY,
            axum::http::HeaderValue::from_static(policy),
        );
    }
    answer
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
    Api(Path(set)): Api<Path<String>>,
    Api(Query(query)): Api<Query<CompareQuery>>,
) -> Result<Response, ApiError> {
    let name = query.format.clone().unwrap_or_else(|| "json".into());
    let formatter = format_of::<ComparisonReport>(&name)?;
    let request = query.request(&state).await?;
    let part = printed::part(&request, None);
    let report = from_set(&state, set, part, move |data| {
        let report = comparison::build(&data, &request)?;
        printed::comparable(&report, &request)?;
        Ok(report)
    })
    .await?;
    let text = formatter.render(&report, Style::default());
    Ok(report_answer(&name, text))
}

#[derive(Debug, Deserialize)]
pub struct HistoryQuery {
    pub(crate) format: Option<String>,
    /// Comma-separated identifiers in version order.
    pub(crate) order: Option<String>,
    pub(crate) threshold: Option<f64>,
    pub(crate) metric: Option<String>,
}

impl HistoryQuery {
    /// The history asked for (the API's and the dashboard's); 400 for a
    /// bad threshold.
    pub(crate) fn request(&self) -> Result<HistoryRequest, ApiError> {
        Ok(HistoryRequest {
            order: list(self.order.as_deref()),
            metric_filter: self.metric.clone(),
            threshold: threshold(self.threshold)?,
        })
    }
}

pub async fn history(
    State(state): State<AppState>,
    Api(Path(set)): Api<Path<String>>,
    Api(Query(query)): Api<Query<HistoryQuery>>,
) -> Result<Response, ApiError> {
    let name = query.format.clone().unwrap_or_else(|| "json".into());
    let formatter = format_of::<HistoryReport>(&name)?;
    let request = query.request()?;
    let text = from_set(&state, set, request.part(), move |data| {
        let report = history::build(&data, &request)?;
        Ok(formatter.render(&report, Style::default()))
    })
    .await?;
    Ok(report_answer(&name, text))
}
