//! The rootfs cache ($XDG_CACHE_HOME/kbench/rootfs, beside the kernels'):
//! one directory per rootfs id holding `rootfs.ext4` and `manifest.json`,
//! moved in whole by one rename. Builds work in `.build-PID-ID`
//! directories; `last-failure.txt` says why the last build failed.

use super::manifest::Manifest;
use crate::error::{Result, VmError};
use crate::kernel_fetch::{KernelCache, entry_names};
use std::path::{Path, PathBuf};

/// The image's file name in its entry.
pub const IMAGE: &str = "rootfs.ext4";
const MANIFEST: &str = "manifest.json";
const LAST_FAILURE: &str = "last-failure.txt";
const BUILD_PREFIX: &str = ".build-";

/// A root filesystem in the cache.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct CachedRootfs {
    /// The ext4 image, an absolute path.
    pub image: PathBuf,
    #[serde(flatten)]
    pub manifest: Manifest,
}

/// One line: id, release/architecture, the image's size, when it was
/// built, the packages asked for, and the image's path.
impl std::fmt::Display for CachedRootfs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let m = &self.manifest;
        write!(
            f,
            "{}  {}/{}  {} MiB  built {}  {}  {}",
            m.id,
            m.release,
            m.architecture,
            m.image_bytes.div_ceil(1 << 20),
            kbench_analysis::number::date(m.built_ms),
            m.packages.join(","),
            self.image.display()
        )
    }
}

/// The rootfs cache.
#[derive(Debug, Clone)]
pub struct RootfsCache {
    pub dir: PathBuf,
}

impl RootfsCache {
    /// `rootfs` beside the kernel cache's default directory.
    pub fn default_dir() -> PathBuf {
        KernelCache::default_dir().with_file_name("rootfs")
    }

    pub fn new(dir: PathBuf) -> RootfsCache {
        RootfsCache { dir }
    }

    /// Every cached rootfs, oldest first.
    pub fn list(&self) -> Result<Vec<CachedRootfs>> {
        let mut found: Vec<CachedRootfs> = entry_names(&self.dir)?
            .iter()
            .filter_map(|id| self.get(id))
            .collect();
        found.sort_by(|a, b| {
            (a.manifest.built_ms, &a.manifest.id).cmp(&(b.manifest.built_ms, &b.manifest.id))
        });
        Ok(found)
    }

    /// The cached rootfs of this id, if there is a whole one.
    pub fn get(&self, id: &str) -> Option<CachedRootfs> {
        let dir = self.entry(id)?;
        let image = dir.join(IMAGE);
        let text = std::fs::read_to_string(dir.join(MANIFEST)).ok()?;
        let manifest: Manifest = serde_json::from_str(&text).ok()?;
        (image.is_file() && manifest.id == id).then(|| CachedRootfs {
            image: std::path::absolute(&image).unwrap_or(image),
            manifest,
        })
    }

    /// Removes the rootfs of this id; false when there is none.
    pub fn remove(&self, id: &str) -> Result<bool> {
        let Some(dir) = self.entry(id).filter(|dir| dir.is_dir()) else {
            return Ok(false);
        };
        std::fs::remove_dir_all(&dir)
            .map_err(VmError::os(format!("removing {}", dir.display())))?;
        Ok(true)
    }

    /// The directory of an id, when it can name one.
    fn entry(&self, id: &str) -> Option<PathBuf> {
        let plain = !id.is_empty() && id.chars().all(|c| c.is_ascii_alphanumeric());
        plain.then(|| self.dir.join(id))
    }

    /// A fresh work directory for building `id`, after removing those
    /// that builds no longer running left.
    pub fn start_build(&self, id: &str) -> Result<PathBuf> {
        std::fs::create_dir_all(&self.dir).map_err(VmError::os(format!(
            "creating the rootfs cache {}",
            self.dir.display()
        )))?;
        for leftover in self.leftovers()? {
            tracing::info!(
                "removing {}, left by a build that stopped",
                leftover.display()
            );
            std::fs::remove_dir_all(&leftover)
                .map_err(VmError::os(format!("removing {}", leftover.display())))?;
        }
        let work = self
            .dir
            .join(format!("{BUILD_PREFIX}{}-{id}", std::process::id()));
        std::fs::create_dir(&work).map_err(VmError::os(format!("creating {}", work.display())))?;
        Ok(work)
    }

