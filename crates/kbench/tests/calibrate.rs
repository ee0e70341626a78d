//! End-to-end tests of `kbench calibrate`: the host's drift measured from
//! A/A runs, stored whole and used by compare for one run on a side; a
//! failed or interrupted calibration stores nothing.

mod common;

use common::{json, json_of, kbench, succeeds, temp_db};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::Duration;

/// Short sampling for each run of the calibration and the comparison.
const SHORT: [&str; 4] = ["--max-time", "0.2", "--max-samples", "40"];

#[test]
fn a_calibration_is_stored_shown_and_decides_one_run_each() {
    let (_dir, db) = temp_db();
    succeeds(
        &db,
        &["calibrate", "syscall-null", "--pairs", "2", "--rounds", "2"],
    );
    let stored = json_of(&db, &["calibrate", "--show", "--json"]);
    let stored = stored.as_array().unwrap();
    assert_eq!(stored.len(), 1, "{stored:?}");
    let calibration = &stored[0];
    assert_eq!(calibration["unit"], "run");
    assert_eq!(calibration["pairs"], 2);
    assert!(
        !calibration["hardware"]["cpu_model"]
            .as_str()
            .unwrap()
            .is_empty()
    );
    let test = &calibration["tests"][0];
    assert_eq!(test["test"]["benchmark"], "syscall-null");
    assert_eq!(test["df"], 1.0);
    let sd = test["sd"].as_f64().unwrap();
    assert!(sd.is_finite() && sd >= 0.0, "{sd}");

    // Two runs one after the other: one run each, decided with it.
    for identifier in ["a", "b"] {
        let mut args = vec!["run", "syscall-null", "--into", "t", "--as", identifier];
        args.extend(["--rounds", "2"]);
        args.extend(SHORT);
        succeeds(&db, &args);
    }
    let report = json_of(&db, &["compare", "t", "--format", "json"]);
    let c = &report["metrics"][0]["results"][1]["comparison"];
    assert_eq!(c["analysis"]["design"], "one_each", "{c:#}");
    assert_eq!(
        c["components"]["drift"]["source"]["kind"], "calibrated",
        "{c:#}"
    );
    assert_eq!(c["components"]["drift"]["source"]["pairs"], 2);
    let notes = report["notes"].to_string();
    assert!(notes.contains("this host's run drift"), "{notes}");
    assert!(notes.contains("2 pairs"), "{notes}");
}

#[test]
fn a_failed_calibration_stores_nothing_and_says_which_unit() {
    let (dir, db) = temp_db();
    // A name that does not resolve is refused before the first unit.
    let out = kbench(&db)
        .args(["calibrate", "no-such-test", "--pairs", "2"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("unknown benchmark, suite or profile 'no-such-test'"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("of the calibration"),
        "no unit ran: {stderr}"
    );
    // A test that FAILS while measuring fails its unit, which is named.
    std::fs::write(
        dir.path().join("broken.toml"),
        "name = \"broken\"\nrequires = { sh = \"dash\" }\ncommand = \"exit 1\"\n\
         [[metrics]]\nname = \"v\"\nunit = \"s\"\ndirection = \"lower\"\nregex = '([0-9]+)'\n\
         [[tests]]\nid = \"broken-test\"\n",
    )
    .unwrap();
    let out = kbench(&db)
        .arg("--profiles")
        .arg(dir.path())
        .args(["calibrate", "broken-test", "--pairs", "2"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("run 1 of 4 of the calibration"), "{stderr}");
    assert!(
        stderr.contains("1 of 1 test FAILED: broken-test"),
        "{stderr}"
    );
    let stored = json_of(&db, &["calibrate", "--show", "--json"]);
    assert_eq!(stored, serde_json::json!([]));
}

/// Ctrl-C in the middle: exit 130 and no calibration.
#[test]
fn an_interrupted_calibration_stores_nothing() {
    let (_dir, db) = temp_db();
    let child = Command::new(assert_cmd::cargo::cargo_bin("kbench"))
        .arg("--db")
        .arg(&db)
        .args([
            "calibrate",
            "syscall-null",
            "--pairs",
            "20",
            "--rounds",
            "3",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(3));
    // SAFETY: a negative pid signals the child's process group.
    unsafe { libc::kill(-(child.id() as i32), libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("nothing was stored"), "{stderr}");
    let stored = json(
        &kbench(&db)
            .args(["calibrate", "--show", "--json"])
            .output()
            .unwrap()
            .stdout,
    );
    assert_eq!(stored, serde_json::json!([]));
}
