//! What every dashboard page shares, in one place: the document (the HTML
//! report's skeleton from kbench-report, so the pages look like the
//! reports and escape the same way), the navigation bar and the
//! dashboard's CSS put into it, the query forms, the HTTP answer with its
//! headers, the error pages, links and times.
//!
//! Every user string (set, identifier, worker, job message...) reaches a
//! page through kbench-report's [`Markup`] templates, which escape every
//! value that is not itself markup; a name in a link is percent-encoded
//! first ([`set_path`], [`query_value`]).

use crate::error::ApiError;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use kbench_model::lab::encode_segment;
use kbench_report::format::csp;
use kbench_report::format::html::{PAGE_SCRIPT, PAGE_STYLE, page, policy_meta};
use kbench_report::markup;
use kbench_report::markup::Markup;
use std::sync::OnceLock;

/// The content of the dashboard's `<style>` element (after the report's).
const STYLE: &str = concat!("\n", include_str!("dashboard.css"));
/// The content of the dashboard's `<script>` element: the query forms.
const SCRIPT: &str = include_str!("dashboard.js");

/// The Content-Security-Policy of every page: nothing may be loaded from
/// anywhere, so a page makes no request to any host, the server included;
/// the only CSS and scripts that apply are the report skeleton's and the
/// dashboard's own, by their hashes; `data:` images; no framing.
pub fn policy() -> &'static str {
    static POLICY: OnceLock<String> = OnceLock::new();
    POLICY.get_or_init(|| {
        let policy = csp::policy(&[PAGE_STYLE, STYLE], &[PAGE_SCRIPT, SCRIPT], "'self'");
        format!("{policy}; frame-ancestors 'none'")
    })
}

/// Where a page is, for the navigation bar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place<'a> {
    Overview,
    Jobs,
    Workers,
    Bisects,
    /// A page of a result set.
    Set(&'a str, SetView),
    /// An error page.
    Nowhere,
}

/// The pages of a result set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetView {
    Runs,
    Compare,
    History,
}

/// `/sets/SET` with the name percent-encoded, plus `rest` (`/compare`...).
pub fn set_path(set: &str, rest: &str) -> String {
    format!("/sets/{}{rest}", encode_segment(set))
}

/// `?a=1&b=2` of query pairs already encoded, or nothing for none.
pub fn query_string(pairs: &[String]) -> String {
    if pairs.is_empty() {
        String::new()
    } else {
        format!("?{}", pairs.join("&"))
    }
}

/// A value for a query string (`?baseline=...`), percent-encoded.
pub fn query_value(value: &str) -> String {
    encode_segment(value)
}

/// The navigation bar: the lab's pages, and on a result set's pages the
/// set's own; `form` (a [`query_form`]) goes on a row of its own.
fn nav(place: Place, form: &Markup) -> Markup {
    let current = |here: bool| Markup::raw(if here { " aria-current=\"page\"" } else { "" });
    let mut bar = markup!(
        "<nav class=\"dash\" aria-label=\"kbench lab\">\n<div class=\"bar\"><a class=\"brand\" href=\"/\">kbench lab</a>\
         <a href=\"/\"{{o}}>Result sets</a><a href=\"/jobs\"{{j}}>Jobs</a><a href=\"/workers\"{{w}}>Workers</a><a href=\"/bisects\"{{b}}>Bisections</a></div>\n",
        o = current(place == Place::Overview),
        j = current(place == Place::Jobs),
        w = current(place == Place::Workers),
        b = current(place == Place::Bisects),
    );
    if let Place::Set(set, view) = place {
        bar.push(&markup!(
            "<div class=\"bar\"><span class=\"where\">Result set <b>{{set}}</b></span>\
             <a href=\"{{runs}}\"{{r}}>Identifiers and runs</a><a href=\"{{compare}}\"{{c}}>Compare</a>\
             <a href=\"{{history}}\"{{h}}>History</a><a href=\"{{export}}\">Export (JSON)</a></div>\n",
            set = set,
            runs = set_path(set, ""),
            r = current(view == SetView::Runs),
            compare = set_path(set, "/compare"),
            c = current(view == SetView::Compare),
            history = set_path(set, "/history"),
            h = current(view == SetView::History),
            export = format!("/api/v1/result-sets/{}/export", encode_segment(set)),
        ));
    }
    if !form.is_empty() {
        bar.push(&markup!("<div class=\"bar\">{{form}}</div>\n", form = form));
    }
    bar.push(&Markup::raw("</nav>\n"));
    bar
}

