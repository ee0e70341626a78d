//! `kbench run --variant`: several identifiers measured in randomized
//! interleaved blocks, through the binary as users run it. The blocks are
//! recorded (a session and round numbers shared by every variant), compare
//! pairs them, settings are checked before anything is stored, and sysctl
//! values come back after the run.

mod common;

use common::{assert_success, json, json_of, kbench, output, run_short, temp_db};
use serde_json::Value;
use std::path::Path;

/// Short blocks: behaviour, not precision.
const SHORT_BLOCKS: [&str; 6] = [
    "--max-time",
    "0.02",
    "--max-samples",
    "5",
    "--budget",
    "0.05",
];

/// Two plain variants of syscall-null into set "v".
const A_AND_B: [&str; 8] = [
    "run",
    "syscall-null",
    "--into",
    "v",
    "--variant",
    "a",
    "--variant",
    "b",
];

fn export(db: &Path, set: &str) -> Value {
    json_of(db, &["export", set])
}

/// Runs `kbench run ARGS` with short blocks, failing the test unless it
/// succeeds.
fn run_blocks(db: &Path, args: &[&str]) {
    run_with_plan(db, args, &SHORT_BLOCKS);
}

/// Runs `kbench run ARGS PLAN`, failing the test unless it succeeds.
fn run_with_plan(db: &Path, args: &[&str], plan: &[&str]) {
    let args = [args, plan].concat();
    let out = output(db, &args);
    assert_success(&out, "");
}

fn identifier<'a>(doc: &'a Value, name: &str) -> &'a Value {
    doc["identifiers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["name"] == name)
        .unwrap_or_else(|| panic!("no identifier {name} in {doc}"))
}

/// Per round, the `at_ms` of each syscall-null sample of the variant's
/// first run, in the order stored.
fn sample_times(doc: &Value, name: &str) -> std::collections::BTreeMap<u64, Vec<i64>> {
    let mut rounds = std::collections::BTreeMap::<u64, Vec<i64>>::new();
    let samples = &identifier(doc, name)["runs"][0]["samples"]["syscall-null"];
    for sample in samples.as_array().unwrap() {
        rounds
            .entry(sample["round"].as_u64().unwrap())
            .or_default()
            .push(sample["at_ms"].as_i64().unwrap());
    }
    rounds
}

#[test]
fn variants_are_measured_in_paired_blocks_and_compared_by_block() {
    let (_dir, db) = temp_db();
    let args = vec![
        "run",
        "syscall-null",
        "--into",
        "v",
        "--variant",
        "base",
        "--variant",
        "other=env:KBENCH_TEST_MARK=1",
        "--seed",
        "7",
    ];
    run_blocks(&db, &args);
    let doc = export(&db, "v");
    let mut sessions = vec![];
    for name in ["base", "other"] {
        let runs = identifier(&doc, name)["runs"].as_array().unwrap();
        assert_eq!(runs.len(), 1, "one run per variant and invocation");
        let variant = &runs[0]["info"]["snapshot"]["variant"];
        assert_eq!(variant["name"], name);
        assert_eq!(variant["seed"], 7);
        sessions.push(variant["session"].as_str().unwrap().to_string());
        let rounds: std::collections::BTreeSet<u64> = runs[0]["samples"]["syscall-null"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["round"].as_u64().unwrap())
            .collect();
        // At least the 12 blocks the signed-rank test needs, numbered alike.
        assert!(rounds.len() >= 12, "{name}: rounds {rounds:?}");
        assert_eq!(rounds.iter().next(), Some(&0));
    }
    assert_eq!(sessions[0], sessions[1], "one session pairs the variants");
    let settings = &identifier(&doc, "other")["runs"][0]["info"]["snapshot"]["variant"]["settings"];
    assert_eq!(settings[0], "env:KBENCH_TEST_MARK=1");

    let report = json_of(&db, &["compare", "v", "--format", "json"]);
    let comparison = &report["metrics"][0]["results"][1]["comparison"];
    assert_eq!(comparison["analysis"]["kind"], "blocked", "{comparison}");
    assert!(comparison["analysis"]["blocks"].as_u64().unwrap() >= 12);
    let notes = report["notes"].to_string();
    assert!(notes.contains("paired block by block"), "{notes}");
}

#[test]
fn the_variants_of_a_block_take_turns_sample_by_sample() {
    let (_dir, db) = temp_db();
    run_blocks(&db, &A_AND_B);
    let doc = export(&db, "v");
    let (a, b) = (sample_times(&doc, "a"), sample_times(&doc, "b"));
    assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>());
    for (round, times_a) in &a {
        let times_b = &b[round];
        assert_eq!(
            times_a.len(),
            times_b.len(),
            "round {round}: the block's leader decides how many samples both take"
        );
        // Taking turns, each variant's round overlaps the other's in time;
        // one after the other, the second would start after the first ended.
        let (first, second) = if times_a[0] <= times_b[0] {
            (times_a, times_b)
        } else {
            (times_b, times_a)
        };
        assert!(
            second[0] < *first.last().unwrap(),
            "round {round}: {first:?} then {second:?} did not take turns"
        );
    }
}

