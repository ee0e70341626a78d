//! End-to-end tests of `kbench kernel` and `kbench vm`: two real Debian
//! cloud kernels fetched with apt, compared in qemu under TCG, and the bad
//! inputs a user can give.
//!
//! The Debian test needs network to Debian's mirror (apt) and
//! qemu-system-x86 (.ci/run installs it). Kernels are cached in the target
//! directory, so a second run downloads nothing.

mod common;

use common::{fake_bzimage, have_programs, json_of, kbench, one_guest_at_a_time, temp_db};
use serde_json::Value;
use std::path::{Path, PathBuf};

const TCG_NOTE: &str = "emulated (TCG)";

fn kernel_cache() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("kernels")
}

/// Runs kbench, asserting success; returns (stdout, stderr).
fn ok(db: &Path, args: &[&str]) -> (String, String) {
    let out = kbench(db)
        .args(args)
        .env("KBENCH_KERNEL_CACHE", kernel_cache())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success(),
        "kbench {args:?} failed ({}):\n{stderr}\n{stdout}",
        out.status
    );
    (stdout, stderr)
}

/// Runs kbench, asserting failure with status 1; returns stderr.
fn fails(db: &Path, args: &[&str], env: &[(&str, &str)]) -> String {
    let mut command = kbench(db);
    command.args(args);
    for (key, value) in env {
        command.env(key, value);
    }
    let out = command.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "kbench {args:?}: {stderr}");
    stderr
}

/// "RELEASE  /path/vmlinuz-RELEASE" lines.
fn kernels_in(stdout: &str) -> Vec<(String, String)> {
    stdout
        .lines()
        .filter_map(|line| {
            let mut parts = line.split_whitespace();
            Some((parts.next()?.to_string(), parts.next()?.to_string()))
        })
        .collect()
}

/// Whether Debian's kernels can be fetched (apt-get, dpkg-deb) and booted
/// (qemu) here; see [`have_programs`].
fn can_fetch_and_boot_kernels() -> bool {
    have_programs(
        &["qemu-system-x86_64", "apt-get", "dpkg-deb"],
        "apt-get install qemu-system-x86; kernels are fetched with apt-get and dpkg-deb",
    )
}

/// `vm run`'s flags for TCG with a minute to boot.
const TCG: [&str; 4] = ["--accel", "tcg", "--timeout", "60"];

/// `vm run --kernel KERNEL syscall-null`: one short round into `set`,
/// then `more` flags.
fn vm_run_syscall_null<'a>(kernel: &'a str, set: &'a str, more: &[&'a str]) -> Vec<&'a str> {
    let run = [
        "vm",
        "run",
        "--kernel",
        kernel,
        "syscall-null",
        "--rounds",
        "1",
        "--max-time",
        "0.2",
        "--into",
        set,
    ];
    [&run[..], more].concat()
}

/// Fetches Debian's 6.1 cloud kernel (or finds it cached): its release.
fn debian_6_1(db: &Path) -> String {
    let (fetched, _) = ok(db, &["kernel", "fetch", "debian:6.1"]);
    kernels_in(&fetched)[0].0.clone()
}

