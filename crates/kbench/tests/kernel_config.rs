//! `kbench kernel config` on a real Linux tree: Debian's linux-source-6.1,
//! configured from tinyconfig with the guest's fragment, built, and booted
//! by `kbench vm run`, whose agent measures a built-in test in it.
//!
//! Needs apt-get and dpkg-deb (the source package), tar and xz, the kernel's
//! build tools (make, gcc, flex, bison, bc, libelf-dev) and qemu; .ci/run
//! installs them. The tree and the build are kept in the target directory,
//! so a second run only builds what changed.

mod common;

use common::linux::{linux_source, sh, target_tmp};
use common::{have_programs, json_of, kbench, one_guest_at_a_time, stdout, temp_db};
use std::path::Path;

#[test]
fn a_tree_configured_for_the_guest_builds_and_boots_kbench() {
    let _turn = one_guest_at_a_time();
    if !have_programs(
        &[
            "apt-get",
            "dpkg-deb",
            "tar",
            "xz",
            "make",
            "gcc",
            "flex",
            "bison",
            "bc",
            "qemu-system-x86_64",
        ],
        "apt-get install make gcc flex bison bc libelf-dev xz-utils qemu-system-x86",
    ) {
        return;
    }
    let (_dir, db) = temp_db();
    let tree = linux_source();
    let build = target_tmp().join("linux-guest-build");
    let (tree_text, build_text) = (tree.to_str().unwrap(), build.to_str().unwrap());
    let printed = stdout(
        &db,
        &["kernel", "config", tree_text, "--build-dir", build_text],
    );
    let config_path = printed.trim().to_string();
    assert_eq!(Path::new(&config_path), build.join(".config"));
    let config = std::fs::read_to_string(&config_path).unwrap();
    for option in [
        "CONFIG_ACPI=y",
        "CONFIG_SERIAL_8250_CONSOLE=y",
        "CONFIG_VIRTIO_BLK=y",
    ] {
        assert!(
            config.lines().any(|l| l == option),
            "{option} in {config_path}"
        );
    }
    assert!(
        build.join("kbench-guest.config").is_file(),
        "the fragment is kept beside the config"
    );
    // The tree itself was not written: no .config of its own.
    assert!(!tree.join(".config").exists());

    let started = std::time::Instant::now();
    let jobs = format!(
        "-j{}",
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    sh(
        &tree,
        "make",
        &[&format!("O={}", build.display()), &jobs, "bzImage"],
    );
    eprintln!("built in {:?}", started.elapsed());
    let image = build.join("arch/x86/boot/bzImage");
    let image = image.to_str().unwrap();
    stdout(
        &db,
        &[
            "vm",
            "run",
            "--kernel",
            image,
            "--as",
            "tiny",
            "syscall-null",
            "--rounds",
            "1",
            "--max-time",
            "0.3",
            "--accel",
            "tcg",
            "--timeout",
            "120",
            "--into",
            "tiny",
        ],
    );
    let show = json_of(&db, &["show", "tiny", "--json"]);
    let run = &show["identifiers"][0]["runs"][0];
    assert_eq!(run["status"], "complete", "{run}");
    assert!(
        run["info"]["snapshot"]["kernel_release"]
            .as_str()
            .unwrap()
            .starts_with("6.1."),
        "{run}"
    );
}

#[test]
fn a_directory_that_is_no_kernel_tree_is_refused() {
    let (dir, db) = temp_db();
    let out = kbench(&db)
        .args(["kernel", "config"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("is not a Linux source tree"), "{stderr}");
}
