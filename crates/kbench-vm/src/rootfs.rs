//! Guest root filesystems for profiles: a Debian release with the
//! profiles' packages, built by mmdebstrap (variant `apt`, without docs,
//! man pages and locales) into an ext4 image (label `kbench-rootfs`) that
//! the guest opens on virtio-blk with qemu's `snapshot=on`, so the cached
//! image stays pristine. Cached by content: [`RootfsRequest::key`].
//!
//! - [`manifest`]: the request, its key and the manifest beside the image.
//! - [`cache`]: the cache's entries, builds' work directories and the last
//!   failure.

pub mod cache;
pub mod manifest;

pub use cache::{CachedRootfs, RootfsCache};
pub use manifest::{Manifest, RootfsRequest};

use crate::command::run;
use crate::error::{Result, VmError, invalid};
use kbench_catalog::programs::find_program;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::Instant;

/// The file system's label, for `root=LABEL=kbench-rootfs`.
pub const LABEL: &str = "kbench-rootfs";
const MIB: u64 = 1 << 20;
/// What dpkg leaves out of the image.
const EXCLUDED: &[&str] = &[
    "/usr/share/doc/*",
    "/usr/share/man/*",
    "/usr/share/info/*",
    "/usr/share/locale/*",
];

/// A step of [`build`], as it starts: the caller shows it, the library
/// draws nothing. A build goes through [`RootfsStep::TOTAL`] steps, or
/// ends at once when the rootfs is cached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RootfsStep {
    /// It is cached already: nothing to build.
    Cached {
        id: String,
    },
    /// The last build failed, and why (said once).
    LastFailed {
        message: String,
    },
    /// Checking the packages against this host's apt lists.
    Checking {
        release: String,
    },
    /// The packages cannot be checked beforehand (another release or
    /// architecture than the host's, or no apt lists): mmdebstrap will.
    Unchecked {
        release: String,
    },
    Bootstrapping {
        release: String,
        packages: Vec<String>,
    },
    /// Making the ext4 image of this many MiB.
    Imaging {
        mib: u64,
    },
    Storing {
        id: String,
    },
}

impl RootfsStep {
    /// The steps of a build.
    pub const TOTAL: u64 = 4;

    /// Its place among the [`RootfsStep::TOTAL`] steps, from 1 (0: a note
    /// before the first).
    pub fn number(&self) -> u64 {
        match self {
            RootfsStep::LastFailed { .. } => 0,
            RootfsStep::Checking { .. } | RootfsStep::Unchecked { .. } => 1,
            RootfsStep::Bootstrapping { .. } => 2,
            RootfsStep::Imaging { .. } => 3,
            RootfsStep::Storing { .. } | RootfsStep::Cached { .. } => RootfsStep::TOTAL,
        }
    }
}

impl std::fmt::Display for RootfsStep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RootfsStep::Cached { id } => write!(f, "rootfs {id}: already cached"),
            RootfsStep::LastFailed { message } => {
                write!(f, "the last rootfs build failed: {message}")
            }
            RootfsStep::Checking { release } => {
                write!(
                    f,
                    "checking the packages against this host's apt lists ({release})"
                )
            }
            RootfsStep::Unchecked { release } => write!(
                f,
                "{release}'s packages cannot be checked before building; mmdebstrap names any missing"
            ),
            RootfsStep::Bootstrapping { release, packages } => {
                write!(f, "mmdebstrap {release} with {}", packages.join(" "))
            }
            RootfsStep::Imaging { mib } => write!(f, "making the ext4 image ({mib} MiB)"),
            RootfsStep::Storing { id } => write!(f, "storing rootfs {id} in the cache"),
        }
    }
}

/// The request for `packages` in `release` and `architecture`, each this
/// host's when not given, with `free_mib` free in the image.
pub fn request(
    release: Option<String>,
    architecture: Option<String>,
    packages: Vec<String>,
    free_mib: u32,
) -> Result<RootfsRequest> {
    let release = release.map_or_else(host_release, Ok)?;
    let architecture = architecture.map_or_else(host_architecture, Ok)?;
    Ok(RootfsRequest::new(
        release,
        architecture,
        packages,
        free_mib,
    ))
}

/// This host's Debian release codename (os-release's VERSION_CODENAME).
fn host_release() -> Result<String> {
    kbench_sysinfo::os_codename().ok_or_else(|| {
        VmError::Invalid("/etc/os-release names no VERSION_CODENAME: give the release".into())
    })
}

/// This host's Debian architecture (`dpkg --print-architecture`).
fn host_architecture() -> Result<String> {
    Ok(run("dpkg", &["--print-architecture"], None)?
        .trim()
        .to_string())
}

