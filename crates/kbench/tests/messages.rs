//! The messages a new user meets first say what is true, echo what was
//! given, and every command ends an error with the same exit status (the
//! README's exit-status table): 2 for an error, 1 only for a REGRESSION
//! under `--fail-on-regression`.

mod common;

use common::{kbench, seed_fixture, succeeds, temp_db};
use std::path::Path;

/// Status of every error, usage or not.
const EXIT_ERROR: i32 = 2;

/// A database holding seed 004's set: baseline 'v6.9' and 'v6.10-rc5'.
fn seed_004() -> (tempfile::TempDir, std::path::PathBuf) {
    let (dir, db) = temp_db();
    let fixture = seed_fixture("004_linaro.json");
    succeeds(&db, &["import", fixture.to_str().unwrap()]);
    (dir, db)
}

/// Runs kbench, asserts it failed with the error status, returns stderr.
fn refused(db: &Path, args: &[&str]) -> String {
    let out = kbench(db).args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(
        out.status.code(),
        Some(EXIT_ERROR),
        "kbench {args:?}: {stderr}"
    );
    assert!(out.stdout.is_empty(), "kbench {args:?} printed a report");
    stderr
}

#[test]
fn naming_only_the_baseline_says_it_is_the_baseline() {
    let (_dir, db) = seed_004();
    let err = refused(&db, &["compare", "seed-004", "v6.9"]);
    assert!(
        err.contains("'v6.9', the baseline of result set 'seed-004'"),
        "{err}"
    );
    assert!(err.contains("kbench show seed-004"), "{err}");
    // The set has two identifiers: it is not "only" one.
    assert!(!err.contains("has only"), "{err}");
}

#[test]
fn a_metric_that_matches_nothing_is_echoed() {
    let (_dir, db) = seed_004();
    let err = refused(&db, &["compare", "seed-004", "--metric", "no-such-metric"]);
    assert!(err.contains("--metric 'no-such-metric'"), "{err}");
    let err = refused(&db, &["history", "seed-004", "--metric", "no-such-metric"]);
    assert!(err.contains("'no-such-metric'"), "{err}");
}

#[test]
fn a_missing_set_is_the_same_error_from_every_command() {
    let (_dir, db) = seed_004();
    for args in [
        &["show", "nope"][..],
        &["compare", "nope"],
        &["history", "nope"],
        &["export", "nope"],
        &["set", "rename", "nope", "a", "b"],
    ] {
        let err = refused(&db, args);
        assert!(
            err.contains("there is no result set \"nope\"") && err.contains("\"seed-004\""),
            "kbench {args:?}: {err}"
        );
    }
}

#[test]
fn usage_errors_and_bad_config_share_the_error_status() {
    let (dir, db) = seed_004();
    refused(&db, &["compare", "seed-004", "--no-such-flag"]);
    refused(&db, &["compare", "seed-004", "--threshold", "abc"]);
    let config = dir.path().join("config.toml");
    std::fs::write(&config, "max_time = \"soon\"\n").unwrap();
    let out = kbench(&db)
        .env("KBENCH_CONFIG", &config)
        .args(["show", "seed-004"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(EXIT_ERROR), "{out:?}");
}
