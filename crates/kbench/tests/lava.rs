//! End-to-end tests of `kbench lava`: definitions checked by LAVA's own
//! schema (`lava_common.schemas.validate`, as a LAVA server checks a
//! submitted job), and a real LAVA run: Debian's lava-dispatcher runs a
//! kbench-written job with `lava-run` on a `qemu` device (its dictionary
//! rendered from lava-server's own template) under TCG, two Debian
//! kernels booted twice each, alternating; the log is imported and
//! compared.
//!
//! They need lava-dispatcher (`.ci/run` installs it; with `CI=true` a
//! missing one fails), and the run needs qemu-system-x86 and network to
//! Debian's mirror (kernels and lava-server's templates come by apt,
//! cached in the target directory).

mod common;

use common::{
    Server, create_token_with, fake_aarch64_kbench, fake_arm64_image, fake_bzimage, have_path,
    have_programs, json_of, json_stdout, kbench, one_guest_at_a_time, temp_db,
};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Debian's python3, which has LAVA's modules (another python3 on PATH
/// may not).
const PYTHON: &str = "/usr/bin/python3";

fn target_dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join(name)
}

fn have_lava() -> bool {
    have_programs(
        &["lava-run", "python3"],
        "apt-get install --no-install-recommends lava-dispatcher",
    ) && Path::new(PYTHON).is_file()
}

