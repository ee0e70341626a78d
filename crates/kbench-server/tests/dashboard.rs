//! The dashboard end to end, in process: a server on 127.0.0.1:0 over a
//! temp SQLite store filled through the store's role traits (a set of two
//! identifiers with a regression, a set of one, two jobs, a worker, a
//! bisection; hostile names among them). Every page is fetched over HTTP
//! and checked: status, headers, content, escaping, links that stay on the
//! server. Headless Chromium (Debian's `chromium`) then renders the
//! comparison and the overview: the report's script runs under the
//! Content-Security-Policy, and the pages ask no other host for anything
//! (the requests a page makes, from Chromium's NetLog).
//! Without Chromium that test is skipped with a message, except in CI
//! (CI=true), where it fails.

use kbench_model::{Direction, Sample, SystemSnapshot, TestKey, TestSpec};
use kbench_report::format::csp::hash_source;
use kbench_report::testing::{chromium, visit};
use kbench_server::{Config, Running};
use kbench_store::{JobSpec, Location, RunInfo, RunStatus};
use std::io::{Read, Write};
use std::net::TcpStream;

const SET: &str = "kernels";
const BASE: &str = "6.18.0";
const EVIL_ID: &str = "<script>alert(1)</script>";
const EVIL_SET: &str = "<script>alert(3)</script> solo";
const EVIL_MESSAGE: &str = "<script>alert(2)</script>'; DROP TABLE jobs; --";
const WORKER: &str = "rack-<i>7</i>";
/// The pages of a filled lab (the set pages of [`SET`]).
const PAGES: &[&str] = &[
    "/",
    "/sets/kernels",
    "/sets/kernels/compare",
    "/sets/kernels/history",
    "/jobs",
    "/workers",
    "/bisects",
];

/// A server over a temp store.
struct Lab {
    _dir: tempfile::TempDir,
    _server: Running,
    addr: String,
}

/// A lab with [`SET`] (BASE and EVIL_ID measured apart, one run each,
/// EVIL_ID 30 % slower on pipe-lat: beyond the default drift between
/// runs), [`EVIL_SET`] (one identifier), two jobs (one done with
/// EVIL_MESSAGE, one running on WORKER) and a saved bisection.
fn lab() -> Lab {
    let dir = tempfile::tempdir().unwrap();
    let location = Location::Sqlite(dir.path().join("results.db"));
    let mut store = location.open_send().unwrap();
    let tests = [
        ("pipe-lat[placement=cross]", "us", Direction::Lower, 5.0),
        ("spawn", "ops/s", Direction::Higher, 2000.0),
    ];
    let ids = [
        (SET, BASE, 1.0),
        (SET, EVIL_ID, 1.30),
        (EVIL_SET, "only", 1.0),
    ];
    for (set, identifier, slower) in ids {
        let info = RunInfo {
            snapshot: SystemSnapshot {
                kernel_release: format!("{identifier}-kbench"),
                hostname: "lab-1".into(),
                cpus_online: 4,
                ..SystemSnapshot::default()
            },
            tool_version: "0.1.0".into(),
            notes: vec!["emulated <b>CPU</b>".into()],
            started_at_ms: 1_767_225_600_000,
            pid: 1,
            ..RunInfo::default()
        };
        let run = store.begin_run(set, identifier, &info).unwrap();
        for (m, (test, unit, direction, level)) in tests.iter().enumerate() {
            let spec = TestSpec {
                key: TestKey::parse(test).unwrap(),
                unit: unit.to_string(),
                direction: *direction,
            };
            let id = store.test_id(set, &spec).unwrap();
            let level = if m == 0 { level * slower } else { *level };
            for s in 0..12u32 {
                // A fixed scatter of +-0.3 %.
                let scatter = 1.0 + 0.003 * (f64::from((s * 7 + m as u32 * 3) % 11) / 5.0 - 1.0);
                let sample = Sample {
                    value: level * scatter,
                    iterations: 1,
                    at_ms: i64::from(s),
                    round: s % 3,
                };
                store.add_sample(run, id, &sample).unwrap();
            }
        }
        store.end_run(run, RunStatus::Complete, None).unwrap();
    }
    let spec = |identifier: &str| JobSpec {
        set: SET.into(),
        identifier: identifier.into(),
        names: vec!["quick".into()],
        kernel: Some("debian:6.12".into()),
        rounds: 3,
        max_time: None,
        tags: vec!["tcg".into()],
    };
    let first = store.submit_job(&spec(EVIL_ID)).unwrap();
    let second = store.submit_job(&spec("6.19-rc1")).unwrap();
    let tags = ["tcg".to_string()];
    assert_eq!(
        store
            .lease_job(WORKER, "runner-1", &tags, 60_000)
            .unwrap()
            .unwrap()
            .id,
        first
    );
    assert!(
        store
            .finish_job(first, WORKER, "runner-1", true, EVIL_MESSAGE)
            .unwrap()
    );
    assert_eq!(
        store
            .lease_job(WORKER, "runner-1", &tags, 60_000)
            .unwrap()
            .unwrap()
            .id,
        second
    );
    let state = serde_json::json!({
        "schema": "kbench.bisect-state/1",
        "fingerprint": {"repo": "/src/linux", "good": "v6.17", "bad": "v6.18", "build": "make",
            "measure": "pipe-lat", "metric": "pipe-lat[placement=cross]", "better": "lower"},
        "worktree": null, "skipped": {}, "confirm_from": {},
        "log": [{"step": 1, "phase": "endpoints", "commit": "abc", "identifier": "v6.18",
            "measurements": 3, "measured_now": 3, "event": "endpoints differ", "detail": ""}],
        "finished": false
    });
    store
        .save_bisect("pipe-bisect", &state.to_string())
        .unwrap();
    drop(store);
    let server = kbench_server::spawn(
        "127.0.0.1:0",
        Config::new(
            location,
            std::sync::Arc::new(kbench_catalog::job::checker(
                kbench_catalog::profile::Profiles::builtin(),
            )),
        ),
    )
    .unwrap();
    Lab {
        addr: server.addr.to_string(),
        _server: server,
        _dir: dir,
    }
}

