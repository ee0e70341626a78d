//! Names the build for `kbench --version` and every run's snapshot: the git
//! commit kbench is built from (12 hex digits, "-dirty" when tracked files
//! differ from it, as `git describe --dirty` counts), or "unknown" when it is
//! not built from its git tree (a crates tarball, or no `git`). Only the local
//! `git` is run: no network.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    let manifest = std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let commit = commit(Path::new(&manifest)).unwrap_or_else(|| "unknown".to_string());
    println!("cargo:rustc-env=KBENCH_COMMIT={commit}");
}

/// The commit and dirty mark, printing what makes them stale for cargo to
/// watch; `None` outside kbench's own git tree.
fn commit(dir: &Path) -> Option<String> {
    // Our manifest must be tracked: a tarball unpacked inside some other
    // repository is not that repository's commit.
    git(dir, &["ls-files", "--error-unmatch", "Cargo.toml"])?;
    let top = PathBuf::from(git(dir, &["rev-parse", "--show-toplevel"])?);
    let mut watched: Vec<PathBuf> = ["crates", "profiles", "suites", "Cargo.toml", "Cargo.lock"]
        .iter()
        .map(|path| top.join(path))
        .collect();
    // HEAD, the branch it names, packed refs and the index (worktrees keep
    // them in different directories, so git says where each is).
    let branch = git(dir, &["symbolic-ref", "-q", "HEAD"]);
    for name in ["HEAD", "index", "packed-refs"]
        .into_iter()
        .chain(branch.as_deref())
    {
        watched.push(dir.join(git(dir, &["rev-parse", "--git-path", name])?));
    }
    // A path that does not exist would make cargo rerun this on every build.
    for path in watched.iter().filter(|path| path.exists()) {
        println!("cargo:rerun-if-changed={}", path.display());
    }
    let hash = git(dir, &["rev-parse", "--short=12", "HEAD"])?;
    let changes = git(dir, &["status", "--porcelain", "--untracked-files=no"])?;
    Some(if changes.is_empty() {
        hash
    } else {
        format!("{hash}-dirty")
    })
}

/// `git -C dir ARGS`'s trimmed output, `None` when git is missing or fails.
/// GIT_OPTIONAL_LOCKS=0 keeps `git status` from rewriting the index, which
/// would make cargo see it changed and run this again on every build.
fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_OPTIONAL_LOCKS", "0")
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}
