//! End-to-end tests: drive the kbench binary as a user would, against a
//! throwaway database. Runs use short budgets (`--max-time 0.2`) so the
//! tests are quick; they check behaviour, not speed.

mod common;

use common::{
    SHORT, assert_success, json, json_stdout, kbench, run_short, temp_db, wait_for_samples,
};
use std::time::{Duration, Instant};

#[test]
fn two_identifiers_show_side_by_side() {
    let (_dir, db) = temp_db();
    for identifier in ["stock", "patched"] {
        run_short(
            &db,
            &[
                "run",
                "syscall-null",
                "pipe-lat",
                "--as",
                identifier,
                "--into",
                "t",
            ],
        );
    }
    let out = kbench(&db).args(["show", "t", "--json"]).output().unwrap();
    assert!(out.status.success());
    let doc = json(&out.stdout);
    assert_eq!(doc["schema"], "kbench.show/1");
    let names: Vec<&str> = doc["identifiers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["stock", "patched"]);
    let tests = doc["tests"].as_array().unwrap();
    let null = tests
        .iter()
        .find(|t| t["benchmark"] == "syscall-null")
        .unwrap();
    assert_eq!(null["unit"], "ns");
    assert_eq!(null["direction"], "lower");
    for result in null["results"].as_array().unwrap() {
        let summary = &result["summary"];
        assert!(summary["n"].as_u64().unwrap() >= 5, "{summary}");
        for field in ["mean", "median", "sd"] {
            assert!(
                summary[field].as_f64().unwrap() >= 0.0,
                "{field}: {summary}"
            );
        }
        assert!(summary["ci"]["ci_low"].as_f64().unwrap() <= summary["mean"].as_f64().unwrap());
    }
    let run = &doc["identifiers"][0]["runs"][0];
    assert_eq!(run["status"], "complete");
    assert!(
        run["info"]["snapshot"]["steal_percent"].is_number(),
        "{run}"
    );
    assert!(
        !run["info"]["snapshot"]["kernel_release"]
            .as_str()
            .unwrap()
            .is_empty()
    );
    let pipe = tests.iter().find(|t| t["benchmark"] == "pipe-lat").unwrap();
    assert!(
        pipe["test"]
            .as_str()
            .unwrap()
            .starts_with("pipe-lat[placement=")
    );

    let text = kbench(&db).args(["show", "t"]).output().unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    for needle in [
        "stock",
        "patched",
        "syscall-null",
        "mean",
        "median",
        "SD",
        "95% CI",
    ] {
        assert!(text.contains(needle), "show lacks {needle}:\n{text}");
    }
}

#[test]
fn run_again_adds_a_round_to_the_same_identifier() {
    let (_dir, db) = temp_db();
    for _ in 0..2 {
        run_short(&db, &["run", "syscall-null", "--as", "a", "--into", "r"]);
    }
    let doc = json_stdout(&db, &["show", "r", "--json"]);
    assert_eq!(doc["identifiers"].as_array().unwrap().len(), 1);
    assert_eq!(doc["identifiers"][0]["runs"].as_array().unwrap().len(), 2);
    assert_eq!(doc["tests"][0]["results"][0]["rounds"], 2);
}

#[test]
fn run_json_is_the_only_stdout() {
    let (_dir, db) = temp_db();
    let out = kbench(&db)
        .args(["run", "syscall-null", "--as", "j", "--into", "j", "--json"])
        .args(SHORT)
        .output()
        .unwrap();
    assert!(out.status.success());
    let doc = json(&out.stdout);
    assert_eq!(doc["schema"], "kbench.run/1");
    assert_eq!(doc["identifier"], "j");
    assert_eq!(doc["interrupted"], false);
    assert!(doc["samples_stored"].as_u64().unwrap() >= 5);
}

#[test]
fn wrapper_is_used_and_recorded() {
    let (_dir, db) = temp_db();
    run_short(
        &db,
        &[
            "run",
            "syscall-null",
            "--as",
            "w",
            "--into",
            "w",
            "--wrap",
            "taskset -c 0",
        ],
    );
    let doc = json_stdout(&db, &["show", "w", "--json"]);
    let run = &doc["identifiers"][0]["runs"][0];
    assert_eq!(run["info"]["wrapper"], "taskset -c 0");
}

/// `--wrap` is split as a shell would: the quoted script reaches `sh -c`
/// whole (split on whitespace, `sh` would get `'echo` as its script).
#[test]
fn a_quoted_wrapper_reaches_its_shell_whole() {
    let (dir, db) = temp_db();
    let mark = dir.path().join("wrapped");
    let wrapper = r#"sh -c 'echo wrapped > "$KBENCH_TEST_MARK"; exec "$0" "$@"'"#;
    let out = kbench(&db)
        .args(["run", "syscall-null", "--rounds", "1", "--max-time", "0.1"])
        .args(["--into", "q", "--wrap", wrapper])
        .env("KBENCH_TEST_MARK", &mark)
        .output()
        .unwrap();
    assert_success(&out, "a quoted --wrap: ");
    assert_eq!(std::fs::read_to_string(&mark).unwrap(), "wrapped\n");
    let out = kbench(&db)
        .args(["run", "syscall-null", "--wrap", "sh -c 'unclosed"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("unclosed quote"), "{err}");
}

#[test]
fn missing_wrapper_is_a_clear_error() {
    let (_dir, db) = temp_db();
    let out = kbench(&db)
        .args([
            "run",
            "syscall-null",
            "--wrap",
            "kbench-no-such-wrapper --flag",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("kbench-no-such-wrapper") && err.contains("not found"),
        "{err}"
    );
}

#[test]
fn unknown_benchmark_suggests_the_closest() {
    let (_dir, db) = temp_db();
    let out = kbench(&db).args(["run", "pipe-lta"]).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("did you mean 'pipe-lat'"), "{err}");
    assert!(
        !db.exists()
            || kbench(&db)
                .args(["show"])
                .output()
                .unwrap()
                .status
                .success()
    );
}

#[test]
fn bad_names_are_rejected_before_running() {
    let (_dir, db) = temp_db();
    let long = "x".repeat(200);
    for (flag, value, needle) in [
        ("--as", "", "empty"),
        ("--as", long.as_str(), "limit"),
        ("--into", " ", "empty"),
    ] {
        let out = kbench(&db)
            .args(["run", "syscall-null", flag, value])
            .output()
            .unwrap();
        assert!(!out.status.success(), "{flag} {value:?} was accepted");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle), "{flag} {value:?}: {err}");
    }
}

