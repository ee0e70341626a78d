//! `/sets/{set}`: a set's counts, one page of its identifiers with their
//! runs and one page of its tests, read as the store's outline
//! ([`kbench_store::Results::outline`]): no sample is loaded or counted, so
//! the page of a set of ten million samples answers as fast as a small
//! one's (`kbench show SET` counts them).
//! `?page=N` pages the identifiers, `?tests=N` the tests; both pages link
//! to their neighbours.

use super::layout::{
    self, Failure, Page, Place, SetView, document, page_count, page_number, pager, query_string,
    query_value, respond, set_path,
};
use super::sets::{bad_query, plural, unknown_set};
use crate::AppState;
use crate::error::ApiError;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use kbench_report::markup;
use kbench_report::markup::Markup;
use kbench_store::RunRecord;
use kbench_store::outline::{IdentifierOutline, OutlinePages, SetOutline, Window};
use serde::Deserialize;

/// Identifiers on one page of a set.
pub const IDENTIFIERS_PER_PAGE: usize = 20;
/// Tests on one page of a set's test list.
pub const TESTS_PER_PAGE: usize = 200;

/// The set page's query: the page of identifiers and of tests, from 1.
#[derive(Debug, Deserialize)]
pub struct SetQuery {
    page: Option<usize>,
    tests: Option<usize>,
}

impl SetQuery {
    /// The page numbers (1 when not given); 400 for page 0.
    fn pages(&self) -> Result<(usize, usize), ApiError> {
        Ok((
            page_number("page", self.page)?,
            page_number("tests", self.tests)?,
        ))
    }
}

/// The window of page `number` (from 1) of `per_page` items.
fn window(number: usize, per_page: usize) -> Window {
    Window {
        offset: (number - 1).saturating_mul(per_page),
        limit: per_page,
    }
}

/// `/sets/{set}`: the page of identifiers with their runs, the page of
/// tests, links to the other pages.
pub async fn set_page(
    State(state): State<AppState>,
    Path(set): Path<String>,
    query: Result<Query<SetQuery>, QueryRejection>,
) -> Page {
    let Query(query) = query.map_err(bad_query)?;
    let (page, tests_page) = query.pages()?;
    let pages = OutlinePages {
        identifiers: window(page, IDENTIFIERS_PER_PAGE),
        tests: window(tests_page, TESTS_PER_PAGE),
    };
    let name = set.clone();
    let outline = state
        .stores
        .with(move |store| Ok(store.outline(&name, pages)?))
        .await;
    let outline = match outline {
        Err(err) if err.status == StatusCode::NOT_FOUND => {
            return Err(unknown_set(&state, &set).await);
        }
        other => other?,
    };
    let at = Pages {
        set: &outline.name,
        page,
        tests: tests_page,
    };
    if outline.identifiers.is_empty() && page > 1 {
        return Err(past_the_end(&at, outline.identifier_count));
    }
    Ok(respond(StatusCode::OK, set_document(&outline, &at)))
}

/// Where the page is: the set and its two page numbers, to link to others.
struct Pages<'a> {
    set: &'a str,
    page: usize,
    tests: usize,
}

impl Pages<'_> {
    /// The path of this page with the identifiers' page `page` and the
    /// tests' page `tests`.
    fn path(&self, page: usize, tests: usize) -> String {
        let mut query = vec![];
        if page > 1 {
            query.push(format!("page={page}"));
        }
        if tests > 1 {
            query.push(format!("tests={tests}"));
        }
        set_path(self.set, &query_string(&query))
    }
}

/// A page number beyond the set's last, as a 404 page linking to the last.
fn past_the_end(at: &Pages, identifiers: usize) -> Failure {
    let last = page_count(identifiers, IDENTIFIERS_PER_PAGE);
    Failure {
        status: StatusCode::NOT_FOUND,
        title: "404 No such page".into(),
        main: markup!(
            "<p>Result set <b>{{set}}</b> has {{n}} identifier{{s}} on {{last}} page{{ps}}: there is no page {{page}}. \
             <a href=\"{{href}}\">The last page</a>.</p>\n",
            set = at.set,
            n = identifiers,
            s = plural(identifiers),
            last = last,
            ps = plural(last),
            page = at.page,
            href = at.path(last, at.tests),
        ),
    }
}

