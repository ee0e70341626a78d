//! End-to-end tests of ad-hoc commands (`kbench run --command`) and of a
//! profile's `warmup` key: real runs of shell commands, stored and
//! compared as any test.

mod common;

use common::{assert_success, json_of, kbench, output, temp_db};
use std::path::Path;

/// Lines in `file` (0 when it does not exist).
fn lines(file: &Path) -> usize {
    std::fs::read_to_string(file).map_or(0, |text| text.lines().count())
}

/// The number of samples of `test` stored under the set's only identifier.
fn stored_n(db: &Path, set: &str, test: &str) -> u64 {
    let show = json_of(db, &["show", set, "--json"]);
    let found = show["tests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["test"] == test)
        .unwrap_or_else(|| panic!("no test {test} in {show:#}"));
    found["results"][0]["summary"]["n"].as_u64().unwrap()
}

#[test]
fn a_slower_command_is_a_regression() {
    let (dir, db) = temp_db();
    for (command, identifier) in [("sleep 0.01", "A"), ("sleep 0.03", "B")] {
        let out = output(
            &db,
            &[
                "run",
                "--command",
                command,
                "--as",
                identifier,
                "--into",
                "cmds",
                "--rounds",
                "3",
                "--max-time",
                "0.3",
            ],
        );
        assert_success(&out, command);
    }
    let out = output(&db, &["compare", "cmds", "A", "B", "--threshold", "20"]);
    assert_success(&out, "compare");
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.starts_with("B "))
        .unwrap_or_else(|| panic!("no line of B in:\n{text}"));
    assert!(line.contains("REGRESSION"), "{text}");
    // The command's text is the test's title, from the run's snapshot.
    let show = json_of(&db, &["show", "cmds", "--json"]);
    assert!(
        show["tests"][0]["title"]
            .as_str()
            .unwrap()
            .contains("sleep 0.0"),
        "{show:#}"
    );
    drop(dir);
}