/// Runs kbench with the tests' kernel cache, asserting success; stdout.
fn ok(db: &Path, args: &[&str]) -> String {
    let out = kbench(db)
        .args(args)
        .env("KBENCH_KERNEL_CACHE", target_dir("kernels"))
        .output()
        .unwrap();
    common::assert_success(&out, &format!("kbench {args:?}"));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// LAVA's verdict on a job definition: `Ok` when its schema accepts it.
fn lava_validates(definition: &Path) -> Result<(), String> {
    let script = "import sys, yaml\n\
        from lava_common.schemas import validate\n\
        validate(yaml.safe_load(open(sys.argv[1])), strict=True)\n";
    let out = Command::new(PYTHON)
        .args(["-c", script])
        .arg(definition)
        .output()
        .unwrap();
    match out.status.success() {
        true => Ok(()),
        false => Err(String::from_utf8_lossy(&out.stderr).into_owned()),
    }
}

/// Writes the job of kernels `old` and `new` with `flags` into `out`,
/// which LAVA's schema must accept; what kbench says it wrote (`--json`)
/// and the definition's path.
fn written_job(db: &Path, [old, new]: [&Path; 2], flags: &[&str], out: &Path) -> (Value, PathBuf) {
    let mut args = vec!["lava", "job", "--kernel", old.to_str().unwrap()];
    args.extend(["--kernel", new.to_str().unwrap()]);
    args.extend(flags);
    args.extend(["--out", out.to_str().unwrap(), "--json"]);
    let written = json_of(db, &args);
    let definition = PathBuf::from(written["definition"].as_str().unwrap());
    lava_validates(&definition).unwrap();
    (written, definition)
}

#[test]
fn every_definition_passes_lavas_own_schema() {
    if !have_lava() {
        return;
    }
    let (dir, db) = temp_db();
    let old = fake_bzimage(dir.path(), "6.1.0-57-cloud-amd64");
    let new = fake_bzimage(dir.path(), "6.12.118+deb12-cloud-amd64");
    let out = dir.path().join("job");
    let (written, definition) = written_job(
        &db,
        [&old, &new],
        &[
            "--as",
            "6.1 stock",
            "--as",
            "6.12",
            "syscall-null",
            "open-close",
            "--boots",
            "3",
            "--artifacts-url",
            "https://files.example/k/",
            "--context",
            "cpu=max",
        ],
        &out,
    );
    let boots = written["boots"].as_array().unwrap();
    let order: Vec<&str> = boots
        .iter()
        .map(|b| b["identifier"].as_str().unwrap())
        .collect();
    assert_eq!(
        order,
        [
            "6.1 stock",
            "6.12",
            "6.1 stock",
            "6.12",
            "6.1 stock",
            "6.12"
        ]
    );
    assert_eq!(boots[1]["release"], "6.12.118+deb12-cloud-amd64");
    assert_eq!(boots[1]["kernel_url"], "https://files.example/k/kernel2");
    assert_eq!(
        boots[1]["initrd_url"],
        "https://files.example/k/boot2.initrd"
    );
    for file in ["kernel1", "kernel2", "boot1.initrd", "boot6.initrd"] {
        assert!(out.join(file).is_file(), "{file}");
    }
    let text = std::fs::read_to_string(&definition).unwrap();
    for expected in [
        "namespace: boot6",
        "cpu: max",
        "method: qemu",
        "device_type: qemu",
    ] {
        assert!(text.contains(expected), "{expected} in:\n{text}");
    }

    // LAVA refuses what its schema does not know: the check is real.
    let broken = dir.path().join("broken.yaml");
    std::fs::write(&broken, text.replace("to: tmpfs", "to: nowhere")).unwrap();
    assert!(lava_validates(&broken).is_err());
}

/// A push the guests could not make is refused before anything is
/// written: a host name or https (the initramfs has no resolver and no CA
/// certificates), no token.
#[test]
fn a_push_the_guests_cannot_make_is_refused() {
    let (dir, db) = temp_db();
    let old = fake_bzimage(dir.path(), "6.1.0-57-cloud-amd64");
    let new = fake_bzimage(dir.path(), "6.12.118+deb12-cloud-amd64");
    let out = dir.path().join("job");
    for (server, token, says) in [
        (
            "https://10.0.2.2:8080",
            Some("t"),
            "not an http:// URL with an IPv4 address",
        ),
        ("http://kbench.lab:8080", Some("t"), "no name resolver"),
        ("http://10.0.2.2:8080", None, "--server needs --token"),
    ] {
        let mut command = kbench(&db);
        command
            .args(["lava", "job", "--kernel"])
            .arg(&old)
            .arg("--kernel")
            .arg(&new);
        command.args(["syscall-null", "--out"]).arg(&out);
        command.args(["--server", server, "--into", "lab"]);
        if let Some(token) = token {
            command.args(["--token", token]);
        }
        let output = command.output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{server}: {stderr}");
        assert!(stderr.contains(says), "{server}: {stderr}");
        assert!(!out.exists(), "nothing written for {server}");
    }
}

/// A Raspberry Pi 4 as a lab has it: lava-server's own template, with a
/// serial console over ser2net (telnet) and a PDU's power control.
const RPI4_DEVICE: &str = "{% extends 'bcm2711-rpi-4-b.jinja2' %}\
    {% set connection_command = 'telnet localhost 7001' %}\
    {% set hard_reset_command = 'pduclient --daemon pdu --hostname pdu1 --port 1 --command reboot' %}";

/// A job for a U-Boot board: each boot's kernel, initramfs (behind
/// U-Boot's legacy header) and the board's device tree deployed by TFTP,
/// booted by U-Boot's ramdisk commands, every boot on the first one's
/// console. LAVA's schema accepts it, and `lava-run --validate` builds
/// its whole pipeline for a Raspberry Pi 4's dictionary. (.ci/aarch64.sh
/// runs such a job on a U-Boot board of qemu.)
#[test]
fn a_board_job_is_booted_by_uboot_from_tftp_and_lava_accepts_it() {
    if !have_lava()
        || !have_programs(
            &["mkimage", "telnet"],
            "apt-get install u-boot-tools telnet (LAVA's dispatcher recommends them for boards)",
        )
        || !have_path(
            Path::new("/etc/default/tftpd-hpa"),
            "apt-get install tftpd-hpa (LAVA's TFTP directory)",
        )
    {
        return;
    }
    let (dir, db) = temp_db();
    let old = fake_arm64_image(dir.path(), "6.1.0-57-arm64");
    let new = fake_arm64_image(dir.path(), "6.12.118+deb12-arm64");
    let dtb = dir.path().join("bcm2711-rpi-4-b.dtb");
    std::fs::write(&dtb, [0xd0, 0x0d, 0xfe, 0xed, 0, 0, 0, 8]).unwrap();
    let guest_kbench = fake_aarch64_kbench(dir.path());
    let out = dir.path().join("job");
    let (written, definition) = written_job(
        &db,
        [&old, &new],
        &[
            "syscall-null",
            "--boots",
            "2",
            "--boot-method",
            "u-boot",
            "--device-type",
            "bcm2711-rpi-4-b",
            "--dtb",
            dtb.to_str().unwrap(),
            "--guest-kbench",
            guest_kbench.to_str().unwrap(),
        ],
        &out,
    );
    let boots = written["boots"].as_array().unwrap();
    assert_eq!(boots.len(), 4);
    assert!(
        boots[1]["dtb_url"]
            .as_str()
            .unwrap()
            .ends_with("/kernel2.dtb")
    );
    let text = std::fs::read_to_string(&definition).unwrap();
    for expected in [
        "device_type: bcm2711-rpi-4-b",
        "to: tftp",
        "type: image",
        "header: u-boot",
        "install_overlay: false",
        "method: u-boot",
        "commands: ramdisk",
        "connection-namespace: boot1",
    ] {
        assert!(text.contains(expected), "{expected} in:\n{text}");
    }
    assert!(!text.contains("method: qemu") && !text.contains("netdevice"));
    // Each initramfs is what `mkimage -T ramdisk` makes: U-Boot's magic,
    // then the payload's size.
    let initrd = std::fs::read(out.join("boot2.initrd")).unwrap();
    assert_eq!(initrd[..4], [0x27, 0x05, 0x19, 0x56]);
    let size = u32::from_be_bytes(initrd[12..16].try_into().unwrap());
    assert_eq!(size as usize, initrd.len() - 64);
    let listed = Command::new("mkimage")
        .arg("-l")
        .arg(out.join("boot2.initrd"))
        .output()
        .unwrap();
    let listing = String::from_utf8_lossy(&listed.stdout);
    assert!(
        listing.contains("AArch64 Linux RAMDisk Image (uncompressed)"),
        "{listing}"
    );

    // LAVA builds the job's whole pipeline for a lab's Raspberry Pi 4,
    // and refuses it for a device that has no U-Boot.
    let validate = |device: &str| {
        let device = device_dictionary(device, &definition, dir.path());
        Command::new("lava-run")
            .args(["--validate", "--job-id", "1", "--output-dir"])
            .arg(dir.path().join("lava-out"))
            .arg("--device")
            .arg(&device)
            .arg(&definition)
            .output()
            .unwrap()
    };
    let validated = validate(RPI4_DEVICE);
    let log = String::from_utf8_lossy(&validated.stderr);
    assert!(validated.status.success(), "lava-run --validate:\n{log}");
    let refused = validate(QEMU_DEVICE);
    let log = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success());
    assert!(
        log.contains("was not in the device configuration deploy methods"),
        "{log}"
    );
}

