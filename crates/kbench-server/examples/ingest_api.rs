//! Ingest through the push API into PostgreSQL: a server in process on a
//! database of its own, THREADS clients pushing DOCS documents of SAMPLES
//! samples each (one new identifier per document), REPS times; prints the
//! samples/s of each repetition and their median.
//!
//! ```text
//! bash bench/ingest-api.sh                      # a throwaway cluster
//! cargo run --release -p kbench-server --example ingest_api -- postgres://USER@HOST:PORT/DB
//! ```
//! The URL names a server on which the program may create (and drops) a
//! database; without an argument it is `KBENCH_TEST_POSTGRES_URL`.
//! Environment: INGEST_DOCS (40), INGEST_SAMPLES (10000), INGEST_THREADS
//! (4), INGEST_REPS (3).

use kbench_fleet::client;
use kbench_server::{Config, auth};
use kbench_store::Location;
use kbench_store::testing::{POSTGRES_ENV, ThrowawayDatabase};
use std::time::Instant;

fn setting(name: &str, default: usize) -> usize {
    std::env::var(name).map_or(default, |text| {
        text.parse()
            .unwrap_or_else(|e| panic!("{name}={text:?}: {e}; give a positive whole number"))
    })
}

/// A kbench.samples/1 document: `samples` samples of one test of one
/// identifier.
fn document(identifier: &str, samples: usize) -> Vec<u8> {
    let samples: Vec<serde_json::Value> = (0..samples)
        .map(|i| {
            serde_json::json!({
                "value": 1000.0 + (i % 97) as f64 * 0.37,
                "iterations": 1000,
                "at_ms": 1_700_000_000_000_i64 + i as i64,
                "round": i % 5,
            })
        })
        .collect();
    serde_json::to_vec(&serde_json::json!({
        "schema": "kbench.samples/1",
        "tests": [{"test": "ingest[size=4k]", "unit": "ns", "direction": "lower"}],
        "identifiers": [{"name": identifier, "samples": {"ingest[size=4k]": samples}}],
    }))
    .expect("a document serializes")
}

fn main() -> anyhow::Result<()> {
    let server = match std::env::args().nth(1) {
        Some(url) => url,
        None => std::env::var(POSTGRES_ENV).map_err(|_| {
            anyhow::anyhow!(
                "give a postgres:// URL as the argument or in {POSTGRES_ENV} (bash bench/ingest-api.sh makes a throwaway server)"
            )
        })?,
    };
    let (docs, samples, threads, reps) = (
        setting("INGEST_DOCS", 40),
        setting("INGEST_SAMPLES", 10_000),
        setting("INGEST_THREADS", 4).max(1),
        setting("INGEST_REPS", 3).max(1),
    );
    let db = ThrowawayDatabase::create(&server, "ingest");
    let location = Location::parse(&db.url)?;
    let token = auth::new_secret()?;
    location.open_send()?.create_token(
        "ingest",
        &auth::sha256_hex(token.as_bytes()),
        &kbench_store::Scope::ALL,
    )?;
    let running = kbench_server::spawn(
        "127.0.0.1:0",
        Config::new(
            location,
            std::sync::Arc::new(kbench_catalog::job::checker(
                kbench_catalog::profile::Profiles::builtin(),
            )),
        ),
    )?;
    let addr = running.addr.to_string();
    let bearer = format!("Bearer {token}");
    let bodies: Vec<Vec<u8>> = (0..docs)
        .map(|n| document(&format!("id-{n}"), samples))
        .collect();
    eprintln!(
        "ingest_api: {docs} documents of {samples} samples ({} KiB each) from {threads} threads, {reps} repetitions",
        bodies[0].len() / 1024
    );
    let mut rates = Vec::new();
    for rep in 0..reps {
        let path = format!("/api/v1/result-sets/ingest-{rep}/samples");
        let started = Instant::now();
        std::thread::scope(|scope| {
            for thread in 0..threads {
                let (addr, path, bearer, bodies) = (&addr, &path, &bearer, &bodies);
                scope.spawn(move || {
                    for n in (thread..bodies.len()).step_by(threads) {
                        let id = format!("rep{rep}-doc{n}");
                        let headers =
                            [("Authorization", bearer.as_str()), ("Idempotency-Key", &id)];
                        let answer = client::request(addr, "POST", path, &headers, &bodies[n])
                            .unwrap_or_else(|e| panic!("push {id}: {e}"));
                        assert_eq!(answer.status, 201, "push {id}: {answer:?}");
                    }
                });
            }
        });
        let seconds = started.elapsed().as_secs_f64();
        let rate = (docs * samples) as f64 / seconds;
        eprintln!(
            "  repetition {}: {} samples in {seconds:.2} s: {rate:.0} samples/s",
            rep + 1,
            docs * samples
        );
        rates.push(rate);
    }
    rates.sort_by(f64::total_cmp);
    println!(
        "ingest_api: median {:.0} samples/s through POST /api/v1/result-sets/{{set}}/samples into PostgreSQL",
        rates[rates.len() / 2]
    );
    running.stop()?;
    Ok(())
}