#[test]
fn corrupt_database_is_named_and_untouched() {
    let (_dir, db) = temp_db();
    let garbage = b"this is not a database, but it is someone's file\n".repeat(100);
    std::fs::write(&db, &garbage).unwrap();
    let out = kbench(&db)
        .args(["run", "syscall-null"])
        .args(SHORT)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(db.to_str().unwrap()), "{err}");
    assert_eq!(std::fs::read(&db).unwrap(), garbage, "the file was changed");
}

#[test]
fn unwritable_database_location_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let blocker = dir.path().join("a-file");
    std::fs::write(&blocker, "").unwrap();
    let db = blocker.join("results.db");
    let out = kbench(&db)
        .args(["run", "syscall-null"])
        .args(SHORT)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("results.db"), "{err}");
}

#[test]
fn sigint_leaves_no_partner_process_or_temp_file() {
    let (_dir, db) = temp_db();
    let temp = tempfile::tempdir().unwrap();
    let tests = [
        "pipe-lat",
        "messaging[groups=2]",
        "futex1[tasks=2,mode=process]",
        "fs-create",
    ];
    for (i, test) in tests.iter().enumerate() {
        let set = format!("p{i}");
        let args = ["run", test, "--as", "p", "--into", &set];
        common::interrupt_once_sampling(
            &db,
            temp.path(),
            &args,
            &set,
            &format!("sigint-partners-{i}"),
        );
    }
    let left: Vec<_> = std::fs::read_dir(temp.path())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert!(left.is_empty(), "temporary files left: {left:?}");
}

#[test]
fn list_shows_benchmarks_with_unit_and_direction() {
    let (_dir, db) = temp_db();
    let doc = json_stdout(&db, &["list", "--json"]);
    let benchmarks = doc["benchmarks"].as_array().unwrap();
    let quick = doc["suites"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "quick")
        .unwrap();
    for name in quick["tests"].as_array().unwrap() {
        let id = name.as_str().unwrap().split('[').next().unwrap();
        let entry = benchmarks
            .iter()
            .find(|b| b["id"] == id)
            .unwrap_or_else(|| panic!("{id} not listed"));
        assert!(!entry["unit"].as_str().unwrap().is_empty());
        assert!(["lower", "higher"].contains(&entry["direction"].as_str().unwrap()));
    }
}

#[test]
fn sysinfo_json_names_the_kernel() {
    let (_dir, db) = temp_db();
    let doc = json_stdout(&db, &["sysinfo", "--json"]);
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
    assert_eq!(doc["kernel_release"], release.trim());
    assert!(doc["cpus_online"].as_u64().unwrap() >= 1);
}

