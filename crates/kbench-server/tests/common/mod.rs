//! What the API tests share: an in-process server over a store (SQLite,
//! and PostgreSQL when `KBENCH_TEST_POSTGRES_URL` is set), requests with
//! and without a token, documents to push, and a pusher that retries as
//! `kbench push` does.
// Each test file uses its own part of this.
#![allow(dead_code)]

use kbench_fleet::client::{self, Response};
use kbench_server::{Config, Limits, Running, auth};
use kbench_store::testing::{ThrowawayDatabase, postgres_server};
use kbench_store::{Database, Location, Results};
use serde_json::Value;
use std::time::{Duration, Instant};

/// A running server with a token "runner-1".
pub struct Lab {
    pub location: Location,
    server: Option<Running>,
    max_body: usize,
    limits: Limits,
    /// Started `--private` (reading needs a token with `read`).
    private: bool,
    pub addr: String,
    pub token: String,
}

impl Lab {
    pub fn start(location: Location, max_body: usize) -> Lab {
        Lab::start_with(location, max_body, Limits::default())
    }

    /// A server whose every GET needs a token with the `read` scope.
    pub fn start_private(location: Location) -> Lab {
        Lab::start_as(
            location,
            kbench_server::DEFAULT_MAX_BODY,
            Limits::default(),
            true,
        )
    }

    /// [`Lab::start`] with other limits (short timeouts, a small pool).
    pub fn start_with(location: Location, max_body: usize, limits: Limits) -> Lab {
        Lab::start_as(location, max_body, limits, false)
    }

    fn start_as(location: Location, max_body: usize, limits: Limits, private: bool) -> Lab {
        let token = create_token(&location, "runner-1");
        let mut lab = Lab {
            location,
            server: None,
            max_body,
            limits,
            private,
            addr: "127.0.0.1:0".into(),
            token,
        };
        lab.start_server();
        lab
    }

    /// Starts the server on `addr` (at first any free port, then the same
    /// one again).
    pub fn start_server(&mut self) {
        let server = kbench_server::spawn(
            &self.addr,
            Config {
                max_body: self.max_body,
                limits: self.limits,
                private: self.private,
                ..config(self.location.clone())
            },
        )
        .unwrap_or_else(|e| panic!("cannot serve on {}: {e}", self.addr));
        self.addr = server.addr.to_string();
        self.server = Some(server);
    }

    /// Stops the server after the requests in flight.
    pub fn stop_server(&mut self) {
        if let Some(server) = self.server.take() {
            server.stop().unwrap();
        }
    }

    /// A new token `name` with `scopes` in the lab's database: its secret.
    pub fn token_with(&self, name: &str, scopes: &[kbench_store::Scope]) -> String {
        let token = auth::new_secret().unwrap();
        self.store()
            .create_token(name, &auth::sha256_hex(token.as_bytes()), scopes)
            .unwrap();
        token
    }

    pub fn store(&self) -> Box<dyn Database + Send> {
        self.location.open_send().unwrap()
    }

    pub fn get(&self, path: &str) -> Response {
        client::request(&self.addr, "GET", path, &[], b"").unwrap()
    }

    /// A request with `Authorization: Bearer {token}` (none when empty).
    pub fn send_as(&self, method: &str, path: &str, token: &str, body: &[u8]) -> Response {
        let bearer = format!("Bearer {token}");
        let headers: &[(&str, &str)] = if token.is_empty() {
            &[]
        } else {
            &[("Authorization", &bearer)]
        };
        client::request(&self.addr, method, path, headers, body).unwrap()
    }

    /// A POST with the lab's token.
    pub fn post(&self, path: &str, body: &[u8]) -> Response {
        self.send_as("POST", path, &self.token, body)
    }

    pub fn push_as(&self, set: &str, token: &str, push_id: &str, body: &[u8]) -> Response {
        let bearer = format!("Bearer {token}");
        client::request(
            &self.addr,
            "POST",
            &samples_path(set),
            &[("Authorization", &bearer), ("Idempotency-Key", push_id)],
            body,
        )
        .unwrap()
    }

    pub fn push(&self, set: &str, push_id: &str, body: &[u8]) -> Response {
        self.push_as(set, &self.token, push_id, body)
    }

    pub fn samples(&self, set: &str) -> u64 {
        set_samples(self.store().as_mut(), set)
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        self.stop_server();
    }
}

/// A server's [`Config`] over `location` with the defaults and the job
/// check of `kbench serve` with the built-in profiles.
pub fn config(location: Location) -> Config {
    Config::new(
        location,
        std::sync::Arc::new(kbench_catalog::job::checker(
            kbench_catalog::profile::Profiles::builtin(),
        )),
    )
}

/// A new API token `name` with every scope in the store at `location`:
/// its secret.
pub fn create_token(location: &Location, name: &str) -> String {
    let token = auth::new_secret().unwrap();
    location
        .open_send()
        .unwrap()
        .create_token(
            name,
            &auth::sha256_hex(token.as_bytes()),
            &kbench_store::Scope::ALL,
        )
        .unwrap();
    token
}

