//! The HTTP API end to end, in process: a server on 127.0.0.1:0 over a temp
//! SQLite file, and over a database of its own on PostgreSQL when
//! `KBENCH_TEST_POSTGRES_URL` is set (bash .ci/postgres.sh cargo test).
//! Result sets, live uploads, exports, bisections, tokens and the OpenAPI
//! document; the job queue is in tests/jobs.rs.

mod common;

use common::{Lab, document, json, on_both};
use kbench_fleet::client;
use serde_json::Value;

#[test]
fn push_is_stored_once_and_compared() {
    on_both(|location| {
        let lab = Lab::start(location, kbench_server::DEFAULT_MAX_BODY);
        let body = document(&["6.17", "6.18"]);
        let first = lab.push("lab", "push-1", &body);
        assert_eq!(first.status, 201, "{first:?}");
        assert_eq!(json(&first)["samples"], 16);
        assert_eq!(lab.samples("lab"), 16);

        // The retry: 200, "already stored", nothing written.
        let again = lab.push("lab", "push-1", &body);
        assert_eq!(again.status, 200, "{again:?}");
        assert!(again.body.contains("already stored"), "{again:?}");
        assert_eq!(lab.samples("lab"), 16);

        // A new push id for identifiers that exist: a conflict, not a copy.
        let copy = lab.push("lab", "push-2", &body);
        assert_eq!(copy.status, 409, "{copy:?}");
        assert_eq!(lab.samples("lab"), 16);

        let sets = json(&lab.get("/api/v1/result-sets"));
        assert_eq!(sets["result_sets"][0]["name"], "lab");
        assert_eq!(sets["result_sets"][0]["samples"], 16);

        let compare = lab.get("/api/v1/result-sets/lab/compare?format=json");
        assert_eq!(compare.status, 200, "{compare:?}");
        let report = json(&compare);
        assert_eq!(report["baseline"], "6.17", "{report}");
        let html = lab.get("/api/v1/result-sets/lab/compare?format=html");
        assert_eq!(html.status, 200);
        assert!(html.body.contains("<html") || html.body.contains("<!DOCTYPE"));
        let history = lab.get("/api/v1/result-sets/lab/history?format=json");
        assert_eq!(history.status, 200, "{history:?}");
        json(&history);

        let missing = lab.get("/api/v1/result-sets/nope/compare");
        assert_eq!(missing.status, 404, "{missing:?}");
        assert!(json(&missing)["error"].as_str().unwrap().contains("nope"));
        assert_eq!(
            lab.get("/api/v1/result-sets/lab/compare?format=pdf").status,
            400
        );
    });
}

#[test]
fn writes_need_a_valid_unrevoked_token() {
    on_both(|location| {
        let lab = Lab::start(location, kbench_server::DEFAULT_MAX_BODY);
        let body = document(&["a", "b"]);
        for token in ["", "kbt_wrong"] {
            let answer = lab.push_as("lab", token, "p1", &body);
            assert_eq!(answer.status, 401, "{answer:?}");
        }
        let none = client::request(
            &lab.addr,
            "POST",
            "/api/v1/result-sets/lab/samples",
            &[("Idempotency-Key", "p1")],
            &body,
        )
        .unwrap();
        assert_eq!(none.status, 401, "{none:?}");
        lab.store().revoke_token("runner-1").unwrap();
        let revoked = lab.push("lab", "p1", &body);
        assert_eq!(revoked.status, 401, "{revoked:?}");
        assert!(revoked.body.contains("revoked"), "{revoked:?}");
        assert!(
            lab.store().result_sets().unwrap().is_empty(),
            "nothing written"
        );
    });
}