/// What a board job cannot be is refused before anything is written: an
/// x86 kernel (U-Boot boots arm64 Images here), no device tree, one that
/// is not a .dtb or too many, qemu's memory or CPUs, the qemu device
/// type; and a device tree for qemu.
#[test]
fn a_board_job_without_what_uboot_needs_is_refused() {
    let (dir, db) = temp_db();
    let arm = [
        fake_arm64_image(dir.path(), "6.1.0-57-arm64"),
        fake_arm64_image(dir.path(), "6.12.118+deb12-arm64"),
    ];
    let x86 = [
        fake_bzimage(dir.path(), "6.1.0-57-cloud-amd64"),
        fake_bzimage(dir.path(), "6.12.118+deb12-cloud-amd64"),
    ];
    let guest_kbench = fake_aarch64_kbench(dir.path());
    let dtb = dir.path().join("board.dtb");
    std::fs::write(&dtb, [0xd0, 0x0d, 0xfe, 0xed]).unwrap();
    let dts = dir.path().join("board.dts");
    std::fs::write(&dts, "/dts-v1/;").unwrap();
    let out = dir.path().join("job");
    let uboot = ["--boot-method", "u-boot"];
    let dtb_arg = ["--dtb", dtb.to_str().unwrap()];
    let board = [
        "--boot-method",
        "u-boot",
        "--device-type",
        "bcm2711-rpi-4-b",
    ];
    let cases: [(&[PathBuf; 2], Vec<&str>, &str); 8] = [
        (&x86, [&board[..], &dtb_arg].concat(), "boots arm64 Images"),
        (&arm, board.to_vec(), "needs the board's device tree"),
        (
            &arm,
            [&board[..], &dtb_arg, &dtb_arg, &dtb_arg].concat(),
            "3 given for 2 kernels",
        ),
        (
            &arm,
            [&board[..], &dtb_arg, &["--memory", "2G"]].concat(),
            "a board has its own CPUs and memory",
        ),
        (
            &arm,
            [&board[..], &dtb_arg, &["--cpus", "4"]].concat(),
            "a board has its own CPUs and memory",
        ),
        (
            &arm,
            [&uboot[..], &dtb_arg].concat(),
            "qemu device type has no U-Boot",
        ),
        (
            &arm,
            [&board[..], &["--dtb", dts.to_str().unwrap()]].concat(),
            "not a device tree blob",
        ),
        (&arm, dtb_arg.to_vec(), "--dtb is for boards"),
    ];
    for ([old, new], flags, says) in cases {
        let output = kbench(&db)
            .args(["lava", "job", "--kernel"])
            .arg(old)
            .arg("--kernel")
            .arg(new)
            .args(["syscall-null", "--guest-kbench"])
            .arg(&guest_kbench)
            .arg("--out")
            .arg(&out)
            .args(&flags)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{flags:?}: {stderr}");
        assert!(stderr.contains(says), "{flags:?}: {stderr}");
        assert!(!out.exists(), "nothing written for {flags:?}");
    }
}

