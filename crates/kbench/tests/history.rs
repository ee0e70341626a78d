//! End-to-end tests of `kbench history` on imported series with a known
//! answer: an LKML lmbench report's shape (12 versions, 2.6.0 .. 2.6.11), pipe latency
//! and context switching worse from 2.6.7, fork worse at the last version,
//! a one-version spike in null call that recovers.

mod common;
#[path = "../../kbench-stats/tests/support/mod.rs"]
mod support;

use common::{assert_success, json, json_of, kbench, temp_db};
use serde_json::{Value, json};
use std::path::Path;

/// Eight samples around `level` with a fixed +-0.8 % pattern.
fn samples(level: f64) -> Value {
    let pattern = [0.0, 0.8, -0.8, 0.4, -0.4, 0.6, -0.6, 0.2];
    Value::Array(
        pattern
            .iter()
            .enumerate()
            .map(
                |(i, p)| json!({"value": level * (1.0 + p / 100.0), "round": 0, "at_ms": 1000 + i}),
            )
            .collect(),
    )
}

fn import(db: &Path) {
    let versions: Vec<String> = (0..12).map(|v| format!("2.6.{v}")).collect();
    let identifiers: Vec<Value> = versions
        .iter()
        .enumerate()
        .map(|(v, name)| {
            json!({
                "name": name,
                "samples": {
                    "pipe-lat": samples(if v >= 7 { 5.1 } else { 4.4 }),
                    "ctxsw": samples(if v >= 7 { 3.3 } else { 3.0 }),
                    "fork-exit": samples(if v == 11 { 165.0 } else { 150.0 }),
                    "syscall-null": samples(if v == 4 { 0.50 } else { 0.42 }),
                }
            })
        })
        .collect();
    let document = json!({
        "schema": "kbench.samples/1",
        "result_set": "lkml-26",
        "tests": [
            {"test": "pipe-lat", "unit": "us", "direction": "lower"},
            {"test": "ctxsw", "unit": "us", "direction": "lower"},
            {"test": "fork-exit", "unit": "us", "direction": "lower"},
            {"test": "syscall-null", "unit": "us", "direction": "lower"},
        ],
        "identifiers": identifiers,
    });
    let file = db.with_file_name("series.json");
    std::fs::write(&file, document.to_string()).unwrap();
    let out = kbench(db).arg("import").arg(&file).output().unwrap();
    assert_success(&out, "");
}