#[test]
fn debian_kernels_side_by_side_under_tcg() {
    let _turn = one_guest_at_a_time();
    if !can_fetch_and_boot_kernels() {
        return;
    }
    let (_dir, db) = temp_db();
    let started = std::time::Instant::now();

    let (fetched, _) = ok(&db, &["kernel", "fetch", "debian:6.1", "debian:6.12"]);
    let kernels = kernels_in(&fetched);
    assert_eq!(kernels.len(), 2, "{fetched}");
    assert!(kernels[0].0.starts_with("6.1.") && kernels[0].0.ends_with("-cloud-amd64"));
    assert!(kernels[1].0.starts_with("6.12.") && kernels[1].0.ends_with("-cloud-amd64"));
    for (release, path) in &kernels {
        assert!(Path::new(path).is_absolute() && Path::new(path).is_file());
        assert!(path.ends_with(&format!("vmlinuz-{release}")), "{path}");
    }
    let (listed, _) = ok(&db, &["kernel", "list"]);
    assert_eq!(kernels_in(&listed).len(), 2, "{listed}");
    eprintln!("fetched in {:?}", started.elapsed());

    let (old, new) = (&kernels[0], &kernels[1]);
    let (report, stderr) = ok(
        &db,
        &[
            "vm",
            "compare",
            "--kernel",
            &old.1,
            "--kernel",
            &new.0, // a cached release works as well as a path
            "syscall-null",
            "open-close",
            "pipe-lat",
            "--rounds",
            "2",
            "--max-time",
            "0.3",
            "--into",
            "deb",
            "--accel",
            "tcg",
            "--timeout",
            "60",
        ],
    );
    eprintln!("compared in {:?}:\n{stderr}", started.elapsed());
    assert!(stderr.contains(TCG_NOTE), "TCG is said loudly: {stderr}");
    // Interleaved: A, B, A, B.
    let boots: Vec<&str> = stderr.lines().filter(|l| l.starts_with("Round ")).collect();
    assert_eq!(boots.len(), 4, "{stderr}");
    for (i, line) in boots.iter().enumerate() {
        let expected = if i % 2 == 0 { &old.0 } else { &new.0 };
        assert!(line.contains(&format!("as '{expected}'")), "{line}");
    }
    // The comparison printed at the end names both kernels.
    assert!(
        report.contains(&old.0) && report.contains(&new.0),
        "{report}"
    );

    let show = json_of(&db, &["show", "deb", "--json"]);
    let host_release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
    let identifiers = show["identifiers"].as_array().unwrap();
    let names: Vec<&str> = identifiers
        .iter()
        .map(|i| i["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, [old.0.as_str(), new.0.as_str()]);
    for identifier in identifiers {
        let runs = identifier["runs"].as_array().unwrap();
        assert_eq!(runs.len(), 2, "one run per round");
        for run in runs {
            assert_eq!(run["status"], "complete");
            let info = &run["info"];
            assert_eq!(
                info["snapshot"]["kernel_release"], identifier["name"],
                "the guest's own release"
            );
            assert_eq!(info["snapshot"]["virtualization"], "qemu-tcg");
            assert_eq!(
                info["host"]["kernel_release"],
                host_release.trim(),
                "the host's snapshot"
            );
            let notes = info["notes"].as_array().unwrap();
            assert!(
                notes
                    .iter()
                    .any(|n| n.as_str().unwrap().starts_with(TCG_NOTE)),
                "{notes:?}"
            );
        }
    }
    for test in show["tests"].as_array().unwrap() {
        let results = test["results"].as_array().unwrap();
        assert_eq!(results.len(), 2, "{test:#}");
        for result in results {
            assert!(result["summary"]["n"].as_u64().unwrap() >= 5, "{result:#}");
            assert_eq!(result["rounds"], 2, "{result:#}");
        }
    }

    // `kbench compare` shows the two kernels side by side.
    let (table, _) = ok(&db, &["compare", "deb", "--format", "table"]);
    let header = table
        .lines()
        .find(|l| l.contains(&old.0) && l.contains(&new.0));
    assert!(header.is_some(), "no line names both kernels:\n{table}");
    let compared = json_of(&db, &["compare", "deb", "--format", "json"]);
    assert_eq!(compared["schema"], "kbench.compare/1");
    eprintln!("done in {:?}", started.elapsed());

    guest_monitors(&db, &old.1, &old.0);
    eprintln!("vm run done in {:?}", started.elapsed());

    duet(&db, &old.0, &new.0);
    eprintln!("duet done in {:?}", started.elapsed());
}

/// `kbench vm run` stores the guest kernel's counters and monitors: the
/// agent in the guest records them as it does on the host.
fn guest_monitors(db: &Path, kernel: &str, release: &str) {
    ok(db, &vm_run_syscall_null(kernel, "guest", &TCG));
    let show = json_of(db, &["show", "guest", "--json"]);
    let snapshot = &show["identifiers"][0]["runs"][0]["info"]["snapshot"];
    assert_eq!(snapshot["kernel_release"], release, "the guest's snapshot");
    let counters = json_of(db, &["show", "guest", "--counters", "--json"]);
    let rows = counters["tests"][0]["rows"].as_array().unwrap();
    let metrics: Vec<&str> = rows.iter().map(|r| r["metric"].as_str().unwrap()).collect();
    assert!(
        metrics
            .iter()
            .any(|m| m.starts_with("vmstat.") || m.starts_with("interrupts.")),
        "the guest's system monitors: {metrics:?}"
    );
    // Debian's kernels have perf events: the guest counts its agent.
    assert!(
        snapshot["counters"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c == "task_clock"),
        "{snapshot}"
    );
    assert!(metrics.contains(&"perf.task_clock_per_op"), "{metrics:?}");
}

/// An ext4 image of a tiny tree (no mmdebstrap): an /etc/os-release whose
/// PRETTY_NAME the guest's snapshot must then say.
fn tiny_rootfs(dir: &Path, pretty_name: &str) -> PathBuf {
    let tree = dir.join("tree");
    std::fs::create_dir_all(tree.join("etc")).unwrap();
    std::fs::write(
        tree.join("etc/os-release"),
        format!("PRETTY_NAME=\"{pretty_name}\"\nNAME=kbench-test\nID=kbench-test\n"),
    )
    .unwrap();
    let image = dir.join("tiny-rootfs.img");
    let made = std::process::Command::new("mke2fs")
        .args(["-q", "-t", "ext4", "-d"])
        .arg(&tree)
        .arg("-F")
        .arg(&image)
        .arg("64M")
        .output()
        .unwrap();
    assert!(made.status.success(), "mke2fs: {made:?}");
    image
}

/// `vm run --rootfs`: a Debian kernel loads its own virtio modules, mounts
/// the image and runs the test chrooted in it, as the snapshot's OS (read
/// from the image) and the run's note (the image's name) say.
#[test]
fn a_guest_runs_in_its_rootfs_image() {
    let _turn = one_guest_at_a_time();
    if !can_fetch_and_boot_kernels() || !have_programs(&["mke2fs"], "apt-get install e2fsprogs") {
        return;
    }
    let (dir, db) = temp_db();
    let release = debian_6_1(&db);
    let image = tiny_rootfs(dir.path(), "kbench rootfs of issue 35");
    let pristine = std::fs::read(&image).unwrap();
    let image = image.to_str().unwrap();
    let (_, stderr) = ok(
        &db,
        &vm_run_syscall_null(&release, "disk", &[&TCG[..], &["--rootfs", image]].concat()),
    );
    assert!(stderr.contains("boot: agent up after"), "{stderr}");
    let show = json_of(&db, &["show", "disk", "--json"]);
    let run = &show["identifiers"][0]["runs"][0];
    assert_eq!(run["status"], "complete");
    let snapshot = &run["info"]["snapshot"];
    assert_eq!(snapshot["os"], "kbench rootfs of issue 35", "{snapshot}");
    assert_eq!(snapshot["kernel_release"], release.as_str());
    let notes = run["info"]["notes"].as_array().unwrap();
    assert!(
        notes
            .iter()
            .any(|n| n.as_str().unwrap().contains("tiny-rootfs.img (64 MiB)")),
        "{notes:?}"
    );
    // The image is as it was (mounting alone writes the superblock): the
    // guest's writes went to qemu's throwaway overlay.
    assert!(
        std::fs::read(image).unwrap() == pristine,
        "the image changed"
    );
}

/// `vm compare --duet`: both kernels boot at once, block by block, each
/// qemu on a CPU of its own, and compare pairs them by block.
fn duet(db: &Path, old: &str, new: &str) {
    let (_, stderr) = ok(
        db,
        &[
            "vm",
            "compare",
            "--duet",
            "--kernel",
            old,
            "--kernel",
            new,
            "syscall-null",
            "--blocks",
            "6",
            "--max-time",
            "0.3",
            "--into",
            "duet",
            "--accel",
            "tcg",
            "--timeout",
            "60",
            "--format",
            "json",
        ],
    );
    assert!(stderr.contains("at once"), "{stderr}");
    let compared = json_of(db, &["compare", "duet", "--format", "json"]);
    let result = &compared["metrics"][0]["results"][1];
    assert_eq!(result["identifier"], new, "{compared:#}");
    assert_eq!(
        result["comparison"]["analysis"],
        serde_json::json!({"kind": "blocked", "blocks": 6}),
        "{compared:#}"
    );
    // Each block's two boots measured at the same time: their samples'
    // time spans overlap.
    let export = json_of(db, &["export", "duet"]);
    let spans = |name: &str| -> std::collections::BTreeMap<u64, (u64, u64)> {
        let identifier = export["identifiers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["name"] == name)
            .unwrap();
        let mut spans = std::collections::BTreeMap::new();
        for run in identifier["runs"].as_array().unwrap() {
            let notes = run["info"]["notes"].to_string();
            assert!(notes.contains("duet: measured at the same time"), "{notes}");
            for sample in run["samples"]["syscall-null"].as_array().unwrap() {
                let (round, at) = (
                    sample["round"].as_u64().unwrap(),
                    sample["at_ms"].as_u64().unwrap(),
                );
                let span = spans.entry(round).or_insert((at, at));
                *span = (span.0.min(at), span.1.max(at));
            }
        }
        spans
    };
    let (a, b) = (spans(old), spans(new));
    assert_eq!((a.len(), b.len()), (6, 6), "{a:?} {b:?}");
    let overlapping = a
        .iter()
        .filter(|(round, (start, end))| b[round].0 <= *end && *start <= b[round].1)
        .count();
    assert!(
        overlapping >= 5,
        "{overlapping} of 6 blocks overlap: {a:?} {b:?}"
    );
}

/// Auto acceleration: KVM when a probe boot works, else TCG and the notes
/// say why. Either way the stored run says what it was.
#[test]
fn auto_acceleration_says_what_it_used() {
    let _turn = one_guest_at_a_time();
    if !have_programs(&["qemu-system-x86_64"], "apt-get install qemu-system-x86") {
        return;
    }
    let (_dir, db) = temp_db();
    let release = debian_6_1(&db);
    let (_, stderr) = ok(&db, &vm_run_syscall_null(&release, "auto", &[]));
    let show: Value = json_of(&db, &["show", "auto", "--json"]);
    let info = &show["identifiers"][0]["runs"][0]["info"];
    let notes: Vec<&str> = info["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    match info["snapshot"]["virtualization"].as_str().unwrap() {
        "kvm" => assert!(notes.is_empty(), "{notes:?}"),
        "qemu-tcg" => {
            assert!(notes[0].starts_with(TCG_NOTE), "{notes:?}");
            assert!(notes[1].starts_with("KVM was not used: "), "{notes:?}");
            assert!(stderr.contains("WARNING: KVM was not used"), "{stderr}");
        }
        other => panic!("unexpected virtualization {other}"),
    }
    assert!(stderr.contains("first sample after"), "{stderr}");
}

#[test]
fn vm_run_quiet_leaves_stderr_empty() {
    let _turn = one_guest_at_a_time();
    if !can_fetch_and_boot_kernels() {
        return;
    }
    let (_dir, db) = temp_db();
    let release = debian_6_1(&db);
    let vm_run = |flags: &[&str], set: &str| {
        ok(
            &db,
            &vm_run_syscall_null(&release, set, &[&TCG, flags].concat()),
        )
        .1
    };
    let loud = vm_run(&[], "loud");
    assert!(
        loud.contains(TCG_NOTE) && loud.contains("Stored "),
        "{loud}"
    );
    assert_eq!(vm_run(&["-q"], "quiet"), "");
}

/// `vm run --kernel image` with an empty PATH: the error names the qemu
/// `program` the kernel's architecture needs and the `package` installing it.
fn qemu_missing_names_its_package(
    db: &Path,
    dir: &Path,
    image: &str,
    program: &str,
    package: &str,
) {
    let empty_path = dir.join("empty-path");
    std::fs::create_dir_all(&empty_path).unwrap();
    let error = fails(
        db,
        &["vm", "run", "--kernel", image, "syscall-null"],
        &[("PATH", empty_path.to_str().unwrap())],
    );
    assert!(
        error.contains(&format!("{program} was not found")),
        "{error}"
    );
    assert!(
        error.contains(&format!("apt-get install {package}")),
        "{error}"
    );
}

/// A file with an arm64 Image's header and banner: enough for kbench's
/// checks before qemu.
fn fake_arm64_image(dir: &Path) -> PathBuf {
    let mut image = vec![0u8; 0x2000];
    image[0x38..0x3C].copy_from_slice(b"ARM\x64");
    let banner = b"Linux version 6.99.0-fake-arm64 (nobody@nowhere) #1 SMP\n";
    image[0x1000..0x1000 + banner.len()].copy_from_slice(banner);
    let path = dir.join("Image");
    std::fs::write(&path, image).unwrap();
    path
}

/// An arm64 kernel on this x86_64 host: what it needs is named before
/// anything boots.
#[test]
#[cfg(target_arch = "x86_64")]
fn an_arm64_kernel_says_what_its_guest_needs() {
    let (dir, db) = temp_db();
    let arm64 = fake_arm64_image(dir.path());
    let arm64 = arm64.to_str().unwrap();
    let bzimage = fake_bzimage(dir.path(), "6.99.0-fake");
    qemu_missing_names_its_package(
        &db,
        dir.path(),
        arm64,
        "qemu-system-aarch64",
        "qemu-system-arm",
    );

    let two = [
        "vm",
        "compare",
        "--kernel",
        bzimage.to_str().unwrap(),
        "--kernel",
        arm64,
        "syscall-null",
    ];
    let error = fails(&db, &two, &[]);
    assert!(error.contains("two architectures"), "{error}");
    assert!(
        error.contains("is x86_64") && error.contains("is aarch64"),
        "{error}"
    );

    // The host's kbench (x86_64, dynamic) cannot be an arm64 guest's init.
    let host_kbench = env!("CARGO_BIN_EXE_kbench");
    let run = |guest_kbench: &str, more: &[&str]| {
        let mut args = vec![
            "vm",
            "run",
            "--kernel",
            arm64,
            "--qemu",
            "/bin/true",
            "--guest-kbench",
            guest_kbench,
        ];
        args.extend(more);
        fails(&db, &args, &[])
    };
    let error = run(host_kbench, &["syscall-null"]);
    assert!(
        error.contains("is built for x86_64, but the guest's kernel is aarch64"),
        "{error}"
    );
    let error = run(host_kbench, &["--rootfs", "/no/such.img", "syscall-null"]);
    assert!(
        error.contains("aarch64 guest has no root filesystem"),
        "{error}"
    );
    let guest_kbench = common::fake_aarch64_kbench(dir.path());
    let error = run(
        guest_kbench.to_str().unwrap(),
        &["--accel", "kvm", "syscall-null"],
    );
    assert!(
        error.contains("KVM runs guests of the host's architecture (x86_64) only"),
        "{error}"
    );
}

#[test]
fn bad_input_is_explained() {
    let (dir, db) = temp_db();
    let not_kernel = dir.path().join("notes.txt");
    std::fs::write(&not_kernel, "not a kernel").unwrap();
    let not_kernel = not_kernel.to_str().unwrap();
    let error = fails(
        &db,
        &["vm", "run", "--kernel", not_kernel, "syscall-null"],
        &[],
    );
    assert!(
        error.contains("is not a kernel image kbench can boot"),
        "{error}"
    );
    assert!(error.contains("HdrS"), "{error}");

    let error = fails(
        &db,
        &["vm", "run", "--kernel", "no-such-release", "syscall-null"],
        &[("KBENCH_KERNEL_CACHE", dir.path().to_str().unwrap())],
    );
    assert!(error.contains("kbench kernel fetch"), "{error}");

    let image = fake_bzimage(dir.path(), "6.99.0-fake");
    let image = image.to_str().unwrap();
    qemu_missing_names_its_package(
        &db,
        dir.path(),
        image,
        "qemu-system-x86_64",
        "qemu-system-x86",
    );

    // Fails (status 1) without extra environment, saying `needle`.
    let fails_with = |args: &[&str], needle: &str| {
        let error = fails(&db, args, &[]);
        assert!(error.contains(needle), "{error}");
    };

    fails_with(
        &["vm", "compare", "--kernel", image, "syscall-null"],
        "two or more --kernel",
    );
    fails_with(
        &[
            "vm",
            "run",
            "--kernel",
            image,
            "--rootfs",
            "/no/such.img",
            "syscall-null",
        ],
        "--rootfs /no/such.img is neither an image file nor a rootfs id",
    );
    fails_with(
        &[
            "vm",
            "compare",
            "--kernel",
            image,
            "--kernel",
            image,
            "syscall-null",
        ],
        "name them apart with --as",
    );
    let error = fails(
        &db,
        &[
            "vm",
            "run",
            "--kernel",
            image,
            "syscall-null",
            "--accel",
            "tcg",
            "--qemu",
            "/bin/true",
        ],
        &[("TMPDIR", "/nonexistent-kbench-tmp")],
    );
    assert!(
        error.contains("cannot build the guest's initramfs"),
        "{error}"
    );
    assert!(error.contains("/nonexistent-kbench-tmp"), "{error}");
    let duet = |extra: &[&str], needle: &str| {
        let mut args = vec![
            "vm", "compare", "--duet", "--kernel", image, "--kernel", image,
        ];
        args.extend(extra);
        fails_with(&args, needle);
    };
    duet(&["--kernel", image, "syscall-null"], "two kernels at once");
    duet(&["pipe-lat"], "single-task");
    duet(&["--cpus", "2", "syscall-null"], "--cpus 2 cannot be");
    let out = kbench(&db)
        .args([
            "vm", "compare", "--duet", "--rounds", "3", "--kernel", image, "--kernel", image,
        ])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "clap refuses --rounds with --duet"
    );
    fails_with(&["kernel", "fetch", "6.1"], "debian:VERSION");
    fails_with(
        &[
            "vm",
            "run",
            "--kernel",
            image,
            "--memory",
            "lots",
            "syscall-null",
        ],
        "--memory",
    );
}

/// A guest that never reaches the agent (here: no init, so the kernel
/// panics) is reported with its serial log; nothing is stored.
#[test]
fn a_guest_that_panics_is_reported_with_its_serial_log() {
    let _turn = one_guest_at_a_time();
    if !have_programs(&["qemu-system-x86_64"], "apt-get install qemu-system-x86") {
        return;
    }
    let (dir, db) = temp_db();
    let release = debian_6_1(&db);
    let error = fails(
        &db,
        &[
            "vm",
            "run",
            "--kernel",
            &release,
            "syscall-null",
            "--accel",
            "tcg",
            "--append",
            "rdinit=/no-such-init",
            "--timeout",
            "60",
        ],
        &[("KBENCH_KERNEL_CACHE", kernel_cache().to_str().unwrap())],
    );
    assert!(error.contains("a kernel panic"), "{error}");
    assert!(error.contains("Kernel panic - not syncing"), "{error}");
    // A guest that dies before its agent is booted once more (a TCG boot
    // can crash by chance); this one dies every time: both logs are kept
    // and named.
    let logs: Vec<_> = std::fs::read_dir(dir.path().join("vm-logs"))
        .unwrap()
        .flatten()
        .collect();
    assert_eq!(logs.len(), 2);
    for log in &logs {
        assert!(error.contains(&log.path().display().to_string()), "{error}");
    }
    assert!(
        error.contains("died before its agent started too"),
        "{error}"
    );
}

/// `kernel fetch` with stderr not a terminal: each step a plain line, no
/// bar and no escape code. apt is stood in for by scripts on PATH (one
/// cloud kernel package known, apt-get and dpkg-deb failing if run) and
/// that kernel is already cached, so nothing is downloaded.
#[test]
fn kernel_fetch_steps_are_plain_lines_off_a_terminal() {
    use std::os::unix::fs::PermissionsExt;
    let (dir, db) = temp_db();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let release = "6.1.0-99-cloud-amd64";
    for (tool, script) in [
        ("apt-cache", format!("echo linux-image-{release}")),
        ("apt-get", "exit 1".to_string()),
        ("dpkg-deb", "exit 1".to_string()),
    ] {
        let path = bin.join(tool);
        std::fs::write(&path, format!("#!/bin/sh\n{script}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let cache = dir.path().join("kernels");
    std::fs::create_dir_all(cache.join(release).join("modules")).unwrap();
    std::fs::write(cache.join(release).join(format!("vmlinuz-{release}")), b"x").unwrap();
    let path = std::env::join_paths(
        std::iter::once(bin).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
    )
    .unwrap();

    let out = kbench(&db)
        .args(["kernel", "fetch", "debian:6.1"])
        .env("KBENCH_KERNEL_CACHE", &cache)
        .env("PATH", path)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(
        stderr.lines().collect::<Vec<_>>(),
        [
            format!("{release}: linux-image-{release}"),
            format!("{release}: already cached"),
        ],
        "{stderr:?}"
    );
    assert!(!stderr.contains('\u{1b}'), "an escape code: {stderr:?}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.starts_with(release), "{stdout}");

    let quiet = kbench(&db)
        .args(["-q", "kernel", "fetch", "debian:6.1"])
        .env("KBENCH_KERNEL_CACHE", &cache)
        .env(
            "PATH",
            std::env::join_paths([dir.path().join("bin")]).unwrap(),
        )
        .output()
        .unwrap();
    assert!(quiet.status.success());
    assert!(
        quiet.stderr.is_empty(),
        "{:?}",
        String::from_utf8_lossy(&quiet.stderr)
    );
}
