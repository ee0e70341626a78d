//! End-to-end tests of `kbench compare`, `import` and `export` on data that
//! `kbench run` measured here, and on imported data with a known answer.

mod common;

use common::{
    assert_success, have_programs, json, json_of, json_stdout, kbench, quiet_series, succeeds,
    temp_db,
};
use serde_json::Value;
use std::path::Path;

/// Sampling for compare tests: three rounds, as the defaults, but short.
const ROUNDS: [&str; 6] = ["--max-time", "0.3", "--max-samples", "60", "--rounds", "3"];

/// Measuring tests of this binary take turns: two measuring at once on a
/// 2-CPU machine would slow each other and blur the verdicts they check.
static MEASURING: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn run(db: &Path, set: &str, identifier: &str, tests: &[&str]) {
    let _turn = MEASURING
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let out = kbench(db)
        .arg("run")
        .args(tests)
        .args(["--as", identifier, "--into", set])
        .args(ROUNDS)
        .output()
        .unwrap();
    assert_success(&out, "run failed: ");
}

/// The verdict of `identifier` for the metric whose test name starts with `test`.
fn verdict<'a>(report: &'a Value, test: &str, identifier: &str) -> &'a Value {
    let metric = report["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["test"].as_str().unwrap().starts_with(test))
        .unwrap_or_else(|| panic!("no metric {test}"));
    let result = metric["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["identifier"] == identifier)
        .unwrap();
    &result["comparison"]
}

#[test]
fn same_system_twice_is_no_regression() {
    let (_dir, db) = temp_db();
    let tests = ["syscall-null", "syscall-read", "mem-bw[op=rd]"];
    run(&db, "aa", "A", &tests);
    run(&db, "aa", "B", &tests);
    let report = json_of(&db, &["compare", "aa", "--format", "json"]);
    assert_eq!(report["schema"], "kbench.compare/1");
    assert_eq!(report["summaries"][0]["regressions"], 0, "{report:#}");
    kbench(&db)
        .args([
            "compare",
            "aa",
            "--fail-on-regression",
            "--format",
            "regressions",
        ])
        .assert()
        .code(0);
}

#[test]
fn a_wrapper_that_slows_syscalls_is_a_syscall_regression_only() {
    // strace slows every system call of the measuring process.
    if !have_programs(&["strace"], "apt-get install strace") {
        return;
    }
    // Both sides in interleaved blocks: two invocations one after the
    // other drift apart on this shared machine (a -23 % mem-bw between two
    // sequential runs was seen in CI), and the "only" half of the claim
    // needs that drift out of the way.
    let (_dir, db) = temp_db();
    let _turn = MEASURING
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    succeeds(
        &db,
        &[
            "run",
            "syscall-null",
            "mem-bw[op=rd]",
            "--into",
            "wrap",
            "--variant",
            "stock",
            "--variant",
            "traced=wrap:strace -f -qq -o /dev/null",
            "--max-time",
            "0.3",
            "--max-samples",
            "60",
            "--budget",
            "4",
        ],
    );
    let report = json_of(&db, &["compare", "wrap", "--format", "json"]);
    let null = verdict(&report, "syscall-null", "traced");
    assert_eq!(null["verdict"], "regression", "{null:#}");
    assert!(
        null["ratio"]["ci_low"].as_f64().unwrap() > 1.0,
        "slower means a larger time: {null:#}"
    );
    let membw = verdict(&report, "mem-bw", "traced");
    assert_ne!(membw["verdict"], "regression", "{membw:#}");
    let differences = report["differences"].as_array().unwrap();
    assert!(
        differences.iter().any(|d| d["fact"] == "Wrapper"),
        "{differences:?}"
    );

    kbench(&db)
        .args([
            "compare",
            "wrap",
            "--fail-on-regression",
            "--format",
            "regressions",
        ])
        .assert()
        .code(1);
}

/// A result set with a known answer: "slow" is 5 % slower on a
/// lower-is-better metric and equal on a higher-is-better one. Each side
/// ran three times, the sides taking turns (base, slow, base, ...), each
/// run its own process in one boot: identifiers measured apart, whose runs
/// are the units. The runs' levels differ by 0.1 % or less (equal ones
/// would have no spread: CANNOT DECIDE), and each sample by 0.3 %.
fn known_samples() -> String {
    let level = [[0.999, 1.001, 1.0], [1.0005, 0.9995, 1.0]];
    let series = |base: f64, side: usize, run: usize| -> String {
        let values: Vec<String> = (0..4)
            .map(|i| {
                let wobble = [0.997, 1.003, 0.999, 1.001, 0.998, 1.002][(4 * run + i) % 6];
                format!(
                    r#"{{"value": {}, "round": 0, "at_ms": {}}}"#,
                    base * level[side][run] * wobble,
                    1000 + i
                )
            })
            .collect();
        format!("[{}]", values.join(","))
    };
    let runs = |side: usize, lat: f64, bw: f64| -> String {
        let runs: Vec<String> = (0..3)
            .map(|run| {
                format!(
                    r#"{{"status": "complete",
                        "info": {{"snapshot": {{"boot_id": "boot-1"}}, "pid": {},
                                  "started_at_ms": {}}},
                        "samples": {{"lat": {}, "bw": {}}}}}"#,
                    100 + 10 * side + run,
                    60_000 * (2 * run + side),
                    series(lat, side, run),
                    series(bw, side, run)
                )
            })
            .collect();
        format!("[{}]", runs.join(","))
    };
    format!(
        r#"{{"schema": "kbench.samples/1", "result_set": "known",
            "tests": [{{"test": "lat", "unit": "us", "direction": "lower"}},
                      {{"test": "bw", "unit": "MB/s", "direction": "higher"}}],
            "identifiers": [
              {{"name": "base", "runs": {}, "samples": {{}}}},
              {{"name": "slow", "runs": {}, "samples": {{}}}}]}}"#,
        runs(0, 10.0, 500.0),
        runs(1, 10.5, 500.0),
    )
}

