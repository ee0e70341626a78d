//! Pages and endpoints of a many-identifier set read only what they show
//! (issue 17): a comparison of two identifiers reads those two, the set
//! page one page of identifiers at a time, with links to the others.

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
/// reading any of them fails: a sample with a negative iteration count,
/// a run whose notes are not JSON.
fn damage_all_but_the_ends(location: &Location) {
    let others = "(SELECT r.id FROM runs r JOIN identifiers i ON i.id = r.identifier_id \
                  WHERE i.name NOT IN ('v0', 'v44'))";
    execute(
        location,
        &format!(
            "UPDATE samples SET iterations = -1 WHERE run_id IN {others}; \
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