/// Builds the rootfs `request` asks for unless it is cached; `observe`
/// hears each step as it starts. Unknown packages are refused before
/// building when this host's apt can tell; a failed build leaves nothing
/// in the cache but its reason, told by the next build.
pub fn build(
    cache: &RootfsCache,
    request: &RootfsRequest,
    observe: &mut dyn FnMut(&RootfsStep),
) -> Result<CachedRootfs> {
    let id = request.id();
    if let Some(cached) = cache.get(&id) {
        observe(&RootfsStep::Cached { id });
        return Ok(cached);
    }
    for tool in ["mmdebstrap", "mke2fs", "dpkg-query"] {
        if find_program(tool).is_none() {
            invalid!(
                "{tool} was not found: building a guest rootfs needs mmdebstrap and e2fsprogs (apt-get install mmdebstrap)"
            );
        }
    }
    if let Some(message) = cache.take_last_failure() {
        observe(&RootfsStep::LastFailed { message });
    }
    check_packages(request, observe)?;
    let work = cache.start_build(&id)?;
    match build_in(&work, request, observe) {
        Ok(manifest) => {
            observe(&RootfsStep::Storing { id });
            cache.store(&work, &manifest)
        }
        Err(error) => {
            cache.fail_build(&work, &error);
            Err(error)
        }
    }
}

/// Refuses packages this host's apt lists have no candidate for, when
/// the request is for the host's release and architecture.
fn check_packages(request: &RootfsRequest, observe: &mut dyn FnMut(&RootfsStep)) -> Result<()> {
    let release = request.release.clone();
    let checkable = Some(&request.release) == host_release().ok().as_ref()
        && request.architecture == host_architecture()?
        && kbench_catalog::install::has_package_lists(Path::new("/var/lib/apt/lists"));
    if !checkable {
        observe(&RootfsStep::Unchecked { release });
        return Ok(());
    }
    observe(&RootfsStep::Checking { release });
    let mut args = vec!["policy"];
    args.extend(request.packages.iter().map(String::as_str));
    let policy = run("apt-cache", &args, None)?;
    let known = candidates(&policy);
    let missing: Vec<&str> = request
        .packages
        .iter()
        .map(String::as_str)
        .filter(|p| !known.contains(p))
        .collect();
    if !missing.is_empty() {
        invalid!(
            "no package {} in {} for {} (apt-cache policy has no candidate; `apt-get update` if the lists are old)",
            missing.join(", "),
            request.release,
            request.architecture
        );
    }
    Ok(())
}

/// The packages of `apt-cache policy` output that have a candidate.
fn candidates(policy: &str) -> Vec<&str> {
    let mut found = Vec::new();
    let mut package = None;
    for line in policy.lines() {
        if let Some(name) = line.strip_suffix(':').filter(|_| !line.starts_with(' ')) {
            package = Some(name);
        } else if let Some(candidate) = line.trim().strip_prefix("Candidate:")
            && candidate.trim() != "(none)"
        {
            found.extend(package.take());
        }
    }
    found
}

/// mmdebstrap into `work/tree`, then the image and its manifest in
/// `work/entry`.
fn build_in(
    work: &Path,
    request: &RootfsRequest,
    observe: &mut dyn FnMut(&RootfsStep),
) -> Result<Manifest> {
    let started = Instant::now();
    observe(&RootfsStep::Bootstrapping {
        release: request.release.clone(),
        packages: request.packages.clone(),
    });
    let tree = work.join("tree");
    let tree_text = tree.to_string_lossy();
    let mut args = vec![
        "--variant=apt".to_string(),
        format!("--architectures={}", request.architecture),
        format!("--include={}", request.packages.join(",")),
    ];
    args.extend(
        EXCLUDED
            .iter()
            .map(|path| format!("--dpkgopt=path-exclude={path}")),
    );
    args.extend([request.release.clone(), tree_text.to_string()]);
    run(
        "mmdebstrap",
        &args.iter().map(String::as_str).collect::<Vec<_>>(),
        None,
    )?;
    let admin = format!("--admindir={tree_text}/var/lib/dpkg");
    let listed = run(
        "dpkg-query",
        &[&admin, "-W", "-f", "${Package}\t${Version}\n"],
        None,
    )?;
    write_record(&tree, request)?;
    install_kbench(&tree)?;
    let mib = disk_usage(&tree)?.div_ceil(MIB) + u64::from(request.free_mib);
    observe(&RootfsStep::Imaging { mib });
    let entry = work.join("entry");
    std::fs::create_dir(&entry).map_err(VmError::os(format!("creating {}", entry.display())))?;
    let image = entry.join(cache::IMAGE);
    let image_text = image.to_string_lossy();
    let size = format!("{mib}M");
    run(
        "mke2fs",
        &[
            "-q",
            "-t",
            "ext4",
            "-m",
            "0",
            "-L",
            LABEL,
            "-d",
            &tree_text,
            "-F",
            &image_text,
            &size,
        ],
        None,
    )?;
    let image_bytes = std::fs::metadata(&image)
        .map_err(VmError::os(format!("reading {}", image.display())))?
        .len();
    Ok(Manifest {
        id: request.id(),
        key: request.key(),
        release: request.release.clone(),
        architecture: request.architecture.clone(),
        packages: request.packages.clone(),
        installed: manifest::parse_installed(&listed),
        image_bytes,
        free_mib: request.free_mib,
        built_ms: kbench_model::now_ms(),
        build_seconds: started.elapsed().as_secs_f64(),
        kbench_version: kbench_sysinfo::kbench_version().to_string(),
    })
}