#[test]
fn bad_input_is_refused_and_names_the_problem() {
    on_both(|location| {
        let lab = Lab::start(location, 4096);
        let big = vec![b' '; 10_000];
        let too_big = lab.push("lab", "p1", &big);
        assert_eq!(too_big.status, 413, "{too_big:?}");

        let malformed = lab.push(
            "lab",
            "p2",
            b"{\"schema\": \"kbench.samples/1\",\n \"tests\": [}",
        );
        assert_eq!(malformed.status, 400, "{malformed:?}");
        assert!(
            json(&malformed)["error"]
                .as_str()
                .unwrap()
                .contains("line 2"),
            "{malformed:?}"
        );

        let body = String::from_utf8(document(&["a"]))
            .unwrap()
            .replace("\"value\":100.0", "\"value\":-1.0");
        let negative = lab.push("lab", "p3", body.as_bytes());
        assert_eq!(negative.status, 400, "{negative:?}");
        assert!(negative.body.contains("value -1"), "{negative:?}");

        let unknown = String::from_utf8(document(&["a"]))
            .unwrap()
            .replace("\"unit\"", "\"colour\":1,\"unit\"");
        let unknown = lab.push("lab", "p4", unknown.as_bytes());
        assert_eq!(unknown.status, 400, "{unknown:?}");
        assert!(unknown.body.contains("colour"), "{unknown:?}");

        let no_id = client::request(
            &lab.addr,
            "POST",
            "/api/v1/result-sets/lab/samples",
            &[("Authorization", &format!("Bearer {}", lab.token))],
            &document(&["a"]),
        )
        .unwrap();
        assert_eq!(no_id.status, 400, "{no_id:?}");
        assert!(no_id.body.contains("Idempotency-Key"));
        assert!(
            lab.store().result_sets().unwrap().is_empty(),
            "nothing written"
        );
    });
}

#[test]
fn names_holding_sql_or_html_are_stored_as_text() {
    on_both(|location| {
        let lab = Lab::start(location, kbench_server::DEFAULT_MAX_BODY);
        let set = "<script>alert(1)</script>";
        let identifier = "'; DROP TABLE samples; --";
        let stored = lab.push(set, "p1", &document(&["base", identifier]));
        assert_eq!(stored.status, 201, "{stored:?}");
        let sets = json(&lab.get("/api/v1/result-sets"));
        assert_eq!(sets["result_sets"][0]["name"], set);
        assert_eq!(sets["result_sets"][0]["identifiers"][1], identifier);
        assert_eq!(lab.samples(set), 16, "the samples table is still there");
        let path = format!(
            "/api/v1/result-sets/{}/compare?format=html",
            client::encode_segment(set)
        );
        let html = lab.get(&path);
        assert_eq!(html.status, 200, "{html:?}");
        assert!(!html.body.contains(set), "the set name is escaped in HTML");
        let path = format!(
            "/api/v1/result-sets/{}/compare?format=json",
            client::encode_segment(set)
        );
        assert_eq!(json(&lab.get(&path))["result_set"], set);
    });
}

#[test]
fn concurrent_retries_of_one_push_store_it_once() {
    on_both(|location| {
        let lab = Lab::start(location, kbench_server::DEFAULT_MAX_BODY);
        let body = document(&["x", "y"]);
        let statuses: Vec<u16> = std::thread::scope(|scope| {
            let pushes: Vec<_> = (0..8)
                .map(|_| scope.spawn(|| lab.push("race", "same-id", &body).status))
                .collect();
            pushes.into_iter().map(|p| p.join().unwrap()).collect()
        });
        assert_eq!(
            statuses.iter().filter(|&&s| s == 201).count(),
            1,
            "{statuses:?}"
        );
        assert!(
            statuses.iter().all(|&s| s == 201 || s == 200),
            "{statuses:?}"
        );
        assert_eq!(lab.samples("race"), 16);
    });
}

/// A live batch of run `uid` of `identifier`: `values` of test "app"
/// starting at sample `first` of the run.
fn live_batch(identifier: &str, uid: &str, status: &str, first: u64, values: &[f64]) -> Vec<u8> {
    let samples: Vec<Value> = values
        .iter()
        .enumerate()
        .map(|(i, value)| {
            serde_json::json!({"value": value, "iterations": 1, "at_ms": 2000 + first as usize + i})
        })
        .collect();
    serde_json::to_vec(&serde_json::json!({
        "identifier": identifier,
        "run_uid": uid,
        "info": {"started_at_ms": 1500, "tool_version": "test", "pid": 7,
                 "snapshot": {"hostname": "<b>box</b>"}},
        "status": status,
        "ended_at_ms": (status != "running").then_some(9000),
        "tests": [{"benchmark": "app", "unit": "ops/s", "direction": "higher"}],
        "samples": [{"test": {"benchmark": "app"}, "first": first, "samples": samples}],
    }))
    .unwrap()
}