/// `html` (a whole document of kbench-report's skeleton) with the
/// dashboard's CSS in its head, the navigation bar first in its body and
/// the dashboard's script last. The skeleton's own policy element goes:
/// the answer's header carries the dashboard's [`policy`]. The report
/// pages (compare, history) are dressed as they come, so they stay what
/// `kbench compare --format html` writes.
pub fn dress(html: String, place: Place, form: &Markup) -> String {
    let mut html = html.replacen(&format!("{}\n", policy_meta()), "", 1);
    let style = format!("<style>{STYLE}</style>\n");
    let head_end = html.find("</head>").unwrap_or(0);
    html.insert_str(head_end, &style);
    let body = html
        .find("<body>\n")
        .map_or(head_end + style.len(), |i| i + "<body>\n".len());
    html.insert_str(body, nav(place, form).as_str());
    let body_end = html.rfind("</body>").unwrap_or(html.len());
    html.insert_str(body_end, &format!("<script>{SCRIPT}</script>\n"));
    html
}

/// A dashboard page: a title, a lead line and the main content.
pub fn document(title: &str, lead: &str, main: &Markup, place: Place, form: &Markup) -> String {
    let body = markup!(
        "<header class=\"top\">\n<h1>{{title}}</h1>\n<p class=\"lead\">{{lead}}</p>\n</header>\n<main>\n{{main}}</main>\n",
        title = title,
        lead = lead,
        main = main,
    );
    let footer = markup!(
        "<p>The lab's store as of {{now}}; the same data as JSON under <code>/api/v1</code>.</p>",
        now = utc(now_ms()),
    );
    dress(page(title, &body, &footer), place, form)
}

/// The HTTP answer for a page: HTML and the [`policy`].
pub fn respond(status: StatusCode, html: String) -> Response {
    (
        status,
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CONTENT_SECURITY_POLICY, policy()),
        ],
        html,
    )
        .into_response()
}

/// A page that could not be made, answered as a page of its own with the
/// status and what to do.
#[derive(Debug)]
pub struct Failure {
    pub status: StatusCode,
    pub title: String,
    pub main: Markup,
}

impl From<ApiError> for Failure {
    fn from(err: ApiError) -> Failure {
        Failure {
            status: err.status,
            title: format!(
                "{} {}",
                err.status.as_u16(),
                err.status.canonical_reason().unwrap_or("error")
            ),
            main: markup!("<p>{{message}}</p>\n", message = err.message),
        }
    }
}

impl IntoResponse for Failure {
    fn into_response(self) -> Response {
        let lead = "kbench lab";
        let html = document(
            &self.title,
            lead,
            &self.main,
            Place::Nowhere,
            &Markup::new(),
        );
        respond(self.status, html)
    }
}

/// What a dashboard handler answers.
pub type Page = Result<Response, Failure>;

/// A form for a report's query (`fields`: [`field`]s and [`select`]s).
/// The dashboard's script (`dashboard.js`) makes the form navigate to the
/// same page with the non-empty fields as the query; without it the form
/// is sent as it is, to the same page.
pub fn query_form(fields: &[Markup], button: &str) -> Markup {
    markup!(
        "<form class=\"query\" method=\"get\">{{fields}}<button type=\"submit\">{{button}}</button></form>",
        fields = Markup::concat(fields.iter().cloned()),
        button = button,
    )
}

/// A labelled input of a [`query_form`]; `kind` is its type (`search`,
/// `number`).
pub fn field(label: &str, name: &str, kind: &str, value: &str, placeholder: &str) -> Markup {
    markup!(
        "<label>{{label}} <input type=\"{{kind}}\" name=\"{{name}}\" value=\"{{value}}\" placeholder=\"{{placeholder}}\"{{extra}}></label>",
        label = label,
        kind = kind,
        name = name,
        value = value,
        placeholder = placeholder,
        extra = Markup::raw(if kind == "number" {
            " min=\"0\" max=\"99.99\" step=\"any\""
        } else {
            " autocomplete=\"off\""
        }),
    )
}

/// A labelled choice among `options` of a [`query_form`].
pub fn select(label: &str, name: &str, options: &[String], selected: &str) -> Markup {
    let options = Markup::concat(options.iter().map(|o| {
        markup!(
            "<option{{sel}}>{{o}}</option>",
            sel = Markup::raw(if o == selected { " selected" } else { "" }),
            o = o,
        )
    }));
    markup!(
        "<label>{{label}} <select name=\"{{name}}\">{{options}}</select></label>",
        label = label,
        name = name,
        options = options,
    )
}