fn set_document(outline: &SetOutline, at: &Pages) -> String {
    let lead = format!(
        "{} identifier{}, {} test{}",
        outline.identifier_count,
        plural(outline.identifier_count),
        outline.test_count,
        plural(outline.test_count),
    );
    let ids_pager = pager(
        "identifiers",
        at.page,
        outline.identifier_count,
        IDENTIFIERS_PER_PAGE,
        |n| at.path(n, at.tests),
    );
    let tests_pager = pager("tests", at.tests, outline.test_count, TESTS_PER_PAGE, |n| {
        at.path(at.page, n)
    });
    let tests = Markup::concat(outline.tests.iter().map(|t| {
        markup!(
            "<tr><td><code>{{key}}</code></td><td>{{unit}}</td><td>{{dir}}</td></tr>\n",
            key = t.key.to_string(),
            unit = t.unit,
            dir = t.direction.phrase(),
        )
    }));
    // The test list is open when the reader paged to it.
    let open = if at.tests > 1 { " open" } else { "" };
    let main = markup!(
        "<section id=\"identifiers\">\n<h2>Identifiers</h2>\n{{pager}}{{ids}}{{pager}}</section>\n\
         <section id=\"tests\">\n<h2>Tests</h2>\n<details{{open}}><summary>{{n}} test{{s}}</summary>\n{{tests_pager}}\
         <div class=\"table-wrap\"><table class=\"list\">\n<thead><tr><th scope=\"col\">Test</th><th scope=\"col\">Unit</th>\
         <th scope=\"col\">Direction</th></tr></thead>\n<tbody>\n{{tests}}</tbody></table></div>\n{{tests_pager}}</details>\n</section>\n",
        pager = ids_pager,
        ids = Markup::concat(
            outline
                .identifiers
                .iter()
                .map(|i| identifier_section(&outline.name, i))
        ),
        open = Markup::raw(open),
        n = outline.test_count,
        s = plural(outline.test_count),
        tests_pager = tests_pager,
        tests = tests,
    );
    document(
        &format!("Result set {}", outline.name),
        &lead,
        &main,
        Place::Set(&outline.name, SetView::Runs),
        &Markup::new(),
    )
}

fn identifier_section(set: &str, id: &IdentifierOutline) -> Markup {
    let runs = if id.runs.is_empty() {
        Markup::raw("<p class=\"empty\">No run recorded.</p>\n")
    } else {
        markup!(
            "<div class=\"table-wrap\"><table class=\"list\">\n<thead><tr><th scope=\"col\">Run</th><th scope=\"col\">Status</th>\
             <th scope=\"col\">Started</th><th scope=\"col\">Ended</th><th scope=\"col\">Kernel</th><th scope=\"col\">Host</th>\
             <th scope=\"col\">Tests ended</th><th scope=\"col\">Notes</th></tr></thead>\n\
             <tbody>\n{{rows}}</tbody></table></div>\n",
            rows = Markup::concat(id.runs.iter().map(run_row)),
        )
    };
    markup!(
        "<section class=\"identifier\">\n<h3>{{name}}</h3>\n<p class=\"note\">{{runs_n}} run{{rs}} · \
         <a href=\"{{compare}}\">compare against it</a></p>\n{{runs}}</section>\n",
        name = id.name,
        runs_n = id.runs.len(),
        rs = plural(id.runs.len()),
        compare = format!(
            "{}?baseline={}",
            set_path(set, "/compare"),
            query_value(&id.name)
        ),
        runs = runs,
    )
}

fn run_row(run: &RunRecord) -> Markup {
    let snapshot = &run.info.snapshot;
    let mut outcomes: Vec<(&str, usize)> = vec![];
    for outcome in &run.outcomes {
        let kind = outcome.kind.as_str();
        match outcomes.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, n)) => *n += 1,
            None => outcomes.push((kind, 1)),
        }
    }
    let outcomes: Vec<String> = outcomes.iter().map(|(k, n)| format!("{n} {k}")).collect();
    markup!(
        "<tr><td class=\"num\">{{id}}</td><td><span class=\"state {{status}}\">{{status}}</span></td><td class=\"when\">{{started}}</td>\
         <td class=\"when\">{{ended}}</td><td>{{kernel}}</td><td>{{host}}</td><td>{{outcomes}}</td><td>{{notes}}</td></tr>\n",
        id = run.id.0.to_string(),
        status = run.status.as_str(),
        // An imported run's start is unknown (0).
        started = layout::utc_or_dash(Some(run.info.started_at_ms).filter(|&ms| ms > 0)),
        ended = layout::utc_or_dash(run.ended_at_ms),
        kernel = snapshot.kernel_release,
        host = snapshot.hostname,
        outcomes = outcomes.join(", "),
        notes = run.info.notes.join("; "),
    )
}