fn live_path(set: &str) -> String {
    format!("/api/v1/result-sets/{}/live", client::encode_segment(set))
}

fn export_path(set: &str, query: &str) -> String {
    format!(
        "/api/v1/result-sets/{}/export{query}",
        client::encode_segment(set)
    )
}

#[test]
fn live_batches_store_what_is_missing_and_export_gives_it_back() {
    on_both(|location| {
        let lab = Lab::start(location, kbench_server::DEFAULT_MAX_BODY);
        // Names holding HTML and SQL are stored and returned as text.
        let set = "<b>live</b>";
        let identifier = "'; DROP TABLE runs; --";
        let path = live_path(set);
        let five = live_batch(
            identifier,
            "run-1",
            "running",
            0,
            &[1.0, 2.0, 3.0, 4.0, 5.0],
        );

        for token in ["", "kbt_wrong"] {
            let refused = lab.send_as("POST", &path, token, &five);
            assert_eq!(refused.status, 401, "{refused:?}");
        }
        assert!(
            lab.store().result_sets().unwrap().is_empty(),
            "nothing written"
        );

        let stored = lab.post(&path, &five);
        assert_eq!(stored.status, 200, "{stored:?}");
        assert_eq!(
            json(&stored),
            serde_json::json!({"stored": 5, "skipped": 0})
        );
        let again = lab.post(&path, &five);
        assert_eq!(json(&again), serde_json::json!({"stored": 0, "skipped": 5}));
        let overlap = live_batch(identifier, "run-1", "running", 3, &[4.0, 5.0, 6.0, 7.0]);
        assert_eq!(
            json(&lab.post(&path, &overlap)),
            serde_json::json!({"stored": 2, "skipped": 2})
        );
        assert_eq!(lab.samples(set), 7);

        let gap = lab.post(
            &path,
            &live_batch(identifier, "run-1", "running", 10, &[1.0]),
        );
        assert_eq!(gap.status, 409, "{gap:?}");
        assert!(gap.body.contains("gap"), "{gap:?}");

        let text = String::from_utf8(five.clone()).unwrap();
        for (bad, named) in [
            (
                text.replace("\"first\":0", "\"first\":\"x\""),
                "samples[0].first",
            ),
            (text.replacen('{', "{\"colour\":1,", 1), "colour"),
            (text.replace("\"run_uid\"", "\"run_id\""), "run_id"),
            (
                text.replace("\"iterations\":1", "\"iterations\":-1"),
                "samples[0].samples[0].iterations",
            ),
            (format!("{text} trailing"), "trailing characters"),
        ] {
            let refused = lab.post(&path, bad.as_bytes());
            assert_eq!(refused.status, 400, "{bad}: {refused:?}");
            assert!(
                json(&refused)["error"].as_str().unwrap().contains(named),
                "{refused:?}"
            );
        }
        assert_eq!(lab.samples(set), 7, "nothing written by a refused batch");

        let ended = live_batch(identifier, "run-1", "complete", 7, &[]);
        assert_eq!(json(&lab.post(&path, &ended))["stored"], 0);

        let export = lab.get(&export_path(set, ""));
        assert_eq!(export.status, 200, "{export:?}");
        let export = json(&export);
        assert_eq!(export["schema"], "kbench.samples/1");
        assert_eq!(export["result_set"], set);
        let id = &export["identifiers"][0];
        assert_eq!(id["name"], identifier);
        assert_eq!(id["runs"][0]["status"], "complete");
        assert_eq!(id["runs"][0]["info"]["uid"], "run-1");
        assert_eq!(id["runs"][0]["info"]["snapshot"]["hostname"], "<b>box</b>");
        let values: Vec<f64> = id["runs"][0]["samples"]["app"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["value"].as_f64().unwrap())
            .collect();
        assert_eq!(values, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]);

        let one = json(&lab.get(&export_path(
            set,
            &format!("?identifier={}", client::encode_segment(identifier)),
        )));
        assert_eq!(one["identifiers"].as_array().unwrap().len(), 1);
        let none = json(&lab.get(&export_path(set, "?identifier=nope")));
        assert_eq!(none["identifiers"], serde_json::json!([]));
        let missing = lab.get(&export_path("nope", ""));
        assert_eq!(missing.status, 404, "{missing:?}");

        // The export pushes back (without the run's uid, which names the
        // run stored already).
        let mut export = export;
        export["identifiers"][0]["runs"][0]["info"]
            .as_object_mut()
            .unwrap()
            .remove("uid");
        let body = serde_json::to_vec(&export).unwrap();
        let copy = lab.push("copy", "copy-1", &body);
        assert_eq!(copy.status, 201, "{copy:?}");
        assert_eq!(lab.samples("copy"), 7);
    });
}

