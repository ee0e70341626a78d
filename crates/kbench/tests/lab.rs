//! The shared lab's client side end to end, as users run it: `kbench run
//! --upload` against a `kbench serve` process (also one restarted while
//! the run goes on), a refused token, and `kbench job` + `kbench worker`,
//! including a worker killed in the middle of its job whose job another
//! worker resumes.

mod common;

use common::{
    Server, assert_no_database, assert_success, create_token, json, kbench, processes_marked,
    temp_db,
};
use kbench_model::TestKey;
use kbench_store::{JobLease, LiveBatch, LiveSamples, RunInfo, RunStatus};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// One stored sample as compared: value, iterations, time and round.
type Sample = (f64, u64, i64, u64);

/// A run as exported: its status, outcomes and samples per test.
#[derive(Debug, Clone, PartialEq)]
struct Run {
    status: String,
    outcomes: usize,
    samples: BTreeMap<String, Vec<Sample>>,
}

/// The runs of `identifier` in a kbench.samples/1 document, by uid.
fn runs_by_uid(export: &Value, identifier: &str) -> BTreeMap<String, Run> {
    let mut runs = BTreeMap::new();
    let Some(found) = export["identifiers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["name"] == identifier)
    else {
        return runs;
    };
    for run in found["runs"].as_array().unwrap() {
        let uid = run["info"]["uid"].as_str().expect("a run uid").to_string();
        let samples = run["samples"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(test, samples)| {
                let samples = samples
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|s| {
                        (
                            s["value"].as_f64().unwrap(),
                            s["iterations"].as_u64().unwrap(),
                            s["at_ms"].as_i64().unwrap(),
                            s["round"].as_u64().unwrap(),
                        )
                    })
                    .collect();
                (test.clone(), samples)
            })
            .collect();
        let run = Run {
            status: run["status"].as_str().unwrap().to_string(),
            outcomes: run["outcomes"].as_array().map_or(0, Vec::len),
            samples,
        };
        runs.insert(uid, run);
    }
    runs
}

/// The server's runs of `identifier` (none while the set does not exist).
fn server_runs(server: &Server, set: &str, identifier: &str) -> BTreeMap<String, Run> {
    let path = format!("/api/v1/result-sets/{set}/export?identifier={identifier}");
    let answer = kbench_fleet::client::request(&server.addr, "GET", &path, &[], b"").unwrap();
    match answer.status {
        404 => BTreeMap::new(),
        200 => runs_by_uid(&serde_json::from_str(&answer.body).unwrap(), identifier),
        _ => panic!("GET {path}: {answer:?}"),
    }
}

fn local_runs(db: &Path, set: &str, identifier: &str) -> BTreeMap<String, Run> {
    let out = kbench(db).args(["export", set]).output().unwrap();
    assert_success(&out, "kbench export: ");
    runs_by_uid(&json(&out.stdout), identifier)
}

fn sample_count(runs: &BTreeMap<String, Run>) -> usize {
    runs.values()
        .flat_map(|run| run.samples.values())
        .map(Vec::len)
        .sum()
}

