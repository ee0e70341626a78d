//! A real Linux tree for the tests that configure, build and bisect
//! kernels: Debian's linux-source-6.1, downloaded and unpacked once into
//! the target directory.

use super::assert_success;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The target directory's scratch space, kept between test runs.
pub fn target_tmp() -> &'static Path {
    Path::new(env!("CARGO_TARGET_TMPDIR"))
}

/// Runs `program args` in `dir`, asserting success.
pub fn sh(dir: &Path, program: &str, args: &[&str]) {
    let out = Command::new(program)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert_success(&out, &format!("{program} {args:?}: "));
}

/// Debian's linux-source-6.1, unpacked once into the target directory.
pub fn linux_source() -> PathBuf {
    let dir = target_tmp().join("linux-source");
    let tree = dir.join("linux-source-6.1");
    if tree.join("Makefile").is_file() {
        return tree;
    }
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    sh(&dir, "apt-get", &["download", "linux-source-6.1"]);
    let deb = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "deb"))
        .expect("the downloaded .deb");
    sh(&dir, "dpkg-deb", &["-x", deb.to_str().unwrap(), "deb"]);
    sh(&dir, "tar", &["xJf", "deb/usr/src/linux-source-6.1.tar.xz"]);
    std::fs::remove_dir_all(dir.join("deb")).unwrap();
    std::fs::remove_file(deb).unwrap();
    tree
}