/// An HTTP answer with its headers (names in lower case).
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

impl Lab {
    /// GET `path`, the answer as it comes.
    fn fetch(&self, path: &str) -> Answer {
        let mut stream = TcpStream::connect(&self.addr).unwrap();
        write!(
            stream,
            "GET {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
            self.addr
        )
        .unwrap();
        let mut raw = String::new();
        stream.read_to_string(&mut raw).unwrap();
        let (head, body) = raw.split_once("\r\n\r\n").expect("an HTTP answer");
        let mut lines = head.lines();
        let status = lines.next().unwrap().split(' ').nth(1).unwrap();
        let headers: Vec<(String, String)> = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(n, v)| (n.to_ascii_lowercase(), v.trim().to_string()))
            .collect();
        let answer = Answer {
            status: status.parse().unwrap(),
            headers,
            body: body.to_string(),
        };
        assert_eq!(answer.header("transfer-encoding"), None, "{path}: chunked");
        assert_eq!(
            answer.header("x-content-type-options"),
            Some("nosniff"),
            "{path}"
        );
        assert_eq!(
            answer.header("referrer-policy"),
            Some("no-referrer"),
            "{path}"
        );
        assert!(
            answer.header("content-security-policy").is_some(),
            "{path}: no CSP"
        );
        answer
    }

    /// GET `path`; the page's headers checked (HTML, the dashboard's CSP,
    /// which allows exactly the page's inline styles and scripts).
    fn get(&self, path: &str) -> Answer {
        let answer = self.fetch(path);
        assert_eq!(
            answer.header("content-type"),
            Some("text/html; charset=utf-8"),
            "{path}"
        );
        let policy = answer.header("content-security-policy").unwrap();
        assert_eq!(inline_hashes(&answer.body, "script").len(), 2, "{path}");
        assert_policy_allows_only(policy, &answer.body);
        for part in [
            "frame-ancestors 'none'",
            "base-uri 'none'",
            "form-action 'self'",
        ] {
            assert!(policy.contains(part), "{path}: {policy}");
        }
        assert!(
            !answer
                .body
                .contains("http-equiv=\"Content-Security-Policy\""),
            "{path}: the header's policy is the page's only one"
        );
        assert!(answer.body.starts_with("<!DOCTYPE html>"), "{path}");
        answer
    }

    /// GET `path`, which must answer 200.
    fn page(&self, path: &str) -> String {
        let answer = self.get(path);
        assert_eq!(answer.status, 200, "{path}: {}", answer.body);
        answer.body
    }
}

/// The CSP hashes of the contents of the `<tag>` elements of `html`.
fn inline_hashes(html: &str, tag: &str) -> Vec<String> {
    let open = format!("<{tag}>");
    let close = format!("</{tag}>");
    html.split(&open)
        .skip(1)
        .map(|rest| hash_source(&rest[..rest.find(&close).expect("a closed element")]))
        .collect()
}

