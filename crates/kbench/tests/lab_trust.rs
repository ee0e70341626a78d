//! What the lab server and its workers refuse, through the binary as a
//! team runs it (`kbench serve`, `kbench worker`): jobs that would run a
//! command or a file on a worker, and tokens acting beyond their scopes or
//! on another token's lease.

mod common;

use common::{Server, assert_success, create_token, kbench, temp_db};
use kbench_fleet::client::{self, Response};
use kbench_store::{JobSpec, Location};
use serde_json::Value;

fn post(server: &Server, path: &str, token: &str, body: &str) -> Response {
    let bearer = format!("Bearer {token}");
    client::request(
        &server.addr,
        "POST",
        path,
        &[
            ("Authorization", bearer.as_str()),
            ("Content-Type", "application/json"),
        ],
        body.as_bytes(),
    )
    .unwrap()
}

fn jobs(server: &Server) -> Vec<Value> {
    server.get("/api/v1/jobs")["jobs"]
        .as_array()
        .unwrap()
        .clone()
}

#[test]
fn a_job_can_run_no_command_and_no_file_on_a_worker() {
    let (dir, server_db) = temp_db();
    let token = create_token(&server_db, "lab");
    let server = Server::start(&server_db, "127.0.0.1:0");
    let marker = dir.path().join("pwned");
    let inject = format!("--wrap=sh -c touch${{IFS}}{}", marker.display());
    let bodies = [
        (
            serde_json::json!({"set": "s", "identifier": "i", "names": [inject, "syscall-null"]}),
            "cannot start with '-'",
        ),
        (
            serde_json::json!({"set": "s", "identifier": "i", "names": ["--help"]}),
            "cannot start with '-'",
        ),
        (
            serde_json::json!({"set": "s", "identifier": "i", "names": ["/tmp/x.toml"]}),
            "suite file",
        ),
        (
            serde_json::json!({"set": "s", "identifier": "i", "names": ["no-such-bench"]}),
            "do not resolve",
        ),
        (
            serde_json::json!({"set": "s", "identifier": "i", "names": ["quick"],
                               "kernel": "/boot/vmlinuz"}),
            "cannot name a file",
        ),
    ];
    for (body, needle) in bodies {
        let answer = post(&server, "/api/v1/jobs", &token, &body.to_string());
        assert_eq!(answer.status, 400, "{body}: {answer:?}");
        assert!(answer.body.contains(needle), "{needle:?} not in {answer:?}");
    }
    assert!(jobs(&server).is_empty(), "a refused job was queued");

    // A job that reached the queue another way (an older server, a hand
    // edit of its database) is refused by the worker before it runs.
    let spec = JobSpec {
        set: "s".into(),
        identifier: "i".into(),
        names: vec![inject.clone(), "syscall-null".into()],
        kernel: None,
        rounds: 1,
        max_time: Some(0.2),
        tags: vec![],
    };
    let id = Location::resolve(Some(server_db.as_os_str()))
        .unwrap()
        .open()
        .unwrap()
        .submit_job(&spec)
        .unwrap();
    let out = kbench("unused.db")
        .env("KBENCH_TOKEN", &token)
        .args(["worker", "--server", &server.url(), "--exit-when-idle"])
        .args(["--work-dir", dir.path().join("work").to_str().unwrap()])
        .output()
        .unwrap();
    assert_success(&out, "kbench worker: ");
    let job = server.get(&format!("/api/v1/jobs/{id}"));
    assert_eq!(job["state"], "failed", "{job}");
    let message = job["message"].as_str().unwrap();
    assert!(message.contains("refused by this worker"), "{message}");
    assert!(!marker.exists(), "the job ran a command on the worker");
}

#[test]
fn job_submit_sends_the_tests_of_a_suite_file() {
    let (dir, server_db) = temp_db();
    let token = create_token(&server_db, "lab");
    let server = Server::start(&server_db, "127.0.0.1:0");
    let suite = dir.path().join("mine.toml");
    std::fs::write(
        &suite,
        "name = \"mine\"\ntests = [\"syscall-null\", \"pipe-lat[placement=same]\"]\n",
    )
    .unwrap();
    let out = kbench("unused.db")
        .env("KBENCH_TOKEN", &token)
        .args(["job", "submit", "--server", &server.url(), "--as", "a"])
        .args(["--into", "lab", suite.to_str().unwrap()])
        .output()
        .unwrap();
    assert_success(&out, "kbench job submit: ");
    let queued = jobs(&server);
    assert_eq!(
        queued[0]["spec"]["names"],
        serde_json::json!(["syscall-null", "pipe-lat[placement=same]"]),
        "{queued:?}"
    );
}