    /// Work directories of builds whose process is gone.
    fn leftovers(&self) -> Result<Vec<PathBuf>> {
        let entries = std::fs::read_dir(&self.dir)
            .map_err(VmError::os(format!("reading {}", self.dir.display())))?;
        Ok(entries
            .flatten()
            .filter(|entry| {
                let name = entry.file_name();
                let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(BUILD_PREFIX)) else {
                    return false;
                };
                let pid = rest.split('-').next().unwrap_or_default();
                !Path::new("/proc").join(pid).exists() || pid == std::process::id().to_string()
            })
            .map(|entry| entry.path())
            .collect())
    }

    /// Moves a built entry (`work/entry`, holding the image and the
    /// manifest) into the cache as `manifest.id`, and removes `work`. When
    /// another build stored the same id meanwhile, theirs stays.
    pub fn store(&self, work: &Path, manifest: &Manifest) -> Result<CachedRootfs> {
        let staged = work.join("entry");
        let json = serde_json::to_string_pretty(manifest).expect("a manifest serializes");
        std::fs::write(staged.join(MANIFEST), json + "\n").map_err(VmError::os(format!(
            "writing the manifest in {}",
            staged.display()
        )))?;
        let target = self.dir.join(&manifest.id);
        let renamed = std::fs::rename(&staged, &target);
        let _ = std::fs::remove_dir_all(work);
        match (renamed, self.get(&manifest.id)) {
            (_, Some(cached)) => Ok(cached),
            (Err(error), None) => Err(VmError::os(format!(
                "moving the rootfs into the cache at {}",
                target.display()
            ))(error)),
            (Ok(()), None) => Err(VmError::Invalid(format!(
                "the rootfs {} is not whole in the cache after building",
                manifest.id
            ))),
        }
    }

    /// Forgets a failed build: removes `work` and records `error` for the
    /// next build to tell.
    pub fn fail_build(&self, work: &Path, error: &VmError) {
        let _ = std::fs::remove_dir_all(work);
        let _ = std::fs::write(self.dir.join(LAST_FAILURE), format!("{error}\n"));
    }

    /// Why the last build failed, if it did; read once (it is removed).
    pub fn take_last_failure(&self) -> Option<String> {
        let path = self.dir.join(LAST_FAILURE);
        let text = std::fs::read_to_string(&path).ok()?;
        let _ = std::fs::remove_file(&path);
        Some(text.trim().to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rootfs::manifest::RootfsRequest;

    /// A manifest of a request for `packages`.
    fn manifest(packages: &[&str], built_ms: i64) -> Manifest {
        let request = RootfsRequest::new(
            "bookworm".into(),
            "amd64".into(),
            packages.iter().map(|p| p.to_string()).collect(),
            512,
        );
        Manifest {
            id: request.id(),
            key: request.key(),
            release: request.release,
            architecture: request.architecture,
            packages: request.packages,
            installed: vec![],
            image_bytes: 1,
            free_mib: request.free_mib,
            built_ms,
            build_seconds: 1.0,
            kbench_version: "test".into(),
        }
    }

    /// Stores a fake entry as a build would.
    fn store(cache: &RootfsCache, manifest: &Manifest) -> CachedRootfs {
        let work = cache.start_build(&manifest.id).unwrap();
        std::fs::create_dir(work.join("entry")).unwrap();
        std::fs::write(work.join("entry").join(IMAGE), b"x").unwrap();
        let cached = cache.store(&work, manifest).unwrap();
        assert!(!work.exists());
        cached
    }

    #[test]
    fn lists_whole_entries_only() {
        let dir = tempfile::tempdir().unwrap();
        let cache = RootfsCache::new(dir.path().join("rootfs"));
        assert!(cache.list().unwrap().is_empty());
        let (newer, older) = (manifest(&["fio"], 20), manifest(&["redis-server"], 10));
        store(&cache, &newer);
        store(&cache, &older);
        // An entry with no manifest, and one whose manifest names another id.
        std::fs::create_dir(cache.dir.join("0123456789abcdef")).unwrap();
        std::fs::create_dir(cache.dir.join("fedcba9876543210")).unwrap();
        let copied = cache.dir.join(&older.id).join(MANIFEST);
        std::fs::copy(copied, cache.dir.join("fedcba9876543210").join(MANIFEST)).unwrap();
        let listed = cache.list().unwrap();
        let ids: Vec<&str> = listed.iter().map(|c| c.manifest.id.as_str()).collect();
        assert_eq!(ids, [older.id.as_str(), newer.id.as_str()]);
        assert!(listed[0].image.is_absolute() && listed[0].image.ends_with(IMAGE));
        let line = listed[0].to_string();
        assert!(
            line.starts_with(&format!(
                "{}  bookworm/amd64  1 MiB  built 1970-01-01  redis-server  /",
                older.id
            )),
            "{line}"
        );
        assert_eq!(cache.get("../rootfs"), None);
        assert!(cache.remove(&older.id).unwrap());
        assert!(!cache.remove(&older.id).unwrap());
        assert_eq!(cache.list().unwrap().len(), 1);
    }

    #[test]
    fn a_failed_build_leaves_its_reason_and_no_entry() {
        let dir = tempfile::tempdir().unwrap();
        let cache = RootfsCache::new(dir.path().to_path_buf());
        // A build killed before: its process is gone, its directory stays.
        let killed = dir.path().join(format!("{BUILD_PREFIX}999999999-abc"));
        std::fs::create_dir_all(killed.join("tree")).unwrap();
        let id = manifest(&["fio"], 1).id;
        let work = cache.start_build(&id).unwrap();
        assert!(!killed.exists());
        cache.fail_build(&work, &VmError::Command("mmdebstrap failed".into()));
        assert!(!work.exists());
        assert!(cache.list().unwrap().is_empty());
        assert_eq!(
            cache.take_last_failure().as_deref(),
            Some("mmdebstrap failed")
        );
        assert_eq!(cache.take_last_failure(), None);
    }
}
