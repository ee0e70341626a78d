//! API errors: a status and a JSON body `{"error": "..."}`, and how store
//! errors map to statuses.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use kbench_store::StoreError;

#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub message: String,
}

impl ApiError {
    pub fn new(status: StatusCode, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            message: message.into(),
        }
    }

    pub fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, message)
    }

    pub fn not_found(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, message)
    }

    pub fn conflict(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::CONFLICT, message)
    }

    pub fn internal(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, message)
    }

    /// Whether the database could not be reached (503): the request may
    /// be retried as it was, and the store that met it is not reused.
    pub fn is_unreachable(&self) -> bool {
        self.status == StatusCode::SERVICE_UNAVAILABLE
    }
}

/// Whether a store error means the database is unreachable now (it cannot
/// be connected to, or the connection broke) rather than that the request
/// is wrong: such a request is worth retrying unchanged.
pub fn unreachable(err: &StoreError) -> bool {
    matches!(err, StoreError::Open { .. } | StoreError::Unavailable(_))
}

impl From<StoreError> for ApiError {
    fn from(err: StoreError) -> ApiError {
        if unreachable(&err) {
            return ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                format!("the database is unreachable; retry: {err}"),
            );
        }
        let status = match &err {
            StoreError::Invalid(_) => StatusCode::BAD_REQUEST,
            StoreError::NotFound(_) => StatusCode::NOT_FOUND,
            StoreError::Forbidden(_) => StatusCode::FORBIDDEN,
            StoreError::Conflict(_) => StatusCode::CONFLICT,
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        };
        ApiError::new(status, err.to_string())
    }
}

impl IntoResponse for ApiError {
    /// A 5xx answer carries its message for the access log too.
    fn into_response(self) -> Response {
        let failure = self
            .status
            .is_server_error()
            .then(|| crate::access::Failure(self.message.clone()));
        let mut response = (
            self.status,
            Json(serde_json::json!({ "error": self.message })),
        )
            .into_response();
        if let Some(failure) = failure {
            response.extensions_mut().insert(failure);
        }
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unreachable_databases_are_503_and_the_rest_keep_their_status() {
        let lost = StoreError::Unavailable("storing a sample in postgres://x/db: db error".into());
        assert_eq!(ApiError::from(lost).status, StatusCode::SERVICE_UNAVAILABLE);
        let down = StoreError::Open {
            db: "postgres://x/db".into(),
            reason: "connection refused".into(),
        };
        let down = ApiError::from(down);
        assert!(down.is_unreachable());
        assert!(
            down.message
                .starts_with("the database is unreachable; retry")
        );
        let other = StoreError::Database("syntax error".into());
        assert_eq!(
            ApiError::from(other).status,
            StatusCode::INTERNAL_SERVER_ERROR
        );
        let gap = ApiError::from(StoreError::Conflict("gap".into()));
        assert_eq!(gap.status, StatusCode::CONFLICT);
    }
}

/// Why the server could not start: its database, its TLS files, or its
/// socket and runtime. The text is the whole message.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The certificate or key of `--tls-cert` / `--tls-key`.
    #[error("{0}")]
    Tls(String),
    /// What was being done, and the OS error.
    #[error("{what}: {cause}")]
    Os { what: String, cause: std::io::Error },
}

impl StartError {
    /// An OS error of `what` (for `map_err`).
    pub(crate) fn os(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> StartError {
        let what = what.into();
        move |cause| StartError::Os { what, cause }
    }
}
