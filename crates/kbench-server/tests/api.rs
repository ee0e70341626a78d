//! The HTTP API end to end, in process: a server on 127.0.0.1:0 over a temp
//! SQLite file, and over a database of its own on PostgreSQL when
//! `KBENCH_TEST_POSTGRES_URL` is set (bash .ci/postgres.sh cargo test).

use kbench_server::client::{self, Response};
use kbench_server::{Config, Running, auth};
use kbench_store::testing::{ThrowawayDatabase, postgres_server};
use kbench_store::{Location, Store};
use serde_json::Value;

/// A running server with a token "runner-1".
struct Lab {
    location: Location,
    server: Option<Running>,
    addr: String,
    token: String,
}

impl Lab {
    fn start(location: Location, max_body: usize) -> Lab {
        let token = auth::new_secret().unwrap();
        location
            .open_send()
            .unwrap()
            .create_token("runner-1", &auth::sha256_hex(token.as_bytes()))
            .unwrap();
        let server = kbench_server::spawn(
            "127.0.0.1:0",
            Config {
                location: location.clone(),
                max_body,
            },
        )
        .unwrap();
        Lab {
            location,
            addr: server.addr.to_string(),
            server: Some(server),
            token,
        }
    }

    fn store(&self) -> Box<dyn Store + Send> {
        self.location.open_send().unwrap()
    }

    fn get(&self, path: &str) -> Response {
        client::request(&self.addr, "GET", path, &[], b"").unwrap()
    }

    fn push_as(&self, set: &str, token: &str, push_id: &str, body: &[u8]) -> Response {
        let path = format!(
            "/api/v1/result-sets/{}/samples",
            client::encode_segment(set)
        );
        let bearer = format!("Bearer {token}");
        client::request(
            &self.addr,
            "POST",
            &path,
            &[("Authorization", &bearer), ("Idempotency-Key", push_id)],
            body,
        )
        .unwrap()
    }

    fn push(&self, set: &str, push_id: &str, body: &[u8]) -> Response {
        self.push_as(set, &self.token.clone(), push_id, body)
    }

    fn samples(&self, set: &str) -> u64 {
        self.store()
            .result_sets()
            .unwrap()
            .iter()
            .find(|s| s.name == set)
            .map_or(0, |s| s.samples)
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        if let Some(server) = self.server.take() {
            server.stop().unwrap();
        }
    }
}

/// A kbench.samples/1 document: two identifiers, 8 samples each of one
/// test, the second 10 % faster.
fn document(identifiers: &[&str]) -> Vec<u8> {
    let ids: Vec<Value> = identifiers
        .iter()
        .enumerate()
        .map(|(n, name)| {
            let samples: Vec<Value> = (0..8)
                .map(|i| {
                    serde_json::json!({
                        "value": 100.0 * (1.0 + n as f64 / 10.0) + i as f64 * 0.1,
                        "at_ms": 1000 + i,
                        "round": i % 2,
                    })
                })
                .collect();
            serde_json::json!({"name": name, "samples": {"app": samples}})
        })
        .collect();
    serde_json::to_vec(&serde_json::json!({
        "schema": "kbench.samples/1",
        "tests": [{"test": "app", "unit": "ops/s", "direction": "higher"}],
        "identifiers": ids,
    }))
    .unwrap()
}

fn json(response: &Response) -> Value {
    serde_json::from_str(&response.body).unwrap_or_else(|e| panic!("{e}: {response:?}"))
}

fn on_both(test: fn(Location)) {
    let dir = tempfile::tempdir().unwrap();
    test(Location::Sqlite(dir.path().join("results.db")));
    if let Some(server) = postgres_server() {
        let db = ThrowawayDatabase::create(&server, "api");
        test(Location::parse(&db.url).unwrap());
    }
}

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
        assert!(negative.body.contains(".value"), "{negative:?}");

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