#[test]
fn prepare_warmup_and_cleanup_run_as_often_as_said() {
    let (dir, db) = temp_db();
    let work = dir.path();
    let out = kbench(&db)
        .current_dir(work)
        .args([
            "run",
            "--command",
            "echo x >> runs; echo 'ops: 42.5'; echo 'lat_ms: 3'",
            "--prepare",
            "echo p >> prepared",
            "--cleanup",
            "echo c >> cleaned",
            "--warmup",
            "2",
            "--metric",
            "ops=higher",
            "--metric",
            "lat_ms",
            "--rounds",
            "1",
            "--min-samples",
            "3",
            "--max-samples",
            "3",
            "--as",
            "W",
            "--into",
            "w",
        ])
        .output()
        .unwrap();
    assert_success(&out, "run --command");
    // Relative paths are the user's current directory, not a scratch one.
    assert_eq!(lines(&work.join("runs")), 5, "2 warm-up + 3 timed runs");
    assert_eq!(lines(&work.join("prepared")), 5, "before every run");
    assert_eq!(lines(&work.join("cleaned")), 1, "once after the runs");
    assert_eq!(stored_n(&db, "w", "cmd"), 3, "warm-up runs are not stored");
    assert_eq!(stored_n(&db, "w", "cmd:ops"), 3);
    let show = json_of(&db, &["show", "w", "--json"]);
    let ops = show["tests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["test"] == "cmd:ops")
        .unwrap();
    assert_eq!(ops["direction"], "higher");
    assert_eq!(ops["results"][0]["summary"]["mean"], 42.5);
    assert!(
        show["tests"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["test"] == "cmd:lat_ms" && t["direction"] == "lower")
    );
}

#[test]
fn show_output_passes_the_output_on_and_otherwise_it_is_kept() {
    let (_dir, db) = temp_db();
    // The output ("shown-2") differs from the command's text, which titles show.
    let args = |show: bool| {
        let mut args = vec![
            "run",
            "--command",
            "echo shown-$((1+1)); echo err-$((2+2)) >&2",
            "--rounds",
            "1",
            "--min-samples",
            "2",
            "--max-samples",
            "2",
        ];
        if show {
            args.push("--show-output");
        }
        args
    };
    let shown = output(&db, &args(true));
    assert_success(&shown, "--show-output");
    let stderr = String::from_utf8_lossy(&shown.stderr);
    assert!(
        stderr.contains("shown-2") && stderr.contains("err-4"),
        "{stderr}"
    );
    assert!(!String::from_utf8_lossy(&shown.stdout).contains("shown-2"));
    let quiet = output(&db, &args(false));
    assert_success(&quiet, "without --show-output");
    for stream in [&quiet.stdout, &quiet.stderr] {
        let text = String::from_utf8_lossy(stream);
        assert!(
            !text.contains("shown-2") && !text.contains("err-4"),
            "{text}"
        );
    }
}

#[test]
fn a_failing_command_is_an_error_naming_it_its_status_and_its_output() {
    let (_dir, db) = temp_db();
    let out = output(
        &db,
        &[
            "run",
            "--command",
            "echo broken-tool >&2; exit 3",
            "--rounds",
            "1",
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "a FAILED test: {stderr}");
    for needle in [
        "exit 3`",
        "status 3",
        "broken-tool",
        "1 of 1 test FAILED: cmd",
    ] {
        assert!(stderr.contains(needle), "{needle:?} not in {stderr}");
    }
    let warmup = output(
        &db,
        &[
            "run",
            "--command",
            "false",
            "--warmup",
            "1",
            "--rounds",
            "1",
        ],
    );
    assert_eq!(warmup.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&warmup.stderr).contains("warm-up run 1"));
}

#[test]
fn flags_of_commands_are_checked() {
    let (_dir, db) = temp_db();
    for (args, needle) in [
        (&["run", "--warmup", "2"][..], "--command"),
        (&["run", "--command", "true", "--name", "Big"], "Big"),
        (
            &["run", "--command", "true", "--metric", "x=up"],
            "direction",
        ),
        (&["run", "--command", "true", "pipe-lat"], "cannot be used"),
    ] {
        let out = output(&db, args);
        assert!(!out.status.success(), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains(needle),
            "{args:?}: {needle:?} not in {stderr}"
        );
    }
}

/// A user profile whose test appends a line to `runs` in the current
/// directory, with `warmup = WARMUP`.
fn counting_profile(dir: &Path, warmup: &str) {
    let text = format!(
        "name = \"counter\"\nwarmup = {warmup}\ncommand = \"echo x >> {}\"\n\
         [[metrics]]\nname = \"t\"\nunit = \"s\"\ndirection = \"lower\"\nelapsed = true\n\
         [[tests]]\nid = \"counter\"\n",
        dir.join("runs").display()
    );
    std::fs::write(dir.join("counter.toml"), text).unwrap();
}

#[test]
fn a_profile_s_warmup_runs_are_not_recorded_and_bad_values_are_refused() {
    let (dir, db) = temp_db();
    counting_profile(dir.path(), "3");
    let profiles = dir.path().to_str().unwrap();
    let out = output(
        &db,
        &[
            "--profiles",
            profiles,
            "run",
            "counter",
            "--as",
            "P",
            "--into",
            "p",
            "--rounds",
            "1",
            "--min-samples",
            "2",
            "--max-samples",
            "2",
        ],
    );
    assert_success(&out, "warmup = 3");
    assert_eq!(lines(&dir.path().join("runs")), 5);
    assert_eq!(stored_n(&db, "p", "counter"), 2);
    for bad in ["\"two\"", "-1", "1000"] {
        counting_profile(dir.path(), bad);
        let out = output(&db, &["--profiles", profiles, "run", "counter"]);
        assert!(!out.status.success(), "warmup = {bad}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("counter.toml") && stderr.contains("warmup"),
            "warmup = {bad}: {stderr}"
        );
    }
}
