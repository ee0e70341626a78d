//! `kbench campaign` end to end, with no one at the keyboard: a QEMU guest
//! boots Debian's 6.1 cloud kernel from a Debian rootfs that kbench builds
//! (systemd, and Debian's 6.1 and 6.12 cloud kernels installed with their
//! initrds), with this kbench in it. A unit the test adds starts a
//! campaign inside; from there the guest runs alone: kexec to each boot's
//! kernel, the campaign's systemd hook resuming it at every boot, and the
//! return to 6.1 at the end. The results come back on the guest's disk
//! image, read with debugfs.
//!
//! - Two kernels, two boots each: `compare` sees 2 identifiers x 2 boots,
//!   each with its kernel's release, a boot id of its own (none the first
//!   boot's: the hook is reached only through real boots), and kexec as
//!   how the boot started.
//! - The guest killed mid-invocation, then booted again from the firmware:
//!   the cut-short invocation's runs are kept and marked aborted, and the
//!   boot is measured again.
//!
//! Needs root, qemu-system-x86, mmdebstrap and e2fsprogs (debugfs), and
//! network to Debian's mirror; .ci/run installs them. The rootfs is cached
//! in the target directory.

mod common;

use common::{have_programs, json_of, kbench, one_guest_at_a_time, stdout};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Where the campaign's database is inside the guest.
const GUEST_DB: &str = "/var/lib/kbench/results.db";
/// The start unit the test puts in the image; it runs once.
const START_UNIT: &str = "kbench-test-start.service";

fn can_run() -> bool {
    have_programs(
        &[
            "qemu-system-x86_64",
            "mmdebstrap",
            "mke2fs",
            "debugfs",
            "e2fsck",
        ],
        "apt-get install qemu-system-x86 mmdebstrap e2fsprogs",
    )
}

fn target_tmp(name: &str) -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join(name)
}

/// The rootfs image with systemd and both kernels (built once, cached).
fn rootfs_image() -> PathBuf {
    let packages = [
        "systemd-sysv",
        "udev",
        "linux-image-cloud-amd64",
        "linux-image-6.12-cloud-amd64",
    ];
    let mut args = vec!["rootfs", "build"];
    for package in &packages {
        args.extend(["--package", package]);
    }
    let db = target_tmp("campaign-host.db");
    let cache = target_tmp("rootfs");
    let build = kbench(&db)
        .args(&args)
        .env("KBENCH_ROOTFS_CACHE", &cache)
        .output()
        .unwrap();
    assert!(
        build.status.success(),
        "{}",
        String::from_utf8_lossy(&build.stderr)
    );
    let list = kbench(&db)
        .args(["rootfs", "list", "--json"])
        .env("KBENCH_ROOTFS_CACHE", &cache)
        .output()
        .unwrap();
    let list: Value = serde_json::from_slice(&list.stdout).unwrap();
    let wanted: BTreeSet<&str> = packages.into_iter().collect();
    let entry = list
        .as_array()
        .unwrap()
        .iter()
        .find(|entry| {
            let have: BTreeSet<&str> = entry["packages"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p.as_str().unwrap())
                .collect();
            have == wanted
        })
        .unwrap_or_else(|| panic!("the rootfs just built is not listed: {list:#}"));
    PathBuf::from(entry["image"].as_str().unwrap())
}