/// `kbench run ... --upload` in the background, on the local database `db`.
fn spawn_run(db: &Path, url: &str, token: &str, args: &[&str]) -> Child {
    Command::new(assert_cmd::cargo::cargo_bin("kbench"))
        .env("KBENCH_DB", db)
        .env("KBENCH_TOKEN", token)
        .args(["run", "--upload", url])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits (at most a minute) until `ready` holds.
fn wait_until(what: &str, ready: impl FnMut() -> bool) {
    wait_within(Duration::from_secs(60), what, ready);
}

/// Waits at most `time` until `ready` holds.
fn wait_within(time: Duration, what: &str, mut ready: impl FnMut() -> bool) {
    let deadline = Instant::now() + time;
    while !ready() {
        assert!(Instant::now() < deadline, "not within {time:?}: {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn an_uploaded_run_is_on_the_server_exactly_as_stored_locally() {
    let (dir, server_db) = temp_db();
    let local = dir.path().join("local.db");
    let token = create_token(&server_db, "runner");
    let server = Server::start(&server_db, "127.0.0.1:0");
    let out = spawn_run(
        &local,
        &server.url(),
        &token,
        &[
            "syscall-null",
            "pipe-lat",
            "--as",
            "6.18",
            "--into",
            "lab",
            "--rounds",
            "2",
            "--max-time",
            "0.2",
        ],
    )
    .wait_with_output()
    .unwrap();
    let text = stderr(&out);
    assert!(out.status.success(), "{text}");
    let local_runs = local_runs(&local, "lab", "6.18");
    assert_eq!(local_runs.len(), 2, "{local_runs:?}");
    let samples = sample_count(&local_runs);
    assert!(samples > 10, "{local_runs:?}");
    assert!(
        text.contains(&format!("Uploaded {samples} sample(s) to {}", server.url())),
        "{text}"
    );
    let on_server = server_runs(&server, "lab", "6.18");
    assert_eq!(on_server, local_runs);
    assert!(
        on_server
            .values()
            .all(|run| run.status == "complete" && run.outcomes == 2)
    );
}

#[test]
fn a_server_restarted_during_the_run_ends_up_with_every_sample_once() {
    let (dir, server_db) = temp_db();
    let local = dir.path().join("local.db");
    let token = create_token(&server_db, "runner");
    let mut server = Server::start(&server_db, "127.0.0.1:0");
    let run = spawn_run(
        &local,
        &server.url(),
        &token,
        &[
            "syscall-null",
            "syscall-read",
            "--as",
            "a",
            "--into",
            "lab",
            "--rounds",
            "3",
            "--max-time",
            "0.5",
        ],
    );
    wait_until("the first samples reach the server", || {
        sample_count(&server_runs(&server, "lab", "a")) > 0
    });
    server.stop();
    std::thread::sleep(Duration::from_millis(1500));
    server.restart();
    let out = run.wait_with_output().unwrap();
    let text = stderr(&out);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("retrying until it answers"), "{text}");
    assert!(text.contains("reachable again"), "{text}");
    let local_runs = local_runs(&local, "lab", "a");
    assert_eq!(local_runs.len(), 3);
    assert_eq!(server_runs(&server, "lab", "a"), local_runs);
}

#[test]
fn a_refused_token_or_an_unreachable_server_fails_before_measuring() {
    let (dir, server_db) = temp_db();
    let local = dir.path().join("local.db");
    create_token(&server_db, "runner");
    let server = Server::start(&server_db, "127.0.0.1:0");
    let run = |url: &str, token: Option<&str>| {
        let mut command = kbench(&local);
        command.env_remove("KBENCH_TOKEN");
        command.args(["run", "syscall-null", "--into", "lab", "--upload", url]);
        if let Some(token) = token {
            command.args(["--token", token]);
        }
        let start = Instant::now();
        let out = command.output().unwrap();
        assert!(!out.status.success());
        assert!(start.elapsed() < Duration::from_secs(10), "not fast");
        stderr(&out)
    };
    let wrong = run(&server.url(), Some("kbt_wrong"));
    assert!(wrong.contains("refused the API token"), "{wrong}");
    assert!(wrong.contains("kbench token create"), "{wrong}");
    let missing = run(&server.url(), None);
    assert!(missing.contains("no API token"), "{missing}");
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let unreachable = run(&format!("http://127.0.0.1:{port}"), Some("kbt_x"));
    assert!(
        unreachable.contains("cannot reach the kbench server"),
        "{unreachable}"
    );
    // Nothing was measured or stored.
    assert_no_database(&local);
}

#[test]
fn a_refusal_during_the_run_stops_the_upload_keeps_measuring_and_fails_the_run() {
    let (dir, server_db) = temp_db();
    let local = dir.path().join("local.db");
    let token = create_token(&server_db, "runner");
    let server = Server::start(&server_db, "127.0.0.1:0");
    let run = spawn_run(
        &local,
        &server.url(),
        &token,
        &[
            "pipe-lat",
            "unix-lat",
            "--as",
            "a",
            "--into",
            "lab",
            "--rounds",
            "2",
            "--max-time",
            "0.5",
        ],
    );
    wait_until("the first samples reach the server", || {
        sample_count(&server_runs(&server, "lab", "a")) > 0
    });
    let revoked = kbench(&server_db)
        .args(["token", "revoke", "runner"])
        .output()
        .unwrap();
    assert_success(&revoked, "kbench token revoke: ");
    let out = run.wait_with_output().unwrap();
    let text = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(
        text.contains("upload to") && text.contains("stopped"),
        "{text}"
    );
    assert!(text.contains("401"), "{text}");
    assert!(text.contains("kbench push"), "{text}");
    // Every round was measured and stored locally all the same.
    let local_runs = local_runs(&local, "lab", "a");
    assert_eq!(local_runs.len(), 2);
    assert!(local_runs.values().all(|run| run.status == "complete"));
    assert!(sample_count(&local_runs) > sample_count(&server_runs(&server, "lab", "a")));
}

fn submit(server: &Server, token: &str, args: &[&str]) -> i64 {
    let out = kbench("unused.db")
        .env("KBENCH_TOKEN", token)
        .args(["job", "submit", "--server", &server.url()])
        .args(args)
        .output()
        .unwrap();
    assert_success(&out, "kbench job submit: ");
    String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
}

/// `kbench worker` in the background, with `env` set for it (and so for
/// its children).
fn spawn_worker(server: &Server, token: &str, args: &[&str], env: (&str, &str)) -> Child {
    Command::new(assert_cmd::cargo::cargo_bin("kbench"))
        .env("KBENCH_TOKEN", token)
        .env(env.0, env.1)
        .args(["worker", "--server", &server.url()])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn job(server: &Server, id: i64) -> Value {
    server.get(&format!("/api/v1/jobs/{id}"))
}

#[test]
fn a_worker_drains_the_queue_and_the_jobs_are_listed_done() {
    let (dir, server_db) = temp_db();
    let token = create_token(&server_db, "lab");
    let server = Server::start(&server_db, "127.0.0.1:0");
    let ids: Vec<i64> = ["j1", "j2", "j3"]
        .iter()
        .map(|identifier| {
            let common = ["--as", identifier, "--into", "lab", "--rounds", "1"];
            submit(
                &server,
                &token,
                &[&["syscall-null", "--max-time", "0.2"][..], &common].concat(),
            )
        })
        .collect();
    assert_eq!(job(&server, ids[0])["state"], "queued");
    let work_dir = dir.path().join("work");
    let out = spawn_worker(
        &server,
        &token,
        &[
            "--exit-when-idle",
            "--name",
            "w1",
            "--work-dir",
            work_dir.to_str().unwrap(),
        ],
        ("KBENCH_TEST", "drain"),
    )
    .wait_with_output()
    .unwrap();
    let text = stderr(&out);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("no job waiting; exiting"), "{text}");
    for identifier in ["j1", "j2", "j3"] {
        let runs = server_runs(&server, "lab", identifier);
        assert_eq!(runs.len(), 1, "{identifier}: {runs:?}");
        assert!(sample_count(&runs) > 0);
    }
    // Done jobs leave no local store behind.
    assert_eq!(std::fs::read_dir(&work_dir).unwrap().count(), 0);

    let listed = kbench("unused.db")
        .args(["job", "list", "--server", &server.url()])
        .output()
        .unwrap();
    assert_success(&listed, "kbench job list: ");
    let table = String::from_utf8_lossy(&listed.stdout).into_owned();
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines.len(), 4, "{table}");
    assert!(lines[0].starts_with("ID  STATE"), "{table}");
    for (line, id) in lines[1..].iter().zip(ids.iter().rev()) {
        let cells: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(
            &cells[..3],
            [id.to_string().as_str(), "done", "lab"],
            "{table}"
        );
        assert!(line.contains(" w1 "), "{table}");
    }
    let document = json(
        &kbench("unused.db")
            .args(["job", "list", "--server", &server.url(), "--json"])
            .output()
            .unwrap()
            .stdout,
    );
    let jobs = document["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 3);
    assert!(
        jobs.iter()
            .all(|j| j["state"] == "done" && j["attempts"] == 1),
        "{document}"
    );
}

#[test]
fn a_killed_workers_job_is_resumed_by_another_without_losing_or_repeating_samples() {
    let (dir, server_db) = temp_db();
    let token = create_token(&server_db, "lab");
    let server = Server::start(&server_db, "127.0.0.1:0");
    // Killed, w1 cannot remove its work directory: keep it in ours.
    let work_dir = dir.path().join("w1");
    // Noisy tests, which use their whole time budget: the rounds last.
    let tests = [
        "pipe-lat[placement=cross]",
        "unix-lat[placement=cross]",
        "udp-lat[placement=cross]",
        "tcp-lat[placement=cross]",
    ];
    let options = [
        "--as",
        "k",
        "--into",
        "lab",
        "--rounds",
        "2",
        "--max-time",
        "0.8",
    ];
    let id = submit(&server, &token, &[&tests[..], &options].concat());
    let marker = format!("lab-killed-worker-{}", std::process::id());
    let mut first = spawn_worker(
        &server,
        &token,
        &[
            "--name",
            "w1",
            "--lease",
            "3",
            "--work-dir",
            work_dir.to_str().unwrap(),
        ],
        ("KBENCH_TEST_MARK", &marker),
    );
    // Killed once a test of a round has ended on the server, not all.
    wait_until("a test of the job ends on the server", || {
        server_runs(&server, "lab", "k")
            .values()
            .any(|run| run.outcomes >= 1 && run.outcomes < tests.len())
    });
    assert!(
        processes_marked(&marker).len() >= 2,
        "the worker and its kbench run"
    );
    first.kill().unwrap();
    first.wait().unwrap();
    let before = server_runs(&server, "lab", "k");
    let running: Vec<&String> = before
        .iter()
        .filter(|(_, run)| run.status == "running")
        .map(|(uid, _)| uid)
        .collect();
    assert_eq!(running.len(), 1, "{before:?}");
    let uid = running[0];
    let killed = &before[uid];
    // Its child (kbench run) and the measuring agent die with it, at once
    // (the job's round would go on for seconds).
    wait_within(
        Duration::from_secs(3),
        "the killed worker's processes end",
        || processes_marked(&marker).is_empty(),
    );
    // The lease runs out; the job goes to the next worker.
    wait_until("the killed worker's lease expires", || {
        let job = job(&server, id);
        job["lease_expires_at_ms"].as_i64().unwrap() + 200 < now_ms()
    });
    let out = spawn_worker(
        &server,
        &token,
        &["--name", "w2", "--lease", "3", "--exit-when-idle"],
        ("KBENCH_TEST", "second"),
    )
    .wait_with_output()
    .unwrap();
    let text = stderr(&out);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("(attempt 2)"), "{text}");
    assert!(text.contains("resuming an unfinished run"), "{text}");
    // The resumed run's batches carry w2's lease (which the server checks).
    assert!(
        text.contains(&format!("for job {id} of worker 'w2'")),
        "{text}"
    );
    let job = job(&server, id);
    assert_eq!(
        (&job["state"], &job["attempts"], &job["worker"]),
        (&"done".into(), &2.into(), &"w2".into()),
        "{job}"
    );

    let after = server_runs(&server, "lab", "k");
    // Runs that had ended are untouched; the killed one keeps exactly what
    // it uploaded, ended as interrupted: a round is one invocation, so the
    // second worker measures in runs (and rounds) of its own, never into
    // the killed worker's round under its snapshot.
    for (other, run) in &before {
        if other != uid {
            assert_eq!(&after[other], run);
        }
    }
    let closed = &after[uid];
    assert_eq!(closed.status, "interrupted", "{after:?}");
    assert_eq!(
        (&closed.samples, closed.outcomes),
        (&killed.samples, killed.outcomes)
    );
    let new: Vec<&Run> = after
        .iter()
        .filter(|(u, _)| !before.contains_key(*u))
        .map(|(_, run)| run)
        .collect();
    // The rest of the killed round, then the second round.
    assert_eq!(new.len(), 2, "{after:?}");
    assert!(new.iter().all(|run| run.status == "complete"), "{new:?}");
    let (rest, next) = if new[0].samples.len() < new[1].samples.len() {
        (new[0], new[1])
    } else {
        (new[1], new[0])
    };
    let last_killed_round = killed
        .samples
        .values()
        .flatten()
        .map(|s| s.3)
        .max()
        .unwrap();
    for (index, test) in tests.iter().enumerate() {
        // A test the killed run had ended is not measured again.
        assert_eq!(
            rest.samples.contains_key(*test),
            index >= killed.outcomes,
            "{test}: {rest:?}"
        );
        assert!(!next.samples[*test].is_empty(), "{test}");
    }
    let rest_round = rest.samples.values().flatten().map(|s| s.3).min().unwrap();
    assert!(
        rest_round > last_killed_round,
        "{rest_round} after {last_killed_round}"
    );
    // No round number is shared by two runs.
    let mut owners: BTreeMap<u64, std::collections::BTreeSet<&String>> = BTreeMap::new();
    for (u, run) in &after {
        for sample in run.samples.values().flatten() {
            owners.entry(sample.3).or_default().insert(u);
        }
    }
    assert!(owners.values().all(|runs| runs.len() == 1), "{owners:?}");

    // Had w1 only been cut off, its upload would come back with w1's lease
    // of the job, which w2 took over: the server refuses it, storing none.
    let late = LiveBatch {
        identifier: "k".into(),
        run_uid: uid.clone(),
        info: RunInfo::default(),
        status: RunStatus::Interrupted,
        ended_at_ms: None,
        steal_percent: None,
        tests: vec![],
        samples: vec![LiveSamples {
            test: TestKey::parse(tests[0]).unwrap(),
            first: closed.samples[tests[0]].len() as u64,
            samples: vec![kbench_model::Sample {
                value: 1.0,
                iterations: 1,
                at_ms: now_ms(),
                round: 0,
            }],
        }],
        outcomes: vec![],
        lease: Some(JobLease {
            job: id,
            worker: "w1".into(),
        }),
    };
    let answer = kbench_fleet::client::request(
        &server.addr,
        "POST",
        "/api/v1/result-sets/lab/live",
        &[
            ("Authorization", &format!("Bearer {token}")),
            ("Content-Type", "application/json"),
        ],
        &serde_json::to_vec(&late).unwrap(),
    )
    .unwrap();
    assert_eq!(answer.status, 409, "{answer:?}");
    assert!(
        answer
            .body
            .contains(&format!("job {id} is no longer leased to worker")),
        "{answer:?}"
    );
    assert_eq!(server_runs(&server, "lab", "k"), after);
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// The shared lab as the "done" describes it: a server on
/// PostgreSQL, ten jobs (built-in suites, single benchmarks and a Debian
/// kernel booted under TCG), two workers on this machine draining the
/// queue; the dashboard's comparison page shows the result, and `kbench
/// compare` prints the same from the PostgreSQL URL as from a SQLite file
/// holding the same samples.
#[test]
fn two_workers_drain_ten_jobs_into_one_postgresql_server() {
    let Some(postgres) = kbench_store::testing::postgres_server() else {
        return;
    };
    if !common::have_programs(
        &["qemu-system-x86_64", "apt-get", "dpkg-deb"],
        "apt-get install qemu-system-x86 (the kernel job boots a Debian kernel)",
    ) {
        return;
    }
    let database = kbench_store::testing::ThrowawayDatabase::create(&postgres, "fleet");
    let token = create_token(&database.url, "lab");
    let server = Server::start(Path::new(&database.url), "127.0.0.1:0");
    let quick = ["--rounds", "2", "--max-time", "0.05"];
    let short = ["--rounds", "2", "--max-time", "0.1"];
    let mut jobs: Vec<(i64, &str, &str)> = Vec::new();
    let mut queue = |args: &[&str], set: &'static str, identifier: &'static str| {
        let id = submit(
            &server,
            &token,
            &[args, &["--as", identifier, "--into", set]].concat(),
        );
        jobs.push((id, set, identifier));
    };
    for identifier in ["base", "next"] {
        queue(
            &[&["--suite", "quick"][..], &quick].concat(),
            "fleet",
            identifier,
        );
    }
    for identifier in ["p1", "p2", "p3", "p4"] {
        queue(
            &[&["syscall-null", "pipe-lat"][..], &short].concat(),
            "pipes",
            identifier,
        );
    }
    for identifier in ["f1", "f2", "f3"] {
        queue(&[&["fork-exit"][..], &short].concat(), "forks", identifier);
    }
    queue(
        &[
            "--kernel",
            "debian:6.12",
            "--tags",
            "tcg",
            "syscall-null",
            "--rounds",
            "1",
            "--max-time",
            "0.2",
        ],
        "vm",
        "deb-6.12",
    );
    assert_eq!(jobs.len(), 10);

    let cache = Path::new(env!("CARGO_TARGET_TMPDIR")).join("kernels");
    let workers: Vec<Child> = ["w1", "w2"]
        .iter()
        .map(|name| {
            spawn_worker(
                &server,
                &token,
                &["--exit-when-idle", "--tags", "tcg", "--name", name],
                ("KBENCH_KERNEL_CACHE", cache.to_str().unwrap()),
            )
        })
        .collect();
    for worker in workers {
        let out = worker.wait_with_output().unwrap();
        assert!(out.status.success(), "a worker failed:\n{}", stderr(&out));
    }

    let mut took = std::collections::BTreeSet::new();
    for (id, set, identifier) in &jobs {
        let job = job(&server, *id);
        assert_eq!(job["state"], "done", "{job}");
        assert_eq!(job["attempts"], 1, "{job}");
        took.insert(job["worker"].as_str().unwrap().to_string());
        let runs = server_runs(&server, set, identifier);
        assert!(
            sample_count(&runs) > 0,
            "{set}/{identifier}: {}",
            server.get(&format!("/api/v1/result-sets/{set}/export"))
        );
    }
    assert_eq!(took.len(), 2, "both workers took jobs: {took:?}");
    let vm = server.get("/api/v1/result-sets/vm/export");
    let notes = vm["identifiers"][0]["runs"][0]["info"]["notes"].to_string();
    assert!(notes.contains("emulated (TCG)"), "{notes}");

    // The dashboard's comparison page: the live HTML report.
    let page = kbench_fleet::client::request(&server.addr, "GET", "/sets/fleet/compare", &[], b"")
        .unwrap();
    assert_eq!(page.status, 200, "{}", page.body);
    for text in ["base", "next", "syscall-null", "<svg"] {
        assert!(
            page.body.contains(text),
            "no {text:?} in the comparison page"
        );
    }

    // The same comparison from PostgreSQL and from a SQLite copy.
    let exported = kbench(&database.url)
        .args(["export", "fleet"])
        .output()
        .unwrap();
    assert_success(&exported, "kbench export: ");
    let (dir, sqlite) = temp_db();
    let file = dir.path().join("fleet.json");
    std::fs::write(&file, &exported.stdout).unwrap();
    assert_success(
        &kbench(&sqlite)
            .args(["import", file.to_str().unwrap()])
            .output()
            .unwrap(),
        "kbench import: ",
    );
    for format in [
        "bars",
        "table",
        "regressions",
        "markdown",
        "json",
        "csv",
        "html",
    ] {
        // Exit status 0, or 1 when it finds a regression.
        let compare = |db: &str| {
            let out = kbench(db)
                .args(["compare", "fleet", "--format", format])
                .output()
                .unwrap();
            assert!(
                matches!(out.status.code(), Some(0 | 1)),
                "kbench compare: {}",
                stderr(&out)
            );
            (
                out.status.code(),
                String::from_utf8_lossy(&out.stdout).into_owned(),
            )
        };
        assert_eq!(
            compare(&database.url),
            compare(sqlite.to_str().unwrap()),
            "compare --format {format} differs between PostgreSQL and SQLite"
        );
    }
}
