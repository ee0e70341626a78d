//! Helpers shared by the end-to-end tests: a kbench command on a throwaway
//! database, and reading its JSON output.

#![allow(dead_code)] // each test binary uses its own subset

use assert_cmd::Command;
use serde_json::Value;
use std::ffi::OsStr;
use std::path::PathBuf;

/// Short sampling for tests: behaviour, not precision.
pub const SHORT: [&str; 6] = ["--max-time", "0.2", "--max-samples", "20", "--rounds", "1"];

/// A kbench command writing to the test's own database (a path or a
/// postgres:// URL).
pub fn kbench(db: impl AsRef<OsStr>) -> Command {
    let mut command = Command::cargo_bin("kbench").unwrap();
    command.env("KBENCH_DB", db).env_remove("XDG_DATA_HOME");
    command
}

pub fn temp_db() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    (dir, db)
}

/// Stdout as one JSON document (fails the test otherwise).
pub fn json(output: &[u8]) -> Value {
    serde_json::from_slice(output).unwrap_or_else(|e| {
        panic!(
            "stdout is not one JSON document ({e}):\n{}",
            String::from_utf8_lossy(output)
        )
    })
}

/// Runs kbench with `args` and returns its stdout as JSON, failing the test
/// when it fails.
pub fn json_of(db: impl AsRef<OsStr>, args: &[&str]) -> Value {
    let out = kbench(db).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "kbench {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    json(&out.stdout)
}

/// Whether the programs a test drives are installed. Missing ones skip the
/// test with a message on stderr (visible even when it passes), except in
/// CI (`CI=true`), where .ci/run installs them and a missing one fails.
pub fn have_programs(programs: &[&str], install: &str) -> bool {
    let on_path = |program: &&str| {
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
            .any(|dir| dir.join(program).is_file())
    };
    let missing: Vec<&str> = programs.iter().filter(|p| !on_path(p)).copied().collect();
    if missing.is_empty() {
        return true;
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "missing {missing:?} in CI: {install}"
    );
    // Straight to stderr: the harness captures eprintln! of a passing test,
    // and a skip must be seen.
    use std::io::Write;
    let _ = writeln!(
        std::io::stderr(),
        "SKIPPED: this test needs {missing:?} ({install})"
    );
    false
}
