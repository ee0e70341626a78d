//! Seed 000's applications under kernels kbench boots: `kbench vm compare`
//! of two real Debian cloud kernels on `redis[test=get]`, `hackbench` and
//! a short buffered fio, which builds (or finds cached) the Debian rootfs
//! holding their packages and runs the profiles in each guest, chrooted in
//! it; and a guest that runs out of disk and of memory.
//!
//! Needs root, qemu-system-x86, apt-get and dpkg-deb (the kernels),
//! mmdebstrap and e2fsprogs (the rootfs), and network to Debian's mirror;
//! .ci/run installs them. Kernels and the rootfs are cached in the target
//! directory, so a second run builds and downloads nothing.

mod common;

use common::{have_programs, json_of, kbench, one_guest_at_a_time, temp_db};
use serde_json::Value;
use std::path::{Path, PathBuf};

const REDIS: &str = "redis[test=get,requests=20000]";
const HACKBENCH: &str = "hackbench[ipc=pipe,mode=process,loops=50]";
const FIO: &str = "fio-randread[direct=0,engine=libaio,size=64m,runtime=1]";

fn cache(name: &str) -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join(name)
}

/// Whether kernels can be fetched and booted, and a rootfs built, here;
/// see [`have_programs`].
fn can_boot_profiles() -> bool {
    have_programs(
        &[
            "qemu-system-x86_64",
            "apt-get",
            "dpkg-deb",
            "mmdebstrap",
            "mke2fs",
        ],
        "apt-get install qemu-system-x86 mmdebstrap e2fsprogs",
    )
}

/// kbench with the shared kernel and rootfs caches.
fn kbench_cached(db: &Path, args: &[&str]) -> assert_cmd::Command {
    let mut command = kbench(db);
    command
        .args(args)
        .env("KBENCH_KERNEL_CACHE", cache("kernels"))
        .env("KBENCH_ROOTFS_CACHE", cache("rootfs"));
    command
}

/// Runs kbench with the shared caches, asserting success; returns
/// (stdout, stderr).
fn ok(db: &Path, args: &[&str]) -> (String, String) {
    let out = kbench_cached(db, args).output().unwrap();
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(
        out.status.success(),
        "kbench {args:?} failed ({}):\n{stderr}\n{stdout}",
        out.status
    );
    (stdout, stderr)
}

/// The samples of each identifier came from its guest: the kernel it
/// booted, the rootfs's Debian release, the rootfs id, and the redis the
/// rootfs holds (its version as the tool printed it, which the Debian
/// package's version contains).
#[test]
fn two_debian_kernels_compared_on_redis_and_hackbench_in_their_rootfs() {
    let _turn = one_guest_at_a_time();
    if !can_boot_profiles() {
        return;
    }
    let (_dir, db) = temp_db();
    let started = std::time::Instant::now();
    let (fetched, _) = ok(&db, &["kernel", "fetch", "debian:6.1", "debian:6.12"]);
    let releases: Vec<&str> = fetched
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .collect();
    assert_eq!(releases.len(), 2, "{fetched}");

    let (report, stderr) = ok(
        &db,
        &[
            "vm",
            "compare",
            "--kernel",
            releases[0],
            "--kernel",
            releases[1],
            REDIS,
            HACKBENCH,
            FIO,
            "--rounds",
            "1",
            "--max-time",
            "4",
            "--accel",
            "tcg",
            "--timeout",
            "120",
            "--into",
            "apps",
        ],
    );
    eprintln!("compared in {:?}", started.elapsed());
    assert!(
        stderr.contains("mmdebstrap") || stderr.contains("already cached"),
        "the rootfs was built or found cached: {stderr}"
    );
    assert!(report.contains("Redis 7"), "{report}");
    assert!(report.contains("Hackbench"), "{report}");
    assert!(report.contains("Flexible IO Tester"), "{report}");

    let listed = json_of(
        &db,
        &[
            "rootfs",
            "list",
            "--json",
            "--rootfs-cache",
            cache("rootfs").to_str().unwrap(),
        ],
    );
    let rootfs = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|r| {
            let packages = r["packages"].as_array().unwrap();
            packages.iter().any(|p| p == "redis-server") && packages.iter().any(|p| p == "rt-tests")
        })
        .unwrap_or_else(|| panic!("a rootfs with redis and rt-tests: {listed}"));
    let installed = rootfs["installed"].as_array().unwrap();
    let redis_package = installed
        .iter()
        .find(|i| i["package"] == "redis-server")
        .unwrap()["version"]
        .as_str()
        .unwrap();

    let show = json_of(&db, &["show", "apps", "--json"]);
    let identifiers = show["identifiers"].as_array().unwrap();
    assert_eq!(identifiers.len(), 2, "{show}");
    for (identifier, release) in identifiers.iter().zip(&releases) {
        let run = &identifier["runs"][0];
        assert_eq!(run["status"], "complete", "{run}");
        let snapshot = &run["info"]["snapshot"];
        assert_eq!(snapshot["kernel_release"], *release);
        assert_eq!(snapshot["rootfs"]["id"], rootfs["id"], "{snapshot}");
        assert_eq!(snapshot["rootfs"]["release"], rootfs["release"]);
        let codename = rootfs["release"].as_str().unwrap();
        assert!(
            snapshot["os"].as_str().unwrap().contains(codename),
            "the guest's OS is the rootfs's release {codename}: {snapshot}"
        );
        // fio's file lay on the rootfs's disk, not in the guest's memory.
        assert_eq!(snapshot["work_dir_fs"], "ext4", "{snapshot}");
        let tools = snapshot["tools"].as_object().unwrap();
        let redis_tool = tools
            .iter()
            .find(|(test, _)| test.starts_with("redis["))
            .map(|(_, tool)| tool)
            .unwrap_or_else(|| panic!("redis in the snapshot's tools: {snapshot}"));
        let version = redis_tool["version"].as_str().unwrap();
        assert!(
            redis_package.contains(version),
            "redis {version} in the guest is the rootfs's {redis_package}"
        );
        assert!(
            tools.keys().any(|t| t.starts_with("hackbench[")),
            "{tools:?}"
        );
    }
    let counts = show_counts(&show);
    assert!(
        counts.iter().all(|(_, samples)| *samples >= 3),
        "every test sampled on both kernels: {counts:?}"
    );
}