/// lava-server's device-type templates, from its Debian package (fetched
/// once into the target directory).
fn device_templates() -> PathBuf {
    let server = target_dir("lava-server");
    let templates = server.join("usr/share/lava-server/device-types");
    if !templates.join("qemu.jinja2").is_file() {
        std::fs::create_dir_all(&server).unwrap();
        let fetched = Command::new("sh")
            .current_dir(&server)
            .args([
                "-c",
                "apt-get download lava-server && dpkg-deb -x lava-server_*.deb .",
            ])
            .status()
            .unwrap();
        assert!(
            fetched.success(),
            "fetching lava-server's templates with apt"
        );
    }
    templates
}

/// A device dictionary: `device` (a template that extends one of
/// lava-server's own) rendered with the job's context, as a server does
/// when it schedules the job; written into `out`.
fn device_dictionary(device: &str, job: &Path, out: &Path) -> PathBuf {
    let script = "import sys, jinja2, yaml\n\
        context = yaml.safe_load(open(sys.argv[2]))['context']\n\
        env = jinja2.Environment(loader=jinja2.FileSystemLoader([sys.argv[1]]), \
        autoescape=False, trim_blocks=True)\n\
        sys.stdout.write(env.from_string(sys.argv[3]).render(**context))\n";
    let rendered = Command::new(PYTHON)
        .args(["-c", script])
        .arg(device_templates())
        .arg(job)
        .arg(device)
        .output()
        .unwrap();
    assert!(
        rendered.status.success(),
        "{}",
        String::from_utf8_lossy(&rendered.stderr)
    );
    let path = out.join("device.yaml");
    std::fs::write(&path, rendered.stdout).unwrap();
    path
}

/// A local `qemu` device, without KVM (TCG here).
const QEMU_DEVICE: &str = "{% extends 'qemu.jinja2' %}{% set no_kvm = True %}";

/// Runs `definition` with lava-run on a local qemu device, which must
/// pass; its log (which lava-run writes on stderr) and the log's text.
fn lava_run(definition: &Path, out: &Path) -> (PathBuf, String) {
    let device = device_dictionary(QEMU_DEVICE, definition, out);
    let log = out.join("lava.log");
    let started = std::time::Instant::now();
    let status = Command::new("lava-run")
        .args(["--job-id", "1", "--output-dir"])
        .arg(out.join("lava-out"))
        .arg("--device")
        .arg(&device)
        .arg(definition)
        .stderr(std::fs::File::create(&log).unwrap())
        .status()
        .unwrap();
    eprintln!("lava-run took {:?}", started.elapsed());
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(
        status.success(),
        "lava-run failed:\n{}",
        &text[text.len().saturating_sub(4000)..]
    );
    (log, text)
}

/// Whether LAVA jobs can boot Debian's kernels here (with `CI=true`, a
/// missing tool fails).
fn can_boot() -> bool {
    have_lava()
        && have_programs(
            &["qemu-system-x86_64", "apt-get", "dpkg-deb"],
            "apt-get install qemu-system-x86",
        )
}

/// Debian's 6.1 and 6.12 cloud kernels, fetched (or cached): their
/// releases.
fn debian_kernels(db: &Path) -> Vec<String> {
    let fetched = ok(db, &["kernel", "fetch", "debian:6.1", "debian:6.12"]);
    let releases: Vec<String> = fetched
        .lines()
        .filter_map(|l| Some(l.split_whitespace().next()?.to_string()))
        .collect();
    assert_eq!(releases.len(), 2, "{fetched}");
    releases
}

/// A fifth boot appended to the job: kernel 2 booted with boot 1's
/// initramfs, whose plan names kernel 1's release.
fn with_a_boot_into_the_wrong_kernel(definition: &Path) -> String {
    let text = std::fs::read_to_string(definition).unwrap();
    let start = text.find("  - deploy:\n      namespace: boot1\n").unwrap();
    let end = text.find("  - deploy:\n      namespace: boot2\n").unwrap();
    let first = &text[start..end];
    let wrong = first
        .replace("namespace: boot1", "namespace: boot5")
        .replace("/kernel1", "/kernel2");
    format!("{text}{wrong}")
}

