//! `kbench token`, `kbench serve` and `kbench push` end to end, as a user
//! runs them: a server process on 127.0.0.1 over a SQLite file, a local
//! result set pushed to it (twice: stored once), wrong and revoked tokens,
//! and a push that starts before the server and gets in by retrying.
//! (The API on PostgreSQL is tested in crates/kbench-server/tests/api.rs.)

mod common;

use common::{Server, create_token, kbench, succeeds, temp_db};
use std::path::Path;

fn samples_file(dir: &Path) -> std::path::PathBuf {
    let sample = |v: f64| serde_json::json!({"value": v});
    let doc = serde_json::json!({
        "schema": "kbench.samples/1",
        "tests": [{"test": "app", "unit": "ops/s", "direction": "higher"}],
        "identifiers": [
            {"name": "6.17", "samples": {"app": (0..6).map(|i| sample(100.0 + i as f64)).collect::<Vec<_>>()}},
            {"name": "6.18", "samples": {"app": (0..6).map(|i| sample(120.0 + i as f64)).collect::<Vec<_>>()}},
        ],
    });
    let path = dir.join("samples.json");
    std::fs::write(&path, serde_json::to_vec(&doc).unwrap()).unwrap();
    path
}

fn push(local: &Path, to: &str, token: &str, extra: &[&str]) -> std::process::Output {
    kbench(local)
        .args(["push", "plu", "--to", to, "--token", token])
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn push_to_a_served_database_is_stored_once_and_compared() {
    let (dir, server_db) = temp_db();
    let local = dir.path().join("local.db");
    let file = samples_file(dir.path());
    succeeds(&local, &["import", file.to_str().unwrap(), "--into", "plu"]);
    let token = create_token(&server_db, "runner-1");
    assert!(token.starts_with("kbt_") && token.len() == 68, "{token}");
    let server = Server::start(&server_db, "127.0.0.1:0");
    let url = format!("http://{}", server.addr);

    let first = push(&local, &url, &token, &["--push-id", "p-1"]);
    let stderr = String::from_utf8_lossy(&first.stderr);
    assert!(first.status.success(), "{stderr}");
    assert!(stderr.contains("stored 12 sample(s)"), "{stderr}");
    let again = push(&local, &url, &token, &["--push-id", "p-1"]);
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert!(again.status.success(), "{stderr}");
    assert!(stderr.contains("already stored"), "{stderr}");
    let sets = server.get("/api/v1/result-sets");
    assert_eq!(sets["result_sets"][0]["samples"], 12, "{sets}");
    let report = server.get("/api/v1/result-sets/plu/compare?format=json");
    assert_eq!(report["baseline"], "6.17", "{report}");

    // Wrong and revoked tokens: 401, nothing written.
    let wrong = push(&local, &url, "kbt_wrong", &["--into", "other"]);
    assert!(!wrong.status.success());
    assert!(String::from_utf8_lossy(&wrong.stderr).contains("401"));
    succeeds(&server_db, &["token", "revoke", "runner-1"]);
    let revoked = push(&local, &url, &token, &["--into", "other"]);
    assert!(String::from_utf8_lossy(&revoked.stderr).contains("revoked"));
    let listed = kbench(&server_db).args(["token", "list"]).output().unwrap();
    assert!(String::from_utf8_lossy(&listed.stdout).contains("revoked at"));
    assert_eq!(
        server.get("/api/v1/result-sets")["result_sets"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn a_push_retries_until_the_server_is_up() {
    let (dir, server_db) = temp_db();
    let local = dir.path().join("local.db");
    let file = samples_file(dir.path());
    succeeds(&local, &["import", file.to_str().unwrap(), "--into", "plu"]);
    let token = create_token(&server_db, "runner-1");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}");
    let pusher = {
        let (local, url, token) = (local.clone(), url.clone(), token.clone());
        std::thread::spawn(move || push(&local, &url, &token, &["--tries", "8"]))
    };
    std::thread::sleep(std::time::Duration::from_millis(700));
    let server = Server::start(&server_db, &format!("127.0.0.1:{port}"));
    let out = pusher.join().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("retrying"), "{stderr}");
    assert_eq!(
        server.get("/api/v1/result-sets")["result_sets"][0]["samples"],
        12
    );
}
