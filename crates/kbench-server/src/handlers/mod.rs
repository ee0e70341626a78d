//! The API's handlers, by concern ([`sets`], [`live`], [`jobs`],
//! [`bisects`]), the few that answer about the API itself, and what they
//! all share ([`extract`]). Store calls go through [`crate::Stores::with`].

pub mod bisects;
pub mod extract;
pub mod jobs;
pub mod live;
pub mod sets;

use crate::error::ApiError;
use axum::Json;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use extract::Caller;

/// This API described as OpenAPI 3.1 (crates/kbench-server/openapi.json).
pub const OPENAPI: &str = include_str!("../../openapi.json");

pub async fn not_found() -> ApiError {
    ApiError::not_found(
        "no such API path; GET /api/v1/openapi.json lists the routes (docs/lab.md and docs/api.md explain them)",
    )
}

/// `GET /api/v1/openapi.json`.
pub async fn openapi() -> Response {
    ([(header::CONTENT_TYPE, "application/json")], OPENAPI).into_response()
}

/// `GET /api/v1/token`: the name and scopes of the token the request
/// carries, so a client can check its token before it uploads anything.
pub async fn token(Caller(token): Caller) -> Json<serde_json::Value> {
    Json(serde_json::json!({ "name": token.name, "scopes": token.scopes }))
}
