//! A test that FAILED while measuring (here an ad-hoc command that fails)
//! makes `kbench run` exit 3, and its closing lines say how many tests
//! FAILED and which, even with -q. Without --keep-going the run stops at
//! the first and its run is marked failed; with it the other tests run.
//! What was measured is stored either way.

mod common;

use common::{json, kbench, temp_db};
use kbench_model::results::RunStatus;
use kbench_store::Location;
use serde_json::Value;
use std::path::Path;

/// `kbench run` of a failing command, then one that works, as
/// `identifier`, with `flags`: its status, stderr and `kbench.run/1`.
fn run(db: &Path, identifier: &str, flags: &[&str]) -> (Option<i32>, String, Value) {
    let out = kbench(db)
        .args([
            "run",
            "--command",
            "echo boom >&2; false",
            "--command",
            "true",
        ])
        .args(["--as", identifier, "--into", "f", "--json", "--rounds", "1"])
        .args(["--max-time", "0.2"])
        .args(flags)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (out.status.code(), stderr, json(&out.stdout))
}

/// The kinds of the run's test outcomes, in order.
fn kinds(doc: &Value) -> Vec<&str> {
    let outcomes = doc["outcomes"].as_array().unwrap();
    outcomes
        .iter()
        .map(|o| o["kind"].as_str().unwrap())
        .collect()
}

/// The status of each stored run of `identifier`.
fn statuses(db: &Path, identifier: &str) -> Vec<RunStatus> {
    let mut store = Location::resolve(Some(db.as_os_str()))
        .unwrap()
        .open_existing()
        .unwrap();
    let data = store.load("f").unwrap();
    let found = data.identifiers.iter().find(|i| i.name == identifier);
    found.unwrap().runs.iter().map(|r| r.status).collect()
}

#[test]
fn a_failed_test_stops_the_run_exits_3_and_names_it() {
    let (_dir, db) = temp_db();
    let (code, stderr, doc) = run(&db, "stop", &["-q"]);
    assert_eq!(code, Some(3), "{stderr}");
    assert!(
        stderr.contains(
            "1 of 2 tests FAILED: cmd-1; the run stopped there (--keep-going measures the \
             other tests too)"
        ),
        "said even with -q: {stderr}"
    );
    assert_eq!(kinds(&doc), ["failed"], "cmd-2 did not run");
    assert_eq!(
        (doc["stopped_at_failure"].as_bool(), doc["tests"].as_u64()),
        (Some(true), Some(2))
    );
    assert_eq!(statuses(&db, "stop"), [RunStatus::Failed]);
}

#[test]
fn keep_going_runs_the_other_tests_stores_them_and_still_exits_3() {
    let (_dir, db) = temp_db();
    let (code, stderr, doc) = run(&db, "on", &["--keep-going"]);
    assert_eq!(code, Some(3), "{stderr}");
    assert!(stderr.contains("[2/2] cmd-2: done"), "{stderr}");
    assert!(
        stderr.contains("\n1 of 2 tests FAILED: cmd-1\n"),
        "{stderr}"
    );
    assert_eq!(kinds(&doc)[0], "failed");
    assert_eq!(kinds(&doc).len(), 2);
    assert!(doc["samples_stored"].as_u64().unwrap() > 0, "{doc:#}");
    assert_eq!(doc["stopped_at_failure"], false);
    assert_eq!(statuses(&db, "on"), [RunStatus::Complete]);
}