#[test]
fn imported_known_data_gets_the_known_verdicts_and_round_trips() {
    let (dir, db) = temp_db();
    let file = dir.path().join("known.json");
    std::fs::write(&file, known_samples()).unwrap();
    succeeds(&db, &["import", file.to_str().unwrap()]);

    let report = json_of(&db, &["compare", "known", "--format", "json"]);
    assert_eq!(verdict(&report, "lat", "slow")["verdict"], "regression");
    assert_eq!(verdict(&report, "bw", "slow")["verdict"], "no_change");
    let change = verdict(&report, "lat", "slow")["change_pct"]["point"]
        .as_f64()
        .unwrap();
    assert!((change - 5.0).abs() < 0.2, "change {change}");

    // Export, import under another name: the same comparison.
    let exported = kbench(&db).args(["export", "known"]).output().unwrap();
    assert!(exported.status.success());
    let copy = dir.path().join("copy.json");
    std::fs::write(&copy, &exported.stdout).unwrap();
    succeeds(&db, &["import", copy.to_str().unwrap(), "--into", "copy"]);
    let again = json_of(&db, &["compare", "copy", "--format", "json"]);
    assert_eq!(again["metrics"], report["metrics"]);
    let exported_again = json_stdout(&db, &["export", "copy"]);
    assert_eq!(
        exported_again["identifiers"],
        json(&exported.stdout)["identifiers"]
    );
}

