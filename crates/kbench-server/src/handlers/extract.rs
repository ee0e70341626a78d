//! What the handlers share: the caller's token and its scopes
//! ([`Caller`]), request bodies under the size limit parsed with the path
//! of what is wrong ([`JsonBody`], [`RawBody`], [`parse_json`]), JSON
//! errors for bad paths and queries ([`Api`]), and work off the async
//! threads ([`blocking`]).

use crate::AppState;
use crate::access::TokenName;
use crate::auth;
use crate::error::ApiError;
use axum::Json;
use axum::body::{Bytes, to_bytes};
use axum::extract::{FromRequest, FromRequestParts, Request, State};
use axum::http::request::Parts;
use axum::http::{Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use kbench_store::{Scope, TokenInfo};
use serde::de::DeserializeOwned;

/// Bodies larger than this are parsed on the blocking pool, so that a
/// big document does not hold up an async thread.
const PARSE_INLINE_MAX: usize = 64 << 10;

/// The valid, unrevoked API token of the request's `Authorization: Bearer
/// TOKEN` header; 401 otherwise. Extracted before the body, so an
/// unauthorized request writes and reads nothing more. What it may do is
/// [`Caller::require`]d by each handler.
pub struct Caller(pub TokenInfo);

impl Caller {
    /// 403 unless the token may act in `scope`; `doing` says what needs it
    /// ("submitting a job").
    pub fn require(&self, scope: Scope, doing: &str) -> Result<(), ApiError> {
        if self.0.allows(scope) {
            return Ok(());
        }
        Err(ApiError::new(
            StatusCode::FORBIDDEN,
            format!(
                "token '{}' has the scopes {}; {doing} needs '{}'. Nothing was done: use a \
                 token with it (`kbench token create --name NAME --scope {}` on the server's \
                 database)",
                self.0.name,
                Scope::list_text(&self.0.scopes),
                scope.as_str(),
                scope.as_str()
            ),
        ))
    }
}

impl FromRequestParts<AppState> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Caller, ApiError> {
        token_of(parts, state).await.map(Caller)
    }
}

/// The token a request's header names; 401 when there is none or it is
/// unknown or revoked.
pub(crate) async fn token_of(parts: &Parts, state: &AppState) -> Result<TokenInfo, ApiError> {
    let unauthorized = |why: &str| {
        ApiError::new(
            StatusCode::UNAUTHORIZED,
            format!(
                "{why}; this needs `Authorization: Bearer TOKEN` with a token from `kbench token create`"
            ),
        )
    };
    let Some(value) = parts.headers.get(header::AUTHORIZATION) else {
        return Err(unauthorized("no Authorization header"));
    };
    let token = value
        .to_str()
        .ok()
        .and_then(auth::bearer)
        .ok_or_else(|| unauthorized("the Authorization header is not `Bearer TOKEN`"))?;
    let hash = auth::sha256_hex(token.as_bytes());
    let found = state
        .stores
        .with(move |store| Ok(store.token_by_hash(&hash)?))
        .await?;
    let token = found.ok_or_else(|| unauthorized("the token is unknown or revoked"))?;
    if let Some(log) = parts.extensions.get::<TokenName>() {
        log.set(&token.name);
    }
    Ok(token)
}

/// Middleware of a `--private` server: every GET (API and dashboard)
/// needs a token with the `read` scope, 401 or 403 otherwise; an open
/// server lets every GET through. Writes check their own scopes.
pub(crate) async fn private_reads(
    State(state): State<AppState>,
    request: Request,
    next: Next,
) -> Response {
    if !state.private || request.method() != Method::GET {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let allowed = match token_of(&parts, &state).await {
        Ok(token) => Caller(token).require(Scope::Read, "reading a private server"),
        Err(error) => Err(error),
    };
    match allowed {
        Ok(()) => next.run(Request::from_parts(parts, body)).await,
        Err(error) => error.into_response(),
    }
}

fn too_large(limit: usize) -> ApiError {
    ApiError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        format!(
            "the request body is over the server's limit of {limit} bytes (kbench serve --max-body); nothing was stored. Send less at a time"
        ),
    )
}

fn body_too_slow(timeout: std::time::Duration) -> ApiError {
    ApiError::new(
        StatusCode::REQUEST_TIMEOUT,
        format!(
            "the request body did not arrive within {} s (kbench serve --body-timeout); nothing was stored. Retry",
            timeout.as_secs_f64()
        ),
    )
}