/// `policy` has no `'unsafe-inline'` and allows the inline styles and
/// scripts of `html` by their hashes, and no other.
fn assert_policy_allows_only(policy: &str, html: &str) {
    assert!(!policy.contains("unsafe"), "{policy}");
    for (directive, tag) in [("style-src", "style"), ("script-src", "script")] {
        let sources: Vec<&str> = policy
            .split(';')
            .map(str::trim)
            .find_map(|d| d.strip_prefix(directive))
            .unwrap_or_else(|| panic!("no {directive}: {policy}"))
            .split_whitespace()
            .collect();
        let mut wanted = inline_hashes(html, tag);
        if wanted.is_empty() {
            wanted.push("'none'".into());
        }
        assert_eq!(sources, wanted, "{directive} of {policy}");
    }
}

/// The `<tr ...>...</tr>` holding `needle`.
fn row_with<'a>(page: &'a str, needle: &str) -> &'a str {
    let at = page.find(needle).unwrap_or_else(|| panic!("no {needle}"));
    let start = page[..at].rfind("<tr").unwrap();
    let end = at + page[at..].find("</tr>").unwrap();
    &page[start..end]
}

#[test]
fn every_page_shows_the_store() {
    let lab = lab();
    let escaped_id = "&lt;script&gt;alert(1)&lt;/script&gt;";

    let overview = lab.page("/");
    let sets = row_with(&overview, ">kernels</a>");
    // Identifiers, tests and runs; the newest run is the evil one's.
    assert!(
        sets.contains("<td class=\"num\">2</td><td class=\"num\">2</td><td class=\"num\">2</td>"),
        "{sets}"
    );
    assert!(
        sets.contains(&format!(
            "<td>{escaped_id} <span class=\"state complete\">complete</span> "
        )),
        "{sets}"
    );
    assert!(overview.contains("<span class=\"state done\">done</span> <b>1</b>"));
    assert!(overview.contains("<span class=\"state running\">running</span> <b>1</b>"));
    assert!(overview.contains("<span class=\"state queued\">queued</span> <b>0</b>"));
    assert!(overview.contains("<tr id=\"job-1\">") && overview.contains("<tr id=\"job-2\">"));
    assert!(overview.contains("rack-&lt;i&gt;7&lt;/i&gt;"));

    let set = lab.page("/sets/kernels");
    assert!(set.contains("<h1>Result set kernels</h1>"));
    assert!(set.contains("2 identifiers, 2 tests"));
    assert!(set.contains("1 run · "), "{set}");
    let run = row_with(&set, "6.18.0-kbench");
    assert!(
        run.contains("<span class=\"state complete\">complete</span>"),
        "{run}"
    );
    assert!(run.contains("2026-01-01 00:00:00 UTC"), "{run}");
    assert!(run.contains("emulated &lt;b&gt;CPU&lt;/b&gt;"), "{run}");
    assert!(set.contains(&format!("<h3>{escaped_id}</h3>")));
    assert!(set.contains("<code>pipe-lat[placement=cross]</code>"));
    assert!(set.contains("href=\"/api/v1/result-sets/kernels/export\""));
    assert!(set.contains(
        "href=\"/sets/kernels/compare?baseline=%3Cscript%3Ealert%281%29%3C%2Fscript%3E\""
    ));

    let compare = lab.page("/sets/kernels/compare");
    assert!(compare.contains("<h1>kbench compare: kernels</h1>"));
    let regression = row_with(&compare, "<code>pipe-lat[placement=cross]</code>");
    assert!(
        regression.starts_with("<tr class=\"v-regression\""),
        "{regression}"
    );
    // Measured apart: the page says how it decided.
    assert!(
        compare.contains("measured apart (1 and 1 runs): one run on a side")
            && compare.contains("the default run drift, 3.5 %"),
        "{compare}"
    );
    assert!(compare.contains("<option selected>6.18.0</option>"));
    assert!(compare.contains(&format!("<option>{escaped_id}</option>")));
    assert!(compare.contains("name=\"threshold\" value=\"1\""));
    // The query reaches the report: the other identifier as the baseline
    // turns the slowdown into an improvement.
    let swapped = lab.page(
        "/sets/kernels/compare?baseline=%3Cscript%3Ealert%281%29%3C%2Fscript%3E&threshold=2.5",
    );
    assert!(
        row_with(&swapped, "<code>pipe-lat[placement=cross]</code>")
            .starts_with("<tr class=\"v-improvement\"")
    );
    assert!(swapped.contains("name=\"threshold\" value=\"2.5\""));

    let history = lab.page("/sets/kernels/history?threshold=2");
    assert!(history.contains("<h1>kbench history: kernels</h1>"));
    assert!(history.contains(&format!("2 versions in order: {BASE}, {escaped_id}")));
    assert!(history.contains("<svg class=\"chart\""));
    assert!(history.contains("aria-current=\"page\">History</a>"));

    let jobs = lab.page("/jobs");
    let done = row_with(&jobs, "<tr id=\"job-1\">");
    for cell in [
        "<span class=\"state done\">done</span>",
        escaped_id,
        "<td>quick</td><td>debian:6.12</td><td>tcg</td><td class=\"num\">1</td><td>rack-&lt;i&gt;7&lt;/i&gt;</td>",
        "&lt;script&gt;alert(2)&lt;/script&gt;&#39;; DROP TABLE jobs; --",
    ] {
        assert!(done.contains(cell), "{cell} in {done}");
    }
    assert!(row_with(&jobs, "<tr id=\"job-2\">").contains("(lease ends in "));

    let workers = lab.page("/workers");
    let worker = row_with(&workers, "rack-&lt;i&gt;7&lt;/i&gt;");
    assert!(worker.contains(" s ago</td>"), "{worker}");
    assert!(
        worker.contains("<a href=\"/jobs#job-2\">job 2</a>"),
        "{worker}"
    );

    let bisects = lab.page("/bisects");
    let bisect = row_with(&bisects, "pipe-bisect");
    assert!(bisect.contains("in progress"), "{bisect}");
    assert!(
        bisect.contains("Last step: endpoints at v6.18: endpoints differ"),
        "{bisect}"
    );
}

