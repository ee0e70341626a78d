//! The result set pages: the overview (sets, jobs, workers) and a set's live
//! comparison and history (its own page is [`super::set_page`]): kbench-report's
//! HTML pages built from the store's current data by the API's own path
//! ([`handlers::sets::from_set`]), dressed with the navigation bar and a form
//! for the query.

use super::lab;
use super::layout::{
    self, Failure, Page, Place, SetView, document, dress, field, page_count, page_number, pager,
    query_form, query_string, query_value, respond, select, set_path, utc,
};
use crate::AppState;
use crate::error::ApiError;
use crate::handlers;
use crate::handlers::sets::{CompareQuery, HistoryQuery};
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use kbench_analysis::comparison;
use kbench_analysis::history;
use kbench_report::format::html::history_page;
use kbench_report::format::html::{MetricPart, changed, compare_page_part};
use kbench_report::markup;
use kbench_report::markup::Markup;
use kbench_report::printed;
use kbench_store::outline::{LatestRun, SetOverview};
use kbench_store::{ResultSetData, SetPart};
use serde::Deserialize;

/// `/`: the result sets with their counts and newest runs (no sample is
/// counted: [`kbench_store::Results::set_overviews`]), the jobs' states
/// with the newest jobs, the workers.
pub async fn overview(State(state): State<AppState>) -> Page {
    let (sets, jobs, workers) = state
        .stores
        .with(|store| Ok((store.set_overviews()?, store.jobs()?, store.workers()?)))
        .await?;
    let now = layout::now_ms();
    let main = markup!(
        "<section id=\"sets\">\n<h2>Result sets</h2>\n{{sets}}</section>\n\
         <section id=\"jobs\">\n<h2>Jobs</h2>\n{{counts}}{{jobs}}<p><a href=\"/jobs\">Every job</a></p>\n</section>\n\
         <section id=\"workers\">\n<h2>Workers</h2>\n{{workers}}</section>\n",
        sets = sets_table(&sets, now),
        counts = lab::state_counts(&jobs),
        jobs = lab::jobs_table(&jobs[..jobs.len().min(RECENT_JOBS)], now),
        workers = lab::workers_table(&workers, now),
    );
    let lead = format!(
        "{} result set{}, {} job{}, {} worker{}",
        sets.len(),
        plural(sets.len()),
        jobs.len(),
        plural(jobs.len()),
        workers.len(),
        plural(workers.len())
    );
    let html = document("kbench lab", &lead, &main, Place::Overview, &Markup::new());
    Ok(respond(StatusCode::OK, html))
}

/// Jobs the overview lists (the newest).
const RECENT_JOBS: usize = 10;

pub(super) fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

fn sets_table(sets: &[SetOverview], now: i64) -> Markup {
    if sets.is_empty() {
        return Markup::raw(
            "<p class=\"empty\">No result set yet: <code>kbench push</code> or <code>kbench run --server</code> stores one.</p>\n",
        );
    }
    let rows = Markup::concat(sets.iter().map(|s| {
        markup!(
            "<tr><td><a href=\"{{href}}\">{{name}}</a></td><td class=\"num\">{{ids}}</td><td class=\"num\">{{tests}}</td>\
             <td class=\"num\">{{runs}}</td><td>{{latest}}</td><td class=\"when\">{{created}}</td>\
             <td><a href=\"{{compare}}\">compare</a> · <a href=\"{{history}}\">history</a></td></tr>\n",
            href = set_path(&s.name, ""),
            name = s.name,
            ids = s.identifiers,
            tests = s.tests,
            runs = s.runs,
            latest = latest_run(s.latest.as_ref(), now),
            created = utc(s.created_at_ms),
            compare = set_path(&s.name, "/compare"),
            history = set_path(&s.name, "/history"),
        )
    }));
    markup!(
        "<div class=\"table-wrap\"><table class=\"list\" id=\"sets-table\">\n<thead><tr><th scope=\"col\">Result set</th>\
         <th scope=\"col\" class=\"num\">Identifiers</th><th scope=\"col\" class=\"num\">Tests</th><th scope=\"col\" class=\"num\">Runs</th>\
         <th scope=\"col\">Latest run</th><th scope=\"col\">Created</th><th scope=\"col\">Reports</th></tr></thead>\n<tbody>\n{{rows}}</tbody></table></div>\n",
        rows = rows,
    )
}

