//! Faults under load, counted to the sample: (a) the server stopped and
//! started again on the same port while a pusher keeps pushing, and (b) a
//! PostgreSQL server restarted (`pg_ctl restart -m fast`) under pushers.
//! Clients retry on connection errors and 503 with the same push id; at
//! the end the store holds every distinct push's samples exactly once.
//!
//! (b) restarts a private cluster made by the test (initdb in a temp dir,
//! 127.0.0.1, a free port, trust authentication; as root the server runs
//! as the `postgres` user, as .ci/postgres.sh does), never the shared test
//! server other tests use. Without PostgreSQL's binaries it is skipped,
//! loudly, except under CI=true, where it fails.

mod common;

use common::{Lab, Tally, document, push_retrying, pusher, set_samples};
use kbench_store::Location;
use kbench_store::testing::{ThrowawayDatabase, postgres_server};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

const SAMPLES_PER_PUSH: usize = 50;

/// Runs `pushers` pushers into set "faults" of the server at `addr`
/// while `fault` runs (after a second of pushing), pushes a second more,
/// and checks the count in the store at `location`. The tally and the
/// seconds it took.
fn push_through(
    addr: &str,
    token: &str,
    location: &Location,
    pushers: usize,
    fault: impl FnOnce(),
) -> (Tally, f64) {
    let stop = AtomicBool::new(false);
    let started = Instant::now();
    let tally = std::thread::scope(|scope| {
        let running: Vec<_> = (0..pushers)
            .map(|n| {
                let stop = &stop;
                scope.spawn(move || {
                    pusher(
                        addr,
                        token,
                        "faults",
                        &format!("f{n}"),
                        SAMPLES_PER_PUSH,
                        7,
                        || stop.load(Ordering::Relaxed),
                    )
                })
            })
            .collect();
        std::thread::sleep(Duration::from_secs(1));
        fault();
        std::thread::sleep(Duration::from_secs(1));
        stop.store(true, Ordering::Relaxed);
        let mut tally = Tally::default();
        for pusher in running {
            tally.add(pusher.join().unwrap());
        }
        tally
    });
    let stored = set_samples(location.open_send().unwrap().as_mut(), "faults");
    assert_eq!(
        stored,
        tally.pushes * SAMPLES_PER_PUSH as u64,
        "no sample lost, none duplicated: {tally:?}"
    );
    (tally, started.elapsed().as_secs_f64())
}

fn server_restarted_mid_push(location: Location, backend: &str) {
    let mut lab = Lab::start(location.clone(), kbench_server::DEFAULT_MAX_BODY);
    let (addr, token) = (lab.addr.clone(), lab.token.clone());
    let mut down = 0.0;
    let (tally, elapsed) = push_through(&addr, &token, &location, 2, || {
        let stopped = Instant::now();
        lab.stop_server();
        std::thread::sleep(Duration::from_millis(500));
        lab.start_server();
        down = stopped.elapsed().as_secs_f64();
    });
    assert_eq!(lab.addr, addr, "the same port again");
    eprintln!(
        "faults (a), {backend}: server stopped for {down:.2} s mid-push; {} pushes in {elapsed:.1} s, \
         {} connection errors and {} answers 503 retried, every sample stored once",
        tally.pushes, tally.disconnected, tally.unavailable
    );
    assert!(
        tally.disconnected > 0,
        "the pushers met the outage: {tally:?}"
    );
}

#[test]
fn a_server_restarted_mid_push_loses_and_duplicates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    server_restarted_mid_push(Location::Sqlite(dir.path().join("results.db")), "SQLite");
    if let Some(server) = postgres_server() {
        let db = ThrowawayDatabase::create(&server, "faults");
        server_restarted_mid_push(Location::parse(&db.url).unwrap(), "PostgreSQL");
    }
}

/// A PostgreSQL cluster of the test's own, stopped and removed on drop.
struct Cluster {
    bin: PathBuf,
    dir: tempfile::TempDir,
    url: String,
}

impl Cluster {
    /// The newest /usr/lib/postgresql/*/bin with initdb.
    fn binaries() -> Option<PathBuf> {
        let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
            .ok()?
            .filter_map(|entry| {
                let entry = entry.ok()?;
                let version = entry.file_name().to_str()?.parse().ok()?;
                let bin = entry.path().join("bin");
                bin.join("initdb").exists().then_some((version, bin))
            })
            .collect();
        found.sort();
        found.pop().map(|(_, bin)| bin)
    }

    /// Whether this process runs as root (the owner of /proc/self is its
    /// effective user).
    fn as_root() -> bool {
        std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
    }

    /// A PostgreSQL program run as the cluster's owner (PostgreSQL refuses
    /// to run as root), from a directory it can enter.
    fn command(bin: &Path, dir: &Path, program: &str) -> Command {
        let program = bin.join(program);
        let mut command = if Cluster::as_root() {
            let mut command = Command::new("runuser");
            command.args(["-u", "postgres", "--"]).arg(&program);
            command
        } else {
            Command::new(&program)
        };
        command.current_dir(dir);
        command
    }

