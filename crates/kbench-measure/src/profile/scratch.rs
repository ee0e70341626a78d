//! The scratch directory of one profile test: `{dir}` (where the tool works
//! and its service keeps its data) and the logs of its processes, removed
//! when the test ends however it ends. It lies in the work directory, whose
//! filesystem the system snapshot records (fio measures it), except for a
//! service run as another user, which may not reach the work directory:
//! that goes under $TMPDIR. Directories left by an agent that was killed
//! (SIGKILL gives no chance to clean up) are removed by the next one.

use super::command::User;
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

/// The prefix of scratch directory names: `kbench-scratch-<pid>-<n>`.
pub const PREFIX: &str = "kbench-scratch-";

/// A scratch directory, removed on drop.
#[derive(Debug)]
pub struct Scratch {
    root: PathBuf,
    /// `{dir}`: where the tool runs.
    pub dir: PathBuf,
    /// stdout/stderr of each process.
    pub logs: PathBuf,
}

impl Scratch {
    /// Makes a fresh scratch directory under `parent`; `owner` gets `{dir}`.
    pub fn create(parent: &Path, owner: Option<&User>) -> io::Result<Scratch> {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        remove_stale(parent);
        let root = parent.join(format!(
            "{PREFIX}{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::SeqCst)
        ));
        std::fs::create_dir(&root)?;
        let scratch = Scratch {
            dir: root.join("work"),
            logs: root.join("logs"),
            root,
        };
        // Readable so a service user can reach {dir}; logs stay private.
        std::fs::set_permissions(&scratch.root, std::fs::Permissions::from_mode(0o755))?;
        std::fs::create_dir(&scratch.dir)?;
        std::fs::create_dir(&scratch.logs)?;
        std::fs::set_permissions(&scratch.logs, std::fs::Permissions::from_mode(0o700))?;
        if let Some(user) = owner {
            std::os::unix::fs::chown(&scratch.dir, Some(user.uid), Some(user.gid))?;
        }
        Ok(scratch)
    }

    #[cfg(test)]
    pub fn root(&self) -> &Path {
        &self.root
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if let Err(error) = std::fs::remove_dir_all(&self.root)
            && error.kind() != io::ErrorKind::NotFound
        {
            // Nothing to return to; the agent's stderr reaches the user
            // when the test fails, and the next agent retries.
            eprintln!(
                "kbench: could not remove the scratch directory {}: {error}",
                self.root.display()
            );
        }
    }
}

/// Removes scratch directories in `parent` whose agent is no longer alive.
fn remove_stale(parent: &Path) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(PREFIX)) else {
            continue;
        };
        let Some(pid) = rest.split('-').next().and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        if pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn is_removed_on_drop_and_stale_ones_are_swept() {
        let parent = tempfile::tempdir().unwrap();
        // pid_max is at most 2^22: this pid cannot be alive.
        let stale = parent.path().join(format!("{PREFIX}99999999-0"));
        std::fs::create_dir_all(stale.join("work")).unwrap();
        let unrelated = parent.path().join("kbench-scratch-notes");
        std::fs::create_dir(&unrelated).unwrap();
        let scratch = Scratch::create(parent.path(), None).unwrap();
        assert!(!stale.exists());
        assert!(unrelated.exists());
        std::fs::write(scratch.dir.join("data"), "x").unwrap();
        let root = scratch.root().to_path_buf();
        assert!(root.starts_with(parent.path()));
        drop(scratch);
        assert!(!root.exists());
    }
}