#[test]
fn names_are_text_and_links_stay_on_the_server() {
    let lab = lab();
    let evil_set_path = "/sets/%3Cscript%3Ealert%283%29%3C%2Fscript%3E%20solo";
    let mut pages: Vec<String> = PAGES.iter().map(|p| p.to_string()).collect();
    pages.push(evil_set_path.to_string());
    pages.push(format!("{evil_set_path}/compare"));
    pages.push(format!("{evil_set_path}/history"));
    for path in &pages {
        let page = lab.page(path);
        assert!(!page.contains("<script>alert"), "{path}");
        assert!(
            !page.contains("<i>7</i>") && !page.contains("<b>CPU</b>"),
            "{path}"
        );
        for attribute in [" href=\"", " src=\"", " action=\""] {
            for (at, _) in page.match_indices(attribute) {
                let value = &page[at + attribute.len()..];
                let value = &value[..value.find('"').unwrap()];
                assert!(
                    value.starts_with('/') && !value.starts_with("//")
                        || value.starts_with('#')
                        || value.starts_with('?'),
                    "{path}: {attribute}{value}\" leaves the server"
                );
            }
        }
        assert!(
            !page.contains("http://") && !page.contains("https://"),
            "{path}"
        );
    }
    let overview = lab.page("/");
    assert!(overview.contains(&format!(
        "<a href=\"{evil_set_path}\">&lt;script&gt;alert(3)&lt;/script&gt; solo</a>"
    )));
}

#[test]
fn an_unknown_set_is_a_404_page_listing_the_sets() {
    let lab = lab();
    for path in ["/sets/nope", "/sets/nope/compare", "/sets/nope/history"] {
        let answer = lab.get(path);
        assert_eq!(answer.status, 404, "{path}");
        assert!(answer.body.contains("There is no result set <b>nope</b>."));
        assert!(
            answer
                .body
                .contains("<li><a href=\"/sets/kernels\">kernels</a></li>")
        );
    }
}

#[test]
fn one_identifier_or_a_bad_query_is_a_page_that_says_so() {
    let lab = lab();
    let solo = lab.page("/sets/%3Cscript%3Ealert%283%29%3C%2Fscript%3E%20solo/compare");
    assert!(
        solo.contains("has one identifier, <b>only</b>: there is nothing to compare it with yet")
    );
    assert!(!solo.contains("id=\"metrics\""));
    for (path, message) in [
        (
            "/sets/kernels/compare?threshold=200",
            "threshold 200 must be a percentage",
        ),
        ("/sets/kernels/compare?threshold=abc", "threshold"),
        (
            "/sets/kernels/compare?baseline=6.17",
            "has no identifier &#39;6.17&#39;",
        ),
        ("/sets/kernels/history?order=6.18.0,6.18.0", "6.18.0"),
    ] {
        let answer = lab.get(path);
        assert_eq!(answer.status, 400, "{path}: {}", answer.body);
        assert!(answer.body.contains("<h1>400 Bad Request</h1>"), "{path}");
        assert!(answer.body.contains(message), "{path}: {}", answer.body);
    }
}

