//! `kbench export SET --format csv` read back by another program's CSV
//! reader (Python's csv module): the same values and counts as imported,
//! test names with commas and quotes intact, `--identifier` keeping only
//! its rows.

mod common;

use common::{have_programs, kbench, output, succeeds, temp_db};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

/// A set of two identifiers: `base` with 3 samples of each test, `"odd",
/// one` with 2; one test has options (a comma in its name), one a quote
/// in its metric.
const SAMPLES: &str = r#"{"schema": "kbench.samples/1", "result_set": "known",
  "tests": [{"test": "ctxsw[procs=8,size=16]", "unit": "us", "direction": "lower"},
            {"test": "pipe:say \"hi\"", "unit": "MB/s", "direction": "higher"}],
  "identifiers": [
    {"name": "base", "samples": {
       "ctxsw[procs=8,size=16]": [{"value": 1.5, "round": 0, "at_ms": 1000},
                                  {"value": 2.25, "round": 1, "at_ms": 1001, "iterations": 7},
                                  {"value": 0.125, "round": 2, "at_ms": 1002}],
       "pipe:say \"hi\"": [{"value": 500, "round": 0, "at_ms": 2000},
                           {"value": 501.5, "round": 0, "at_ms": 2001},
                           {"value": 499, "round": 1, "at_ms": 2002}]}},
    {"name": "\"odd\", one", "samples": {
       "ctxsw[procs=8,size=16]": [{"value": 3, "round": 0, "at_ms": 3000},
                                  {"value": 4, "round": 0, "at_ms": 3001}],
       "pipe:say \"hi\"": [{"value": 10, "round": 0, "at_ms": 4000},
                           {"value": 11, "round": 0, "at_ms": 4001}]}}]}"#;

/// The rows of `csv` as Python's csv module reads them, header first.
fn python_rows(csv: &[u8]) -> Vec<Vec<String>> {
    let mut child = Command::new("python3")
        .args([
            "-c",
            "import csv, io, json, sys\n\
             rows = list(csv.reader(io.TextIOWrapper(sys.stdin.buffer, newline='')))\n\
             json.dump(rows, sys.stdout)",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(csv).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    serde_json::from_slice(&out.stdout).unwrap()
}

fn export_csv(db: &Path, extra: &[&str]) -> Vec<Vec<String>> {
    let mut args = vec!["export", "known", "--format", "csv"];
    args.extend_from_slice(extra);
    let out = output(db, &args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    python_rows(&out.stdout)
}

fn imported() -> (tempfile::TempDir, std::path::PathBuf) {
    let (dir, db) = temp_db();
    let file = dir.path().join("known.json");
    std::fs::write(&file, SAMPLES).unwrap();
    succeeds(&db, &["import", file.to_str().unwrap()]);
    (dir, db)
}

#[test]
fn a_csv_export_reads_back_to_the_imported_samples() {
    if !have_programs(&["python3"], "apt-get install python3") {
        return;
    }
    let (_dir, db) = imported();
    let rows = export_csv(&db, &[]);
    assert_eq!(
        rows[0].join(","),
        "set,identifier,run,round,test,metric,value,unit,iterations,at_ms"
    );
    assert_eq!(rows.len(), 1 + 10, "{rows:?}");
    assert!(rows.iter().all(|r| r.len() == 10), "{rows:?}");

    let cell = |row: &Vec<String>, column: &str| -> String {
        let at = rows[0].iter().position(|c| c == column).unwrap();
        row[at].clone()
    };
    let of = |identifier: &str, test: &str, metric: &str| -> Vec<(f64, u32, u64, i64)> {
        rows[1..]
            .iter()
            .filter(|r| cell(r, "identifier") == identifier)
            .filter(|r| cell(r, "test") == test && cell(r, "metric") == metric)
            .map(|r| {
                assert_eq!(cell(r, "set"), "known");
                assert!(cell(r, "run").parse::<i64>().is_ok(), "run id {r:?}");
                (
                    cell(r, "value").parse().unwrap(),
                    cell(r, "round").parse().unwrap(),
                    cell(r, "iterations").parse().unwrap(),
                    cell(r, "at_ms").parse().unwrap(),
                )
            })
            .collect()
    };
    assert_eq!(
        of("base", "ctxsw[procs=8,size=16]", "value"),
        [(1.5, 0, 1, 1000), (2.25, 1, 7, 1001), (0.125, 2, 1, 1002)]
    );
    assert_eq!(
        of("base", "pipe", "say \"hi\""),
        [
            (500.0, 0, 1, 2000),
            (501.5, 0, 1, 2001),
            (499.0, 1, 1, 2002)
        ]
    );
    assert_eq!(of("\"odd\", one", "pipe", "say \"hi\"").len(), 2);
    assert_eq!(
        of("\"odd\", one", "ctxsw[procs=8,size=16]", "value").len(),
        2
    );
    let units: Vec<String> = rows[1..].iter().map(|r| cell(r, "unit")).collect();
    assert_eq!(units.iter().filter(|u| *u == "us").count(), 5);
    assert_eq!(units.iter().filter(|u| *u == "MB/s").count(), 5);
}

#[test]
fn identifier_limits_the_rows_and_an_unknown_one_is_refused() {
    if !have_programs(&["python3"], "apt-get install python3") {
        return;
    }
    let (_dir, db) = imported();
    let rows = export_csv(&db, &["--identifier", "\"odd\", one"]);
    assert_eq!(rows.len(), 1 + 4, "{rows:?}");
    assert!(rows[1..].iter().all(|r| r[1] == "\"odd\", one"), "{rows:?}");

    let out = output(
        &db,
        &["export", "known", "--format", "csv", "--identifier", "nope"],
    );
    assert!(!out.status.success());
    assert!(out.stdout.is_empty(), "nothing is written before the check");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("\"nope\"") && stderr.contains("base"),
        "{stderr}"
    );

    let json = kbench(&db)
        .args(["export", "known", "--identifier", "base"])
        .output()
        .unwrap();
    assert!(!json.status.success());
    assert!(String::from_utf8_lossy(&json.stderr).contains("--format csv"));
}