/// debugfs `request` on `image` (`-w` to write); its stdout.
fn debugfs(image: &Path, write: bool, request: &str) -> String {
    let mut command = Command::new("debugfs");
    if write {
        command.arg("-w");
    }
    let out = command.args(["-R", request]).arg(image).output().unwrap();
    assert!(out.status.success(), "debugfs {request}: {out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A guest's disk: a copy of the rootfs with this kbench and a start unit
/// running once the command `start` makes of the image's two releases.
struct Disk {
    dir: tempfile::TempDir,
    image: PathBuf,
    /// Debian's 6.1 and 6.12 releases in the image, in that order.
    releases: [String; 2],
}

impl Disk {
    fn new(start: impl Fn(&str, &str) -> String) -> Disk {
        let source = rootfs_image();
        let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
        let image = dir.path().join("disk.ext4");
        let copied = Command::new("cp")
            .arg("--sparse=always")
            .arg(&source)
            .arg(&image)
            .status()
            .unwrap();
        assert!(copied.success());
        let listing = debugfs(&image, false, "ls -p /boot");
        let mut releases: Vec<String> = listing
            .lines()
            .filter_map(|line| line.split('/').nth(5)?.strip_prefix("vmlinuz-"))
            .map(str::to_string)
            .collect();
        releases.sort_by_key(|release| release.starts_with("6.12"));
        assert!(
            releases.len() == 2
                && releases[0].starts_with("6.1.")
                && releases[1].starts_with("6.12"),
            "the rootfs should hold Debian's 6.1 and 6.12 kernels: {releases:?}"
        );
        let start = start(&releases[0], &releases[1]);
        let kbench = env!("CARGO_BIN_EXE_kbench");
        debugfs(&image, true, "rm /usr/local/bin/kbench");
        debugfs(
            &image,
            true,
            &format!("write {kbench} /usr/local/bin/kbench"),
        );
        let unit = dir.path().join(START_UNIT);
        std::fs::write(
            &unit,
            format!(
                "[Unit]\nAfter=multi-user.target\n[Service]\nType=exec\n\
                 ExecStartPre=/bin/rm /etc/systemd/system/multi-user.target.wants/{START_UNIT}\n\
                 ExecStart=/usr/local/bin/kbench --db {GUEST_DB} {start}\n\
                 StandardOutput=journal+console\nStandardError=journal+console\n\
                 [Install]\nWantedBy=multi-user.target\n"
            ),
        )
        .unwrap();
        debugfs(
            &image,
            true,
            &format!("write {} /etc/systemd/system/{START_UNIT}", unit.display()),
        );
        debugfs(
            &image,
            true,
            &format!(
                "symlink /etc/systemd/system/multi-user.target.wants/{START_UNIT} /etc/systemd/system/{START_UNIT}"
            ),
        );
        let releases = [releases[0].clone(), releases[1].clone()];
        let disk = Disk {
            dir,
            image,
            releases,
        };
        for file in ["vmlinuz", "initrd.img"] {
            let release = &disk.releases[0];
            let to = disk.dir.path().join(file);
            debugfs(
                &disk.image,
                false,
                &format!("dump /boot/{file}-{release} {}", to.display()),
            );
        }
        disk
    }

    /// Boots the guest from the firmware into 6.1 (qemu's -kernel); its
    /// console goes to `console` (appended).
    fn boot(&self, console: &Path) -> Child {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(console)
            .unwrap();
        let at = |file: &str| self.dir.path().join(file);
        Command::new("qemu-system-x86_64")
            .args(["-accel", "tcg", "-m", "2048", "-smp", "2", "-nographic"])
            .arg("-kernel")
            .arg(at("vmlinuz"))
            .arg("-initrd")
            .arg(at("initrd.img"))
            .args([
                "-append",
                "root=LABEL=kbench-rootfs rw console=ttyS0",
                "-drive",
            ])
            .arg(format!(
                "file={},format=raw,if=virtio",
                self.image.display()
            ))
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap()
    }

    /// The campaign's database out of the image (with its WAL), to read
    /// on the host. A guest whose plug was pulled left its file system's
    /// journal unreplayed, so a copy of the image is recovered first (a
    /// next boot of the guest replays the original's itself).
    fn database(&self) -> PathBuf {
        let image = self.dir.path().join("recovered.ext4");
        let copied = Command::new("cp")
            .arg("--sparse=always")
            .arg(&self.image)
            .arg(&image)
            .status()
            .unwrap();
        assert!(copied.success());
        let fsck = Command::new("e2fsck")
            .arg("-fy")
            .arg(&image)
            .output()
            .unwrap();
        // 0: clean; 1: errors corrected (the journal replayed).
        assert!(fsck.status.code().is_some_and(|c| c <= 1), "{fsck:?}");
        let db = self.dir.path().join("guest.db");
        for suffix in ["", "-wal"] {
            let to = format!("{}{suffix}", db.display());
            let _ = std::fs::remove_file(&to);
            debugfs(&image, false, &format!("dump {GUEST_DB}{suffix} {to}"));
        }
        db
    }
}

/// Waits until the console holds `text` after byte `from`; where it ends.
/// Fails the test with the console's tail after `limit`.
fn wait_for(console: &Path, from: usize, text: &str, limit: Duration) -> usize {
    let started = Instant::now();
    loop {
        let seen = std::fs::read(console).unwrap_or_default();
        let seen = String::from_utf8_lossy(&seen[from.min(seen.len())..]).into_owned();
        if let Some(at) = seen.find(text) {
            return from + at + text.len();
        }
        if started.elapsed() > limit {
            let tail: String = seen
                .chars()
                .rev()
                .take(6000)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            // The hook's lines of every boot so far: what led here.
            let whole = std::fs::read(console).unwrap_or_default();
            let whole = String::from_utf8_lossy(&whole);
            let hook: Vec<&str> = whole
                .lines()
                .filter(|line| {
                    [
                        "kbench campaign",
                        "Linux version",
                        "panic",
                        "BUG",
                        "Oops",
                        "reboot",
                        "round ",
                    ]
                    .iter()
                    .any(|word| line.contains(word))
                })
                .collect();
            let kept = target_tmp("campaign-console.log");
            let _ = std::fs::copy(console, &kept);
            panic!(
                "the console did not show {text:?} within {limit:?} (all of it: {}); the hook \
                 and the kernels said:\n{}\n\nits end:\n{tail}",
                kept.display(),
                hook.join("\n")
            );
        }
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// Stops the guest at once, as a power loss does.
fn pull_the_plug(mut guest: Child) {
    guest.kill().unwrap();
    guest.wait().unwrap();
}

/// One identifier's runs of an exported set: their boot ids, releases
/// and how each boot started.
struct Boots {
    name: String,
    ids: BTreeSet<String>,
    releases: BTreeSet<String>,
    via: BTreeSet<String>,
}

/// Per identifier of the exported set, its [`Boots`].
fn boots_of(export: &Value) -> Vec<Boots> {
    export["identifiers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|identifier| {
            let runs = identifier["runs"].as_array().unwrap();
            let field = |name: &str| -> BTreeSet<String> {
                runs.iter()
                    .map(|run| {
                        run["info"]["snapshot"][name]
                            .as_str()
                            .unwrap_or("")
                            .to_string()
                    })
                    .collect()
            };
            Boots {
                name: identifier["name"].as_str().unwrap().to_string(),
                ids: field("boot_id"),
                releases: field("kernel_release"),
                via: field("boot_via"),
            }
        })
        .collect()
}

const TEN_MINUTES: Duration = Duration::from_secs(600);

#[test]
fn a_campaign_kexecs_between_two_debian_kernels_and_resumes_after_each_boot() {
    if !can_run() {
        return;
    }
    let _guest = one_guest_at_a_time();
    let disk = Disk::new(|old, new| {
        format!(
            "campaign start ci --kernel old={old} --kernel new={new} --boots 2 --seed 1 \
             --settle-load 100 --settle-uptime 0 syscall-null -- --rounds 2 --max-time 0.3"
        )
    });
    let [old, new] = disk.releases.clone();
    let console = disk.dir.path().join("console.log");
    let started = Instant::now();
    let guest = disk.boot(&console);
    let finished = wait_for(&console, 0, "kbench campaign ci: finished", TEN_MINUTES);
    // The return to 6.1: the next kernel's banner, once systemd has
    // unmounted the disk and kexec'd.
    wait_for(&console, finished, "Linux version", TEN_MINUTES);
    pull_the_plug(guest);
    eprintln!(
        "the campaign of 4 boots took {:?} under TCG",
        started.elapsed()
    );

    let db = disk.database();
    eprintln!("{}", stdout(&db, &["campaign", "show", "ci"]));
    let campaign = json_of(&db, &["campaign", "show", "ci", "--json"]);
    assert_eq!(campaign["state"]["state"], "finished", "{campaign:#}");
    let boots = campaign["boots"].as_array().unwrap();
    assert_eq!(boots.len(), 4);
    for boot in boots {
        assert_eq!(boot["status"], "done", "{boot:#}");
        assert_eq!(boot["via"], "kexec", "{boot:#}");
        assert!(boot["wrong"].as_array().unwrap().is_empty(), "{boot:#}");
    }

    let compare = json_of(&db, &["compare", "ci", "--format", "json"]);
    let systems = compare["systems"].as_array().unwrap();
    let seen: Vec<(&str, u64, &str)> = systems
        .iter()
        .map(|s| {
            (
                s["identifier"].as_str().unwrap(),
                s["runs"].as_u64().unwrap(),
                s["snapshot"]["kernel_release"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(seen, [("old", 2, old.as_str()), ("new", 2, new.as_str())]);

    let export: Value = serde_json::from_str(&stdout(&db, &["export", "ci"])).unwrap();
    let mut every_boot = BTreeSet::new();
    for boots in boots_of(&export) {
        let name = &boots.name;
        assert_eq!(
            boots.ids.len(),
            2,
            "{name}: a boot id per boot: {:?}",
            boots.ids
        );
        let release = if name == "old" { &old } else { &new };
        assert_eq!(boots.releases, BTreeSet::from([release.clone()]), "{name}");
        assert_eq!(boots.via, BTreeSet::from(["kexec".to_string()]), "{name}");
        every_boot.extend(boots.ids);
    }
    assert_eq!(
        every_boot.len(),
        4,
        "four boots, each its own: {every_boot:?}"
    );
    let first_id = campaign["boots"][0]["boot_id"].as_str().unwrap();
    assert!(every_boot.contains(first_id));
}

#[test]
fn a_guest_killed_mid_invocation_measures_that_boot_again() {
    if !can_run() {
        return;
    }
    let _guest = one_guest_at_a_time();
    // Seed 2 orders the boots new, old: after the reset the machine comes
    // up in old (6.1) and the hook must switch to new again.
    let disk = Disk::new(|old, new| {
        format!(
            "campaign start crash --kernel old={old} --kernel new={new} --boots 1 --seed 2 \
             --settle-load 100 --settle-uptime 0 syscall-null -- --rounds 6 --max-time 1"
        )
    });
    let console = disk.dir.path().join("console.log");
    let guest = disk.boot(&console);
    let measuring = wait_for(&console, 0, "boot 1 of 2: new", TEN_MINUTES);
    wait_for(&console, measuring, "round 3 of 6", TEN_MINUTES);
    pull_the_plug(guest);

    let db = disk.database();
    let cut = json_of(&db, &["campaign", "show", "crash", "--json"]);
    assert_eq!(cut["boots"][0]["status"], "measuring", "{cut:#}");
    let cut_boot = cut["boots"][0]["boot_id"].as_str().unwrap().to_string();

    let rebooted = std::fs::metadata(&console).unwrap().len() as usize;
    let guest = disk.boot(&console);
    let recovered = wait_for(
        &console,
        rebooted,
        "was cut short mid-invocation",
        TEN_MINUTES,
    );
    let finished = wait_for(
        &console,
        recovered,
        "kbench campaign crash: finished",
        TEN_MINUTES,
    );
    wait_for(&console, finished, "Linux version", TEN_MINUTES);
    pull_the_plug(guest);

    let db = disk.database();
    let campaign = json_of(&db, &["campaign", "show", "crash", "--json"]);
    let boot = &campaign["boots"][0];
    assert_eq!(boot["status"], "done", "{campaign:#}");
    let aborted = boot["aborted"].as_array().unwrap();
    assert_eq!(aborted.len(), 1, "{boot:#}");
    assert_eq!(aborted[0]["boot_id"], cut_boot.as_str());
    let aborted_runs = aborted[0]["runs"].as_array().unwrap();
    assert!(
        aborted_runs.len() >= 2,
        "rounds 1 and 2 ended, 3 was going: {boot:#}"
    );
    assert_ne!(
        boot["boot_id"],
        cut_boot.as_str(),
        "measured again in a boot of its own"
    );
    // After the reset the machine came up in old; the hook switched to new.
    assert_eq!(boot["via"], "kexec", "{boot:#}");
    assert_eq!(campaign["state"]["state"], "finished");

    // Reports leave the aborted runs out: each kernel has one boot.
    let export: Value = serde_json::from_str(&stdout(&db, &["export", "crash"])).unwrap();
    for boots in boots_of(&export) {
        let name = &boots.name;
        assert_eq!(boots.ids.len(), 1, "{name}: {:?}", boots.ids);
        assert!(
            !boots.ids.contains(&cut_boot),
            "{name}: the aborted boot is left out"
        );
    }
    // ... and the store keeps them, marked aborted.
    let store = kbench_store::Location::parse(&db)
        .unwrap()
        .open_existing()
        .unwrap();
    let mut store = store;
    for run in aborted_runs {
        let contents = store
            .run_contents(kbench_store::RunId(run.as_i64().unwrap()))
            .unwrap();
        assert_eq!(contents.record.status, kbench_store::RunStatus::Aborted);
        assert!(
            contents
                .record
                .info
                .notes
                .iter()
                .any(|n| n.contains("aborted: the machine went down")),
            "{:?}",
            contents.record.info.notes
        );
    }
}

/// `kbench campaign start` as `args`, on a fresh database; its stderr,
/// checking it failed. `as_nobody` runs it as user nobody (setpriv).
fn refused(args: &[&str], as_nobody: bool) -> String {
    let dir = tempfile::tempdir().unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let db = dir.path().join("results.db");
    let mut command = match as_nobody {
        false => kbench(&db),
        true => {
            let mut command = assert_cmd::Command::new("setpriv");
            command
                .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
                .arg(env!("CARGO_BIN_EXE_kbench"))
                .env("KBENCH_DB", &db);
            command
        }
    };
    let out = command
        .args(["campaign", "start"])
        .args(args)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(
        out.status.code(),
        Some(2),
        "{args:?} should be refused:\n{stderr}"
    );
    // Nothing was planned or installed.
    let listed = kbench(&db).args(["campaign", "list"]).output().unwrap();
    let listed = String::from_utf8_lossy(&listed.stdout).into_owned();
    assert!(!listed.contains("running"), "{listed}");
    let rc_local = std::fs::read_to_string("/etc/rc.local").unwrap_or_default();
    assert!(!rc_local.contains("kbench campaign"), "{rc_local}");
    assert!(!Path::new("/etc/systemd/system/kbench-campaign.service").exists());
    stderr
}

#[test]
fn bad_input_is_refused_before_anything_switches() {
    let dir = tempfile::tempdir().unwrap();
    let not_a_kernel = dir.path().join("vmlinuz-notes");
    std::fs::write(&not_a_kernel, vec![b'x'; 8192]).unwrap();
    let not_a_kernel = format!("b={}", not_a_kernel.display());
    let as_root = common::is_root();
    if as_root {
        let stderr = refused(
            &[
                "c",
                "--kernel",
                "a=/nonexistent/vmlinuz",
                "--kernel",
                &not_a_kernel,
                "quick",
            ],
            false,
        );
        assert!(
            stderr.contains("kernel a: /nonexistent/vmlinuz is not a file"),
            "{stderr}"
        );
        let stderr = refused(
            &[
                "c",
                "--kernel",
                "a=0.0.1-none",
                "--kernel",
                &not_a_kernel,
                "quick",
            ],
            false,
        );
        assert!(
            stderr.contains("no image of release 0.0.1-none"),
            "{stderr}"
        );
        let stderr = refused(
            &[
                "c",
                "--kernel",
                &not_a_kernel.replace("b=", "a="),
                "--kernel",
                &not_a_kernel,
                "quick",
            ],
            false,
        );
        assert!(
            stderr.contains("is not a kernel image kbench can boot"),
            "{stderr}"
        );
    }
    if have_programs(&["setpriv"], "apt-get install util-linux") && as_root {
        let stderr = refused(&["c", "--kernel", "a=x", "--kernel", "b=y", "quick"], true);
        assert!(
            stderr.contains("cannot install its boot hook") && stderr.contains("run it as root"),
            "{stderr}"
        );
    }
    let stderr = refused(
        &[
            "c", "--kernel", "a=x", "--kernel", "b=y", "quick", "--", "--into", "other",
        ],
        false,
    );
    assert!(
        stderr.contains("--into and --as are the campaign's"),
        "{stderr}"
    );
    let stderr = refused(
        &[
            "c",
            "--kernel",
            "a=x",
            "--kernel",
            "b=y",
            "nonsense-test",
            "--",
            "--rounds",
            "0",
        ],
        false,
    );
    assert!(stderr.contains("does not parse"), "{stderr}");
    let stderr = refused(&["c", "--kernel", "a=x", "quick"], false);
    assert!(stderr.contains("two kernels or more"), "{stderr}");
    let stderr = refused(&["c", "--kernel", "a=x", "--kernel", "a=y", "quick"], false);
    assert!(stderr.contains("kernel name a is given twice"), "{stderr}");
    let stderr = refused(&["c", "--kernel", "ax", "--kernel", "b=y", "quick"], false);
    assert!(stderr.contains("has no '='"), "{stderr}");
}

#[test]
fn stopping_or_showing_a_campaign_that_is_not_there_says_which_there_are() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    let mut run = vec!["run", "syscall-null", "--into", "s"];
    run.extend(common::SHORT);
    common::succeeds(&db, &run);
    let out = kbench(&db)
        .args(["campaign", "stop", "nope"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr.contains("there is no campaign nope"), "{stderr}");
    let listed = stdout(&db, &["campaign", "list", "--json"]);
    assert_eq!(listed.trim(), "[]");
}

/// A boot-loader command that does not boot the planned kernel: qemu's
/// reset always boots 6.1 again. The first boot (old, 6.1) is measured,
/// through the firmware; new never comes up, so its boot is marked wrong,
/// switched to once more, then the campaign stops, saying why, and its
/// hook is gone.
#[test]
fn a_kernel_that_never_comes_up_is_retried_once_then_the_campaign_stops() {
    if !can_run() {
        return;
    }
    let _guest = one_guest_at_a_time();
    let disk = Disk::new(|old, new| {
        format!(
            "campaign start loader --kernel old={old} --kernel new={new} --boots 1 --seed 1 \
             --switch-command 'systemctl reboot' --settle-load 100 --settle-uptime 0 \
             syscall-null -- --rounds 1 --max-time 0.2"
        )
    });
    let new = disk.releases[1].clone();
    let console = disk.dir.path().join("console.log");
    let guest = disk.boot(&console);
    let stopped = wait_for(&console, 0, "kbench campaign loader: STOPPED", TEN_MINUTES);
    // The hook's last lines, then the unit stops.
    wait_for(&console, stopped, "the hook is removed", TEN_MINUTES);
    std::thread::sleep(Duration::from_secs(5));
    pull_the_plug(guest);

    let db = disk.database();
    let campaign = json_of(&db, &["campaign", "show", "loader", "--json"]);
    assert_eq!(campaign["state"]["state"], "stopped", "{campaign:#}");
    let reason = campaign["state"]["reason"].as_str().unwrap();
    assert!(
        reason.contains(&format!("boot 2 of 2 should run new ({new})"))
            && reason.contains("after 2 switches"),
        "{reason}"
    );
    let boots = campaign["boots"].as_array().unwrap();
    assert_eq!(boots[0]["status"], "done");
    assert_eq!(
        boots[0]["via"], "firmware",
        "a boot-loader switch is a firmware boot"
    );
    assert_eq!(boots[1]["status"], "switching");
    assert_eq!(
        boots[1]["wrong"].as_array().unwrap().len(),
        1,
        "{:#}",
        boots[1]
    );
    // Nothing was stored as new: the wrong boots were not measured.
    let export: Value = serde_json::from_str(&stdout(&db, &["export", "loader"])).unwrap();
    let names: Vec<&str> = export["identifiers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["old"]);
    let recovered = disk.dir.path().join("recovered.ext4");
    let hook = debugfs(
        &recovered,
        false,
        "stat /etc/systemd/system/kbench-campaign.service",
    );
    assert!(hook.is_empty(), "the hook is removed: {hook}");
}