#[test]
fn write_routes_refuse_bodies_over_the_limit() {
    on_both(|location| {
        let lab = Lab::start(location, 4096);
        let values = vec![1.5; 200];
        let big = live_batch("a", "run-1", "running", 0, &values);
        assert!(big.len() > 4096);
        let refused = lab.post(&live_path("lab"), &big);
        assert_eq!(refused.status, 413, "{refused:?}");
        assert!(
            json(&refused)["error"]
                .as_str()
                .unwrap()
                .contains("--max-body")
        );
        let small = live_batch("a", "run-1", "running", 0, &values[..4]);
        assert_eq!(lab.post(&live_path("lab"), &small).status, 200);
        assert_eq!(lab.samples("lab"), 4);
    });
}

#[test]
fn bisects_are_listed_with_their_state() {
    on_both(|location| {
        let lab = Lab::start(location, kbench_server::DEFAULT_MAX_BODY);
        let empty = json(&lab.get("/api/v1/bisects"));
        assert_eq!(
            empty,
            serde_json::json!({"schema": "kbench.bisects/1", "bisects": []})
        );
        let name = "<i>net</i>'; DROP TABLE bisects; --";
        lab.store()
            .save_bisect(name, r#"{"good": "6.1", "bad": "6.2"}"#)
            .unwrap();
        let list = json(&lab.get("/api/v1/bisects"));
        assert_eq!(list["bisects"][0]["name"], name);
        assert_eq!(list["bisects"][0]["state"]["bad"], "6.2");
        assert!(list["bisects"][0]["updated_at_ms"].as_i64().unwrap() > 0);
        let path = format!("/api/v1/bisects/{}", client::encode_segment(name));
        let one = lab.get(&path);
        assert_eq!(one.status, 200, "{one:?}");
        assert_eq!(json(&one), list["bisects"][0]);
        let missing = lab.get("/api/v1/bisects/nope");
        assert_eq!(missing.status, 404, "{missing:?}");
        assert!(json(&missing)["error"].as_str().unwrap().contains(name));
    });
}

#[test]
fn the_token_route_names_a_valid_token() {
    on_both(|location| {
        let lab = Lab::start(location, kbench_server::DEFAULT_MAX_BODY);
        let ok = lab.send_as("GET", "/api/v1/token", &lab.token, b"");
        assert_eq!(ok.status, 200, "{ok:?}");
        assert_eq!(
            json(&ok),
            serde_json::json!({"name": "runner-1", "scopes": ["read", "push", "submit", "work", "admin"]})
        );
        for token in ["", "kbt_wrong"] {
            assert_eq!(lab.send_as("GET", "/api/v1/token", token, b"").status, 401);
        }
        lab.store().revoke_token("runner-1").unwrap();
        let revoked = lab.send_as("GET", "/api/v1/token", &lab.token, b"");
        assert_eq!(revoked.status, 401, "{revoked:?}");
        assert!(
            json(&revoked)["error"]
                .as_str()
                .unwrap()
                .contains("revoked")
        );
    });
}

#[test]
fn unknown_paths_answer_json_404() {
    on_both(|location| {
        let lab = Lab::start(location, kbench_server::DEFAULT_MAX_BODY);
        let missing = lab.get("/api/v1/nothing");
        assert_eq!(missing.status, 404);
        assert!(
            json(&missing)["error"]
                .as_str()
                .unwrap()
                .contains("openapi.json")
        );
    });
}

/// Every `$ref` in `value`.
fn refs<'a>(value: &'a Value, out: &mut Vec<&'a str>) {
    match value {
        Value::Object(map) => {
            if let Some(Value::String(target)) = map.get("$ref") {
                out.push(target);
            }
            map.values().for_each(|v| refs(v, out));
        }
        Value::Array(items) => items.iter().for_each(|v| refs(v, out)),
        _ => {}
    }
}