/// The JSON API, a 404 and the API's reports carry the headers; an HTML or
/// SVG report has its own policy (its inline CSS and script by hash, no
/// framing), the rest one that allows nothing.
#[test]
fn every_answer_carries_the_security_headers() {
    let lab = lab();
    let nothing = "default-src 'none'; frame-ancestors 'none'";
    for path in [
        "/api/v1/result-sets",
        "/api/v1/no-such-route",
        "/no-such-page",
    ] {
        let answer = lab.fetch(path);
        assert_eq!(
            answer.header("content-security-policy"),
            Some(nothing),
            "{path}"
        );
    }
    for path in [
        "/api/v1/result-sets/kernels/compare?format=html",
        "/api/v1/result-sets/kernels/compare?format=svg",
        "/api/v1/result-sets/kernels/history?format=html",
    ] {
        let answer = lab.fetch(path);
        assert_eq!(answer.status, 200, "{path}: {}", answer.body);
        let policy = answer.header("content-security-policy").unwrap();
        assert_policy_allows_only(policy, &answer.body);
        assert!(
            policy.contains("frame-ancestors 'none'"),
            "{path}: {policy}"
        );
        assert!(policy.contains("default-src 'none'"), "{path}: {policy}");
    }
    let json = lab.fetch("/api/v1/result-sets/kernels/compare?format=json");
    assert_eq!(json.header("content-security-policy"), Some(nothing));
}

#[test]
fn chromium_renders_the_pages_without_any_request_elsewhere() {
    let Some(browser) = chromium("the dashboard's Chromium checks") else {
        return;
    };
    // The NetLog shows what a page asks for: an image of another host.
    let control = visit(
        &browser,
        "data:text/html,<img src=\"http://kbench-trap.invalid/x.png\">",
        &["--dump-dom"],
    );
    assert_eq!(control.requests, ["http://kbench-trap.invalid/x.png"]);

    let lab = lab();
    let url = |path: &str| format!("http://{}{path}", lab.addr);
    let compare = visit(&browser, &url("/sets/kernels/compare"), &["--dump-dom"]);
    assert_eq!(
        compare.console,
        Vec::<String>::new(),
        "console of the compare page"
    );
    let dom = &compare.stdout;
    assert!(dom.contains("<h1>kbench compare: kernels</h1>"));
    assert!(dom.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(dom.contains("REGRESSION"));
    assert!(dom.matches("<svg class=\"chart\"").count() >= 4);
    // The report's script ran under the CSP: it shows the controls and
    // makes the headers sort buttons.
    assert!(
        dom.contains("<div class=\"controls\" id=\"controls\">"),
        "controls hidden"
    );
    assert!(dom.contains("<button type=\"button\">Test</button>"));
    assert!(dom.contains("<nav class=\"dash\""));

    // The API's own HTML report: its script runs under the header's policy
    // and its own meta element.
    let report = visit(
        &browser,
        &url("/api/v1/result-sets/kernels/compare?format=html"),
        &["--dump-dom"],
    );
    assert_eq!(
        report.console,
        Vec::<String>::new(),
        "console of the API's report"
    );
    assert!(
        report
            .stdout
            .contains("<button type=\"button\">Test</button>")
    );

    let overview = visit(&browser, &url("/"), &["--dump-dom"]);
    assert_eq!(
        overview.console,
        Vec::<String>::new(),
        "console of the overview"
    );
    let dom = &overview.stdout;
    assert!(dom.contains("<a href=\"/sets/kernels\">kernels</a>"));
    assert!(dom.contains("<tr id=\"job-1\">"));
    assert!(dom.contains("rack-&lt;i&gt;7&lt;/i&gt;"));
    for visit in [&compare, &overview] {
        let elsewhere: Vec<&String> = visit
            .requests
            .iter()
            .filter(|u| !u.starts_with(&url("/")))
            .collect();
        assert_eq!(elsewhere, Vec::<&String>::new(), "requests to other hosts");
    }
}
