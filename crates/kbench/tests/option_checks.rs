//! Option values are checked before anything runs or is stored: a value
//! of every kind (a built-in's whole number and choice, a profile's
//! number range) and an unknown option, on every command that measures,
//! exits 2 naming the test, the option, the value and what it accepts,
//! and the database holds no result set, identifier or run afterwards.

mod common;

use common::{assert_no_database, kbench, temp_db};
use kbench_store::Location;
use std::path::Path;

/// Runs kbench, which must refuse (status 2); its stderr.
fn refused(db: &Path, args: &[&str]) -> String {
    let out = kbench(db).args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    stderr
}

/// No result set, and no run of `identifier` in `set`: either no
/// database was made or it is empty.
fn assert_nothing_stored(db: &Path, set: &str, identifier: &str) {
    if !db.exists() {
        return;
    }
    let mut store = Location::resolve(Some(db.as_os_str()))
        .unwrap()
        .open_existing()
        .unwrap();
    assert!(store.result_sets().unwrap().is_empty());
    assert_eq!(store.last_round(set, identifier).unwrap(), None);
    assert!(store.unfinished_run(set, identifier).unwrap().is_none());
}

/// A user profile whose test takes a fractional option `ratio` from 0.5 to 2.
fn ratio_profile(dir: &Path) {
    std::fs::write(
        dir.join("ratio.toml"),
        "name = \"ratio\"\nrequires = { sh = \"dash\" }\ncommand = \"echo 1\"\n\
         [options.ratio]\nvalues = [\"1\"]\nrange = [0.5, 2.0]\n\
         [[metrics]]\nname = \"v\"\nunit = \"s\"\ndirection = \"lower\"\nregex = '([0-9]+)'\n\
         [[tests]]\nid = \"ratio-test\"\n",
    )
    .unwrap();
}

#[test]
fn run_refuses_a_bad_value_of_every_kind_and_stores_nothing() {
    let (dir, db) = temp_db();
    ratio_profile(dir.path());
    let profiles = dir.path().to_str().unwrap();
    for (test, words) in [
        (
            "ctxsw[procs=abc]",
            &[
                "ctxsw[procs=abc]",
                "option 'procs'",
                "'abc' is not a whole number",
                "a whole number from 2 to 64",
                "processes in the ring",
            ][..],
        ),
        (
            "ctxsw[procs=65]",
            &["option 'procs'", "'65' is out of range", "from 2 to 64"],
        ),
        (
            "pipe-lat[placement=everywhere]",
            &[
                "option 'placement'",
                "'everywhere' is not allowed",
                "one of same, cross, free",
            ],
        ),
        (
            "ratio-test[ratio=2.5]",
            &["ratio=2.5 is out of range", "from 0.5 to 2"],
        ),
        (
            "ctxsw[proc=3]",
            &[
                "option 'proc'",
                "this benchmark takes: placement, procs, size",
            ],
        ),
    ] {
        let args = [
            "--profiles",
            profiles,
            "run",
            "syscall-null",
            test,
            "--as",
            "X",
            "--into",
            "checked",
        ];
        let stderr = refused(&db, &args);
        for word in words {
            assert!(stderr.contains(word), "{test}: {word:?} not in {stderr}");
        }
        assert!(!stderr.contains("syscall-null"), "nothing ran: {stderr}");
        assert_nothing_stored(&db, "checked", "X");
    }
    assert_no_database(&db);
}

#[test]
fn every_command_that_measures_refuses_before_it_starts() {
    let (_dir, db) = temp_db();
    let bad = "ctxsw[procs=abc]";
    for args in [
        // Before any guest boots (the kernel need not even exist).
        &["vm", "run", "--kernel", "/nonexistent/bzImage", bad][..],
        &[
            "vm",
            "compare",
            "--kernel",
            "/nonexistent/a",
            "--kernel",
            "/nonexistent/b",
            bad,
        ],
        // Before the first unit's `kbench run`.
        &["calibrate", bad, "--pairs", "2"],
        // At submit, before the server is asked.
        &[
            "job",
            "submit",
            "--server",
            "http://127.0.0.1:9",
            "--token",
            "t",
            "--as",
            "X",
            "--into",
            "lab",
            bad,
        ],
        // Before the repository is read or a commit built.
        &[
            "bisect",
            "--repo",
            "/nonexistent",
            "--good",
            "a",
            "--bad",
            "b",
            "--build",
            "true",
            "--kernel",
            "arch/x86/boot/bzImage",
            "--bench",
            bad,
        ],
    ] {
        let stderr = refused(&db, args);
        for word in [bad, "'abc' is not a whole number", "from 2 to 64"] {
            assert!(stderr.contains(word), "{args:?}: {word:?} not in {stderr}");
        }
        assert_nothing_stored(&db, "default", "calibration");
    }
    let shown = kbench(&db)
        .args(["calibrate", "--show", "--json"])
        .output()
        .unwrap();
    let calibrations = common::json(&shown.stdout);
    assert_eq!(calibrations, serde_json::json!([]), "no calibration stored");
}