#[test]
fn a_benchmark_that_cannot_run_is_skipped_and_the_run_goes_on() {
    // Under `taskset -c 0` the measuring process has one CPU: a cross-CPU
    // ping-pong cannot run, the syscall test still does.
    let (_dir, db) = temp_db();
    let out = kbench(&db)
        .args([
            "run",
            "pipe-lat[placement=cross]",
            "syscall-null",
            "--as",
            "one-cpu",
            "--into",
            "s",
        ])
        .args(["--wrap", "taskset -c 0"])
        .args(SHORT)
        .output()
        .unwrap();
    assert_success(&out, "");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("SKIPPED") && err.contains("2 CPUs"), "{err}");
    let doc = json_stdout(&db, &["show", "s", "--json"]);
    let tests = doc["tests"].as_array().unwrap();
    let pipe = tests.iter().find(|t| t["benchmark"] == "pipe-lat").unwrap();
    assert_eq!(pipe["results"][0]["outcome"], "skipped");
    let null = tests
        .iter()
        .find(|t| t["benchmark"] == "syscall-null")
        .unwrap();
    assert!(null["results"][0]["summary"]["n"].as_u64().unwrap() >= 5);
}

#[test]
fn sigterm_to_kbench_alone_stops_its_agent_soon() {
    let (_dir, db) = temp_db();
    let exe = assert_cmd::cargo::cargo_bin("kbench");
    let mut child = std::process::Command::new(&exe)
        .args(["run", "syscall-null", "--as", "t", "--into", "t"])
        .args(["--max-time", "30", "--target-ci", "0.0001", "--rounds", "1"])
        .env("KBENCH_DB", &db)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    wait_for_samples(&db, "t", 3);
    let signalled = Instant::now();
    // SAFETY: signals the kbench process we started, not its agent.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    assert!(
        signalled.elapsed() < Duration::from_secs(10),
        "took {:?} to stop (the test's budget is 30 s)",
        signalled.elapsed()
    );
    let doc = json_stdout(&db, &["show", "t", "--json"]);
    assert_eq!(doc["identifiers"][0]["runs"][0]["status"], "interrupted");
}

/// A server URL with `user:password@` is refused by every command that
/// talks to the lab server, without the password in the message.
#[test]
fn a_password_in_a_server_url_is_refused_and_not_shown() {
    let (_dir, db) = temp_db();
    let url = "http://kbench:s3cret-pw@127.0.0.1:9";
    let commands: [&[&str]; 5] = [
        &["push", "t", "--to", url, "--token", "tok", "--tries", "1"],
        &[
            "run",
            "syscall-null",
            "--max-time",
            "0.2",
            "--as",
            "a",
            "--into",
            "t",
            "--upload",
            url,
            "--token",
            "tok",
        ],
        &["job", "list", "--server", url],
        &[
            "job",
            "submit",
            "syscall-null",
            "--server",
            url,
            "--token",
            "tok",
            "--as",
            "a",
            "--into",
            "t",
        ],
        &["worker", "--server", url, "--token", "tok"],
    ];
    for args in commands {
        let out = kbench(&db)
            .args(args)
            .timeout(Duration::from_secs(60))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?}: {stderr}");
        assert!(
            !stderr.contains("s3cret-pw"),
            "{args:?} shows the password: {stderr}"
        );
        assert!(
            stderr.contains("http://***@127.0.0.1:9") && stderr.contains("KBENCH_TOKEN"),
            "{args:?}: {stderr}"
        );
    }
}

/// The round times `run --help` states for --max-time are the ones a run
/// takes without it: adaptive rounds' (a test that cannot reach its CI
/// target uses the round's time budget), and --rounds'.
#[test]
fn the_round_time_that_help_states_is_the_one_a_run_uses() {
    let help = kbench("unused.db")
        .args(["run", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    let help = help.split_whitespace().collect::<Vec<_>>().join(" ");
    let max_time = &help[help.find("--max-time <SECONDS>").unwrap()..];
    let stated = |before: &str, after: &str| -> Duration {
        let text = &max_time[max_time.find(before).unwrap() + before.len()..];
        let number = &text[..text.find(after).unwrap()];
        Duration::from_secs_f64(number.parse().unwrap_or_else(|_| panic!("{number:?}")))
    };
    let adaptive = stated("[default: ", " in `kbench run`'s adaptive rounds");
    let fixed = stated("variants' blocks, ", " with --rounds");
    let (_dir, db) = temp_db();
    for (identifier, rounds, budget) in [
        ("adaptive", &[][..], adaptive),
        ("fixed", &["--rounds", "1"], fixed),
    ] {
        let out = kbench(&db)
            .args(["run", "--command", "true", "--as", identifier, "--json"])
            .args(["--target-ci", "0.0001", "--budget", "0.1"])
            .args(rounds)
            .output()
            .unwrap();
        assert_success(&out, identifier);
        let detail = json(&out.stdout)["outcomes"][0]["detail"].clone();
        let used = format!("time budget of {budget:?} used");
        assert_eq!(detail, used.as_str(), "{identifier}");
    }
}
