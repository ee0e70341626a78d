//! Private temporary directories, removed with everything in them on drop.

use super::os_error;
use crate::BenchError;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// A private temporary directory `<temp>/kbench-<bench>-<pid>-<n>`, removed
/// with everything in it on drop.
pub(crate) struct TempDir {
    path: PathBuf,
}

impl TempDir {
    pub(crate) fn new(bench: &str) -> Result<TempDir, BenchError> {
        use std::os::unix::fs::DirBuilderExt;
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let base = std::env::temp_dir();
        let pid = std::process::id();
        loop {
            let n = NEXT.fetch_add(1, Ordering::Relaxed);
            let path = base.join(format!("kbench-{bench}-{pid}-{n}"));
            match std::fs::DirBuilder::new().mode(0o700).create(&path) {
                Ok(()) => {
                    #[cfg(test)]
                    crate::testing::LAST_TEMP_DIR
                        .with(|last| *last.borrow_mut() = Some(path.clone()));
                    return Ok(TempDir { path });
                }
                // A leftover of an earlier process with our pid (or another
                // pid namespace sharing the temp dir): never touch it.
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(error) => {
                    return Err(BenchError::Os {
                        what: format!("create temporary directory {}", path.display()),
                        error,
                    });
                }
            }
        }
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// A new file `name` in the directory, open for reading and writing,
    /// and its path.
    pub(crate) fn new_file(&self, name: &str) -> Result<(File, PathBuf), BenchError> {
        let path = self.path.join(name);
        let file = File::options()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(os_error(format!("create {}", path.display())))?;
        Ok((file, path))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}
