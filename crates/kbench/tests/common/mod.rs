//! Helpers shared by the end-to-end tests: a kbench command on a throwaway
//! database, and reading its JSON output.

#![allow(dead_code)] // each test binary uses its own subset

pub mod linux;

use assert_cmd::Command;
use serde_json::Value;
use std::ffi::OsStr;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Output};
use std::time::{Duration, Instant};

/// The tests that boot guests take turns. Two TCG guests at once on a
/// 2-CPU host starve each other's vCPUs: in one CI run both guests' kernels
/// hung spinning for a cross-CPU call (`smp_call_function_many_cond`) and
/// never reached the agent.
pub fn one_guest_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static GUESTS: std::sync::Mutex<()> = std::sync::Mutex::new(());
    GUESTS
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Whether the tests run as root (who owns this process's /proc entry).
pub fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").is_ok_and(|meta| meta.uid() == 0)
}

/// Short sampling for tests: behaviour, not precision.
pub const SHORT: [&str; 6] = ["--max-time", "0.2", "--max-samples", "20", "--rounds", "1"];

/// A kbench command writing to the test's own database (a path or a
/// postgres:// URL).
pub fn kbench(db: impl AsRef<OsStr>) -> Command {
    let mut command = Command::cargo_bin("kbench").unwrap();
    command.env("KBENCH_DB", db).env_remove("XDG_DATA_HOME");
    // No config file and none of the settings it could give, whatever
    // the machine running the tests has (tests/config.rs sets them).
    command.env("XDG_CONFIG_HOME", "/nonexistent/kbench-tests");
    for variable in [
        "KBENCH_CONFIG",
        "KBENCH_SERVER",
        "KBENCH_MAX_TIME",
        "KBENCH_TARGET_CI",
        "KBENCH_THRESHOLD",
    ] {
        command.env_remove(variable);
    }
    command
}

pub fn temp_db() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    (dir, db)
}

/// After refused runs on a fresh database path: nothing was stored, not
/// even an empty database (`run` opens its store once every input is
/// checked).
pub fn assert_no_database(db: &Path) {
    assert!(!db.exists(), "a refused run created {}", db.display());
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

/// The stdout of `kbench ARGS`, failing the test (with its stderr)
/// unless it succeeds.
pub fn stdout(db: impl AsRef<OsStr>, args: &[&str]) -> String {
    let out = kbench(db).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "kbench {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Six samples within ±0.3 % of `level`, as a kbench.samples/1 series
/// of one round: one quiet run of a test, to import.
pub fn quiet_series(level: f64) -> String {
    let values: Vec<String> = [0.997, 1.003, 0.999, 1.001, 0.998, 1.002]
        .iter()
        .map(|w| format!(r#"{{"value": {}, "round": 0, "at_ms": 1}}"#, level * w))
        .collect();
    format!("[{}]", values.join(","))
}

/// The transcribed seed report `name` (tests/fixtures/seeds).
pub fn seed_fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/seeds")
        .join(name)
}

/// Runs kbench with `args` and returns what it did, whatever its status.
pub fn output(db: impl AsRef<OsStr>, args: &[&str]) -> Output {
    kbench(db).args(args).output().unwrap()
}

/// Runs kbench with `args`, failing the test (with its output) unless it
/// succeeds.
pub fn succeeds(db: impl AsRef<OsStr>, args: &[&str]) {
    kbench(db).args(args).assert().success();
}

/// Runs kbench with `args` and returns its stdout as JSON, whatever its
/// status.
pub fn json_stdout(db: impl AsRef<OsStr>, args: &[&str]) -> Value {
    json(&output(db, args).stdout)
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
    missing.is_empty() || skipped(&format!("{missing:?}"), install)
}

/// Whether a file or directory a test needs (a package's, a fixture) is
/// there; as [`have_programs`], a missing one skips the test, or fails it
/// in CI.
pub fn have_path(path: &Path, install: &str) -> bool {
    path.exists() || skipped(&path.display().to_string(), install)
}

/// Says that the test is skipped for want of `missing`, and returns false;
/// in CI a missing requirement fails the test instead.
fn skipped(missing: &str, install: &str) -> bool {
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "missing {missing} in CI: {install}"
    );
    // Straight to stderr: the harness captures eprintln! of a passing test,
    // and a skip must be seen.
    use std::io::Write;
    let _ = writeln!(
        std::io::stderr(),
        "SKIPPED: this test needs {missing} ({install})"
    );
    false
}

/// Processes still alive whose environment holds `marker` (inherited from
/// the kbench the test started): there must be none after a run ends.
pub fn processes_marked(marker: &str) -> Vec<String> {
    let mut left = vec![];
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let environ = std::fs::read(entry.path().join("environ")).unwrap_or_default();
        if String::from_utf8_lossy(&environ).contains(marker) {
            let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
            left.push(String::from_utf8_lossy(&cmdline).replace('\0', " "));
        }
    }
    left
}

/// Ctrl-Cs the process group of `child` as a terminal would, checks its exit
/// status 130, and that within `grace` no process whose environment holds
/// `marker` is left.
pub fn ctrl_c_group(mut child: Child, marker: &str, grace: Duration) {
    // SAFETY: kill with a negative pid signals the child's process group.
    unsafe { libc::kill(-(child.id() as i32), libc::SIGINT) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    // Partners and workers get the same SIGINT; give them a moment to go.
    let deadline = Instant::now() + grace;
    while !processes_marked(marker).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(processes_marked(marker), Vec::<String>::new());
}

/// Waits (up to a minute) until the first identifier of result set `set`
/// has stored more than `samples` samples.
pub fn wait_for_samples(db: impl AsRef<OsStr>, set: &str, samples: u64) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        std::thread::sleep(Duration::from_millis(200));
        let shown = output(&db, &["show", set, "--json"]);
        if shown.status.success()
            && json(&shown.stdout)["identifiers"][0]["samples"].as_u64() > Some(samples)
        {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "no samples stored within a minute"
        );
    }
}