#[test]
fn a_second_session_pairs_within_itself_and_never_across() {
    let (_dir, db) = temp_db();
    for _ in 0..2 {
        run_blocks(&db, &A_AND_B);
    }
    let doc = export(&db, "v");
    let runs = |name| identifier(&doc, name)["runs"].as_array().unwrap().clone();
    let (a, b) = (runs("a"), runs("b"));
    assert_eq!((a.len(), b.len()), (2, 2));
    let first_round = |run: &Value| {
        run["samples"]["syscall-null"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["round"].as_u64().unwrap())
            .min()
            .unwrap()
    };
    // The second session's blocks come after every round stored.
    assert_eq!(first_round(&a[1]), first_round(&b[1]));
    assert!(first_round(&a[1]) >= 12);
    assert_ne!(
        a[0]["info"]["snapshot"]["variant"]["session"],
        a[1]["info"]["snapshot"]["variant"]["session"]
    );
}

#[test]
fn bad_variants_are_refused_before_anything_is_stored() {
    let (_dir, db) = temp_db();
    run_short(&db, &["run", "syscall-null", "--into", "v", "--as", "kept"]);
    let before = export(&db, "v");
    let cases: [(&[&str], &str); 5] = [
        (&["--variant", "a", "--variant", "a"], "'a' is given twice"),
        (
            &["--variant", "a", "--variant", "s=sysctl:vm.no_such_knob=1"],
            "variant 's'",
        ),
        (&["--variant", "a", "--variant", "c=cpus:9999"], "CPU 9999"),
        (
            &["--variant", "a", "--variant", "w=wrap:no-such-wrapper-x"],
            "no-such-wrapper-x",
        ),
        (
            &["--variant", "a", "--variant", "k=colour:red"],
            "unknown setting kind",
        ),
    ];
    for (variants, expected) in cases {
        let mut args = vec!["run", "syscall-null", "--into", "v"];
        args.extend(variants);
        let out = output(&db, &args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{variants:?} was accepted");
        assert!(stderr.contains(expected), "{variants:?}: {stderr}");
    }
    assert_eq!(export(&db, "v"), before, "nothing stored was touched");
    let sets = json(
        &kbench(&db)
            .args(["show", "--json"])
            .output()
            .unwrap()
            .stdout,
    );
    assert_eq!(
        sets["result_sets"][0]["identifiers"],
        serde_json::json!(["kept"]),
        "{sets}"
    );
}

#[test]
fn a_variants_sysctl_is_set_for_its_rounds_and_restored_after() {
    // Writing a sysctl needs root (CI runs as root).
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: not root");
        return;
    }
    let key = "/proc/sys/kernel/sched_autogroup_enabled";
    let old = std::fs::read_to_string(key).unwrap().trim().to_string();
    let new = if old == "0" { "1" } else { "0" };
    let (_dir, db) = temp_db();
    let setting = format!("set=sysctl:kernel.sched_autogroup_enabled={new}");
    let args = vec![
        "run",
        "syscall-null",
        "--into",
        "v",
        "--variant",
        "base",
        "--variant",
        &setting,
    ];
    run_blocks(&db, &args);
    assert_eq!(
        std::fs::read_to_string(key).unwrap().trim(),
        old,
        "restored"
    );
    let doc = export(&db, "v");
    let variant = &identifier(&doc, "set")["runs"][0]["info"]["snapshot"]["variant"];
    assert_eq!(
        variant["sysctl_before"]["kernel.sched_autogroup_enabled"],
        old.as_str()
    );
}

#[test]
fn a_duet_runs_both_variants_of_a_block_at_the_same_time() {
    let (_dir, db) = temp_db();
    // Rounds of 0.1 s: the two agents' start-up (tens of milliseconds
    // apart when other tests load both CPUs) is short against them.
    let plan = [
        "--max-time",
        "0.1",
        "--max-samples",
        "20",
        "--budget",
        "0.05",
    ];
    run_with_plan(&db, &[A_AND_B.as_slice(), &["--duet"]].concat(), &plan);
    let doc = export(&db, "v");
    // Per block (round), the time span of each variant's samples.
    let spans = |name| -> std::collections::BTreeMap<u64, (i64, i64)> {
        sample_times(&doc, name)
            .into_iter()
            .map(|(round, times)| (round, (times[0], *times.last().unwrap())))
            .collect()
    };
    let (a, b) = (spans("a"), spans("b"));
    assert!(a.len() >= 12);
    let overlapping = a
        .iter()
        .filter(|(round, (start, end))| {
            b.get(round)
                .is_some_and(|(b_start, b_end)| b_start <= end && start <= b_end)
        })
        .count();
    // Sequential blocks never overlap; a duet's do, except when a loaded
    // machine starts one agent later than the other's whole 0.1 s round
    // (8 of 12 overlapped while four builds ran beside CI).
    assert!(
        overlapping * 2 > a.len(),
        "{overlapping} of {} blocks overlap",
        a.len()
    );
    let notes = identifier(&doc, "a")["runs"][0]["info"]["notes"].to_string();
    assert!(notes.contains("duet"), "{notes}");
}

#[test]
fn a_duet_refuses_what_it_cannot_run_side_by_side() {
    let (_dir, db) = temp_db();
    let cases: [(&[&str], &str); 3] = [
        (
            &["pipe-lat", "--variant", "a", "--variant", "b"],
            "single-task",
        ),
        (
            &[
                "syscall-null",
                "--variant",
                "a",
                "--variant",
                "b",
                "--variant",
                "c",
            ],
            "3 are given",
        ),
        (
            &["syscall-null", "--variant", "a", "--variant", "b=cpus:0"],
            "chooses the CPUs",
        ),
    ];
    for (rest, expected) in cases {
        let mut args = vec!["run", "--into", "v", "--duet"];
        args.extend(rest);
        let out = output(&db, &args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && stderr.contains(expected),
            "{rest:?}: {stderr}"
        );
    }
}