/// Milliseconds since the Unix epoch, now.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// `ms` (since the epoch) as `2025-06-01 12:34:56 UTC`.
pub fn utc(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let (days, rest) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Days to a civil date (H. Hinnant's algorithm, proleptic Gregorian).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02} UTC",
        rest / 3600,
        rest / 60 % 60,
        rest % 60
    )
}

/// An optional time as [`utc`], or a dash.
pub fn utc_or_dash(ms: Option<i64>) -> String {
    ms.map_or_else(|| "–".to_string(), utc)
}

/// How long ago `ms` was: "12 s ago", "5 min ago", "3 h ago", "2 d ago"
/// ("in 4 s" for a time ahead, from a clock that differs).
pub fn ago(now_ms: i64, ms: i64) -> String {
    let secs = (now_ms - ms) / 1000;
    let abs = secs.abs();
    let text = match abs {
        0..120 => format!("{abs} s"),
        120..7200 => format!("{} min", abs / 60),
        7200..172_800 => format!("{} h", abs / 3600),
        _ => format!("{} d", abs / 86_400),
    };
    if secs < 0 {
        format!("in {text}")
    } else {
        format!("{text} ago")
    }
}

/// The page number of query parameter `name` (1 when not given); 400 for
/// page 0.
pub fn page_number(name: &str, value: Option<usize>) -> Result<usize, ApiError> {
    match value.unwrap_or(1) {
        0 => Err(ApiError::bad_request(format!(
            "{name}=0: pages are numbered from 1"
        ))),
        n => Ok(n),
    }
}

/// How many pages `count` items fill (at least one).
pub fn page_count(count: usize, per_page: usize) -> usize {
    count.div_ceil(per_page).max(1)
}

/// "Previous · page N of M · Next" for a list of `count` items, `per_page`
/// a page, shown at page `number`; `link(n)` is the path of page n. None
/// when it all fits on one page.
pub fn pager(
    what: &str,
    number: usize,
    count: usize,
    per_page: usize,
    link: impl Fn(usize) -> String,
) -> Markup {
    let last = page_count(count, per_page);
    if last == 1 {
        return Markup::new();
    }
    let first_item = ((number - 1) * per_page + 1).min(count);
    let last_item = (number * per_page).min(count);
    let step = |label: &str, rel: &str, to: Option<usize>| match to {
        Some(n) => markup!(
            "<a rel=\"{{rel}}\" href=\"{{href}}\">{{label}}</a>",
            rel = rel,
            href = link(n),
            label = label,
        ),
        None => markup!("<span>{{label}}</span>", label = label),
    };
    markup!(
        "<p class=\"pager\">{{prev}} · {{what}} {{a}}–{{b}} of {{count}}, page {{number}} of {{last}} · {{next}}</p>\n",
        prev = step("Previous", "prev", (number > 1).then(|| number - 1)),
        what = what,
        a = first_item,
        b = last_item,
        count = count,
        number = number,
        last = last,
        next = step("Next", "next", (number < last).then(|| number + 1)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_read_as_dates_and_ages() {
        assert_eq!(utc(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(utc(951_782_400_000), "2000-02-29 00:00:00 UTC");
        assert_eq!(utc(1_767_225_599_999), "2025-12-31 23:59:59 UTC");
        assert_eq!(utc(-1000), "1969-12-31 23:59:59 UTC");
        assert_eq!(ago(100_000, 88_000), "12 s ago");
        assert_eq!(ago(1_000_000, 700_000), "5 min ago");
        assert_eq!(ago(0, 4000), "in 4 s");
        assert_eq!(ago(3 * 86_400_000, 0), "3 d ago");
    }

    #[test]
    fn names_in_links_are_encoded_and_escaped() {
        let evil = "<script>alert(1)</script>";
        assert_eq!(set_path("a/b c", "/compare"), "/sets/a%2Fb%20c/compare");
        let html = document(
            evil,
            evil,
            &Markup::new(),
            Place::Set(evil, SetView::Runs),
            &Markup::new(),
        );
        assert!(!html.contains("<script>alert"), "{html}");
        assert!(html.contains("Result set <b>&lt;script&gt;alert(1)&lt;/script&gt;</b>"));
        assert!(html.contains("href=\"/sets/%3Cscript%3Ealert%281%29%3C%2Fscript%3E/compare\""));
        // The CSS went into the head, the bar first into the body.
        let head = &html[..html.find("</head>").unwrap()];
        assert!(head.contains("nav.dash {"));
        assert!(html.contains("<body>\n<nav class=\"dash\""));
    }
}
