//! The lab's web dashboard: server-rendered HTML pages over the store, for
//! people, beside the JSON API for programs (docs/api.md "Dashboard
//! pages"). Each page is one self-contained document (inline CSS, SVG and
//! script; nothing loaded from anywhere, which the Content-Security-Policy
//! header enforces in the browser):
//!
//! - `/`: result sets, job states with the newest jobs, workers;
//! - `/sets/{set}`: its identifiers with their runs and its tests, a page
//!   of each at a time (`?page=N`, `?tests=N`), links;
//! - `/sets/{set}/compare` and `/sets/{set}/history`: kbench-report's HTML
//!   comparison and history pages built live from the store (the API's
//!   query parameters), with a form to change the query;
//! - `/jobs`, `/workers`, `/bisects`: the lab's queue, machines and saved
//!   bisections.
//!
//! The layout, escaping and answers are in [`layout`]; the pages build on
//! the report crate's templates, so every name is escaped the same way.

mod lab;
mod layout;
mod set_page;
mod sets;

use crate::AppState;
use axum::Router;
use axum::routing::get;

/// The dashboard's routes (merged into the API's router).
pub(crate) fn routes() -> Router<AppState> {
    Router::new()
        .route("/", get(sets::overview))
        .route("/sets/{set}", get(set_page::set_page))
        .route("/sets/{set}/compare", get(sets::compare))
        .route("/sets/{set}/history", get(sets::history))
        .route("/jobs", get(lab::jobs))
        .route("/workers", get(lab::workers))
        .route("/bisects", get(lab::bisects))
}
