//! End-to-end tests of external benchmark profiles: the redis, fio and
//! stress-ng profiles briefly against the real tools (CI installs them:
//! .ci/run), compared beside a built-in; and what goes wrong, with user
//! profiles whose tools are shell one-liners.

mod common;

use common::{
    assert_no_database, assert_success, ctrl_c_group, have_programs, json, json_of, kbench, temp_db,
};
use serde_json::Value;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::time::{Duration, Instant};

/// Two runs per test, one round: behaviour, not precision.
const BRIEF: [&str; 6] = ["--max-time", "1", "--min-samples", "2", "--rounds", "1"];

/// Whether redis, fio and stress-ng are installed (see [`have_programs`]).
fn have_real_tools() -> bool {
    have_programs(
        &["redis-server", "redis-benchmark", "fio", "stress-ng"],
        "kbench install redis fio stress-ng, as root",
    )
}

/// Scratch directories left in `dir`.
fn scratch_left(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("kbench-scratch-"))
        .collect()
}

fn outcomes(doc: &Value) -> Vec<(String, String, String)> {
    doc["outcomes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            let test = &o["test"];
            let options: Vec<String> = test["options"]
                .as_object()
                .unwrap()
                .iter()
                .map(|(k, v)| format!("{k}={}", v.as_str().unwrap()))
                .collect();
            let name = if options.is_empty() {
                test["benchmark"].as_str().unwrap().to_string()
            } else {
                format!(
                    "{}[{}]",
                    test["benchmark"].as_str().unwrap(),
                    options.join(",")
                )
            };
            (
                name,
                o["kind"].as_str().unwrap().to_string(),
                o["detail"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn test_names(doc: &Value) -> Vec<String> {
    doc["show"]["tests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["test"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn redis_fio_and_stress_ng_run_against_the_real_tools() {
    if !have_real_tools() {
        return;
    }
    let (_dir, db) = temp_db();
    let work = tempfile::tempdir().unwrap();
    let out = kbench(&db)
        .current_dir(work.path())
        .args([
            "run",
            // 100000 requests a run, not the default million: brief.
            "redis[requests=100000]",
            "fio-randread",
            "stress-ng",
            "--as",
            "X",
            "--into",
            "tools",
            "--json",
        ])
        .args(BRIEF)
        .output()
        .unwrap();
    assert_success(&out, "run failed: ");
    let doc = json(&out.stdout);
    let ended = outcomes(&doc);
    // 5 redis commands, 2 engines x buffered/direct, 18 stressors.
    assert_eq!(ended.len(), 5 + 4 + 18, "{ended:#?}");
    for (test, kind, detail) in &ended {
        assert!(
            kind == "target_met" || kind == "budget_hit",
            "{test} {kind}: {detail}"
        );
    }
    let names = test_names(&doc);
    for expected in [
        "redis[clients=50,pipeline=32,requests=100000,test=get]",
        "redis[clients=50,pipeline=32,requests=100000,test=sadd]:latency",
        "fio-randread[bs=4k,direct=1,engine=libaio,iodepth=16,runtime=2,size=128m]",
        "fio-randread[bs=4k,direct=0,engine=io_uring,iodepth=16,runtime=2,size=128m]:bw",
        "fio-randread[bs=4k,direct=1,engine=libaio,iodepth=16,runtime=2,size=128m]:lat",
    ] {
        assert!(
            names.iter().any(|n| n == expected),
            "{expected} not in {names:?}"
        );
    }
    assert!(
        names
            .iter()
            .any(|n| n.starts_with("stress-ng[") && n.contains("stressor=vm-splice]"))
    );
    let unit = |name: &str| {
        doc["show"]["tests"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["test"] == name)
            .map(|t| (t["unit"].clone(), t["direction"].clone()))
            .unwrap()
    };
    assert_eq!(
        unit("redis[clients=50,pipeline=32,requests=100000,test=get]").0,
        "requests/s"
    );
    assert_eq!(
        unit("fio-randread[bs=4k,direct=1,engine=libaio,iodepth=16,runtime=2,size=128m]:lat"),
        (Value::from("us"), Value::from("lower"))
    );
    assert!(doc["samples_stored"].as_u64().unwrap() >= 2 * 27);
    assert_eq!(scratch_left(work.path()), Vec::<String>::new());
}

#[test]
fn compare_shows_profiles_beside_a_built_in() {
    if !have_real_tools() {
        return;
    }
    let (_dir, db) = temp_db();
    let work = tempfile::tempdir().unwrap();
    let tests = [
        "redis[test=get,requests=100000]",
        "fio-randread[direct=1,engine=libaio]",
        "stress-ng[stressor=context]",
        "syscall-null",
    ];
    for identifier in ["A", "B"] {
        let out = kbench(&db)
            .current_dir(work.path())
            .arg("run")
            .args(tests)
            .args(["--as", identifier, "--into", "mixed"])
            .args(BRIEF)
            .output()
            .unwrap();
        assert_success(&out, "run failed: ");
    }
    let report = json_of(&db, &["compare", "mixed", "--format", "json"]);
    let metrics: Vec<String> = report["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["test"].as_str().unwrap().to_string())
        .collect();
    for prefix in ["redis[", "fio-randread[", "stress-ng[", "syscall-null"] {
        assert!(
            metrics.iter().any(|m| m.starts_with(prefix)),
            "{prefix} not compared: {metrics:?}"
        );
    }
    let text = kbench(&db)
        .args(["compare", "mixed", "--color", "never"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    let redis = printed_version("redis-server --version", "v=");
    for shown in [
        &format!("\nRedis {redis} - Test: GET - Parallel Connections: 50 - Pipeline: 32\n"),
        "redis - clients: 50 - pipeline: 32 - requests: 100000 - test: get",
        "fio-randread - bs: 4k - direct: 1 - engine: libaio - iodepth: 16",
        "stress-ng - ",
        "syscall-null",
    ] {
        assert!(text.contains(shown), "{shown} not in:\n{text}");
    }
    // An external tool's round records its own resource use (the agent's
    // reaped children) and the system monitors, not the agent's counters.
    let counters = json_of(&db, &["show", "mixed", "--counters", "A", "--json"]);
    let stress = counters["tests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["test"].as_str().unwrap().starts_with("stress-ng["))
        .unwrap_or_else(|| panic!("no counters of stress-ng: {counters}"));
    let metrics: Vec<&str> = stress["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["metric"].as_str().unwrap())
        .collect();
    assert!(
        metrics.contains(&"rusage.user_ms_per_op") || metrics.contains(&"rusage.sys_ms_per_op"),
        "{metrics:?}"
    );
    assert!(metrics.contains(&"rusage.max_rss_kib"), "{metrics:?}");
    assert!(
        metrics.iter().any(|m| m.starts_with("vmstat.")),
        "{metrics:?}"
    );
    assert!(
        !metrics.iter().any(|m| m.starts_with("perf.")),
        "{metrics:?}"
    );
}

/// A user profile directory holding `toy.toml`.
fn user_profile(text: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("toy.toml"), text).unwrap();
    dir
}

const TOY_METRIC: &str = "[[metrics]]\nname = \"rate\"\nunit = \"ops/s\"\ndirection = \"higher\"\nregex = '^rate: ([0-9.]+)'\n";

#[test]
fn a_broken_profile_file_is_reported_with_file_line_and_key() {
    let (_dir, db) = temp_db();
    let profiles = user_profile(&format!(
        "name = \"toy\"\nrequires = {{ sh = \"dash\" }}\ncommand = \"echo rate: 1\"\n{TOY_METRIC}[[tests]]\nid = \"toy\"\ntimeuot = 5\n"
    ));
    for args in [vec!["list"], vec!["run", "toy", "--as", "X"]] {
        let out = kbench(&db)
            .arg("--profiles")
            .arg(profiles.path())
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("toy.toml") && err.contains("line 11") && err.contains("timeuot"),
            "{err}"
        );
    }
    // KBENCH_PROFILES is the same as --profiles.
    let out = kbench(&db)
        .env("KBENCH_PROFILES", profiles.path())
        .arg("list")
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("timeuot"));
}

#[test]
fn a_missing_tool_is_named_with_its_package_before_anything_runs() {
    let (_dir, db) = temp_db();
    let profiles = user_profile(&format!(
        "name = \"toy\"\nrequires = {{ kbench-no-such-tool = \"kbench-toy-tools\" }}\n\
         command = \"kbench-no-such-tool\"\n{TOY_METRIC}[[tests]]\nid = \"toy\"\n"
    ));
    let out = kbench(&db)
        .arg("--profiles")
        .arg(profiles.path())
        .args([
            "run",
            "toy",
            "syscall-null",
            "--as",
            "X",
            "--into",
            "absent",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("kbench-no-such-tool (package kbench-toy-tools)")
            && err.contains("kbench install toy")
            && err.contains("nothing was run"),
        "{err}"
    );
    assert_no_database(&db);
}

#[test]
fn a_hung_tool_is_killed_at_its_timeout_and_the_run_goes_on() {
    let (_dir, db) = temp_db();
    let work = tempfile::tempdir().unwrap();
    let profiles = user_profile(&format!(
        "name = \"toy\"\nrequires = {{ sleep = \"coreutils\" }}\ntimeout = 0.5\ncommand = \"sleep 30\"\n\
         {TOY_METRIC}[[tests]]\nid = \"toy-hang\"\n"
    ));
    let started = Instant::now();
    let out = kbench(&db)
        .current_dir(work.path())
        .arg("--profiles")
        .arg(profiles.path())
        .args([
            "run",
            "toy-hang",
            "syscall-null",
            "--as",
            "X",
            "--into",
            "hang",
            "--json",
            "--keep-going",
        ])
        .args(["--max-time", "0.3", "--rounds", "1"])
        .output()
        .unwrap();
    // The killed tool FAILED its test: the run went on and says so.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("1 of 2 tests FAILED: toy-hang"), "{stderr}");
    assert!(started.elapsed() < Duration::from_secs(30));
    let ended = outcomes(&json(&out.stdout));
    assert_eq!(ended[0].0, "toy-hang");
    assert_eq!(ended[0].1, "failed");
    assert!(
        ended[0]
            .2
            .contains("sleep 30` was still running after the 500ms timeout"),
        "{}",
        ended[0].2
    );
    assert_eq!(ended[1].0, "syscall-null");
    assert!(ended[1].1 == "target_met" || ended[1].1 == "budget_hit");
    assert_eq!(scratch_left(work.path()), Vec::<String>::new());
}

#[test]
fn sigint_stops_the_service_and_the_tool_and_removes_their_files() {
    let (_dir, db) = temp_db();
    let work = tempfile::tempdir().unwrap();
    let marks = tempfile::tempdir().unwrap();
    let m = marks.path().display();
    let profiles = user_profile(&format!(
        r#"name = "toy"
requires = {{ sleep = "coreutils" }}
timeout = 600
command = "echo started > {m}/started; sleep 300"
{TOY_METRIC}
[service]
command = "sh -c 'echo $$ > {m}/service.pid; exec sleep 300'"
ready = "test -s {m}/service.pid"
[[tests]]
id = "toy-sigint"
"#
    ));
    let marker = "KBENCH_TEST_MARK=profile-sigint";
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("kbench"))
        .current_dir(work.path())
        .args([
            "run",
            "toy-sigint",
            "--as",
            "X",
            "--into",
            "sigint",
            "--rounds",
            "1",
        ])
        .arg("--profiles")
        .arg(profiles.path())
        .env("KBENCH_DB", &db)
        .env("KBENCH_TEST_MARK", "profile-sigint")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .process_group(0)
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while !marks.path().join("started").exists() {
        assert!(Instant::now() < deadline, "the tool never started");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        !scratch_left(work.path()).is_empty(),
        "the scratch directory is in the work directory"
    );
    ctrl_c_group(child, marker, Duration::from_secs(10));
    assert_eq!(scratch_left(work.path()), Vec::<String>::new());
}

#[test]
fn list_shows_profiles_and_install_names_the_packages() {
    let (_dir, db) = temp_db();
    let doc = json_of(&db, &["list", "--json"]);
    let profiles = doc["profiles"].as_array().unwrap();
    let names: Vec<&str> = profiles
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    for expected in [
        "fio",
        "redis",
        "nginx",
        "stress-ng",
        "sysbench",
        "hackbench",
        "perf-bench",
        "iperf3",
        "sqlite",
        "pgbench",
        "build-linux",
    ] {
        assert!(names.contains(&expected), "{expected} not in {names:?}");
    }
    let fio = profiles.iter().find(|p| p["name"] == "fio").unwrap();
    let randread = fio["tests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == "fio-randread")
        .unwrap();
    assert_eq!(randread["unit"], "IOPS");
    let first = &randread["tests"][0];
    assert_eq!(
        first["test"],
        "fio-randread[bs=4k,direct=0,engine=libaio,iodepth=16,runtime=2,size=128m]"
    );
    assert_eq!(
        first["description"],
        "Type: Random Read - Engine: libaio - Buffered - Block Size: 4k - Size: 128m - IO \
         Depth: 16 - Runtime: 2 s"
    );
    let text = kbench(&db).arg("list").output().unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("Profiles") && text.contains("fio-randread[bs=4k"),
        "{text}"
    );

    let out = kbench(&db)
        .args(["install", "redis", "fio", "stress-ng", "--print"])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "apt-get install -y --no-install-recommends fio redis-server redis-tools stress-ng"
    );
    let out = kbench(&db).args(["install", "redsi"]).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("did you mean 'redis'"));
}

#[test]
fn install_without_root_says_so() {
    // As root, run it as nobody; as a user, as is.
    let exe = assert_cmd::cargo::cargo_bin("kbench");
    let mut command = std::process::Command::new(&exe);
    command
        .args(["install", "fio"])
        .env_remove("KBENCH_PROFILES");
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        command.uid(65534).gid(65534);
    }
    let Ok(out) = command.output() else {
        // The binary is not reachable by nobody (a private target dir).
        return;
    };
    if out.status.code() == Some(126) || out.status.code() == Some(127) {
        return;
    }
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("needs root") && err.contains("apt-get install -y"),
        "{err}"
    );
}

/// `kbench install` with stderr not a terminal: its steps as plain lines,
/// no bar or escape code. apt-get is a script on PATH that logs its
/// arguments, and fio one that is "installed"; as root only (install
/// refuses otherwise, tested above).
#[test]
fn install_steps_are_plain_lines_off_a_terminal() {
    use std::os::unix::fs::PermissionsExt;
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("SKIPPED: kbench install needs root");
        return;
    }
    let (dir, db) = temp_db();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let log = dir.path().join("apt.log");
    for (tool, script) in [
        ("apt-get", format!("echo \"$@\" >> {}", log.display())),
        ("fio", "exit 0".to_string()),
    ] {
        let path = bin.join(tool);
        std::fs::write(&path, format!("#!/bin/sh\n{script}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let out = kbench(&db)
        .args(["install", "fio", "--update"])
        .env_remove("KBENCH_PROFILES")
        .env("PATH", &bin)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(
        lines[..3],
        [
            "updating apt's package lists",
            "installing fio",
            "checking the profiles' programs"
        ],
        "{stderr:?}"
    );
    assert!(!stderr.contains('\u{1b}'), "an escape code: {stderr:?}");
    assert_eq!(
        std::fs::read_to_string(&log).unwrap(),
        "update -q\ninstall -y --no-install-recommends fio\n"
    );
}

/// Runs `tests` into result set `set` (identifier X) in a fresh work
/// directory with `--profiles dir` when given, checks success, and returns
/// `kbench show SET --json`.
fn run_and_show(db: &Path, set: &str, tests: &[&str], profiles: Option<&Path>) -> Value {
    let work = tempfile::tempdir().unwrap();
    let mut command = kbench(db);
    if let Some(dir) = profiles {
        command.arg("--profiles").arg(dir);
    }
    let out = command
        .current_dir(work.path())
        .arg("run")
        .args(tests)
        .args(["--as", "X", "--into", set])
        .args(BRIEF)
        .output()
        .unwrap();
    assert_success(&out, "run failed: ");
    let mut command = kbench(db);
    if let Some(dir) = profiles {
        command.arg("--profiles").arg(dir);
    }
    let out = command.args(["show", set, "--json"]).output().unwrap();
    assert_success(&out, "show failed: ");
    json(&out.stdout)
}

/// The show document's entry of the test whose name starts with `prefix`.
fn test_entry<'a>(doc: &'a Value, prefix: &str) -> &'a Value {
    doc["tests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["test"].as_str().unwrap().starts_with(prefix))
        .unwrap_or_else(|| panic!("no test {prefix} in {doc:#}"))
}

/// The mean of the first identifier's samples of the test named `name`.
fn mean_of(doc: &Value, name: &str) -> f64 {
    let entry = test_entry(doc, name);
    entry["results"][0]["summary"]["mean"]
        .as_f64()
        .unwrap_or_else(|| panic!("no mean of {name}: {entry:#}"))
}

/// Runs `tests` into `set` as [`run_and_show`] does, and returns its show
/// document with the mean of the test named by each of `prefixes`.
fn run_and_mean(db: &Path, set: &str, tests: &[&str], prefixes: &[&str]) -> (Value, Vec<f64>) {
    let doc = run_and_show(db, set, tests, None);
    let means = prefixes.iter().map(|p| mean_of(&doc, p)).collect();
    (doc, means)
}

/// The version `command` prints after `marker` (stdout, then stderr): what
/// a test expects, read here independently of kbench.
fn printed_version(command: &str, marker: &str) -> String {
    let out = std::process::Command::new("sh")
        .args(["-c", command])
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let (_, after) = text
        .split_once(marker)
        .unwrap_or_else(|| panic!("{command}: {text}"));
    after
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect()
}

#[test]
fn tool_versions_are_recorded_and_reports_title_tests_as_pts_does() {
    if !have_real_tools() {
        return;
    }
    let (_dir, db) = temp_db();
    let doc = run_and_show(
        &db,
        "titled",
        &[
            "redis[test=get,requests=100000]",
            "stress-ng[stressor=pipe,instances=1]",
        ],
        None,
    );
    let redis = printed_version("redis-server --version", "v=");
    let stress = printed_version("stress-ng --version", "version ");
    let tools = &doc["identifiers"][0]["runs"][0]["info"]["snapshot"]["tools"];
    let recorded = &tools["redis[clients=50,pipeline=32,requests=100000,test=get]"];
    assert_eq!(recorded["tool"], "Redis", "{tools:#}");
    assert_eq!(recorded["version"], Value::from(redis.clone()), "{tools:#}");
    assert_eq!(
        test_entry(&doc, "redis[")["title"],
        Value::from(format!(
            "Redis {redis} - Test: GET - Parallel Connections: 50 - Pipeline: 32"
        ))
    );
    assert_eq!(
        test_entry(&doc, "stress-ng[")["title"],
        Value::from(format!("Stress-NG {stress} - Test: pipe - Instances: 1"))
    );
    assert_eq!(
        test_entry(&doc, "redis[")["test"]
            .as_str()
            .unwrap()
            .find(&redis),
        None
    );
    // The text report carries the title too (compare's: see
    // compare_shows_profiles_beside_a_built_in).
    let out = kbench(&db).args(["show", "titled"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!("\n  Redis {redis} - Test: GET")),
        "{text}"
    );
}

#[test]
fn a_version_command_that_fails_leaves_one_note_and_the_run_goes_on() {
    let (_dir, db) = temp_db();
    let profiles = user_profile(&format!(
        "name = \"toy\"\ntool = \"Toy\"\n\
         version = {{ command = \"echo toy without a version\", regex = 'toy v([0-9.]+)' }}\n\
         requires = {{ sh = \"dash\" }}\ncommand = \"echo rate: {{n}}\"\ndescription = \"N: {{n}}\"\n\
         [options.n]\nvalues = [\"1\", \"2\"]\n{TOY_METRIC}[[tests]]\nid = \"toy\"\n"
    ));
    let doc = run_and_show(&db, "unknown", &["toy"], Some(profiles.path()));
    let run = &doc["identifiers"][0]["runs"][0]["info"];
    let notes: Vec<&str> = run["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    let unknown: Vec<&&str> = notes
        .iter()
        .filter(|n| n.contains("version unknown"))
        .collect();
    assert_eq!(unknown.len(), 1, "one note for two tests: {notes:?}");
    assert!(
        unknown[0].contains("Toy (toy)") && unknown[0].contains("toy without a version"),
        "{notes:?}"
    );
    assert_eq!(
        test_entry(&doc, "toy[n=2]")["title"],
        "Toy (version unknown) - N: 2"
    );
    assert!(mean_of(&doc, "toy[n=2]") == 2.0, "{doc:#}");
}

#[test]
fn redis_pipelining_reaches_the_command() {
    if !have_real_tools() {
        return;
    }
    let (_dir, db) = temp_db();
    let (_, means) = run_and_mean(
        &db,
        "pipelined",
        &[
            "redis[test=get,requests=100000,pipeline=1]",
            "redis[test=get,requests=100000,pipeline=16]",
        ],
        &[
            "redis[clients=50,pipeline=1,",
            "redis[clients=50,pipeline=16,",
        ],
    );
    let [one, sixteen] = means[..] else {
        unreachable!()
    };
    // One round trip per 16 requests instead of one per request.
    assert!(
        sixteen > 2.5 * one,
        "-P 16 gave {sixteen:.0} requests/s, -P 1 {one:.0}"
    );
}

#[test]
fn iperf3_udp_sends_at_the_bitrate_option() {
    if !have_programs(&["iperf3"], "kbench install iperf3, as root") {
        return;
    }
    let (_dir, db) = temp_db();
    let doc = run_and_show(
        &db,
        "udp",
        &["iperf3-udp[bitrate=1]", "iperf3-udp[bitrate=0]"],
        None,
    );
    // Gbit/s received: 1 Mbit/s is iperf3's own default; 0 is unlimited.
    let paced = mean_of(&doc, "iperf3-udp[bitrate=1,");
    let unlimited = mean_of(&doc, "iperf3-udp[bitrate=0,");
    assert!(
        (0.0009..0.0011).contains(&paced),
        "bitrate=1: {paced} Gbit/s"
    );
    assert!(unlimited > 20.0 * paced, "bitrate=0: {unlimited} Gbit/s");
    assert_eq!(
        test_entry(&doc, "iperf3-udp[bitrate=0,")["title"]
            .as_str()
            .unwrap()
            .split_once(" - ")
            .unwrap()
            .1,
        "Test: UDP - Parallel: 1 - Mbit/s per Stream: Unlimited"
    );
}

#[test]
fn hackbench_loops_and_fio_runtime_reach_the_command() {
    if !have_programs(
        &["hackbench", "fio"],
        "kbench install hackbench fio, as root",
    ) {
        return;
    }
    let (_dir, db) = temp_db();
    let (doc, means) = run_and_mean(
        &db,
        "loops",
        &[
            "hackbench[groups=1,ipc=pipe,mode=thread,loops=100]",
            "hackbench[groups=1,ipc=pipe,mode=thread,loops=3000]",
            "fio-randread[engine=libaio,direct=0,size=16m,iodepth=4,runtime=3]",
        ],
        &[
            "hackbench[groups=1,ipc=pipe,loops=100,",
            "hackbench[groups=1,ipc=pipe,loops=3000,",
        ],
    );
    let [short, long] = means[..] else {
        unreachable!()
    };
    assert!(
        long > 5.0 * short,
        "loops=3000: {long} s, loops=100: {short} s"
    );
    // fio runs for `runtime` seconds: its samples are that far apart.
    let fio = test_entry(&doc, "fio-randread[");
    assert_eq!(
        fio["test"],
        "fio-randread[bs=4k,direct=0,engine=libaio,iodepth=4,runtime=3,size=16m]"
    );
    assert!(
        fio["title"]
            .as_str()
            .unwrap()
            .ends_with("Size: 16m - IO Depth: 4 - Runtime: 3 s"),
        "{fio:#}"
    );
    let export = json_of(&db, &["export", "loops"]);
    let samples = &export["identifiers"][0]["runs"][0]["samples"]["fio-randread[bs=4k,direct=0,engine=libaio,iodepth=4,runtime=3,size=16m]"];
    let at: Vec<i64> = samples
        .as_array()
        .unwrap_or_else(|| panic!("no fio samples: {export:#}"))
        .iter()
        .map(|s| s["at_ms"].as_i64().unwrap())
        .collect();
    assert_eq!(at.len(), 2, "{export:#}");
    assert!(
        at[1] - at[0] >= 2900,
        "fio samples {} ms apart",
        at[1] - at[0]
    );
}

#[test]
fn sqlite_copies_run_side_by_side() {
    if !have_programs(&["sqlite3"], "kbench install sqlite, as root") {
        return;
    }
    let (_dir, db) = temp_db();
    let (doc, means) = run_and_mean(
        &db,
        "copies",
        &[
            "sqlite-insert[rows=300,journal=wal,copies=1]",
            "sqlite-insert[rows=300,journal=wal,copies=8]",
        ],
        &["sqlite-insert[copies=1,", "sqlite-insert[copies=8,"],
    );
    // Eight sqlite3 on two CPUs take longer than one (2.7 times once here,
    // 1.45 times on another run: the inserts wait on the disk, so the
    // ratio is the machine's; only its direction is asserted).
    let [one, eight] = means[..] else {
        unreachable!()
    };
    assert!(eight > one, "copies=8: {eight} s, copies=1: {one} s");
    let title = test_entry(&doc, "sqlite-insert[copies=8,")["title"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        title.starts_with("SQLite ") && title.ends_with("Journal: wal - Copies: 8"),
        "{title}"
    );
}

#[test]
fn pgbench_runs_800_and_1000_clients() {
    if !have_programs(&["pgbench"], "kbench install pgbench, as root") {
        return;
    }
    let (_dir, db) = temp_db();
    let work = tempfile::tempdir().unwrap();
    // 5-second runs: pgbench counts the seconds 1000 connections take to
    // open in its -T (read-write at scale 1 would have 1000 clients queue
    // on one branch row).
    let out = kbench(&db)
        .current_dir(work.path())
        .args([
            "run",
            "pgbench[clients=800,scale=1,duration=5,mode=read-only]",
            "pgbench[clients=1000,scale=1,duration=5,mode=read-only]",
            "--as",
            "X",
            "--into",
            "many",
            "--json",
            "--max-time",
            "1",
            "--min-samples",
            "2",
            "--rounds",
            "1",
        ])
        .output()
        .unwrap();
    assert_success(&out, "run failed: ");
    let doc = json(&out.stdout);
    for (test, kind, detail) in outcomes(&doc) {
        assert!(
            kind == "target_met" || kind == "budget_hit",
            "{test} {kind}: {detail}"
        );
    }
    let show = json_of(&db, &["show", "many", "--json"]);
    assert!(mean_of(&show, "pgbench[clients=800,") > 0.0);
    assert!(mean_of(&show, "pgbench[clients=1000,") > 0.0);
}

#[test]
fn option_values_out_of_range_are_refused_before_anything_runs() {
    let (_dir, db) = temp_db();
    for (test, words) in [
        (
            "pgbench[clients=0]",
            ["clients=0", "out of range", "from 1 to 5000"],
        ),
        (
            "iperf3-udp[bitrate=-1]",
            ["bitrate=-1", "out of range", "from 0 to 1000000"],
        ),
        (
            "redis[pipeline=many]",
            ["pipeline=many", "not a number", "from 1 to 100000"],
        ),
    ] {
        let out = kbench(&db)
            .args([
                "run",
                test,
                "syscall-null",
                "--as",
                "X",
                "--into",
                "refused",
            ])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{test}");
        let err = String::from_utf8_lossy(&out.stderr);
        for word in words {
            assert!(err.contains(word), "{test}: '{word}' not in {err}");
        }
    }
    assert_no_database(&db);
}