/// Runs kbench with `args` and the short sampling of [`SHORT`], failing the
/// test (with its output) unless it succeeds.
pub fn run_short(db: impl AsRef<OsStr>, args: &[&str]) {
    kbench(db).args(args).args(SHORT).assert().success();
}

/// Fails the test unless `out` is a success, with `context` and then its
/// stderr as the message.
pub fn assert_success(out: &Output, context: &str) {
    assert!(
        out.status.success(),
        "{context}{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A `kbench serve` process over a SQLite file, stopped with SIGTERM when
/// dropped; it can be stopped and started again on the same address.
pub struct Server {
    child: Option<Child>,
    db: PathBuf,
    /// More `kbench serve` options.
    args: Vec<String>,
    /// `127.0.0.1:PORT`, as the server printed it.
    pub addr: String,
    /// What it wrote on stderr after its first line ([`Server::log`]).
    log: std::sync::Arc<std::sync::Mutex<String>>,
}

impl Server {
    /// Starts one on `listen` (port 0: any free port).
    pub fn start(db: &std::path::Path, listen: &str) -> Server {
        Server::start_with(db, listen, &[])
    }

    /// [`Server::start`] with more `kbench serve` options.
    pub fn start_with(db: &std::path::Path, listen: &str, args: &[&str]) -> Server {
        let mut server = Server {
            child: None,
            db: db.to_path_buf(),
            args: args.iter().map(|a| a.to_string()).collect(),
            addr: listen.to_string(),
            log: Default::default(),
        };
        server.spawn();
        server
    }

    fn spawn(&mut self) {
        use std::io::{BufRead, BufReader};
        let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("kbench"))
            .env("KBENCH_DB", &self.db)
            .args(["serve", "--listen", &self.addr])
            .args(&self.args)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let mut line = String::new();
        stderr.read_line(&mut line).unwrap();
        self.addr = line
            .split("http://")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .unwrap_or_else(|| panic!("no address in {line:?}"))
            .to_string();
        // Keep reading stderr so the server never blocks on a full pipe.
        let log = self.log.clone();
        std::thread::spawn(move || {
            for line in stderr.lines().map_while(Result::ok) {
                let mut log = log.lock().unwrap();
                log.push_str(&line);
                log.push('\n');
            }
        });
        self.child = Some(child);
    }

    /// Its stderr so far (the access log), after the listening line.
    pub fn log(&self) -> String {
        self.log.lock().unwrap().clone()
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Stops it (SIGTERM), checking that it exits cleanly within a minute.
    pub fn stop(&mut self) {
        if let Some(status) = self.stop_within(Duration::from_secs(60)) {
            let status = status.unwrap_or_else(|e| panic!("{e}"));
            assert!(status.success(), "kbench serve exited with {status}");
        }
    }

    /// Sends SIGTERM and waits at most `limit` for the server to exit
    /// (`None` when it was not running); one still running then is killed
    /// and an `Err`.
    pub fn stop_within(
        &mut self,
        limit: Duration,
    ) -> Option<Result<std::process::ExitStatus, String>> {
        let mut child = self.child.take()?;
        // SAFETY: signals our own child, not yet reaped.
        unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
        let deadline = Instant::now() + limit;
        while Instant::now() < deadline {
            if let Some(status) = child.try_wait().unwrap() {
                return Some(Ok(status));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = child.kill();
        let _ = child.wait();
        Some(Err(format!(
            "kbench serve still ran {limit:?} after SIGTERM"
        )))
    }

    /// Starts it again on the same address and database.
    pub fn restart(&mut self) {
        assert!(self.child.is_none(), "stop the server first");
        self.spawn();
    }

    /// `GET path` answered 200 with JSON.
    pub fn get(&self, path: &str) -> Value {
        let answer = kbench_fleet::client::request(&self.addr, "GET", path, &[], b"").unwrap();
        assert_eq!(answer.status, 200, "GET {path}: {answer:?}");
        serde_json::from_str(&answer.body).unwrap()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            self.stop();
        } else if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// A new API token named `name` in the database `db` that may do what a
/// lab member does (read, push, submit, work): its secret.
pub fn create_token(db: impl AsRef<OsStr>, name: &str) -> String {
    create_token_with(db, name, "read,push,submit,work")
}

/// A new API token named `name` with `scopes` (`push,work`): its secret.
pub fn create_token_with(db: impl AsRef<OsStr>, name: &str, scopes: &str) -> String {
    let out = kbench(db)
        .args(["token", "create", "--name", name, "--scope", scopes])
        .output()
        .unwrap();
    assert_success(&out, "kbench token create: ");
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// Starts `kbench` with `args` in its own process group, waits until the
/// identifier has stored samples, Ctrl-Cs the group as a terminal would, and
/// checks the exit status 130 and that no process of the run is left.
pub fn interrupt_once_sampling(db: &Path, tmpdir: &Path, args: &[&str], set: &str, marker: &str) {
    let exe = assert_cmd::cargo::cargo_bin("kbench");
    let child = std::process::Command::new(&exe)
        .args(args)
        .args(["--max-time", "2", "--target-ci", "0.0001", "--rounds", "1"])
        .env("KBENCH_DB", db)
        .env("KBENCH_TEST_MARK", marker)
        .env("TMPDIR", tmpdir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .process_group(0)
        .spawn()
        .unwrap();
    wait_for_samples(db, set, 3);
    ctrl_c_group(
        child,
        &format!("KBENCH_TEST_MARK={marker}"),
        Duration::from_secs(5),
    );
}

/// A file in `dir` with an x86 boot header and the version string of
/// `release`, which is all the checks before qemu read.
pub fn fake_bzimage(dir: &Path, release: &str) -> PathBuf {
    let mut head = vec![0u8; 0x600];
    head[0x202..0x206].copy_from_slice(b"HdrS");
    head[0x20E..0x210].copy_from_slice(&0x200u16.to_le_bytes());
    let version = format!("{release} (nobody@nowhere) #1");
    head[0x400..0x400 + version.len()].copy_from_slice(version.as_bytes());
    let path = dir.join(format!("bzImage-{release}"));
    std::fs::write(&path, head).unwrap();
    path
}

/// A file in `dir` with an arm64 Image header and the banner of
/// `release`, which is all the checks before a boot read.
pub fn fake_arm64_image(dir: &Path, release: &str) -> PathBuf {
    let mut image = vec![0u8; 0x2000];
    image[0x38..0x3C].copy_from_slice(b"ARM\x64");
    let banner = format!("Linux version {release} (nobody@nowhere) #1 SMP\n");
    image[0x1000..0x1000 + banner.len()].copy_from_slice(banner.as_bytes());
    let path = dir.join(format!("Image-{release}"));
    std::fs::write(&path, image).unwrap();
    path
}

/// An ELF header for AArch64 with no program headers, in `dir`: a static
/// program to the checks of a guest's kbench, which is all that reads it
/// before a boot.
pub fn fake_aarch64_kbench(dir: &Path) -> PathBuf {
    let mut elf = vec![0u8; 64];
    elf[..6].copy_from_slice(b"\x7fELF\x02\x01");
    elf[0x12..0x14].copy_from_slice(&183u16.to_le_bytes());
    elf[0x20] = 64;
    elf[0x36] = 56;
    let path = dir.join("kbench-aarch64");
    std::fs::write(&path, elf).unwrap();
    path
}