#[test]
fn two_kernels_two_boots_each_through_lava_run() {
    let _turn = one_guest_at_a_time();
    if !can_boot() {
        return;
    }
    let (dir, db) = temp_db();
    let releases = debian_kernels(&db);
    let releases: Vec<&str> = releases.iter().map(String::as_str).collect();
    // The guests push to a kbench server that is down during the job.
    let server_db = dir.path().join("server.db");
    let token = create_token_with(&server_db, "dut", "push");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let unreachable = format!("http://10.0.2.2:{port}");
    let out = dir.path().join("job");
    let written = ok(
        &db,
        &[
            "lava",
            "job",
            "--kernel",
            releases[0],
            "--kernel",
            releases[1],
            "syscall-null",
            "--boots",
            "2",
            "--max-time",
            "2",
            "--cpus",
            "1",
            "--out",
            out.to_str().unwrap(),
            "--server",
            &unreachable,
            "--token",
            &token,
            "--into",
            "lab",
        ],
    );
    let definition = PathBuf::from(written.trim());
    lava_validates(&definition).unwrap();
    std::fs::write(&definition, with_a_boot_into_the_wrong_kernel(&definition)).unwrap();
    let (log, log_text) = lava_run(&definition, &out);
    // LAVA's own results: each boot's median as a test case with a
    // measurement, named by LAVA's rules.
    let measured = log_text
        .lines()
        .filter(|l| l.contains(r#""lvl": "results""#) && l.contains(r#""definition": "kbench""#))
        .filter(|l| l.contains(r#""case": "syscall_null""#) && l.contains(r#""measurement""#))
        .count();
    assert_eq!(measured, 4, "one syscall-null case per good boot");
    let failed_push = format!("pushing to {unreachable} failed");
    assert_eq!(
        log_text.matches(&failed_push).count(),
        4,
        "each good boot tried"
    );

    // Nothing is lost: the log holds every sample, and the import sends
    // them to the server, up again.
    let server = Server::start(&server_db, &format!("127.0.0.1:{port}"));
    let log_arg = log.to_str().unwrap();
    let out = kbench(&db)
        .args(["lava", "import", log_arg, "--into", "lab", "--json"])
        .args(["--server", &server.url(), "--token", &token])
        .output()
        .unwrap();
    let imported: Value = serde_json::from_slice(&out.stdout).unwrap();
    // The wrong-kernel boot is refused: the import says so in its status.
    assert_eq!(out.status.code(), Some(3), "{imported:#}");
    let outcomes: Vec<(u64, &str)> = imported["boots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| (b["boot"].as_u64().unwrap(), b["outcome"].as_str().unwrap()))
        .collect();
    assert_eq!(
        outcomes,
        [
            (1, "stored"),
            (1, "refused"),
            (2, "stored"),
            (3, "stored"),
            (4, "stored")
        ],
        "{imported:#}"
    );
    let refused = &imported["boots"][1];
    assert_eq!(refused["release"], releases[1]);
    assert!(
        refused["reason"].as_str().unwrap().contains(releases[0]),
        "{refused}"
    );

    // compare sees two identifiers of two boots each, their guests'
    // releases in their snapshots.
    let data = json_of(&db, &["export", "lab"]);
    for release in &releases {
        let identifier = data["identifiers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["name"] == *release)
            .unwrap_or_else(|| panic!("{release} in {data:#}"));
        let runs = identifier["runs"].as_array().unwrap();
        assert_eq!(runs.len(), 2, "{release}");
        let boot_ids: std::collections::BTreeSet<&str> = runs
            .iter()
            .map(|r| r["info"]["snapshot"]["boot_id"].as_str().unwrap())
            .collect();
        assert_eq!(boot_ids.len(), 2, "two boots of {release}");
        assert!(
            runs.iter()
                .all(|r| r["info"]["snapshot"]["kernel_release"] == *release)
        );
    }
    let compared = json_of(&db, &["compare", "lab", "--format", "json"]);
    let text = compared.to_string();
    assert!(
        text.contains("\"boot\""),
        "boots are the unit: {compared:#}"
    );

    let on_server = json_of(&server_db, &["export", "lab"]);
    assert_eq!(
        boot_runs(&on_server),
        boot_runs(&data),
        "the server has what the log held"
    );

    // The same log again stores nothing twice.
    let again = json_stdout(&db, &["lava", "import", log_arg, "--into", "lab", "--json"]);
    let already = again["boots"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["outcome"] == "already_stored")
        .count();
    assert_eq!(already, 4, "{again:#}");
    assert_eq!(json_of(&db, &["export", "lab"]), data);

    // Through LAVA's REST API: the same job, submitted, followed and its
    // log (as a server keeps it) read back, stores the same boots.
    let server_log = as_server_log(&log_text);
    let lava = FakeLava::start(move |method, path, _| match (method, path) {
        ("POST", "/api/v0.2/jobs/") => submitted(7),
        ("GET", "/api/v0.2/jobs/7/") => job_state(7, "Finished", "Complete", None),
        ("GET", "/api/v0.2/jobs/7/logs/") => (200, server_log.clone()),
        _ => (404, r#"{"detail": "Not found."}"#.to_string()),
    });
    let out = kbench(&db)
        .args([
            "lava",
            "submit",
            definition.to_str().unwrap(),
            "--url",
            &lava.url,
        ])
        .args(["--lava-token", "t", "--into", "rest", "--poll", "1"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "the refused boot: {stderr}");
    assert_eq!(stderr.matches(": stored, ").count(), 4, "{stderr}");
    let rest = json_of(&db, &["export", "rest"]);
    let runs = |data: &Value| -> Vec<usize> {
        data["identifiers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["runs"].as_array().unwrap().len())
            .collect()
    };
    assert_eq!(runs(&rest), [2, 2]);
}

/// Each identifier's runs, as (uid, samples of each test), sorted: what
/// must be the same on a server that had a boot twice.
fn boot_runs(export: &Value) -> Vec<(String, String, Value)> {
    let mut runs: Vec<(String, String, Value)> = export["identifiers"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|i| {
            i["runs"].as_array().unwrap().iter().map(|run| {
                (
                    i["name"].as_str().unwrap().to_string(),
                    run["info"]["uid"].as_str().unwrap().to_string(),
                    run["samples"].clone(),
                )
            })
        })
        .collect();
    runs.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
    runs
}

/// The guests push their boots to a kbench server during the job (each
/// boot a run of its identifier, its uid its boot's); reading the job's
/// log back into the same server afterwards stores nothing twice.
#[test]
fn guests_push_their_boots_and_the_log_read_back_adds_nothing() {
    let _turn = one_guest_at_a_time();
    if !can_boot() {
        return;
    }
    let (dir, db) = temp_db();
    let releases = debian_kernels(&db);
    let releases: Vec<&str> = releases.iter().map(String::as_str).collect();
    let server_db = dir.path().join("server.db");
    let token = create_token_with(&server_db, "dut", "push");
    let server = Server::start(&server_db, "127.0.0.1:0");
    let port = server.addr.rsplit(':').next().unwrap();
    // qemu's user network: the worker's loopback is 10.0.2.2.
    let url = format!("http://10.0.2.2:{port}");
    let out = dir.path().join("job");
    let written = ok(
        &db,
        &[
            "lava",
            "job",
            "--kernel",
            releases[0],
            "--kernel",
            releases[1],
            "syscall-null",
            "--boots",
            "2",
            "--max-time",
            "1",
            "--out",
            out.to_str().unwrap(),
            "--server",
            &url,
            "--token",
            &token,
            "--into",
            "pushed",
        ],
    );
    let definition = PathBuf::from(written.trim());
    lava_validates(&definition).unwrap();
    let (log, log_text) = lava_run(&definition, &out);
    assert_eq!(
        log_text
            .matches(&format!("sample(s) to {url} through"))
            .count(),
        4,
        "every boot pushed: {}",
        &log_text[log_text.len().saturating_sub(4000)..]
    );
    let pushed = json_of(&server_db, &["export", "pushed"]);
    let runs = boot_runs(&pushed);
    assert_eq!(runs.len(), 4, "{pushed:#}");
    for release in &releases {
        assert_eq!(runs.iter().filter(|r| r.0 == *release).count(), 2);
    }
    assert!(runs.iter().all(|r| r.1.starts_with("boot-")), "{runs:?}");

    let out = kbench(&db)
        .args(["lava", "import", log.to_str().unwrap(), "--into", "pushed"])
        .args(["--server", &server.url(), "--token", &token])
        .output()
        .unwrap();
    common::assert_success(&out, "lava import --server");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("Uploaded 0 sample(s)"), "{stderr}");
    assert_eq!(
        boot_runs(&json_of(&server_db, &["export", "pushed"])),
        runs,
        "the server stored each boot once"
    );
    assert_eq!(
        boot_runs(&json_of(&db, &["export", "pushed"])),
        runs,
        "the log held what the guests pushed"
    );
}

/// A profile of the user's own whose command succeeds only in the
/// rootfs (fio is there) of a kbench guest (its hostname).
const IN_ROOTFS: &str = "name = \"mine\"\nrequires = { fio = \"fio\" }\n\
command = \"test -x /usr/bin/fio && grep -qx kbench-guest /proc/sys/kernel/hostname && echo 'took: 7'\"\n\
[[metrics]]\nname = \"took\"\nunit = \"ms\"\ndirection = \"lower\"\nline = \"took\"\n\
[[tests]]\nid = \"mine\"\n";

/// Profile tests on LAVA: the job carries the rootfs (the one of the vm
/// tests' profiles, so built once) as qcow2, every boot deploys a fresh
/// copy and runs the tests chrooted in it, and the user's own profile,
/// which needs that rootfs, is measured on every boot of both kernels.
#[test]
fn profile_tests_run_in_their_rootfs_on_every_lava_boot() {
    let _turn = one_guest_at_a_time();
    if !have_lava()
        || !have_programs(
            &["qemu-system-x86_64", "qemu-img", "mmdebstrap", "mkfs.ext4"],
            "apt-get install qemu-system-x86 qemu-utils mmdebstrap e2fsprogs",
        )
    {
        return;
    }
    let (dir, db) = temp_db();
    let releases = debian_kernels(&db);
    let releases: Vec<&str> = releases.iter().map(String::as_str).collect();
    let cache = target_dir("rootfs");
    let cache = cache.to_str().unwrap();
    let built = ok(
        &db,
        &[
            "rootfs",
            "build",
            "redis",
            "hackbench",
            "fio",
            "--rootfs-cache",
            cache,
        ],
    );
    let rootfs = built.split_whitespace().next().unwrap().to_string();
    let profiles = dir.path().join("profiles");
    std::fs::create_dir(&profiles).unwrap();
    std::fs::write(profiles.join("mine.toml"), IN_ROOTFS).unwrap();
    let out = dir.path().join("job");
    let written: Value = serde_json::from_str(&ok(
        &db,
        &[
            "--profiles",
            profiles.to_str().unwrap(),
            "lava",
            "job",
            "--kernel",
            releases[0],
            "--kernel",
            releases[1],
            "mine",
            "--rootfs",
            &rootfs,
            "--rootfs-cache",
            cache,
            "--boots",
            "2",
            "--max-time",
            "1",
            "--out",
            out.to_str().unwrap(),
            "--json",
        ],
    ))
    .unwrap();
    let definition = PathBuf::from(written["definition"].as_str().unwrap());
    lava_validates(&definition).unwrap();
    let qcow2 = std::fs::metadata(out.join("rootfs.qcow2")).unwrap().len();
    let image = std::fs::metadata(format!("{cache}/{rootfs}/rootfs.ext4"))
        .unwrap()
        .len();
    assert!(
        qcow2 < image / 2,
        "only the used blocks: {qcow2} of {image}"
    );
    let (log, _) = lava_run(&definition, &out);
    ok(
        &db,
        &["lava", "import", log.to_str().unwrap(), "--into", "apps"],
    );
    let data = json_of(&db, &["export", "apps"]);
    for release in &releases {
        let identifier = data["identifiers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["name"] == *release)
            .unwrap_or_else(|| panic!("{release} in {data:#}"));
        let runs = identifier["runs"].as_array().unwrap();
        assert_eq!(runs.len(), 2, "{release}");
        for run in runs {
            let snapshot = &run["info"]["snapshot"];
            assert_eq!(snapshot["rootfs"]["id"], rootfs.as_str(), "{snapshot}");
            assert_eq!(snapshot["kernel_release"], *release);
            let values: Vec<f64> = run["samples"]["mine"]
                .as_array()
                .unwrap_or_else(|| panic!("mine measured in {run:#}"))
                .iter()
                .map(|s| s["value"].as_f64().unwrap())
                .collect();
            assert!(
                !values.is_empty() && values.iter().all(|v| *v == 7.0),
                "{values:?}"
            );
        }
    }
}

/// A stand-in for a LAVA server's REST API on 127.0.0.1: `answer(method,
/// path, authorization)` gives each request's status and body. Its
/// answers are LAVA's own (each names the source file of lava-server
/// 2023.01 it comes from); a real lava-server needs its scheduler, a
/// worker and PostgreSQL under systemd, which this machine cannot run.
struct FakeLava {
    url: String,
}

impl FakeLava {
    fn start(answer: impl Fn(&str, &str, &str) -> (u16, String) + Send + 'static) -> FakeLava {
        use std::io::{BufRead, BufReader, Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let mut stream = stream.unwrap();
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                let mut words = line.split_whitespace();
                let (method, path) = (
                    words.next().unwrap().to_string(),
                    words.next().unwrap().to_string(),
                );
                let (mut length, mut authorization) = (0, String::new());
                loop {
                    let mut header = String::new();
                    reader.read_line(&mut header).unwrap();
                    if header.trim().is_empty() {
                        break;
                    }
                    let (name, value) = header.trim().split_once(": ").unwrap();
                    match name.to_ascii_lowercase().as_str() {
                        "content-length" => length = value.parse().unwrap(),
                        "authorization" => authorization = value.to_string(),
                        _ => {}
                    }
                }
                let mut body = vec![0; length];
                reader.read_exact(&mut body).unwrap();
                let (status, text) = answer(&method, &path, &authorization);
                let head = format!(
                    "HTTP/1.1 {status} LAVA\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    text.len()
                );
                stream.write_all(head.as_bytes()).unwrap();
                stream.write_all(text.as_bytes()).unwrap();
            }
        });
        FakeLava { url }
    }
}

/// lava_rest_app/base/views.py, `TestJobViewSet.create`: a job accepted.
fn submitted(id: u64) -> (u16, String) {
    (
        201,
        format!(r#"{{"message": "job(s) successfully submitted", "job_ids": [{id}]}}"#),
    )
}

/// lava_rest_app/base/serializers.py, `TestJobSerializer`: a job's state
/// (its fields, abridged to the ones kbench reads and a few more).
fn job_state(id: u64, state: &str, health: &str, comment: Option<&str>) -> (u16, String) {
    let comment = comment.map_or("null".to_string(), |c| format!("{c:?}"));
    (
        200,
        format!(
            r#"{{"id": {id}, "submitter": "lab", "requested_device_type": "qemu", "state": "{state}", "health": "{health}", "priority": 50, "failure_comment": {comment}}}"#
        ),
    )
}

/// A lava-run log as a LAVA server keeps it (output.yaml): each line an
/// item, as lava_common/log.py's HTTP handler sends them.
fn as_server_log(lava_run: &str) -> String {
    lava_run
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| format!("- {l}\n"))
        .collect()
}

#[test]
fn lavas_refusals_and_an_incomplete_job_are_said_in_lavas_words() {
    let (dir, db) = temp_db();
    let definition = dir.path().join("job.yaml");
    std::fs::write(&definition, "device_type: nosuch\njob_name: x\n").unwrap();
    // The failure lava-run 2023.01 logged here for a job whose kernel URL
    // names no file.
    let failed_log = as_server_log(
        r#"{"dt": "2026-12-05T21:59:21.096967", "lvl": "results", "msg": {"case": "validate", "definition": "lava", "result": "fail"}}
{"dt": "2026-12-05T21:59:21.097889", "lvl": "results", "msg": {"case": "job", "definition": "lava", "error_msg": "Invalid job data: [\"Image file '/srv/nope' does not exist or is not readable\"]\n", "error_type": "Job", "result": "fail"}}"#,
    );
    let polls = std::sync::atomic::AtomicU32::new(0);
    let lava =
        FakeLava::start(
            move |method, path, authorization| match (method, path, authorization) {
                // lava_rest_app/authentication.py: an unknown token.
                (_, _, "Token bad") => (401, r#"{"detail": "Invalid token."}"#.to_string()),
                // Django REST framework's PermissionDenied, which LAVA raises for a
                // user who may not submit.
                (_, _, "Token readonly") => (
                    403,
                    r#"{"detail": "You do not have permission to perform this action."}"#
                        .to_string(),
                ),
                // lava_rest_app/base/views.py, `create`: an unknown device type.
                ("POST", "/api/v0.2/jobs/", "Token unknown-type") => (
                    400,
                    r#"{"message": "Specified device or device type not found."}"#.to_string(),
                ),
                ("POST", "/api/v0.2/jobs/", _) => submitted(4242),
                ("GET", "/api/v0.2/jobs/4242/", _) => {
                    match polls.fetch_add(1, std::sync::atomic::Ordering::SeqCst) {
                        0 => job_state(4242, "Running", "Unknown", None),
                        _ => job_state(
                            4242,
                            "Finished",
                            "Incomplete",
                            Some("Job error: Invalid job data"),
                        ),
                    }
                }
                ("GET", "/api/v0.2/jobs/4242/logs/", _) => (200, failed_log.clone()),
                _ => (404, r#"{"detail": "Not found."}"#.to_string()),
            },
        );
    let submit = |token: &str| {
        kbench(&db)
            .args([
                "lava",
                "submit",
                definition.to_str().unwrap(),
                "--url",
                &lava.url,
            ])
            .args(["--lava-token", token, "--into", "lab", "--poll", "1"])
            .output()
            .unwrap()
    };
    for (token, words) in [
        ("bad", "refused the token (401: Invalid token.)"),
        (
            "readonly",
            "(403: You do not have permission to perform this action.); nothing was stored",
        ),
        (
            "unknown-type",
            "answered 400: Specified device or device type not found.",
        ),
    ] {
        let out = submit(token);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{token}: {stderr}");
        assert!(stderr.contains(words), "{token}: {stderr}");
        common::assert_no_database(&db);
    }
    let out = submit("good");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("4242 {}/scheduler/job/4242\n", lava.url)
    );
    for words in [
        "LAVA job 4242: Running",
        "LAVA job 4242 ended Incomplete: Job error: Invalid job data",
        "LAVA: Job error: Invalid job data: [\"Image file '/srv/nope' does not exist",
    ] {
        assert!(stderr.contains(words), "{words} in: {stderr}");
    }
}
