//! What the system ran short of when a profile's run failed: the file
//! system of its scratch directory full, or memory, when the kernel's OOM
//! killer killed a process while the test ran. Said with the failure, so
//! that "fio: no JSON" in a full guest disk reads as the full disk it is.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Free space below which a file system counts as full.
const FULL_BYTES: u64 = 1 << 20;

/// Watches one test: its scratch directory, and the kernel log's OOM
/// kills before it began.
pub struct Starvation {
    dir: PathBuf,
    kills_before: usize,
}

impl Starvation {
    pub fn watch(dir: &Path) -> Starvation {
        Starvation {
            dir: dir.to_path_buf(),
            kills_before: kbench_sysinfo::kernel_log()
                .map_or(0, |log| kbench_sysinfo::oom_kills(&log).len()),
        }
    }

    /// `reason`, with what ran out since the test began, if anything did.
    pub fn explain(&self, reason: String) -> String {
        let mut causes = Vec::new();
        if let Some(free) = free_bytes(&self.dir).filter(|free| *free < FULL_BYTES) {
            causes.push(format!(
                "the file system of {} is full ({} KiB free)",
                self.dir.display(),
                free / 1024
            ));
        }
        if let Some(log) = kbench_sysinfo::kernel_log() {
            let kills = kbench_sysinfo::oom_kills(&log);
            if let Some(newest) = kills.get(self.kills_before..).and_then(<[&str]>::last) {
                causes.push(format!(
                    "the system ran out of memory; the kernel said: {newest}"
                ));
            }
        }
        match causes.is_empty() {
            true => reason,
            false => format!("{} ({reason})", causes.join("; ")),
        }
    }
}

/// The bytes an unprivileged writer may still use on `dir`'s file system.
fn free_bytes(dir: &Path) -> Option<u64> {
    let path = CString::new(dir.as_os_str().as_bytes()).ok()?;
    // SAFETY: `stats` is plain C data, written by statvfs.
    let mut stats: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `path` is NUL-terminated; `stats` is a valid out pointer.
    let rc = unsafe { libc::statvfs(path.as_ptr(), &mut stats) };
    (rc == 0).then(|| stats.f_bavail * stats.f_frsize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_with_room_explains_nothing() {
        let dir = tempfile::tempdir().unwrap();
        assert!(free_bytes(dir.path()).unwrap() > 0);
        let watch = Starvation {
            dir: dir.path().to_path_buf(),
            kills_before: usize::MAX,
        };
        assert_eq!(
            watch.explain("exited with status 1".into()),
            "exited with status 1"
        );
    }
}
