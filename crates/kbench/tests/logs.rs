//! Logs and verbosity as users meet them: serve's access log (token name,
//! never the secret; a 5xx with its cause), `-q` silencing progress and
//! notes (stderr empty when `run`, `import` or `push` succeeds; `vm run`'s
//! is in tests/vm.rs), `-v` showing the commands a profile runs, and
//! `KBENCH_LOG`.

mod common;

use common::{Server, assert_success, create_token, have_programs, json, kbench, temp_db};
use std::path::Path;
use std::process::Output;
use std::time::{Duration, Instant};

const TOY: &str = "name = \"toy\"\nrequires = { sh = \"dash\" }\ncommand = \"echo rate: 1\"\n\
[[metrics]]\nname = \"rate\"\nunit = \"ops/s\"\ndirection = \"higher\"\nregex = '^rate: ([0-9.]+)'\n\
[[tests]]\nid = \"toy\"\n";

/// `kbench [flags] run toy` (two short rounds) with a user profile
/// directory holding the toy profile, under `env`.
fn run_toy(flags: &[&str], env: &[(&str, &str)]) -> Output {
    let (_dir, db) = temp_db();
    let profiles = tempfile::tempdir().unwrap();
    std::fs::write(profiles.path().join("toy.toml"), TOY).unwrap();
    let mut command = kbench(&db);
    command.env_remove("KBENCH_LOG");
    for (key, value) in env {
        command.env(key, value);
    }
    let out = command
        .args(flags)
        .arg("--profiles")
        .arg(profiles.path())
        .args(["run", "toy", "--as", "a", "--into", "s", "--json"])
        .args(["--max-time", "0.3", "--rounds", "2"])
        .output()
        .unwrap();
    assert_success(&out, "kbench run toy: ");
    // stdout stays the command's output whatever is logged.
    assert_eq!(json(&out.stdout)["schema"], "kbench.run/1");
    out
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The server's log once it holds a line with `needle` (10 s at most).
fn log_with(server: &Server, needle: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let log = server.log();
        if log.contains(needle) || Instant::now() > deadline {
            return log;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn serve_logs_each_request_with_its_token_name_never_the_secret() {
    let (_dir, db) = temp_db();
    let secret = create_token(&db, "ci-bot");
    let server = Server::start(&db, "127.0.0.1:0");
    let bearer = format!("Bearer {secret}");
    let answer = kbench_fleet::client::request(
        &server.addr,
        "GET",
        "/api/v1/token?hidden=query-value",
        &[("Authorization", &bearer)],
        b"",
    )
    .unwrap();
    assert_eq!(answer.status, 200, "{answer:?}");
    let log = log_with(&server, "route=\"/api/v1/token\"");
    let line = log
        .lines()
        .find(|line| line.contains("route=\"/api/v1/token\""))
        .unwrap_or_else(|| panic!("no access-log line for /api/v1/token in:\n{log}"));
    for field in [
        "INFO",
        "method=GET",
        "status=200",
        "ms=",
        "token=\"ci-bot\"",
    ] {
        assert!(line.contains(field), "{field} missing in {line}");
    }
    assert!(!log.contains(&secret), "the secret was logged:\n{log}");
    assert!(!log.contains("query-value"), "the query was logged:\n{log}");
    assert!(!log.contains("Bearer"), "a header was logged:\n{log}");
}

#[test]
fn serve_quiet_has_no_access_log() {
    let (_dir, db) = temp_db();
    let server = Server::start_with(&db, "127.0.0.1:0", &["-q"]);
    server.get("/api/v1/result-sets");
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(server.log(), "");
}

#[test]
fn a_server_error_is_logged_with_its_cause() {
    if !have_programs(&["sqlite3"], "apt-get install sqlite3") {
        return;
    }
    let (_dir, db) = temp_db();
    let server = Server::start(&db, "127.0.0.1:0");
    server.get("/api/v1/result-sets");
    // The store now fails every listing: an honest 500.
    let broke = std::process::Command::new("sqlite3")
        .arg(&db)
        .arg("ALTER TABLE result_sets RENAME TO result_sets_gone")
        .output()
        .unwrap();
    assert_success(&broke, "sqlite3: ");
    let answer =
        kbench_fleet::client::request(&server.addr, "GET", "/api/v1/result-sets", &[], b"")
            .unwrap();
    assert_eq!(answer.status, 500, "{answer:?}");
    let log = log_with(&server, "status=500");
    let line = log
        .lines()
        .find(|line| line.contains("status=500") && line.contains("route="))
        .unwrap_or_else(|| panic!("no access-log line for the 500 in:\n{log}"));
    assert!(line.contains("ERROR"), "{line}");
    assert!(line.contains("route=\"/api/v1/result-sets\""), "{line}");
    assert!(
        line.contains("cause=") && line.contains("no such table: result_sets"),
        "{line}"
    );
}

#[test]
fn quiet_runs_print_no_progress_or_notes() {
    let loud = stderr(&run_toy(&[], &[]));
    assert!(loud.contains("round 1 of 2"), "{loud}");
    assert!(loud.contains("[2/2] toy: done"), "{loud}");
    let quiet = stderr(&run_toy(&["-q"], &[]));
    for line in quiet.lines() {
        assert!(
            !line.starts_with("round ") && !line.starts_with('[') && !line.starts_with("note:"),
            "progress or a note with -q: {line}\n{quiet}"
        );
    }
}

#[test]
fn verbose_shows_the_commands_a_profile_runs() {
    let command = "sh -c \"echo rate: 1\"";
    let verbose = stderr(&run_toy(&["-v"], &[]));
    let line = verbose
        .lines()
        .find(|line| line.contains(command))
        .unwrap_or_else(|| panic!("no {command} with -v in:\n{verbose}"));
    assert!(line.contains("INFO"), "{line}");
    assert!(!verbose.contains("DEBUG"), "{verbose}");
    let plain = stderr(&run_toy(&[], &[]));
    assert!(!plain.contains(command), "{plain}");
}

#[test]
fn kbench_log_debug_shows_debug_lines_and_overrides_quiet() {
    let out = stderr(&run_toy(&["-q"], &[("KBENCH_LOG", "debug")]));
    assert!(
        out.lines()
            .any(|line| line.contains("DEBUG") && line.contains("starting the measuring process")),
        "{out}"
    );
}

/// Runs `command`, asserting success; its stderr.
fn stderr_of(command: &mut assert_cmd::Command) -> String {
    let out = command.output().unwrap();
    assert_success(&out, "kbench: ");
    stderr(&out)
}

/// `kbench run syscall-null` into `set`, briefly, with `flags`; its stderr.
fn run_syscall_null(db: &Path, set: &str, flags: &[&str]) -> String {
    stderr_of(
        kbench(db)
            .args(["run", "syscall-null", "--as", "a", "--into", set])
            .args(["--max-time", "0.05", "--rounds", "1"])
            .args(flags),
    )
}

#[test]
fn quiet_run_and_import_leave_stderr_empty() {
    let (dir, db) = temp_db();
    let loud = run_syscall_null(&db, "s", &[]);
    assert!(loud.contains("Stored "), "{loud}");
    assert_eq!(run_syscall_null(&db, "q", &["-q"]), "");

    let exported = kbench(&db).args(["export", "s"]).output().unwrap();
    assert_success(&exported, "kbench export: ");
    let file = dir.path().join("s.json");
    std::fs::write(&file, &exported.stdout).unwrap();
    // Into databases of their own: a run is stored once.
    let import = |flags: &[&str], into: &str| {
        stderr_of(
            kbench(dir.path().join(format!("{into}.db")))
                .args(flags)
                .arg("import")
                .arg(&file),
        )
    };
    assert!(
        import(&[], "loud").contains("sample"),
        "a loud import says what it stored"
    );
    assert_eq!(import(&["-q"], "quiet"), "");
}

#[test]
fn quiet_push_and_upload_leave_stderr_empty() {
    let (dir, db) = temp_db();
    let server_db = dir.path().join("server.db");
    let token = create_token(&server_db, "pusher");
    let server = Server::start(&server_db, "127.0.0.1:0");
    let url = server.url();
    let uploaded = |flags: &[&str], set: &str| {
        let upload = ["--server", url.as_str(), "--token", token.as_str()];
        run_syscall_null(&db, set, &[flags, &upload[..]].concat())
    };
    let loud = uploaded(&[], "up");
    assert!(
        loud.contains("Uploading to ") && loud.contains("Uploaded "),
        "{loud}"
    );
    assert_eq!(uploaded(&["-q"], "up-quietly"), "");

    // Runs the server has not stored yet (a run is stored once).
    for set in ["pushed", "pushed-quietly"] {
        run_syscall_null(&db, set, &["-q"]);
    }
    let push = |flags: &[&str], set: &str| {
        stderr_of(
            kbench(&db)
                .args(flags)
                .args(["push", set, "--to", &url, "--token", &token]),
        )
    };
    assert!(
        push(&[], "pushed").contains("kbench push: "),
        "a loud push says what it did"
    );
    assert_eq!(push(&["-q"], "pushed-quietly"), "");
    let sets = server.get("/api/v1/result-sets");
    assert_eq!(sets["result_sets"].as_array().unwrap().len(), 4, "{sets}");
}
