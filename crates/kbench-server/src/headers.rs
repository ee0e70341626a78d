//! Headers on every answer of the server (API, dashboard, errors): no MIME
//! sniffing, no `Referer` sent on from a page, and a Content-Security-Policy
//! that forbids everything where the handler set none (JSON is no page;
//! the dashboard's pages and the API's HTML and SVG reports set their own,
//! [`report_policy`]).

use axum::Router;
use axum::http::{HeaderValue, header};
use axum::middleware::map_response;
use axum::response::Response;
use kbench_report::format::html::page_policy;
use kbench_report::format::svg::document_policy;
use std::sync::OnceLock;

/// The policy of an answer that is not a page: nothing at all.
const NOTHING: &str = "default-src 'none'; frame-ancestors 'none'";

/// `router` with the headers on every answer, the fallback's included.
pub(crate) fn secure(router: Router) -> Router {
    router.layer(map_response(add_headers))
}

async fn add_headers(mut response: Response) -> Response {
    let headers = response.headers_mut();
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers
        .entry(header::CONTENT_SECURITY_POLICY)
        .or_insert(HeaderValue::from_static(NOTHING));
    response
}

/// The policy of a report the API answers in `format`: the page's or
/// picture's own (its inline CSS and script by their hashes), and no
/// framing (which only a header can forbid); `None` for the formats that
/// are not shown as pages.
pub(crate) fn report_policy(format: &str) -> Option<&'static str> {
    static HTML: OnceLock<String> = OnceLock::new();
    static SVG: OnceLock<String> = OnceLock::new();
    let unframed = |policy: &str| format!("{policy}; frame-ancestors 'none'");
    match format {
        "html" => Some(HTML.get_or_init(|| unframed(page_policy()))),
        "svg" => Some(SVG.get_or_init(|| unframed(document_policy()))),
        _ => None,
    }
}
