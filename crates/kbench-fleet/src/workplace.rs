//! Where and as whom `kbench worker` works, from its flags: its name, how
//! often it asks for a job, the options its children get, and its work
//! directory (chosen and kept, or temporary and removed at the end).

use crate::FleetError;
use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

/// HOSTNAME-PID: a worker's name by default, unique among the workers of
/// one machine.
pub fn default_name() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_default();
    let host = if host.is_empty() {
        "worker".to_string()
    } else {
        host
    };
    format!("{host}-{}", std::process::id())
}

/// `--poll` seconds as the time between asking for a job: at least 0.1 s.
pub fn poll(seconds: f64) -> Result<Duration, FleetError> {
    if !(seconds.is_finite() && seconds >= 0.1) {
        return Err(FleetError::Setup(format!(
            "--poll {seconds} must be at least 0.1 seconds"
        )));
    }
    Ok(Duration::from_secs_f64(seconds))
}

/// The options every job's child gets (`--profiles DIR` of the worker's
/// own), so that it resolves names as the worker checked them.
pub fn child_options(profile_dirs: &[PathBuf]) -> Vec<OsString> {
    let pair = |dir: &PathBuf| ["--profiles".into(), dir.clone().into_os_string()];
    profile_dirs.iter().flat_map(pair).collect()
}

/// The directory of the per-job stores; a temporary one is removed when
/// this is dropped.
pub struct WorkDir {
    pub path: PathBuf,
    /// Made for this worker (no `--work-dir`): nothing in it is kept.
    pub temporary: bool,
}

impl WorkDir {
    /// `chosen` (`--work-dir`), or a fresh directory under the system's
    /// temporary one; made when missing.
    pub fn make(chosen: Option<PathBuf>) -> Result<WorkDir, FleetError> {
        let temporary = chosen.is_none();
        let path = chosen.unwrap_or_else(|| {
            std::env::temp_dir().join(format!("kbench-worker-{}", std::process::id()))
        });
        std::fs::create_dir_all(&path).map_err(|cause| FleetError::Io {
            doing: format!("cannot make the work directory {}", path.display()),
            cause,
        })?;
        Ok(WorkDir { path, temporary })
    }
}

impl Drop for WorkDir {
    fn drop(&mut self) {
        if self.temporary {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn poll_is_at_least_a_tenth_of_a_second() {
        assert_eq!(poll(0.5).unwrap(), Duration::from_millis(500));
        for bad in [0.05, f64::NAN, f64::INFINITY, -1.0] {
            let error = poll(bad).unwrap_err().to_string();
            assert!(error.contains("must be at least 0.1 seconds"), "{error}");
        }
    }

    #[test]
    fn the_default_name_ends_with_the_pid() {
        let name = default_name();
        assert!(
            name.ends_with(&format!("-{}", std::process::id())),
            "{name}"
        );
        assert!(name.len() > 2 + std::process::id().to_string().len());
    }

    #[test]
    fn children_get_each_profile_directory() {
        let options = child_options(&["/a".into(), "/b".into()]);
        assert_eq!(options, ["--profiles", "/a", "--profiles", "/b"]);
    }

    #[test]
    fn a_chosen_directory_is_kept_and_a_temporary_one_removed() {
        let dir = tempfile::tempdir().unwrap();
        let chosen = dir.path().join("work");
        drop(WorkDir::make(Some(chosen.clone())).unwrap());
        assert!(chosen.is_dir());
        let temporary = WorkDir::make(None).unwrap();
        let path = temporary.path.clone();
        assert!(temporary.temporary && path.is_dir());
        drop(temporary);
        assert!(!path.exists());
        std::fs::write(dir.path().join("file"), "").unwrap();
        let error = WorkDir::make(Some(dir.path().join("file/sub")))
            .err()
            .unwrap();
        assert!(
            error
                .to_string()
                .starts_with("cannot make the work directory")
        );
    }
}