fn changes(report: &Value, test: &str) -> Vec<(String, String)> {
    let metric = report["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["test"] == test)
        .unwrap_or_else(|| panic!("no {test}"));
    metric["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["identifier"].as_str().unwrap().to_string(),
                c["verdict"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn finds_where_each_metric_changed() {
    let (_dir, db) = temp_db();
    import(&db);
    let report = json_of(&db, &["history", "lkml-26", "--format", "json"]);
    assert_eq!(report["schema"], "kbench.history/1");
    let regression = |v: &str| vec![(v.to_string(), "regression".to_string())];
    assert_eq!(changes(&report, "pipe-lat"), regression("2.6.7"));
    assert_eq!(changes(&report, "ctxsw"), regression("2.6.7"));
    assert_eq!(changes(&report, "fork-exit"), regression("2.6.11"));
    assert_eq!(changes(&report, "syscall-null"), vec![]);
    let pipe = &report["metrics"][0]["changes"][0];
    let pct = &pipe["change_pct"];
    assert!(
        (pct["point"].as_f64().unwrap() - 15.9).abs() < 0.1,
        "{pipe}"
    );
    assert!(pct["ci_low"].as_f64().unwrap() > 14.0 && pct["ci_high"].as_f64().unwrap() < 18.0);
    assert!(pipe["p_value"].as_f64().unwrap() < 1e-6);
    assert_eq!(pipe["previous"], "2.6.6");

    let out = kbench(&db).args(["history", "lkml-26"]).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    println!("{text}");
    assert!(
        text.contains("pipe-lat (us, lower is better): 1 change"),
        "{text}"
    );
    assert!(text.contains("2.6.6| 2.6.7"), "{text}");
    assert!(
        text.contains("2.6.6 -> 2.6.7: REGRESSION +15.91 %"),
        "{text}"
    );
    assert!(
        text.contains("syscall-null (us, lower is better): no change"),
        "{text}"
    );

    let out = kbench(&db)
        .args([
            "history", "lkml-26", "--metric", "fork", "--format", "markdown",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("| fork-exit | us | lower | 2.6.10 | 2.6.11 | +10.00 %"),
        "{text}"
    );
    assert!(!text.contains("pipe-lat"), "{text}");
}

/// Issue 19: 30 versions of one round each, 5 samples at 0.2 % noise,
/// whose means wander by 1 % (sd, iid, seeded) from version to version: `flat` has no
/// change, `step` only its +10 % at v15. Taking the samples as independent
/// across versions found change points all over `flat`.
#[test]
fn version_to_version_drift_is_noise() {
    let (_dir, db) = temp_db();
    let mut rng = support::Rng(19);
    let drift: Vec<f64> = (0..30).map(|_| 1.0 + 0.01 * rng.normal()).collect();
    let within = [0.0, 0.2, -0.2, 0.1, -0.1];
    let samples = |level: f64| -> Value {
        within
            .iter()
            .enumerate()
            .map(|(i, p)| json!({"value": level * (1.0 + p / 100.0), "round": 0, "at_ms": i}))
            .collect()
    };
    let identifiers: Vec<Value> = (0..30)
        .map(|v| {
            let step = if v >= 15 { 1.1 } else { 1.0 };
            json!({
                "name": format!("v{v}"),
                "samples": {
                    "flat": samples(100.0 * drift[v]),
                    "step": samples(100.0 * drift[v] * step),
                }
            })
        })
        .collect();
    let document = json!({
        "schema": "kbench.samples/1",
        "result_set": "drift",
        "tests": [
            {"test": "flat", "unit": "ns", "direction": "lower"},
            {"test": "step", "unit": "ns", "direction": "lower"},
        ],
        "identifiers": identifiers,
    });
    let file = db.with_file_name("drift.json");
    std::fs::write(&file, document.to_string()).unwrap();
    assert_success(&kbench(&db).arg("import").arg(&file).output().unwrap(), "");
    let report = json_of(&db, &["history", "drift", "--format", "json"]);
    assert_eq!(changes(&report, "flat"), vec![]);
    assert_eq!(
        changes(&report, "step"),
        vec![("v15".to_string(), "regression".to_string())]
    );
    let pct = &report["metrics"][1]["changes"][0]["change_pct"];
    let (low, high) = (
        pct["ci_low"].as_f64().unwrap(),
        pct["ci_high"].as_f64().unwrap(),
    );
    assert!(low > 1.0 && low < 10.0 && high > 10.0, "{pct}");
}

#[test]
fn order_threshold_and_errors() {
    let (_dir, db) = temp_db();
    import(&db);
    // Reversed, the 2.6.7 step is an improvement at 2.6.6.
    let order: Vec<String> = (0..12).rev().map(|v| format!("2.6.{v}")).collect();
    let report = json_of(
        &db,
        &[
            "history",
            "lkml-26",
            "--order",
            &order.join(","),
            "--metric",
            "pipe-lat",
            "--format",
            "json",
        ],
    );
    assert_eq!(
        changes(&report, "pipe-lat"),
        vec![("2.6.6".to_string(), "improvement".to_string())]
    );
    // A threshold above every change: nothing.
    let report = json_of(
        &db,
        &[
            "history",
            "lkml-26",
            "--threshold",
            "20",
            "--format",
            "json",
        ],
    );
    assert_eq!(report["changed_metrics"], 0);

    let out = kbench(&db)
        .args(["history", "lkml-26", "--order", "2.6.0,2.6.99"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let error = String::from_utf8_lossy(&out.stderr);
    assert!(
        error.contains("no identifier '2.6.99'") && error.contains("2.6.0, 2.6.1, 2.6.2"),
        "{error}"
    );
    let out = kbench(&db).args(["history", "nope"]).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("no result set \"nope\""));
    let out = kbench(&db)
        .args(["history", "lkml-26", "--metric", "zzz"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("matches --metric 'zzz'"));
    let out = kbench(&db)
        .args(["history", "lkml-26", "--format", "yaml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(json(b"{}").is_object());
}

#[test]
fn output_goes_to_a_file_in_every_format() {
    let (dir, db) = temp_db();
    import(&db);
    for format in ["text", "json", "markdown", "html"] {
        let file = dir.path().join(format!("history.{format}"));
        let out = kbench(&db)
            .args(["history", "lkml-26", "--format", format, "-o"])
            .arg(&file)
            .output()
            .unwrap();
        assert_success(&out, &format!("{format}: "));
        assert!(out.stdout.is_empty(), "{format}: stdout not empty");
        let written = std::fs::read_to_string(&file).unwrap();
        let stdout = kbench(&db)
            .args(["history", "lkml-26", "--format", format])
            .output()
            .unwrap()
            .stdout;
        assert_eq!(
            written.as_bytes(),
            stdout,
            "{format}: -o writes what stdout gets"
        );
    }
    let html = std::fs::read_to_string(dir.path().join("history.html")).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert_eq!(html.matches("<section class=\"metric\"").count(), 4);
    assert_eq!(html.matches("class=\"c-cp\"").count(), 3);
    let out = kbench(&db)
        .args(["history", "lkml-26", "-o"])
        .arg(dir.path().join("no/such/dir/x.txt"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot write"));
}