    /// Runs a PostgreSQL program; panics with its output on failure.
    fn run(bin: &Path, dir: &Path, program: &str, args: &[&str]) {
        let output = Cluster::command(bin, dir, program)
            .args(args)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{program} {args:?}: {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }

    /// initdb and start on a free port; `None` (skipped, loudly) when
    /// PostgreSQL is not installed, except under CI=true.
    fn start() -> Option<Cluster> {
        let Some(bin) = Cluster::binaries() else {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "CI=true but no PostgreSQL under /usr/lib/postgresql: apt-get install postgresql"
            );
            eprintln!(
                "SKIPPED: no PostgreSQL server under /usr/lib/postgresql (apt-get install postgresql) \
                 to restart under load"
            );
            return None;
        };
        // In /tmp: the postgres user must be able to reach it.
        let dir = tempfile::Builder::new()
            .prefix("kbench-faults-pg.")
            .tempdir_in("/tmp")
            .unwrap();
        let user = if Cluster::as_root() {
            let chown = Command::new("chown")
                .arg("postgres:")
                .arg(dir.path())
                .status()
                .unwrap();
            assert!(chown.success(), "chown postgres: {}", dir.path().display());
            "postgres".to_string()
        } else {
            std::env::var("USER").unwrap_or_else(|_| "postgres".into())
        };
        let data = dir.path().join("data");
        let data = data.to_str().unwrap();
        Cluster::run(
            &bin,
            dir.path(),
            "initdb",
            &[
                "-D",
                data,
                "-U",
                &user,
                "--auth=trust",
                "--encoding=UTF8",
                "--locale=C",
                "--no-instructions",
            ],
        );
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let log = dir.path().join("server.log");
        let options = format!(
            "-c listen_addresses=127.0.0.1 -p {port} -k {}",
            dir.path().display()
        );
        Cluster::run(
            &bin,
            dir.path(),
            "pg_ctl",
            &[
                "-D",
                data,
                "-l",
                log.to_str().unwrap(),
                "-w",
                "-t",
                "60",
                "-o",
                &options,
                "start",
            ],
        );
        Some(Cluster {
            url: format!("postgres://{user}@127.0.0.1:{port}/postgres"),
            bin,
            dir,
        })
    }

    fn pg_ctl(&self, args: &[&str]) {
        let data = self.dir.path().join("data");
        let mut all = vec!["-D", data.to_str().unwrap()];
        all.extend_from_slice(args);
        Cluster::run(&self.bin, self.dir.path(), "pg_ctl", &all);
    }

    /// Stops the server (ending every connection) and starts it again with
    /// the same options, waiting until it accepts connections. Its output
    /// goes to the log: the server would hold a pipe open for ever.
    fn restart(&self) {
        let log = self.dir.path().join("server.log");
        self.pg_ctl(&[
            "-l",
            log.to_str().unwrap(),
            "-m",
            "fast",
            "-w",
            "-t",
            "60",
            "restart",
        ]);
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let data = self.dir.path().join("data");
        let _ = Cluster::command(&self.bin, self.dir.path(), "pg_ctl")
            .args(["-D", data.to_str().unwrap(), "-m", "immediate", "stop"])
            .output();
    }
}

#[test]
fn a_postgresql_restart_under_load_loses_and_duplicates_nothing() {
    let Some(cluster) = Cluster::start() else {
        return;
    };
    let lab = Lab::start(
        Location::parse(&cluster.url).unwrap(),
        kbench_server::DEFAULT_MAX_BODY,
    );
    // Idle stores whose connections the restart closed cost no request:
    // the first push after a restart is stored at its first attempt.
    let warm_up = lab.push("idle", "warm-up", &document(&["warm-up"]));
    assert_eq!(warm_up.status, 201, "{warm_up:?}");
    cluster.restart();
    let first = push_retrying(
        &lab.addr,
        &lab.token,
        "idle",
        "after-restart",
        &document(&["a"]),
    );
    assert_eq!(
        (first.status, first.unavailable, first.disconnected),
        (201, 0, 0),
        "the first push after an idle restart succeeds: {first:?}"
    );

    let mut restart_took = 0.0;
    let (tally, elapsed) = push_through(&lab.addr, &lab.token, &lab.location, 4, || {
        let started = Instant::now();
        cluster.restart();
        restart_took = started.elapsed().as_secs_f64();
    });
    eprintln!(
        "faults (b): PostgreSQL restarted (pg_ctl restart -m fast, {restart_took:.2} s) under 4 pushers; \
         {} pushes in {elapsed:.1} s; the restart cost {} answers 503 and {} connection errors, all \
         retried; every sample stored once",
        tally.pushes, tally.unavailable, tally.disconnected
    );
    assert!(
        tally.unavailable + tally.disconnected > 0,
        "the pushers met the restart: {tally:?}"
    );
}
