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
