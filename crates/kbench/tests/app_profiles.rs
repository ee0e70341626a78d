//! End-to-end tests of the application profiles that stand in for the PTS
//! tests of seeds 000 and 002 (memcached, siege, 7zip, openssl, iperf,
//! build-binutils): each runs briefly against the real tool (CI installs
//! them: .ci/run) and stores a plausible value with its unit, direction
//! and description; options out of the tool's range are refused before
//! anything runs.

mod common;

use common::{
    assert_no_database, assert_success, have_path, have_programs, json, json_of, kbench, temp_db,
};
use serde_json::Value;
use std::sync::Mutex;

/// Two runs per test, one round: behaviour, not precision.
const BRIEF: [&str; 6] = ["--max-time", "1", "--min-samples", "2", "--rounds", "1"];

/// One benchmark at a time: they load both CPUs, and a test's timeouts
/// assume the machine is not running another one.
static SERIAL: Mutex<()> = Mutex::new(());

/// A metric a run must have stored: test name, unit, direction.
struct Stored<'a> {
    test: &'a str,
    unit: &'a str,
    direction: &'a str,
}

/// Runs `tests` briefly in a scratch work directory and returns `show
/// --json` of what was stored, or None (skipped) when `programs` are not
/// installed. Every test must end without a failed run.
fn measure(programs: &[&str], profile: &str, tests: &[&str]) -> Option<Value> {
    if !have_programs(programs, &format!("kbench install {profile}, as root")) {
        return None;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (_dir, db) = temp_db();
    let work = tempfile::tempdir().unwrap();
    let out = kbench(&db)
        .current_dir(work.path())
        .arg("run")
        .args(tests)
        .args(["--as", "X", "--into", "apps", "--json"])
        .args(BRIEF)
        .output()
        .unwrap();
    assert_success(&out, "run failed: ");
    for outcome in json(&out.stdout)["outcomes"].as_array().unwrap() {
        let (kind, detail) = (&outcome["kind"], outcome["detail"].as_str().unwrap());
        assert!(
            (kind == "target_met" || kind == "budget_hit") && !detail.contains("failed"),
            "{}: {kind} {detail}",
            outcome["test"]
        );
    }
    let left: Vec<_> = std::fs::read_dir(work.path()).unwrap().flatten().collect();
    assert!(left.is_empty(), "scratch files left: {left:?}");
    Some(json_of(&db, &["show", "apps", "--json"]))
}

/// Asserts that `shown` (show --json) holds each metric with its unit and
/// direction, two samples, and a positive mean.
fn assert_stored(shown: &Value, expected: &[Stored]) {
    let tests = shown["tests"].as_array().unwrap();
    for want in expected {
        let test = tests
            .iter()
            .find(|t| t["test"] == want.test)
            .unwrap_or_else(|| panic!("{} not stored: {shown:#}", want.test));
        assert_eq!(
            (test["unit"].as_str(), test["direction"].as_str()),
            (Some(want.unit), Some(want.direction)),
            "{}",
            want.test
        );
        let summary = &test["results"][0]["summary"];
        assert!(summary["n"].as_u64() >= Some(2), "{}: {summary}", want.test);
        let mean = summary["mean"].as_f64().unwrap();
        assert!(mean > 0.0 && mean.is_finite(), "{}: {mean}", want.test);
    }
}

/// The description `kbench list` gives profile test `test`.
fn description(test: &str) -> String {
    let (_dir, db) = temp_db();
    let list = json_of(&db, &["list", "--json"]);
    list["profiles"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| p["tests"].as_array().unwrap())
        .flat_map(|t| t["tests"].as_array().unwrap())
        .find(|t| t["test"] == test)
        .unwrap_or_else(|| panic!("{test} not listed"))["description"]
        .as_str()
        .unwrap()
        .to_string()
}

/// The number of CPUs kbench uses (what the `cpus` option values become).
fn cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

#[test]
fn memcached_ops_per_second_at_a_set_get_ratio() {
    let Some(shown) = measure(
        &["memcached", "memcaslap"],
        "memcached",
        &["memcached[gets=10]"],
    ) else {
        return;
    };
    let test = "memcached[connections=128,gets=10]";
    assert_stored(
        &shown,
        &[
            Stored {
                test,
                unit: "ops/s",
                direction: "higher",
            },
            Stored {
                test: &format!("{test}:net"),
                unit: "MB/s",
                direction: "higher",
            },
        ],
    );
    assert_eq!(
        description(test),
        "Set To Get Ratio: 1:10 - Connections: 128"
    );
}

#[test]
fn siege_transactions_per_second_against_nginx() {
    let Some(shown) = measure(&["siege", "nginx"], "siege", &["siege[users=50]"]) else {
        return;
    };
    assert_stored(
        &shown,
        &[
            Stored {
                test: "siege[users=50]",
                unit: "transactions/s",
                direction: "higher",
            },
            Stored {
                test: "siege[users=50]:response",
                unit: "ms",
                direction: "lower",
            },
        ],
    );
    assert_eq!(description("siege[users=50]"), "Concurrent Users: 50");
}

#[test]
fn seven_zip_compression_and_decompression_ratings() {
    // The smallest dictionary: one 7zz b pass of a few seconds.
    let Some(shown) = measure(&["7zz"], "7zip", &["7zip[dict=22]"]) else {
        return;
    };
    let test = format!("7zip[dict=22,threads={}]", cpus());
    assert_stored(
        &shown,
        &[
            Stored {
                test: &test,
                unit: "MIPS",
                direction: "higher",
            },
            Stored {
                test: &format!("{test}:decompress"),
                unit: "MIPS",
                direction: "higher",
            },
        ],
    );
    assert_eq!(
        description(&format!("7zip[dict=auto,threads={}]", cpus())),
        format!(
            "Test: Compression Rating - Threads: {} - Dictionary: auto",
            cpus()
        )
    );
}

#[test]
fn openssl_speed_of_a_digest_and_rsa() {
    let Some(shown) = measure(
        &["openssl"],
        "openssl",
        // The profile's name: both its tests, each with the options it has.
        &["openssl[algorithm=sha256,seconds=1]"],
    ) else {
        return;
    };
    let n = cpus();
    let rsa = format!("openssl-rsa[bits=4096,seconds=1,threads={n}]");
    assert_stored(
        &shown,
        &[
            Stored {
                test: &format!("openssl-evp[algorithm=sha256,seconds=1,threads={n}]"),
                unit: "byte/s",
                direction: "higher",
            },
            Stored {
                test: &rsa,
                unit: "sign/s",
                direction: "higher",
            },
            Stored {
                test: &format!("{rsa}:verify"),
                unit: "verify/s",
                direction: "higher",
            },
        ],
    );
    assert_eq!(
        description(&format!(
            "openssl-evp[algorithm=sha256,seconds=2,threads={n}]"
        )),
        format!("Algorithm: SHA256 - Threads: {n}")
    );
}

#[test]
fn iperf_tcp_udp_and_connections_per_second() {
    let Some(shown) = measure(
        &["iperf"],
        "iperf",
        &[
            "iperf-tcp[threads=1]",
            "iperf-udp",
            "iperf-connect[threads=128]",
        ],
    ) else {
        return;
    };
    assert_stored(
        &shown,
        &[
            Stored {
                test: "iperf-tcp[threads=1]",
                unit: "Mbit/s",
                direction: "higher",
            },
            Stored {
                test: "iperf-udp",
                unit: "packets/s",
                direction: "higher",
            },
            Stored {
                test: "iperf-udp:bandwidth",
                unit: "Mbit/s",
                direction: "higher",
            },
            Stored {
                test: "iperf-connect[threads=128]",
                unit: "connections/s",
                direction: "higher",
            },
        ],
    );
    assert_eq!(
        description("iperf-connect[threads=128]"),
        "Protocol: TCP - Test: Connections/s - Threads: 128"
    );
}

#[test]
fn build_binutils_times_a_build_from_the_debian_source() {
    if !have_path(
        std::path::Path::new("/usr/src/binutils"),
        "binutils-source: kbench install build-binutils",
    ) {
        return;
    }
    // libiberty alone: the unpack, configure and build path in about a minute.
    let Some(shown) = measure(
        &["make", "gcc", "flex", "bison", "makeinfo"],
        "build-binutils",
        &["build-binutils[target=all-libiberty]"],
    ) else {
        return;
    };
    assert_stored(
        &shown,
        &[Stored {
            test: "build-binutils[target=all-libiberty]",
            unit: "s",
            direction: "lower",
        }],
    );
    assert_eq!(description("build-binutils[target=all]"), "Build: all");
}

#[test]
fn options_out_of_the_tools_range_are_refused_before_anything_runs() {
    let (_dir, db) = temp_db();
    for (test, option) in [
        ("memcached[gets=0]", "gets=0"),
        ("siege[users=0]", "users=0"),
        ("siege[users=5000]", "users=5000"),
        ("7zip[dict=40]", "dict=40"),
        ("openssl-rsa[bits=1000]", "bits=1000"),
        ("iperf-tcp[threads=-1]", "threads=-1"),
        ("build-binutils[target=clean]", "target=clean"),
    ] {
        let out = kbench(&db)
            .args(["run", test, "--as", "X", "--into", "refused"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{test} was not refused");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(option) && err.contains("not allowed"),
            "{test}: {err}"
        );
    }
    assert_no_database(&db);
}

#[test]
fn a_missing_tool_names_the_install_command() {
    // An empty PATH: memcached and memcaslap are nowhere to be found.
    let (_dir, db) = temp_db();
    let out = kbench(&db)
        .env("PATH", "")
        .args(["run", "memcached", "--as", "X", "--into", "absent"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("memcaslap (package libmemcached-tools)")
            && err.contains("kbench install memcached"),
        "{err}"
    );
}