/// Names the rootfs inside itself, for the snapshot of any system that
/// runs from it ([`kbench_model::ROOTFS_RECORD_PATH`]).
fn write_record(tree: &Path, request: &RootfsRequest) -> Result<()> {
    let record = kbench_model::RootfsRecord {
        id: request.id(),
        release: request.release.clone(),
        architecture: request.architecture.clone(),
    };
    let path = tree.join(kbench_model::ROOTFS_RECORD_PATH.trim_start_matches('/'));
    let json = serde_json::to_string_pretty(&record).expect("a record serializes");
    std::fs::write(&path, json + "\n").map_err(VmError::os(format!("writing {}", path.display())))
}

/// Where the image holds the kbench that built it: what a board booted
/// from the image runs (a `kbench vm` guest runs its initramfs's own).
pub const KBENCH_IN_IMAGE: &str = "usr/local/bin/kbench";

/// Copies the running kbench into the tree at [`KBENCH_IN_IMAGE`].
fn install_kbench(tree: &Path) -> Result<()> {
    let exe = std::env::current_exe().map_err(VmError::os("finding the kbench binary"))?;
    let target = tree.join(KBENCH_IN_IMAGE);
    std::fs::copy(&exe, &target)
        .map(drop)
        .map_err(VmError::os(format!(
            "copying kbench to {}",
            target.display()
        )))
}

/// The bytes the files under `dir` take on disk, symbolic links not
/// followed.
fn disk_usage(dir: &Path) -> Result<u64> {
    let entries =
        std::fs::read_dir(dir).map_err(VmError::os(format!("reading {}", dir.display())))?;
    let mut total = std::fs::symlink_metadata(dir)
        .map_err(VmError::os(format!("reading {}", dir.display())))?
        .blocks()
        * 512;
    for entry in entries.flatten() {
        let meta = entry
            .metadata()
            .map_err(VmError::os(format!("reading {}", entry.path().display())))?;
        total += if meta.is_dir() {
            disk_usage(&entry.path())?
        } else {
            meta.blocks() * 512
        };
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidates_of_apt_cache_policy() {
        let policy = "redis-server:\n  Installed: (none)\n  Candidate: 5:7.0.15-1~deb12u10\n  Version table:\n \
     5:7.0.15-1~deb12u10 500\n        500 http://deb.debian.org/debian-security bookworm-security/main amd64 Packages\n\
mail-transport-agent:\n  Installed: (none)\n  Candidate: (none)\n  Version table:\nfio:\n  Installed: 3.33-3\n  Candidate: 3.33-3\n";
        assert_eq!(candidates(policy), ["redis-server", "fio"]);
    }

    #[test]
    fn steps_count_up_to_the_total() {
        let steps = [
            RootfsStep::Checking {
                release: "bookworm".into(),
            },
            RootfsStep::Bootstrapping {
                release: "bookworm".into(),
                packages: vec!["fio".into()],
            },
            RootfsStep::Imaging { mib: 640 },
            RootfsStep::Storing { id: "0123".into() },
        ];
        let numbers: Vec<u64> = steps.iter().map(RootfsStep::number).collect();
        assert_eq!(numbers, [1, 2, 3, RootfsStep::TOTAL]);
        assert_eq!(steps[1].to_string(), "mmdebstrap bookworm with fio");
    }

    #[test]
    fn disk_usage_counts_files_under_the_tree() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("sub").join("f"), vec![1u8; 100_000]).unwrap();
        std::os::unix::fs::symlink("/usr", dir.path().join("link")).unwrap();
        let used = disk_usage(dir.path()).unwrap();
        assert!((100_000..1_000_000).contains(&used), "{used}");
    }
}