#[test]
fn openapi_documents_every_route_and_nothing_more() {
    let text = include_str!("../openapi.json");
    let doc: Value = serde_json::from_str(text).expect("openapi.json is JSON");
    assert!(
        doc["openapi"].as_str().unwrap().starts_with("3.1."),
        "OpenAPI 3.1.x: {}",
        doc["openapi"]
    );
    assert_eq!(doc["servers"][0]["url"], "/api/v1");
    let mut documented = std::collections::BTreeSet::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            let route = (method.clone(), format!("/api/v1{path}"));
            // Writes need the token, reads are open (GET /token checks it).
            let secured = operation.get("security").is_some();
            assert_eq!(
                secured,
                method == "post" || path == "/token",
                "security of {route:?}"
            );
            assert!(operation["responses"].is_object(), "{route:?}");
            documented.insert(route);
        }
    }
    let served: std::collections::BTreeSet<(String, String)> = kbench_server::ROUTES
        .iter()
        .map(|(method, path)| (method.to_string(), path.to_string()))
        .collect();
    assert_eq!(served.len(), kbench_server::ROUTES.len(), "no route twice");
    assert_eq!(documented, served, "openapi.json and the router differ");

    let mut targets = Vec::new();
    refs(&doc, &mut targets);
    assert!(targets.len() > 50, "{}", targets.len());
    for target in targets {
        let pointer = target.strip_prefix('#').expect("a local $ref");
        assert!(doc.pointer(pointer).is_some(), "{target} resolves");
    }

    let dir = tempfile::tempdir().unwrap();
    let lab = Lab::start(
        kbench_store::Location::Sqlite(dir.path().join("results.db")),
        kbench_server::DEFAULT_MAX_BODY,
    );
    let served = lab.get("/api/v1/openapi.json");
    assert_eq!(served.status, 200);
    assert_eq!(served.body, text);
}

/// `kbench serve --private`: every GET, API and dashboard, needs a token
/// with the `read` scope; an open server reads without one.
#[test]
fn a_private_server_reads_only_with_a_read_token() {
    use kbench_store::Scope;
    let dir = tempfile::tempdir().unwrap();
    let lab = Lab::start_private(kbench_store::Location::Sqlite(dir.path().join("r.db")));
    let reader = lab.token_with("reader", &[Scope::Read]);
    let pusher = lab.token_with("pusher", &[Scope::Push]);
    for path in ["/api/v1/result-sets", "/api/v1/jobs", "/", "/workers"] {
        assert_eq!(lab.get(path).status, 401, "{path}");
        assert_eq!(lab.send_as("GET", path, &pusher, b"").status, 403, "{path}");
        assert_eq!(lab.send_as("GET", path, &reader, b"").status, 200, "{path}");
    }
    // Writing still needs its own scope.
    let pushed = lab.push_as("lab", &reader, "p1", &document(&["a"]));
    assert_eq!(pushed.status, 403, "{pushed:?}");
    assert_eq!(
        lab.push_as("lab", &pusher, "p1", &document(&["a"])).status,
        201
    );
}