/// The newest run of a set: its identifier, status and when it ended (or
/// started, while it runs).
fn latest_run(run: Option<&LatestRun>, now: i64) -> Markup {
    let Some(run) = run else {
        return Markup::raw("<span class=\"empty\">none</span>");
    };
    let when = run
        .ended_at_ms
        .or(Some(run.started_at_ms).filter(|&ms| ms > 0))
        .map(|ms| layout::ago(now, ms))
        .unwrap_or_default();
    markup!(
        "{{id}} <span class=\"state {{status}}\">{{status}}</span> {{when}}",
        id = run.identifier,
        status = run.status.as_str(),
        when = when,
    )
}

/// [`handlers::sets::from_set`], with an unknown set answered by a 404 page that
/// lists the sets there are.
async fn from_set<T: Send + 'static>(
    state: &AppState,
    set: &str,
    part: SetPart,
    build: impl FnOnce(ResultSetData) -> Result<T, kbench_report::Error> + Send + 'static,
) -> Result<T, Failure> {
    match handlers::sets::from_set(state, set.to_string(), part, build).await {
        Err(err) if err.status == StatusCode::NOT_FOUND => Err(unknown_set(state, set).await),
        other => Ok(other?),
    }
}

pub(super) async fn unknown_set(state: &AppState, set: &str) -> Failure {
    let sets = state.stores.with(|store| Ok(store.set_overviews()?)).await;
    let known = match sets {
        Ok(sets) if sets.is_empty() => Markup::raw("<p>The store holds no result set yet.</p>\n"),
        Ok(sets) => markup!(
            "<p>The result sets there are:</p>\n<ul>\n{{items}}</ul>\n",
            items = Markup::concat(sets.iter().map(|s| markup!(
                "<li><a href=\"{{href}}\">{{name}}</a></li>\n",
                href = set_path(&s.name, ""),
                name = s.name,
            ))),
        ),
        Err(err) => markup!(
            "<p>The result sets cannot be listed: {{e}}</p>\n",
            e = err.message
        ),
    };
    Failure {
        status: StatusCode::NOT_FOUND,
        title: "404 No such result set".into(),
        main: markup!(
            "<p>There is no result set <b>{{set}}</b>.</p>\n{{known}}",
            set = set,
            known = known,
        ),
    }
}

/// Metrics on one page of a comparison: a comparison of thousands of
/// metrics is read and decided whole (the q-values need every metric), but
/// shown a page at a time.
pub const METRICS_PER_PAGE: usize = 200;

/// The comparison page's own query, beside the comparison's
/// ([`CompareQuery`]): which page of metrics, and whether only the changed
/// ones (`show=changed`: a regression or an improvement against the
/// baseline).
#[derive(Debug, Deserialize)]
pub struct MetricsQuery {
    page: Option<usize>,
    show: Option<String>,
}

impl MetricsQuery {
    /// The page number (from 1) and whether only changed metrics are
    /// shown; 400 for page 0 or an unknown `show`.
    fn choice(&self) -> Result<(usize, bool), ApiError> {
        let page = page_number("page", self.page)?;
        let changed = match self.show.as_deref().unwrap_or("all") {
            "all" | "" => false,
            "changed" => true,
            other => {
                return Err(ApiError::bad_request(format!(
                    "show={other}: choose all or changed"
                )));
            }
        };
        Ok((page, changed))
    }
}

