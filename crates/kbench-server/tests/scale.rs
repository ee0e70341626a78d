//! Pages and endpoints of a many-identifier set read only what they show
//! (issue 17): a comparison of two identifiers reads those two, the set
//! page one page of identifiers at a time, with links to the others, and
//! the comparison page 200 metrics at a time.

mod common;

use common::{Lab, document, json, on_both};
use kbench_store::Location;
use kbench_store::testing::execute;

/// Identifiers v0..v44: three pages of the set page's 20.
const COUNT: usize = 45;

fn lab_of_many(location: Location) -> Lab {
    let lab = Lab::start(location, kbench_server::DEFAULT_MAX_BODY);
    let names: Vec<String> = (0..COUNT).map(|v| format!("v{v}")).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    assert_eq!(lab.push("many", "p1", &document(&names)).status, 201);
    lab
}

/// Damages the runs and samples of every identifier but v0 and v44 so that
/// reading any of them fails: a block of samples cut mid-sample,
/// a run whose notes are not JSON.
fn damage_all_but_the_ends(location: &Location) {
    let others = "(SELECT r.id FROM runs r JOIN identifiers i ON i.id = r.identifier_id \
                  WHERE i.name NOT IN ('v0', 'v44'))";
    execute(
        location,
        &format!(
            "UPDATE sample_blocks SET samples = substr(samples, 1, 31) WHERE run_id IN {others}; \
             UPDATE runs SET notes_json = 'not json' WHERE id IN {others}"
        ),
    );
}

