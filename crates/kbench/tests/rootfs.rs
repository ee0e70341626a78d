//! End-to-end tests of `kbench rootfs`: a real Debian rootfs with redis
//! built by mmdebstrap into an ext4 image, cached by content, and the
//! builds that must not be: unknown packages, a build that fails half-way.
//!
//! Needs root, mmdebstrap and e2fsprogs (.ci/run installs them), and
//! network to Debian's mirror.

mod common;

use common::{have_programs, kbench, temp_db};
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

const INSTALL: &str = "apt-get install mmdebstrap e2fsprogs";

/// Runs `kbench rootfs ARGS` on `cache` with `path` as PATH; returns
/// (success, stdout, stderr).
fn rootfs(cache: &Path, args: &[&str], path: Option<&str>) -> (bool, String, String) {
    let (_db_dir, db) = temp_db();
    let mut command = kbench(&db);
    command
        .arg("rootfs")
        .args(args)
        .env("KBENCH_ROOTFS_CACHE", cache);
    if let Some(path) = path {
        command.env("PATH", path);
    }
    let out = command.output().unwrap();
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    (out.status.success(), text(&out.stdout), text(&out.stderr))
}

/// A PATH with dpkg (which names the host's architecture) but no
/// mmdebstrap, in `dir`.
fn path_without_mmdebstrap(dir: &Path) -> String {
    let dpkg = std::env::split_paths(&std::env::var_os("PATH").unwrap())
        .map(|d| d.join("dpkg"))
        .find(|p| p.is_file())
        .expect("dpkg");
    std::os::unix::fs::symlink(dpkg, dir.join("dpkg")).unwrap();
    dir.to_string_lossy().into_owned()
}

/// The ext4 superblock's magic and volume label of an image.
fn ext4_label(image: &Path) -> (u16, String) {
    let mut superblock = [0u8; 1024];
    let mut file = std::fs::File::open(image).unwrap();
    file.seek(SeekFrom::Start(1024)).unwrap();
    file.read_exact(&mut superblock).unwrap();
    let magic = u16::from_le_bytes([superblock[0x38], superblock[0x39]]);
    let label = String::from_utf8_lossy(&superblock[0x78..0x88]);
    (magic, label.trim_end_matches('\0').to_string())
}

/// A file of an ext4 image, read with e2fsprogs' debugfs.
fn image_file(image: &Path, path: &str) -> Vec<u8> {
    let out = std::process::Command::new("debugfs")
        .args(["-R", &format!("cat {path}")])
        .arg(image)
        .output()
        .unwrap();
    assert!(out.status.success(), "debugfs cat {path}: {out:?}");
    out.stdout
}

#[test]
fn a_rootfs_with_redis_is_built_once_and_cached() {
    if !have_programs(&["mmdebstrap", "mke2fs"], INSTALL) {
        return;
    }
    let cache = tempfile::tempdir().unwrap();
    let started = std::time::Instant::now();
    let (ok, stdout, stderr) = rootfs(cache.path(), &["build", "redis"], None);
    assert!(ok, "{stderr}");
    eprintln!(
        "built in {:.1} s: {stdout}",
        started.elapsed().as_secs_f64()
    );
    assert!(
        stderr.contains(" with redis-server redis-tools"),
        "{stderr}"
    );
    let (ok, listed, stderr) = rootfs(cache.path(), &["list", "--json"], None);
    assert!(ok, "{stderr}");
    let listed: serde_json::Value = serde_json::from_str(&listed).unwrap();
    let entries = listed.as_array().unwrap();
    assert_eq!(entries.len(), 1);
    let entry = &entries[0];
    let id = entry["id"].as_str().unwrap();
    assert_eq!(
        entry["packages"],
        serde_json::json!(["redis-server", "redis-tools"])
    );
    let redis = entry["installed"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["package"] == "redis-server")
        .expect("redis-server installed");
    assert!(redis["version"].as_str().unwrap().contains("7."), "{redis}");
    let image = Path::new(entry["image"].as_str().unwrap());
    assert!(stdout.starts_with(id) && stdout.trim_end().ends_with(&*image.to_string_lossy()));
    assert_eq!(ext4_label(image), (0xEF53, "kbench-rootfs".to_string()));
    assert_eq!(
        entry["image_bytes"],
        std::fs::metadata(image).unwrap().len()
    );
    // The image names itself, and holds the kbench that built it.
    let record: serde_json::Value =
        serde_json::from_slice(&image_file(image, "/etc/kbench-rootfs.json")).unwrap();
    assert_eq!(record["id"], id);
    assert_eq!(record["release"], entry["release"]);
    let kbench = image_file(image, "/usr/local/bin/kbench");
    assert!(kbench == std::fs::read(env!("CARGO_BIN_EXE_kbench")).unwrap());
    // Built again: from the cache, with no mmdebstrap to run.
    let bin = tempfile::tempdir().unwrap();
    let path = path_without_mmdebstrap(bin.path());
    let (ok, again, stderr) = rootfs(cache.path(), &["build", "redis"], Some(&path));
    assert!(ok && stderr.contains("already cached"), "{stderr}");
    assert_eq!(again, stdout);
    let (ok, _, stderr) = rootfs(cache.path(), &["remove", id], None);
    assert!(ok, "{stderr}");
    assert!(!image.exists());
    let (ok, _, stderr) = rootfs(cache.path(), &["remove", id], None);
    assert!(
        !ok && stderr.contains(&format!("no rootfs {id}")),
        "{stderr}"
    );
}

#[test]
fn failed_builds_leave_nothing_but_their_reason() {
    if !have_programs(&["mmdebstrap", "mke2fs"], INSTALL) {
        return;
    }
    let cache = tempfile::tempdir().unwrap();
    // A build killed before: its process is gone, its work directory stays.
    let killed = cache.path().join(".build-999999999-0123456789abcdef");
    std::fs::create_dir_all(killed.join("tree")).unwrap();
    // mmdebstrap fails: the mirror has no such release.
    let build = [
        "build",
        "--release",
        "nosuchrelease",
        "--package",
        "hostname",
    ];
    let (ok, _, stderr) = rootfs(cache.path(), &build, None);
    assert!(
        !ok && stderr.contains("`mmdebstrap") && stderr.contains("nosuchrelease Release"),
        "{stderr}"
    );
    assert!(
        stderr.contains("cannot be checked before building"),
        "{stderr}"
    );
    assert!(!killed.exists());
    let left: Vec<_> = std::fs::read_dir(cache.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(left, ["last-failure.txt"]);
    // The next build says why the last failed; a package the host's apt
    // does not know is refused before building, by name.
    let unknown = ["build", "redis", "--package", "no-such-package-kbench"];
    let (ok, _, stderr) = rootfs(cache.path(), &unknown, None);
    assert!(!ok, "{stderr}");
    assert!(
        stderr.contains("the last rootfs build failed: `mmdebstrap"),
        "{stderr}"
    );
    assert!(
        stderr.contains("no package no-such-package-kbench in "),
        "{stderr}"
    );
    assert!(!stderr.contains(" with redis-server"), "{stderr}");
    let (ok, listed, _) = rootfs(cache.path(), &["list"], None);
    assert!(ok && listed.is_empty());
    // Without mmdebstrap, a build says what to install.
    let bin = tempfile::tempdir().unwrap();
    let path = path_without_mmdebstrap(bin.path());
    let (ok, _, stderr) = rootfs(
        cache.path(),
        &["build", "--package", "hostname"],
        Some(&path),
    );
    assert!(
        !ok && stderr.contains("mmdebstrap was not found"),
        "{stderr}"
    );
}