/// The request body, at most the server's `max_body` bytes (413 beyond:
/// refused by its Content-Length before reading when it declares one),
/// read within the server's body timeout (408 after).
pub struct RawBody(pub Bytes);

impl FromRequest<AppState> for RawBody {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &AppState) -> Result<RawBody, ApiError> {
        let limit = state.max_body;
        let declared = request
            .headers()
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        if declared.is_some_and(|len| len > limit as u64) {
            return Err(too_large(limit));
        }
        let timeout = state.body_timeout;
        let bytes = tokio::time::timeout(timeout, to_bytes(request.into_body(), limit))
            .await
            .map_err(|_| body_too_slow(timeout))?
            .map_err(|_| too_large(limit))?;
        Ok(RawBody(bytes))
    }
}

/// Something the body must deserialize to, with its name for messages.
pub trait Described: DeserializeOwned + Send + 'static {
    /// How a message names it: "a JobSpec".
    const WHAT: &'static str;
}

/// A JSON body of type `T` under the size limit; 400 naming the field
/// that is wrong.
pub struct JsonBody<T>(pub T);

impl<T: Described> FromRequest<AppState> for JsonBody<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &AppState) -> Result<JsonBody<T>, ApiError> {
        let RawBody(bytes) = RawBody::from_request(request, state).await?;
        let value = if bytes.len() <= PARSE_INLINE_MAX {
            parse_json(&bytes, T::WHAT)?
        } else {
            blocking(move || parse_json(&bytes, T::WHAT)).await?
        };
        Ok(JsonBody(value))
    }
}

/// Parses `bytes` as `T`; the error names the element that is wrong (its
/// path, such as `samples[0].first`) and the line and column.
pub fn parse_json<T: DeserializeOwned>(bytes: &[u8], what: &str) -> Result<T, ApiError> {
    serde_json::from_slice(bytes).map_err(|err| {
        // Parsed again, tracking the path, only to say where it failed.
        let mut deserializer = serde_json::Deserializer::from_slice(bytes);
        let (place, cause) = match serde_path_to_error::deserialize::<_, T>(&mut deserializer) {
            Err(located) if located.path().to_string() != "." => {
                (located.path().to_string(), located.into_inner())
            }
            _ => ("the top level".to_string(), err),
        };
        ApiError::bad_request(format!(
            "the body is not {what}: at {place}: {cause}; nothing was stored"
        ))
    })
}

/// Runs CPU-bound work (parsing, rendering) on the blocking pool.
pub async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ApiError::internal(format!("a worker task failed: {e}")))?
}

/// An extractor (`Path`, `Query`) whose rejection is answered as an API
/// error, in JSON, rather than axum's plain text.
pub struct Api<E>(pub E);

impl<S, E> FromRequestParts<S> for Api<E>
where
    S: Send + Sync,
    E: FromRequestParts<S>,
    E::Rejection: std::fmt::Display,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Api<E>, ApiError> {
        E::from_request_parts(parts, state)
            .await
            .map(Api)
            .map_err(|e| ApiError::bad_request(format!("{e}; see GET /api/v1/openapi.json")))
    }
}

/// A JSON answer with a status.
pub fn json(status: StatusCode, value: serde_json::Value) -> Response {
    (status, Json(value)).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;
    use kbench_store::{JobSpec, LiveSamples};

    #[test]
    fn parse_errors_name_the_element() {
        let err = parse_json::<Vec<LiveSamples>>(
            br#"[{"test": {"benchmark": "a"}, "first": 0, "samples": []},
                 {"test": {"benchmark": "a"}, "first": "x", "samples": []}]"#,
            "a list",
        )
        .unwrap_err();
        assert_eq!(err.status, StatusCode::BAD_REQUEST);
        assert!(err.message.contains("at [1].first:"), "{}", err.message);
        assert!(err.message.contains("line 2"), "{}", err.message);
        let spec = br#"{"set": "s", "identifier": "i", "names": ["quick"], "rouds": 1}"#;
        let err = parse_json::<JobSpec>(spec, "a JobSpec").unwrap_err();
        assert!(err.message.contains("`rouds`"), "{}", err.message);
        let err = parse_json::<JobSpec>(b"{}", "a JobSpec").unwrap_err();
        assert!(
            err.message.contains("the top level: missing field `set`"),
            "{}",
            err.message
        );
        let spec = br#"{"set": "s", "identifier": "i", "names": []} x"#;
        let err = parse_json::<JobSpec>(spec, "a JobSpec").unwrap_err();
        assert!(
            err.message.contains("trailing characters"),
            "{}",
            err.message
        );
    }
}
