//! `kbench bisect --kernel-config` on a real Linux tree: the shortened
//! form of bench/bisect-kernel.sh. Debian's linux-source-6.1 becomes a git
//! repository with 4 commits on top (neutral ones and a culprit that makes
//! getppid increment a volatile counter 100 times); kbench builds each commit it
//! tests out of tree with ccache, boots it under qemu and measures
//! syscall-null in blocks. It must name the culprit, confirm it, measure
//! the A/A rebuild, and write its JSON and HTML reports.
//!
//! Needs what bench/bisect-kernel.sh needs (git, the kernel's build tools,
//! ccache, qemu, python3; .ci/run installs them). The tree, the repository
//! and ccache's cache are kept in the target directory.

mod common;

use common::linux::{linux_source, target_tmp};
use common::{assert_success, have_programs, one_guest_at_a_time};
use serde_json::Value;
use std::process::Command;

#[test]
fn bisect_builds_boots_and_names_the_culprit_in_a_linux_tree() {
    let _turn = one_guest_at_a_time();
    if !have_programs(
        &[
            "git",
            "apt-get",
            "dpkg-deb",
            "make",
            "gcc",
            "flex",
            "bison",
            "bc",
            "ccache",
            "python3",
            "qemu-system-x86_64",
        ],
        "apt-get install git make gcc flex bison bc libelf-dev ccache python3 qemu-system-x86",
    ) {
        return;
    }
    let tree = linux_source();
    let work = target_tmp().join("bisect-kernel");
    let _ = std::fs::remove_file(work.join("summary.jsonl"));
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../bench/bisect-kernel.sh");
    let out = Command::new("bash")
        .arg(script)
        .args(["--commits", "4", "--sizes", "big", "--seeds", "1"])
        .args(["--blocks", "6", "--source"])
        .arg(&tree)
        .arg("--work")
        .arg(&work)
        .env("KBENCH", env!("CARGO_BIN_EXE_kbench"))
        .output()
        .unwrap();
    assert_success(&out, "bench/bisect-kernel.sh: ");
    let summary = std::fs::read_to_string(work.join("summary.jsonl")).unwrap();
    let row: Value = serde_json::from_str(summary.lines().last().unwrap()).unwrap();
    eprintln!("{row}");
    let log = std::fs::read_to_string(work.join("runs/big-1.log")).unwrap_or_default();
    assert_eq!(row["found"], true, "{row}\n{log}");
    assert_eq!(row["confirmed"], true, "{row}");
    // 100 volatile increments in getppid, against ~300 ns under TCG.
    let effect = row["effect_pct"][0].as_f64().unwrap();
    assert!(effect > 20.0, "{row}");
    // good, bad, the commits tested and the A/A rebuild: each once.
    let builds = row["builds"].as_u64().unwrap();
    assert!((3..=6).contains(&builds), "{row}");
    // The rebuild from scratch finds the first build's objects in ccache.
    assert!(row["ccache_hits"].as_u64().unwrap() > 100, "{row}");
    assert!(row["rebuild_pct"].is_array(), "{row}");

    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(work.join("runs/big-1.json")).unwrap())
            .unwrap();
    let method = report["method"]["build"].as_str().unwrap();
    assert!(
        method.contains("make tinyconfig") && method.contains("through ccache"),
        "{method}"
    );
    assert!(
        report["diffstat"]
            .as_str()
            .unwrap()
            .contains("kernel/sys.c")
    );
    for build in report["builds"].as_array().unwrap() {
        let log = build["log"].as_str().unwrap();
        assert!(std::path::Path::new(log).is_file(), "{build}");
    }
    // Every step says what its boots took.
    let steps = report["log"].as_array().unwrap();
    assert!(
        steps.iter().any(|s| s["phase"] == "rebuild")
            && steps.iter().any(|s| s["phase"] == "search"),
        "{report:#}"
    );
    assert!(
        steps
            .iter()
            .filter(|s| s["measured_now"].as_u64() > Some(0))
            .all(|s| !s["costs"]["measurements_s"].as_array().unwrap().is_empty()),
        "{report:#}"
    );
    let page = std::fs::read_to_string(work.join("runs/big-1.html")).unwrap();
    assert!(
        page.contains("getppid does 100 increments"),
        "the culprit's subject"
    );
    assert!(page.contains("kernel/sys.c"), "the diffstat");
}