/// A profile of the user's own (`--profiles DIR`) whose command succeeds
/// only in a kbench guest (its hostname); it needs fio, so the rootfs is
/// the comparison's.
const MINE: &str = "name = \"mine\"\nrequires = { fio = \"fio\" }\n\
command = \"grep -qx kbench-guest /proc/sys/kernel/hostname && echo 'took: 7'\"\n\
[[metrics]]\nname = \"took\"\nunit = \"ms\"\ndirection = \"lower\"\nline = \"took\"\n\
[[tests]]\nid = \"mine\"\n";

/// A guest that runs out of disk (fio's file larger than the rootfs's free
/// space) and of memory (12,000 hackbench processes in 256 MiB): each test
/// FAILED with what the guest ran out of, the agent lives on, and the tests
/// that ran before them keep their samples, the user's own profile's among
/// them. The same rootfs as the comparison's (same packages), so it is
/// built once.
#[test]
fn a_guest_out_of_disk_or_memory_fails_the_test_and_says_why() {
    let _turn = one_guest_at_a_time();
    if !can_boot_profiles() {
        return;
    }
    let (dir, db) = temp_db();
    let mine = dir.path().join("profiles");
    std::fs::create_dir(&mine).unwrap();
    std::fs::write(mine.join("mine.toml"), MINE).unwrap();
    let (fetched, _) = ok(&db, &["kernel", "fetch", "debian:6.1"]);
    let release = fetched.split_whitespace().next().unwrap();
    let out = kbench_cached(
        &db,
        &[
            "--profiles",
            mine.to_str().unwrap(),
            "vm",
            "run",
            "--kernel",
            release,
            "--memory",
            "256M",
            HACKBENCH,
            "mine",
            REDIS,
            "fio-write[direct=0,engine=libaio,size=3g,runtime=1]",
            "hackbench[groups=300,loops=5,ipc=pipe,mode=process]",
            "--rounds",
            "1",
            "--keep-going",
            "--max-time",
            "3",
            "--accel",
            "tcg",
            "--timeout",
            "120",
            "--into",
            "starved",
        ],
    )
    .output()
    .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "tests FAILED: {stderr}");
    let failed = |test: &str| {
        stderr
            .lines()
            .find(|line| line.contains(test) && line.contains(": FAILED: "))
            .unwrap_or_else(|| panic!("{test} FAILED: {stderr}"))
            .to_string()
    };
    let disk = failed("fio-write[");
    assert!(disk.contains("is full (0 KiB free)"), "{disk}");
    let memory = failed("hackbench[groups=300,");
    assert!(memory.contains("the system ran out of memory"), "{memory}");
    assert!(memory.contains("Out of memory: Killed process"), "{memory}");

    let show = json_of(&db, &["show", "starved", "--json"]);
    let run = &show["identifiers"][0]["runs"][0];
    assert_eq!(
        run["status"], "complete",
        "the agent outlived the OOM: {run}"
    );
    let counts = show_counts(&show);
    assert!(
        counts.iter().any(|(_, n)| *n >= 3),
        "samples kept: {counts:?}"
    );
    let tests = show["tests"].as_array().unwrap();
    let mine = tests
        .iter()
        .find(|t| t["test"] == "mine")
        .expect("mine ran");
    assert!(
        mine["results"][0]["summary"]["n"].as_u64().unwrap() >= 1,
        "{mine}"
    );
}

/// (identifier, samples of its main metric) per test and identifier.
fn show_counts(show: &Value) -> Vec<(String, u64)> {
    show["tests"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|test| test["metric"] == "value")
        .flat_map(|test| test["results"].as_array().unwrap().iter())
        .map(|result| {
            let identifier = result["identifier"].as_str().unwrap().to_string();
            (identifier, result["summary"]["n"].as_u64().unwrap_or(0))
        })
        .collect()
}