/// `/sets/{set}/compare`: the live HTML comparison, with a form for the
/// baseline, the compared identifiers, the threshold, a metric filter and
/// whether only changed metrics are listed; [`METRICS_PER_PAGE`] metrics a
/// page. A set of one identifier gets a page that says so.
pub async fn compare(
    State(state): State<AppState>,
    Path(set): Path<String>,
    query: Result<Query<CompareQuery>, QueryRejection>,
    metrics: Result<Query<MetricsQuery>, QueryRejection>,
) -> Page {
    let Query(query) = query.map_err(bad_query)?;
    let Query(metrics) = metrics.map_err(bad_query)?;
    let (page, only_changed) = metrics.choice()?;
    let request = query.request(&state).await?;
    let part = printed::part(&request, None);
    let html = from_set(&state, &set, part, move |data| {
        let report = comparison::build(&data, &request)?;
        let names: Vec<String> = data.identifiers.iter().map(|i| i.name.clone()).collect();
        let form = query_form(
            &[
                select("Baseline", "baseline", &names, &report.baseline),
                field(
                    "Compared (comma-separated)",
                    "identifiers",
                    "search",
                    query.identifiers.as_deref().unwrap_or(""),
                    "all the others",
                ),
                threshold_field(report.threshold_pct),
                metric_field(query.metric.as_deref()),
                select(
                    "Metrics",
                    "show",
                    &["all".to_string(), "changed".to_string()],
                    if only_changed { "changed" } else { "all" },
                ),
            ],
            "Compare",
        );
        let place = Place::Set(&data.name, SetView::Compare);
        if report.identifiers.len() < 2 {
            let main = markup!(
                "<p>Result set <b>{{set}}</b> has one identifier, <b>{{id}}</b>: there is nothing to compare it with yet. \
                 Push a second identifier (<code>kbench push</code>, <code>kbench run --server</code>), then come back.</p>\n",
                set = data.name,
                id = report.baseline,
            );
            return Ok(Ok(document(
                &format!("kbench compare: {}", data.name),
                "One identifier",
                &main,
                place,
                &form,
            )));
        }
        let listed: Vec<usize> = (0..report.metrics.len())
            .filter(|&i| !only_changed || changed(&report.metrics[i]))
            .collect();
        let last = page_count(listed.len(), METRICS_PER_PAGE);
        if page > last {
            let href = compare_path(&data.name, &query, only_changed, last);
            return Ok(Err(past_the_last_metrics(&data.name, page, last, &href)));
        }
        let what = if only_changed { "changed metrics" } else { "metrics" };
        let link = |n: usize| compare_path(&data.name, &query, only_changed, n);
        let part = MetricPart {
            pager: pager(what, page, listed.len(), METRICS_PER_PAGE, link),
            shown: listed
                .into_iter()
                .skip((page - 1) * METRICS_PER_PAGE)
                .take(METRICS_PER_PAGE)
                .collect(),
        };
        Ok(Ok(dress(compare_page_part(&report, &part), place, &form)))
    })
    .await??;
    Ok(respond(StatusCode::OK, html))
}

/// The comparison page `page` of `set` with the same comparison as `query`.
fn compare_path(set: &str, query: &CompareQuery, only_changed: bool, page: usize) -> String {
    let mut pairs: Vec<String> = [
        ("baseline", query.baseline.clone()),
        ("identifiers", query.identifiers.clone()),
        ("threshold", query.threshold.map(|t| t.to_string())),
        ("metric", query.metric.clone()),
    ]
    .into_iter()
    .filter_map(|(name, value)| value.map(|v| format!("{name}={}", query_value(&v))))
    .collect();
    if only_changed {
        pairs.push("show=changed".into());
    }
    if page > 1 {
        pairs.push(format!("page={page}"));
    }
    set_path(set, &format!("/compare{}", query_string(&pairs)))
}

/// A page of metrics beyond the comparison's last, as a 404 page.
/// `href` links to the last.
fn past_the_last_metrics(set: &str, page: usize, last: usize, href: &str) -> Failure {
    Failure {
        status: StatusCode::NOT_FOUND,
        title: "404 No such page".into(),
        main: markup!(
            "<p>This comparison of result set <b>{{set}}</b> fills {{last}} page{{s}} of metrics: there is no page {{page}}. \
             <a href=\"{{href}}\">The last page</a>.</p>\n",
            href = href,
            set = set,
            last = last,
            s = plural(last),
            page = page,
        ),
    }
}

/// A query that does not parse (`threshold=abc`), as a 400 page.
pub(super) fn bad_query(rejection: QueryRejection) -> Failure {
    ApiError::bad_request(rejection.body_text()).into()
}

/// The threshold the report used, in percent.
fn threshold_field(threshold_pct: f64) -> Markup {
    field(
        "Threshold %",
        "threshold",
        "number",
        &threshold_pct.to_string(),
        "1",
    )
}

fn metric_field(metric: Option<&str>) -> Markup {
    field(
        "Metric",
        "metric",
        "search",
        metric.unwrap_or(""),
        "tests whose name holds",
    )
}

/// `/sets/{set}/history`: the history page with its change points, with a
/// form for the version order, the threshold and a metric filter.
pub async fn history(
    State(state): State<AppState>,
    Path(set): Path<String>,
    query: Result<Query<HistoryQuery>, QueryRejection>,
) -> Page {
    let Query(query) = query.map_err(bad_query)?;
    let request = query.request()?;
    let html = from_set(&state, &set, request.part(), move |data| {
        let report = history::build(&data, &request)?;
        let form = query_form(
            &[
                field(
                    "Order (comma-separated)",
                    "order",
                    "search",
                    query.order.as_deref().unwrap_or(""),
                    "as stored",
                ),
                threshold_field(report.threshold_pct),
                metric_field(query.metric.as_deref()),
            ],
            "Show",
        );
        Ok(dress(
            history_page(&report),
            Place::Set(&data.name, SetView::History),
            &form,
        ))
    })
    .await?;
    Ok(respond(StatusCode::OK, html))
}
