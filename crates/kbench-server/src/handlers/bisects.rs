//! Saved bisections (`kbench bisect`), read only: their state is the JSON
//! document the bisect command keeps, passed on as it is.

use super::extract::{Api, json};
use crate::AppState;
use crate::error::ApiError;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use kbench_store::SavedState;
use serde_json::Value;

/// A bisection as the API shows it: its state as JSON, not as a string.
fn shown(bisect: SavedState) -> Result<Value, ApiError> {
    let state: Value = serde_json::from_str(&bisect.state_json).map_err(|e| {
        ApiError::internal(format!(
            "the saved state of bisection '{}' is not JSON ({e}); the store is damaged: \
             delete the bisection and start it again",
            bisect.name
        ))
    })?;
    Ok(serde_json::json!({
        "name": bisect.name,
        "updated_at_ms": bisect.updated_at_ms,
        "state": state,
    }))
}

/// `GET /bisects`.
pub async fn list(State(state): State<AppState>) -> Result<Response, ApiError> {
    let bisects = state.stores.with(|store| Ok(store.bisects()?)).await?;
    let bisects = bisects
        .into_iter()
        .map(shown)
        .collect::<Result<Vec<_>, _>>()?;
    Ok(json(
        StatusCode::OK,
        serde_json::json!({ "schema": "kbench.bisects/1", "bisects": bisects }),
    ))
}

/// `GET /bisects/{name}`: 404 naming the bisections there are.
pub async fn one(
    State(state): State<AppState>,
    Api(Path(name)): Api<Path<String>>,
) -> Result<Response, ApiError> {
    let bisects = state.stores.with(|store| Ok(store.bisects()?)).await?;
    let names: Vec<String> = bisects.iter().map(|b| format!("'{}'", b.name)).collect();
    let Some(found) = bisects.into_iter().find(|b| b.name == name) else {
        let known = if names.is_empty() {
            "there are none (kbench bisect starts one)".to_string()
        } else {
            format!("there are {}", names.join(", "))
        };
        return Err(ApiError::not_found(format!(
            "no bisection named '{name}'; {known}"
        )));
    };
    Ok(json(StatusCode::OK, shown(found)?))
}