/// A comparison of v0 and v44, as the API's JSON and as the dashboard's
/// page, answers although every other identifier's rows are damaged: it
/// read those two alone. A comparison of all of them does read the damage
/// and says so, so the damage is there to be read.
#[test]
fn a_comparison_of_two_identifiers_reads_only_those_two() {
    on_both(|location| {
        let lab = lab_of_many(location.clone());
        damage_all_but_the_ends(&location);

        let api = lab.get("/api/v1/result-sets/many/compare?baseline=v0&identifiers=v44");
        assert_eq!(api.status, 200, "{}", api.body);
        let report = json(&api);
        assert_eq!(report["baseline"], "v0", "{report}");
        let compared: Vec<&str> = report["identifiers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i.as_str().unwrap())
            .collect();
        assert_eq!(compared, ["v0", "v44"], "{report}");

        let page = lab.get("/sets/many/compare?baseline=v0&identifiers=v44");
        assert_eq!(page.status, 200, "{}", page.body);
        assert!(page.body.contains("<h1>kbench compare: many</h1>"));
        // Every identifier is still offered as a baseline.
        assert!(page.body.contains("<option>v43</option>"), "{}", page.body);

        let whole = lab.get("/api/v1/result-sets/many/compare?baseline=v0");
        assert_eq!(whole.status, 500, "{}", whole.body);
        assert!(whole.body.contains("not readable"), "{}", whole.body);
    });
}

/// The set page shows 20 identifiers a page with links to the next and
/// previous pages; the last page has no next; a page past the end is a
/// 404 that links to the last; page 0 is a 400.
#[test]
fn the_set_page_is_paged_with_links() {
    on_both(|location| {
        let lab = lab_of_many(location);
        let first = lab.get("/sets/many");
        assert_eq!(first.status, 200, "{}", first.body);
        let body = &first.body;
        assert!(body.contains("45 identifiers, 1 test"), "{body}");
        assert!(body.contains("<h3>v0</h3>") && body.contains("<h3>v19</h3>"));
        assert!(!body.contains("<h3>v20</h3>"), "{body}");
        assert!(
            body.contains("identifiers 1–20 of 45, page 1 of 3"),
            "{body}"
        );
        assert!(body.contains("<a rel=\"next\" href=\"/sets/many?page=2\">Next</a>"));
        assert!(
            body.contains("1 run · <a href=\"/sets/many/compare?baseline=v0\">"),
            "{body}"
        );

        let last = lab.get("/sets/many?page=3").body;
        assert!(last.contains("<h3>v40</h3>") && last.contains("<h3>v44</h3>"));
        assert!(!last.contains("<h3>v39</h3>"), "{last}");
        assert!(
            last.contains("identifiers 41–45 of 45, page 3 of 3"),
            "{last}"
        );
        assert!(last.contains("<a rel=\"prev\" href=\"/sets/many?page=2\">Previous</a>"));
        assert!(!last.contains("rel=\"next\""), "{last}");

        let past = lab.get("/sets/many?page=4");
        assert_eq!(past.status, 404, "{}", past.body);
        assert!(past.body.contains("there is no page 4"), "{}", past.body);
        assert!(
            past.body.contains("href=\"/sets/many?page=3\""),
            "{}",
            past.body
        );

        let zero = lab.get("/sets/many?page=0");
        assert_eq!(zero.status, 400, "{}", zero.body);
        assert!(
            zero.body.contains("pages are numbered from 1"),
            "{}",
            zero.body
        );
    });
}

/// A set of two identifiers, base and new, and `metrics` tests m0, m1, ...:
/// new is 20 % slower on m0..m9 and m300 (regressions), the same elsewhere.
fn wide_document(metrics: usize) -> Vec<u8> {
    let tests: Vec<serde_json::Value> = (0..metrics)
        .map(|m| serde_json::json!({"test": format!("m{m}"), "unit": "ops/s", "direction": "higher"}))
        .collect();
    let side = |slower: bool| -> serde_json::Value {
        (0..metrics)
            .map(|m| {
                let factor = if slower && (m < 10 || m == 300) {
                    0.8
                } else {
                    1.0
                };
                let samples: Vec<serde_json::Value> = (0..8)
                    .map(|i| serde_json::json!({"value": (100.0 + i as f64) * factor, "round": i}))
                    .collect();
                (format!("m{m}"), serde_json::Value::Array(samples))
            })
            .collect::<serde_json::Map<_, _>>()
            .into()
    };
    serde_json::to_vec(&serde_json::json!({
        "schema": "kbench.samples/1",
        "tests": tests,
        "identifiers": [
            {"name": "base", "samples": side(false)},
            {"name": "new", "samples": side(true)},
        ],
    }))
    .unwrap()
}

/// The comparison page shows 200 metrics a page, with links to the others
/// that keep the comparison asked for; its summary counts every metric on
/// every page; `show=changed` lists only the regressions and improvements;
/// a page past the end is a 404 that links to the last; a bad `show` or
/// page 0 is a 400.
#[test]
fn the_comparison_page_is_paged_and_can_list_only_changes() {
    on_both(|location| {
        let lab = Lab::start(location, kbench_server::DEFAULT_MAX_BODY);
        assert_eq!(lab.push("wide", "p1", &wide_document(450)).status, 201);
        let charts = |body: &str| body.matches("<section class=\"metric\"").count();

        let first = lab.get("/sets/wide/compare?baseline=base");
        assert_eq!(first.status, 200, "{}", first.body);
        let body = &first.body;
        assert!(body.contains("450 metrics; baseline base"), "{body}");
        assert!(body.contains("metrics 1–200 of 450, page 1 of 3"), "{body}");
        assert!(body.contains("<code>m0</code>") && body.contains("<code>m199</code>"));
        assert!(!body.contains("<code>m200</code>"), "{body}");
        assert_eq!(charts(body), 200);
        assert!(
            body.contains("href=\"/sets/wide/compare?baseline=base&amp;page=2\">Next</a>"),
            "{body}"
        );
        assert!(body.contains("<b>11</b> regressions"), "{body}");

        let last = lab.get("/sets/wide/compare?baseline=base&page=3").body;
        assert!(
            last.contains("metrics 401–450 of 450, page 3 of 3"),
            "{last}"
        );
        assert!(last.contains("<code>m449</code>") && !last.contains("<code>m399</code>"));
        assert_eq!(charts(&last), 50);
        assert!(!last.contains("rel=\"next\""), "{last}");
        // The summary is the whole comparison's on every page.
        assert!(last.contains("<b>11</b> regressions"), "{last}");

        let changed = lab.get("/sets/wide/compare?baseline=base&show=changed");
        assert_eq!(changed.status, 200, "{}", changed.body);
        let body = &changed.body;
        assert!(body.contains("<code>m9</code>") && body.contains("<code>m300</code>"));
        assert!(!body.contains("<code>m10</code>"), "{body}");
        assert_eq!(charts(body), 11);
        assert!(body.contains("<option selected>changed</option>"), "{body}");

        let past = lab.get("/sets/wide/compare?baseline=base&page=4");
        assert_eq!(past.status, 404, "{}", past.body);
        assert!(past.body.contains("there is no page 4"), "{}", past.body);
        assert!(
            past.body
                .contains("href=\"/sets/wide/compare?baseline=base&amp;page=3\""),
            "{}",
            past.body
        );

        for (query, says) in [
            ("show=some", "choose all or changed"),
            ("page=0", "numbered from 1"),
        ] {
            let bad = lab.get(&format!("/sets/wide/compare?{query}"));
            assert_eq!(bad.status, 400, "{query}: {}", bad.body);
            assert!(bad.body.contains(says), "{query}: {}", bad.body);
        }
    });
}
