//! The access log: one line per request, at info (an error with its cause
//! for a 5xx answer), with the method, the route (its pattern, or the path
//! without the query), the status, the milliseconds taken and the name of
//! the token used. Never a secret: neither the token nor any header is
//! logged.

use axum::extract::{MatchedPath, Request};
use axum::middleware::Next;
use axum::response::Response;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Where the request's token name is written once the token is checked
/// (`handlers::extract::token_of`): a request extension the log reads
/// after the answer.
#[derive(Clone, Default)]
pub(crate) struct TokenName(Arc<Mutex<Option<String>>>);

impl TokenName {
    pub(crate) fn set(&self, name: &str) {
        *self.0.lock().expect("token name lock") = Some(name.to_string());
    }

    fn get(&self) -> Option<String> {
        self.0.lock().expect("token name lock").clone()
    }
}

/// Why a request failed with a 5xx (the API error's whole message, causes
/// included): a response extension that the log reads.
#[derive(Clone)]
pub(crate) struct Failure(pub String);

/// The middleware: times the request and logs its line.
pub(crate) async fn log(mut request: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = request.method().clone();
    let route = match request.extensions().get::<MatchedPath>() {
        Some(path) => path.as_str().to_string(),
        None => request.uri().path().to_string(),
    };
    let token = TokenName::default();
    request.extensions_mut().insert(token.clone());
    let response = next.run(request).await;
    let status = response.status().as_u16();
    let ms = format!("{:.1}", started.elapsed().as_secs_f64() * 1000.0);
    let token = token.get().unwrap_or_else(|| "-".to_string());
    if response.status().is_server_error() {
        let cause = response
            .extensions()
            .get::<Failure>()
            .map_or("(no cause recorded)", |failure| failure.0.as_str());
        tracing::error!(%method, route, status, ms, token, cause, "request failed");
    } else {
        tracing::info!(%method, route, status, ms, token, "request");
    }
    response
}
