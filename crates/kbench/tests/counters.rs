//! Counters and monitors as users record and read them: real runs of
//! built-ins whose counts physics fixes, `kbench show --counters`, and a
//! comparison of two CPU placements whose explanation names the counter
//! that moved.

mod common;

use common::{json_of, output, temp_db};
use serde_json::Value;

/// The mean per operation of `metric` of `test` in a `kbench.counters/1`
/// document; 0 when the test has no row of it (a count never above 0 is
/// never stored).
fn per_op(doc: &Value, test: &str, metric: &str) -> f64 {
    let tests = doc["tests"].as_array().unwrap();
    let test = tests
        .iter()
        .find(|t| t["test"] == test)
        .unwrap_or_else(|| panic!("no counters of {test} in {doc}"));
    test["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["metric"] == metric)
        .map_or(0.0, |r| r["summary"]["mean"].as_f64().unwrap())
}

#[test]
fn counters_are_plausible_against_physics() {
    let (_dir, db) = temp_db();
    let out = output(
        &db,
        &[
            "run",
            "pipe-lat[placement=same]",
            "sig-catch",
            "fork-exit",
            "syscall-null",
            "--rounds",
            "2",
            "--max-time",
            "0.2",
            "--as",
            "a",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc = json_of(&db, &["show", "default", "--counters", "a", "--json"]);
    assert_eq!(doc["schema"], "kbench.counters/1");
    for test in [
        "pipe-lat[placement=same]",
        "sig-catch",
        "fork-exit",
        "syscall-null",
    ] {
        // Counting works here: the task ran, so its clock moved.
        assert!(
            per_op(&doc, test, "perf.task_clock_per_op") > 0.0,
            "{test}: {doc}"
        );
    }
    // On one CPU each round trip blocks in read until the partner ran.
    let switches = per_op(
        &doc,
        "pipe-lat[placement=same]",
        "perf.context_switches_per_op",
    );
    assert!(
        switches >= 1.0,
        "pipe-lat same: {switches} switches per round trip"
    );
    // A signal to itself is handled without leaving the CPU.
    let switches = per_op(&doc, "sig-catch", "perf.context_switches_per_op");
    assert!(switches < 0.01, "sig-catch: {switches} switches per signal");
    // A fork write-protects the parent's pages: its next writes fault.
    let faults = per_op(&doc, "fork-exit", "perf.minor_faults_per_op");
    assert!(faults >= 1.0, "fork-exit: {faults} minor faults per fork");
    assert_eq!(
        per_op(&doc, "syscall-null", "perf.major_faults_per_op"),
        0.0
    );
    // The results are the same tests as without counters: no secondary
    // metric is shown as a result.
    let shown = json_of(&db, &["show", "default", "--json"]);
    for test in shown["tests"].as_array().unwrap() {
        let name = test["test"].as_str().unwrap();
        assert!(
            !name.contains("perf.") && !name.contains("vmstat."),
            "{name}"
        );
    }
}

#[test]
fn no_counters_and_no_monitors_record_neither() {
    let (_dir, db) = temp_db();
    let out = output(
        &db,
        &[
            "run",
            "syscall-null",
            "--rounds",
            "1",
            "--max-time",
            "0.05",
            "--no-counters",
            "--monitor",
            "none",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc = json_of(&db, &["show", "default", "--counters", "--json"]);
    assert_eq!(doc["tests"], serde_json::json!([]), "{doc}");
    let text = output(&db, &["show", "default", "--counters"]);
    assert!(String::from_utf8_lossy(&text.stdout).contains("has no counters or monitors"));
}

#[test]
fn a_bad_monitor_name_is_refused_with_the_closest_before_anything_runs() {
    let (_dir, db) = temp_db();
    let out = output(
        &db,
        &["run", "syscall-null", "--monitor", "vmstat,interupts"],
    );
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("unknown monitor 'interupts': did you mean 'interrupts'?"),
        "{stderr}"
    );
    let sets = json_of(&db, &["show", "--json"]);
    assert_eq!(
        sets["result_sets"],
        serde_json::json!([]),
        "nothing was stored"
    );
    // An identifier the set does not hold is named with those it holds.
    let (_dir, db) = temp_db();
    let args = [
        "run",
        "syscall-null",
        "--rounds",
        "1",
        "--max-time",
        "0.02",
        "--as",
        "a",
    ];
    assert!(output(&db, &args).status.success());
    let out = output(&db, &["show", "default", "--counters", "nobody"]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("no identifier 'nobody'; it has: a"),
        "{stderr}"
    );
}

/// A ring of four processes, free to run anywhere, on one CPU against two:
/// on two the scheduler moves them between CPUs, on one it cannot. The
/// comparison's regression names the migrations.
#[test]
fn a_cpu_placement_change_is_explained_by_its_migrations() {
    let online = std::thread::available_parallelism().map_or(1, |n| n.get());
    assert!(
        online >= 2,
        "this test needs two CPUs; this machine has {online}"
    );
    let (_dir, db) = temp_db();
    let out = output(
        &db,
        &[
            "run",
            "ctxsw[placement=free,procs=4]",
            "--variant",
            "one=cpus:0",
            "--variant",
            "two=cpus:0,1",
            "--budget",
            "2",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = json_of(&db, &["compare", "default", "--format", "json"]);
    let result = &report["metrics"][0]["results"][1];
    let changes = result["explanation"]["changes"].as_array().unwrap();
    let migrations = changes
        .iter()
        .find(|c| c["metric"] == "perf.cpu_migrations_per_op")
        .unwrap_or_else(|| panic!("no migrations compared: {result}"));
    // One allowed CPU: no migration at all.
    assert_eq!(migrations["baseline_mean"], 0.0, "{migrations}");
    assert_eq!(migrations["significant"], true, "{migrations}");
    let verdict = result["comparison"]["verdict"].as_str().unwrap();
    let text = output(&db, &["compare", "default"]);
    let text = String::from_utf8_lossy(&text.stdout);
    if verdict == "regression" {
        assert!(text.contains("why: cpu migrations/op +"), "{text}");
    } else {
        // Faster on two CPUs: more migrations do not explain it.
        assert_eq!(verdict, "improvement", "{result}");
        assert!(!text.contains("cpu migrations/op +"), "{text}");
    }
}