pub fn samples_path(set: &str) -> String {
    format!(
        "/api/v1/result-sets/{}/samples",
        client::encode_segment(set)
    )
}

/// The samples stored in `set` (0 when there is no such set).
pub fn set_samples(store: &mut dyn Results, set: &str) -> u64 {
    store
        .result_sets()
        .unwrap()
        .iter()
        .find(|s| s.name == set)
        .map_or(0, |s| s.samples)
}

/// A kbench.samples/1 document: the identifiers with `per_identifier`
/// samples each of one test, the n-th identifier n × 10 % faster.
pub fn document_of(identifiers: &[&str], per_identifier: usize) -> Vec<u8> {
    let ids: Vec<Value> = identifiers
        .iter()
        .enumerate()
        .map(|(n, name)| {
            let samples: Vec<Value> = (0..per_identifier)
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

/// [`document_of`] with 8 samples per identifier.
pub fn document(identifiers: &[&str]) -> Vec<u8> {
    document_of(identifiers, 8)
}

pub fn json(response: &Response) -> Value {
    serde_json::from_str(&response.body).unwrap_or_else(|e| panic!("{e}: {response:?}"))
}

/// Runs `test` on a temp SQLite file, then on a database of its own on
/// the test PostgreSQL server when there is one.
pub fn on_both(test: fn(Location)) {
    let dir = tempfile::tempdir().unwrap();
    test(Location::Sqlite(dir.path().join("results.db")));
    if let Some(server) = postgres_server() {
        let db = ThrowawayDatabase::create(&server, "api");
        test(Location::parse(&db.url).unwrap());
    }
}

/// How a push went through [`push_retrying`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pushed {
    /// The final answer: 201 stored, or 200 stored before.
    pub status: u16,
    /// Attempts answered 503 (the database was unreachable).
    pub unavailable: u32,
    /// Attempts that failed to connect or lost the connection.
    pub disconnected: u32,
}

/// Pushes `body` as `push_id` until it is stored, as `kbench push` does:
/// a connection error or a 503 is retried with the same push id; any
/// other answer than 201 or 200 fails the test.
pub fn push_retrying(addr: &str, token: &str, set: &str, push_id: &str, body: &[u8]) -> Pushed {
    let bearer = format!("Bearer {token}");
    let path = samples_path(set);
    let headers = [
        ("Authorization", bearer.as_str()),
        ("Idempotency-Key", push_id),
    ];
    let timeouts = client::Timeouts {
        connect: Duration::from_secs(5),
        io: Duration::from_secs(60),
    };
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut pushed = Pushed {
        status: 0,
        unavailable: 0,
        disconnected: 0,
    };
    loop {
        assert!(
            Instant::now() < deadline,
            "push {push_id} was not stored within 2 minutes: {pushed:?}"
        );
        match client::request_with_timeouts(addr, "POST", &path, &headers, body, timeouts) {
            Ok(answer) if answer.status == 201 || answer.status == 200 => {
                pushed.status = answer.status;
                return pushed;
            }
            Ok(answer) if answer.status == 503 => {
                assert!(
                    answer.body.contains("the database is unreachable; retry"),
                    "{answer:?}"
                );
                pushed.unavailable += 1;
            }
            Ok(answer) => panic!("push {push_id}: {answer:?}"),
            Err(_) => pushed.disconnected += 1,
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A pusher's tally over a run of [`push_retrying`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    /// Distinct pushes stored.
    pub pushes: u64,
    /// Pushes re-sent on purpose after they were stored (answered 200).
    pub resent: u64,
    pub unavailable: u64,
    pub disconnected: u64,
}

impl Tally {
    pub fn add(&mut self, other: Tally) {
        self.pushes += other.pushes;
        self.resent += other.resent;
        self.unavailable += other.unavailable;
        self.disconnected += other.disconnected;
    }

    fn count(&mut self, pushed: Pushed) {
        self.unavailable += u64::from(pushed.unavailable);
        self.disconnected += u64::from(pushed.disconnected);
    }
}

/// Pusher `pusher`: pushes documents of one new identifier with
/// `samples` samples each into `set` (push ids `{pusher}-{n}`), re-sending
/// every `resend_every`-th on purpose, until `stop` returns true.
pub fn pusher(
    addr: &str,
    token: &str,
    set: &str,
    pusher: &str,
    samples: usize,
    resend_every: u64,
    stop: impl Fn() -> bool,
) -> Tally {
    let mut tally = Tally::default();
    let mut n = 0u64;
    while !stop() {
        let id = format!("{pusher}-{n}");
        let body = document_of(&[id.as_str()], samples);
        let first = push_retrying(addr, token, set, &id, &body);
        tally.count(first);
        tally.pushes += 1;
        if n % resend_every == resend_every - 1 {
            let again = push_retrying(addr, token, set, &id, &body);
            assert_eq!(
                again.status, 200,
                "a re-sent push is stored once: {again:?}"
            );
            tally.count(again);
            tally.resent += 1;
        }
        n += 1;
    }
    tally
}
