//! Test support for the crates that check the HTML pages as a reader sees
//! them (feature `testing`, for dev-dependencies only): headless Chromium
//! (Debian's `chromium`) on a page, with what it logged on its console and
//! the requests the page made, and a fixed scatter for made-up samples.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long one Chromium run may take.
const VISIT_TIMEOUT: Duration = Duration::from_secs(120);

/// Chromium's path; `None` (the caller skips) when it is not on `PATH`,
/// with a message on stderr naming `checks` (what is skipped), except
/// under `CI=true`, where .ci/run installs it and a missing one fails.
pub fn chromium(checks: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let found = ["chromium", "chromium-browser"].iter().find_map(|name| {
        std::env::split_paths(&path)
            .map(|dir| dir.join(name))
            .find(|p| p.is_file())
    });
    if found.is_none() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "chromium is missing in CI: .ci/run installs Debian's chromium package"
        );
        // Straight to stderr: the test harness captures eprintln! of a
        // passing test, and a skip must be seen.
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED: {checks} need chromium (apt-get install chromium)"
        );
    }
    found
}

/// What one headless Chromium run left.
#[derive(Debug)]
pub struct Visit {
    /// Chromium's stdout: the DOM under `--dump-dom`.
    pub stdout: String,
    /// Console messages, script errors and refusals (CSP) from its log.
    pub console: Vec<String>,
    /// URLs the page asked for, from the NetLog ([`page_requests`]).
    pub requests: Vec<String>,
}

/// Runs headless Chromium on `url` with `extra` flags (`--dump-dom`,
/// `--window-size=...`, `--screenshot=...`) in a fresh profile, its console
/// logged to stderr and its network to a NetLog. No host name resolves but
/// loopback's, so nothing leaves the machine whatever the page asks for.
/// Panics when Chromium fails or takes more than two minutes.
pub fn visit(browser: &Path, url: &str, extra: &[&str]) -> Visit {
    let profile = tempfile::tempdir().expect("a temporary Chromium profile");
    let netlog = profile.path().join("netlog.json");
    let mut child = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("--log-net-log={}", netlog.display()))
        .args(extra)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("chromium starts");
    // Read both pipes on threads so that a full pipe cannot stall Chromium.
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        out.read_to_string(&mut s).map(|_| s)
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        err.read_to_string(&mut s).map(|_| s)
    });
    let deadline = Instant::now() + VISIT_TIMEOUT;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "chromium did not finish {url} within {} s",
                VISIT_TIMEOUT.as_secs()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let stdout = out.join().unwrap().unwrap();
    let stderr = err.join().unwrap().unwrap();
    assert!(
        status.success(),
        "chromium failed on {url}: {status}\n{stderr}"
    );
    Visit {
        stdout,
        console: stderr
            .lines()
            .filter(|l| l.contains(":CONSOLE") || l.contains("Uncaught") || l.contains("Refused"))
            .map(String::from)
            .collect(),
        requests: page_requests(&netlog, url),
    }
}

/// URLs of the requests a page made, from a Chromium NetLog: URL requests
/// with an initiator (Chromium's own background requests have none: "not
/// an origin"), other than the page itself (`page` without its fragment).
pub fn page_requests(netlog: &Path, page: &str) -> Vec<String> {
    let text = std::fs::read_to_string(netlog).expect("chromium wrote its NetLog");
    let log: serde_json::Value = serde_json::from_str(&text).expect("the NetLog is JSON");
    let start_job = &log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"];
    assert!(
        start_job.is_number(),
        "NetLog without URL_REQUEST_START_JOB"
    );
    let page = page.split('#').next().unwrap();
    log["events"]
        .as_array()
        .expect("the NetLog has events")
        .iter()
        .filter(|e| &e["type"] == start_job)
        .filter(|e| e["params"]["initiator"] != "not an origin")
        .filter_map(|e| e["params"]["url"].as_str())
        .filter(|u| *u != page)
        .map(String::from)
        .collect()
}

/// A fixed sequence of pseudo-random numbers in [-1, 1) (a linear
/// congruential generator), the same on every call: scatter for made-up
/// samples that is the same on every run.
pub fn scatter() -> impl FnMut() -> f64 {
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    move || {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((seed >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    }
}