#[test]
fn per_metric_thresholds_decide_the_gate() {
    let (dir, db) = temp_db();
    let file = dir.path().join("known.json");
    std::fs::write(&file, known_samples()).unwrap();
    succeeds(&db, &["import", file.to_str().unwrap()]);
    let gate = |threshold: &str| {
        kbench(&db)
            .args(["compare", "known", "--fail-on-regression", "--threshold"])
            .arg(threshold)
            .args(["--format", "json"])
            .output()
            .unwrap()
    };
    // lat is 5 % slower: a regression at 1 % and at 2 % for the rest,
    // within a 10 % band given to lat (or to l*) alone.
    for (threshold, lat_verdict, status, lat_threshold) in [
        ("2,bw=10", "regression", 1, 2.0),
        ("lat=10", "no_change", 0, 10.0),
        ("2,l*=10", "no_change", 0, 10.0),
    ] {
        let out = gate(threshold);
        assert_eq!(out.status.code(), Some(status), "--threshold {threshold}");
        let report = json(&out.stdout);
        assert_eq!(verdict(&report, "lat", "slow")["verdict"], lat_verdict);
        let lat = report["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["test"] == "lat")
            .unwrap();
        assert_eq!(
            lat["threshold_pct"], lat_threshold,
            "--threshold {threshold}"
        );
    }
    let text = kbench(&db)
        .args(["compare", "known", "--threshold", "2,lat=10"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("threshold 2.00 % (lat 10.00 %)"), "{text}");

    let bad = kbench(&db)
        .args(["compare", "known", "--threshold", "lat=abc"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert!(stderr.contains("lat: abc must be a percentage"), "{stderr}");
}

#[test]
fn invalid_import_writes_nothing_and_says_where() {
    let (dir, db) = temp_db();
    let file = dir.path().join("bad.json");
    // The second identifier's samples hold a negative value: the first must
    // not be stored either.
    let bad = known_samples().replacen("\"value\": 10.5", "\"value\": -10.5", 1);
    std::fs::write(&file, bad).unwrap();
    let out = kbench(&db)
        .args(["import", file.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("identifiers[1]") && err.contains("nothing was imported"),
        "{err}"
    );
    let sets = json_of(&db, &["show", "--json"]);
    assert_eq!(sets["result_sets"].as_array().unwrap().len(), 0);

    // Importing the same identifiers twice: the second is refused whole.
    std::fs::write(&file, known_samples()).unwrap();
    succeeds(&db, &["import", file.to_str().unwrap()]);
    let out = kbench(&db)
        .args(["import", file.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("already exists"));
}

#[test]
fn every_format_renders_and_usage_errors_exit_2() {
    let (dir, db) = temp_db();
    let file = dir.path().join("known.json");
    std::fs::write(&file, known_samples()).unwrap();
    succeeds(&db, &["import", file.to_str().unwrap()]);
    for format in ["bars", "table", "regressions", "markdown", "json", "csv"] {
        let out = kbench(&db)
            .args(["compare", "known", "--format", format])
            .output()
            .unwrap();
        assert_success(&out, &format!("{format}: "));
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(
            text.contains("slow"),
            "{format} does not name the identifier:\n{text}"
        );
    }
    for args in [
        vec!["compare", "known", "--format", "pie"],
        vec!["compare", "known", "--baseline", "nobody"],
        vec!["compare", "no-such-set"],
        vec!["compare", "known", "--threshold", "-1"],
    ] {
        let out = kbench(&db).args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(!out.stderr.is_empty());
    }
}

/// Measured apart, one run each (samples imported without runs, as a
/// file of another tool gives them): the gate fails on a change the
/// default drift cannot explain (+30 %), not on one within it (+5 %,
/// INCONCLUSIVE), and the report says how the sides were treated.
#[test]
fn the_gate_on_one_run_each_fails_only_beyond_the_drift() {
    let (dir, db) = temp_db();
    let file = dir.path().join("apart.json");
    std::fs::write(
        &file,
        format!(
            r#"{{"schema": "kbench.samples/1", "result_set": "apart",
                "tests": [{{"test": "lat", "unit": "us", "direction": "lower"}},
                          {{"test": "open", "unit": "us", "direction": "lower"}}],
                "identifiers": [
                  {{"name": "a", "samples": {{"lat": {}, "open": {}}}}},
                  {{"name": "b", "samples": {{"lat": {}, "open": {}}}}}]}}"#,
            quiet_series(10.0),
            quiet_series(2.0),
            quiet_series(10.5),
            quiet_series(2.6)
        ),
    )
    .unwrap();
    succeeds(&db, &["import", file.to_str().unwrap()]);
    let out = kbench(&db)
        .args([
            "compare",
            "apart",
            "--fail-on-regression",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let report = json(&out.stdout);
    assert_eq!(verdict(&report, "lat", "b")["verdict"], "inconclusive");
    let open = verdict(&report, "open", "b");
    assert_eq!(open["verdict"], "regression", "{open:#}");
    assert_eq!(open["analysis"]["design"], "one_each");
    let notes = report["notes"].to_string();
    assert!(notes.contains("the default run drift, 3.5 %"), "{notes}");
    assert!(
        notes.contains("'a' and 'b': no record of the processes"),
        "{notes}"
    );
    let text = kbench(&db).args(["compare", "apart"]).output().unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(
        text.contains("alternating runs per side would decide"),
        "{text}"
    );
}
