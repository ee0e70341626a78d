//! Kernels for `kbench vm`: Debian's cloud kernels fetched with
//! `apt-get download`, unpacked with `dpkg-deb`, and kept in a cache
//! directory ($XDG_CACHE_HOME/kbench/kernels) as
//! `RELEASE/vmlinuz-RELEASE` and `RELEASE/config-RELEASE`, the layout of
//! /boot. The cloud flavour (`linux-image-*-cloud-amd64`) is small and has
//! the serial drivers built in, so it boots in qemu with no modules; the
//! virtio-blk drivers a `--rootfs` disk needs are modules in it, kept in
//! `RELEASE/modules/` ([`super::modules`]). The arm64 cloud flavour
//! (`-cloud-arm64`, fetched as `PACKAGE:arm64`: on an amd64 host apt knows
//! it once `dpkg --add-architecture arm64` is done) has the PL011 and
//! 8250-on-PCI serial drivers built in, which an arm64 guest uses.
//!
//! `debian:6.1` means the newest `linux-image-6.1.*-cloud-ARCH` apt knows;
//! `debian:6.1.0-57` or `debian:6.12.117+deb12` pick one build.

use super::command::run;
use super::error::{Result, VmError, invalid};
use super::kernel_image::{ImageArch, KernelImage};
use super::modules::{self, MODULES_DIR};
use kbench_catalog::programs::find_program;
pub use kbench_model::KernelSpec;
use std::path::{Path, PathBuf};

/// The flavour of Debian's kernel packages for `arch`: "cloud-amd64".
fn flavour(arch: ImageArch) -> String {
    format!("cloud-{}", arch.debian())
}

const PREFIX: &str = "linux-image-";

/// A step of [`KernelCache::fetch`], as it starts: the caller shows it (a
/// bar, a line), the library draws nothing. A fetch goes through
/// [`FetchStep::TOTAL`] steps, or ends at the first when the kernel is
/// already cached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FetchStep {
    /// The package apt has for the spec was chosen: its kernel release.
    Chosen {
        release: String,
        package: String,
    },
    /// It is cached already: nothing to download.
    Cached {
        release: String,
    },
    /// It is cached without its modules (fetched by an older kbench): it
    /// is fetched again.
    Outdated {
        release: String,
    },
    Downloading {
        release: String,
        package: String,
    },
    Unpacking {
        release: String,
    },
    /// Moving it into the cache.
    Storing {
        release: String,
    },
}

impl FetchStep {
    /// The steps of a fetch that downloads.
    pub const TOTAL: u64 = 4;

    /// Its place among the [`FetchStep::TOTAL`] steps, from 1; a cached
    /// kernel is done at once.
    pub fn number(&self) -> u64 {
        match self {
            FetchStep::Chosen { .. } | FetchStep::Outdated { .. } => 1,
            FetchStep::Downloading { .. } => 2,
            FetchStep::Unpacking { .. } => 3,
            FetchStep::Storing { .. } | FetchStep::Cached { .. } => FetchStep::TOTAL,
        }
    }
}

impl std::fmt::Display for FetchStep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FetchStep::Chosen { release, package } => write!(f, "{release}: {package}"),
            FetchStep::Cached { release } => write!(f, "{release}: already cached"),
            FetchStep::Outdated { release } => write!(
                f,
                "{release}: cached without the modules its guest needs (virtio disk and network); \
                 fetching it again"
            ),
            FetchStep::Downloading { release, package } => {
                write!(f, "{release}: downloading {package}")
            }
            FetchStep::Unpacking { release } => write!(f, "{release}: unpacking"),
            FetchStep::Storing { release } => write!(f, "{release}: storing in the cache"),
        }
    }
}

/// A kernel in the cache.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct CachedKernel {
    pub release: String,
    pub vmlinuz: PathBuf,
    pub config: Option<PathBuf>,
    /// "PACKAGE VERSION" it came from, when fetched by kbench.
    pub source: Option<String>,
    /// The modules the guest loads for its virtio disk and network, in
    /// load order ([`super::modules`]); `None` in kernels an older kbench
    /// fetched.
    pub modules: Option<PathBuf>,
}

impl CachedKernel {
    /// Whether it has every module its guest needs (an older kbench kept
    /// none, or not the network's).
    fn is_whole(&self) -> bool {
        self.modules
            .as_deref()
            .is_some_and(|dir| modules::missing(dir, self.config.as_deref()).is_empty())
    }

    /// One line per kernel, releases aligned: release, then the full path
    /// of its vmlinuz.
    pub fn listing(kernels: &[CachedKernel]) -> String {
        let width = kernels.iter().map(|k| k.release.len()).max().unwrap_or(0);
        kernels
            .iter()
            .map(|k| format!("{:width$}  {}\n", k.release, k.vmlinuz.display()))
            .collect()
    }
}

/// The ABI part of an image package name, when it is one:
/// `linux-image-6.1.0-57-cloud-amd64` -> `6.1.0-57`. Meta packages
/// (`linux-image-6.12-cloud-amd64`, `linux-image-cloud-amd64`) and debug or
/// unsigned ones are not.
fn image_abi<'a>(package: &'a str, flavour: &str) -> Option<&'a str> {
    let abi = package
        .strip_prefix(PREFIX)?
        .strip_suffix(flavour)?
        .strip_suffix('-')?;
    let numbers = abi.split(['.', '-', '+']).take(3);
    let full =
        numbers.clone().count() == 3 && numbers.into_iter().all(|n| n.parse::<u32>().is_ok());
    full.then_some(abi)
}

/// The numbers of an ABI, for ordering: "6.12.117+deb12" -> [6, 12, 117, 12].
fn version_key(abi: &str) -> Vec<u64> {
    abi.split(|c: char| !c.is_ascii_digit())
        .filter_map(|n| n.parse().ok())
        .collect()
}

/// The newest image package of `flavour` among `packages` matching `spec`.
pub fn choose_package<'a>(
    spec: &KernelSpec,
    flavour: &str,
    packages: &[&'a str],
) -> Option<&'a str> {
    packages
        .iter()
        .filter_map(|&p| image_abi(p, flavour).map(|abi| (p, abi)))
        .filter(|(_, abi)| spec.matches(abi))
        .max_by_key(|(_, abi)| version_key(abi))
        .map(|(p, _)| p)
}

/// The kernel versions (major.minor) among the image packages, for messages.
fn available_versions(flavour: &str, packages: &[&str]) -> Vec<String> {
    let mut versions: Vec<(Vec<u64>, String)> = packages
        .iter()
        .filter_map(|p| image_abi(p, flavour))
        .map(|abi| {
            let key = version_key(abi);
            (key[..2].to_vec(), format!("{}.{}", key[0], key[1]))
        })
        .collect();
    versions.sort();
    versions.dedup();
    versions.into_iter().map(|(_, v)| v).collect()
}

/// The kernel cache.
#[derive(Debug, Clone)]
pub struct KernelCache {
    pub dir: PathBuf,
}

impl KernelCache {
    /// What `kernel list` says of a cache with no kernel.
    pub fn none_note(&self) -> String {
        format!(
            "No kernels in {}; fetch some with `kbench kernel fetch debian:6.1 debian:6.12`.",
            self.dir.display()
        )
    }

    /// $XDG_CACHE_HOME/kbench/kernels, else ~/.cache/kbench/kernels.
    pub fn default_dir() -> PathBuf {
        let base = std::env::var_os("XDG_CACHE_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
            .unwrap_or_else(std::env::temp_dir);
        base.join("kbench").join("kernels")
    }

    pub fn new(dir: PathBuf) -> KernelCache {
        KernelCache { dir }
    }

    /// Every cached kernel, by release.
    pub fn list(&self) -> Result<Vec<CachedKernel>> {
        let mut kernels: Vec<CachedKernel> = entry_names(&self.dir)?
            .iter()
            .filter_map(|release| self.get(release))
            .collect();
        kernels.sort_by(|a, b| {
            version_key(&a.release)
                .cmp(&version_key(&b.release))
                .then_with(|| a.release.cmp(&b.release))
        });
        Ok(kernels)
    }

    /// The cached kernel of this release, if there is one.
    pub fn get(&self, release: &str) -> Option<CachedKernel> {
        if release.is_empty() || release.contains('/') {
            return None;
        }
        let dir = self.dir.join(release);
        let vmlinuz = dir.join(format!("vmlinuz-{release}"));
        if !vmlinuz.is_file() {
            return None;
        }
        let config = Some(dir.join(format!("config-{release}"))).filter(|p| p.is_file());
        let source = std::fs::read_to_string(dir.join("source"))
            .ok()
            .map(|s| s.trim().to_string());
        let modules = Some(dir.join(MODULES_DIR)).filter(|p| p.is_dir());
        Some(CachedKernel {
            release: release.to_string(),
            vmlinuz: std::path::absolute(&vmlinuz).unwrap_or(vmlinuz),
            config,
            source,
            modules,
        })
    }

    /// [`KernelCache::fetch`] of each of `specs` in turn; `observe` hears
    /// each step's place among all of theirs (from 1 to `specs.len()` x
    /// [`FetchStep::TOTAL`]) and its text.
    pub fn fetch_all(
        &self,
        specs: &[KernelSpec],
        arch: ImageArch,
        observe: &mut dyn FnMut(u64, String),
    ) -> Result<Vec<CachedKernel>> {
        (0u64..)
            .zip(specs)
            .map(|(done, spec)| {
                self.fetch(spec, arch, &mut |step| {
                    observe(done * FetchStep::TOTAL + step.number(), step.to_string())
                })
            })
            .collect()
    }

    /// Fetches `arch`'s cloud kernel `spec` names unless it is cached;
    /// `observe` hears each step as it starts.
    pub fn fetch(
        &self,
        spec: &KernelSpec,
        arch: ImageArch,
        observe: &mut dyn FnMut(&FetchStep),
    ) -> Result<CachedKernel> {
        for tool in ["apt-cache", "apt-get", "dpkg-deb"] {
            if find_program(tool).is_none() {
                invalid!(
                    "{tool} was not found: `kbench kernel fetch` downloads Debian's kernel packages \
                     with apt and needs a Debian or Ubuntu system; elsewhere give `kbench vm` a \
                     bzImage path"
                );
            }
        }
        let names = run("apt-cache", &["pkgnames", PREFIX], None)?;
        let packages: Vec<&str> = names.lines().map(str::trim).collect();
        let flavour = flavour(arch);
        let Some(package) = choose_package(spec, &flavour, &packages) else {
            let versions = available_versions(&flavour, &packages);
            invalid!(
                "no Debian package linux-image-{}*-{flavour} is known to apt; {}",
                spec.version,
                match (versions.is_empty(), arch == ImageArch::host()) {
                    (false, _) => format!(
                        "apt knows these versions: {}; run `apt-get update` if the lists are old",
                        versions.join(", ")
                    ),
                    (true, true) => "apt knows no cloud kernel at all; run `apt-get update` if \
                                     the lists are old"
                        .to_string(),
                    (true, false) => format!(
                        "apt knows no {} package: add the architecture with `dpkg \
                         --add-architecture {} && apt-get update` (as root)",
                        arch.debian(),
                        arch.debian()
                    ),
                }
            );
        };
        let release = format!(
            "{}-{flavour}",
            image_abi(package, &flavour).expect("chosen by ABI")
        );
        observe(&FetchStep::Chosen {
            release: release.clone(),
            package: package.to_string(),
        });
        let qualified = format!("{package}:{}", arch.debian());
        self.fetch_package(&qualified, &release, observe)
    }

    /// Fetches `package`, whose kernel is `release`, unless it is cached.
    fn fetch_package(
        &self,
        package: &str,
        release: &str,
        observe: &mut dyn FnMut(&FetchStep),
    ) -> Result<CachedKernel> {
        let release = release.to_string();
        match self.get(&release) {
            Some(cached) if cached.is_whole() => {
                observe(&FetchStep::Cached { release });
                return Ok(cached);
            }
            Some(_) => observe(&FetchStep::Outdated {
                release: release.clone(),
            }),
            None => {}
        }
        std::fs::create_dir_all(&self.dir).map_err(VmError::os(format!(
            "creating the kernel cache {}",
            self.dir.display()
        )))?;
        let work = self
            .dir
            .join(format!(".fetch-{}-{release}", std::process::id()));
        let _ = std::fs::remove_dir_all(&work);
        std::fs::create_dir_all(&work)
            .map_err(VmError::os(format!("creating {}", work.display())))?;
        let result = self.fetch_into(package, &release, &work, observe);
        let _ = std::fs::remove_dir_all(&work);
        result
    }

    fn fetch_into(
        &self,
        package: &str,
        release: &str,
        work: &Path,
        observe: &mut dyn FnMut(&FetchStep),
    ) -> Result<CachedKernel> {
        let release_text = || release.to_string();
        observe(&FetchStep::Downloading {
            release: release_text(),
            package: package.to_string(),
        });
        run("apt-get", &["download", "-q", package], Some(work))?;
        let deb = std::fs::read_dir(work)
            .map_err(VmError::os(format!("reading {}", work.display())))?
            .flatten()
            .map(|e| e.path())
            .find(|p| p.extension().is_some_and(|e| e == "deb"))
            .ok_or_else(|| VmError::Command(format!("apt-get download {package} left no .deb")))?;
        let version = run("dpkg-deb", &["-f", &deb.to_string_lossy(), "Version"], None)?;
        observe(&FetchStep::Unpacking {
            release: release_text(),
        });
        let root = work.join("root");
        run(
            "dpkg-deb",
            &["-x", &deb.to_string_lossy(), &root.to_string_lossy()],
            None,
        )?;
        let boot = root.join("boot");
        let vmlinuz = boot.join(format!("vmlinuz-{release}"));
        let image = KernelImage::open(&vmlinuz).map_err(|e| {
            VmError::from(e).at(format!("the package {package} has no usable kernel image"))
        })?;
        if image.release.as_deref() != Some(release) {
            invalid!(
                "the image in {package} says its release is {:?}, not {release}",
                image.release
            );
        }
        observe(&FetchStep::Storing {
            release: release_text(),
        });
        let staged = work.join(release);
        let staging = || VmError::os(format!("staging the kernel in {}", staged.display()));
        std::fs::create_dir(&staged).map_err(staging())?;
        std::fs::rename(&vmlinuz, staged.join(format!("vmlinuz-{release}"))).map_err(staging())?;
        let config = boot.join(format!("config-{release}"));
        if config.is_file() {
            std::fs::rename(&config, staged.join(format!("config-{release}"))).map_err(staging())?;
        }
        let tree = root.join("lib/modules").join(release);
        let modules = modules::resolve(&tree, modules::GUEST_DRIVERS)
            .map_err(|e| e.at(format!("the package {package}")))?;
        modules::store(&staged.join(MODULES_DIR), &modules)?;
        std::fs::write(
            staged.join("source"),
            format!("{package} {}\n", version.trim()),
        )
        .map_err(staging())?;
        // One rename: a kernel is in the cache whole or not at all. When
        // another kbench fetched the same kernel meanwhile, theirs stays.
        // An outdated one (without all of its modules) goes aside first.
        let target = self.dir.join(release);
        if self.get(release).is_some_and(|cached| !cached.is_whole()) {
            std::fs::rename(&target, work.join("outdated")).map_err(VmError::os(format!(
                "moving the outdated kernel {} aside",
                target.display()
            )))?;
        }
        if let Err(error) = std::fs::rename(&staged, &target)
            && self.get(release).is_none()
        {
            return Err(VmError::os(format!(
                "moving the kernel into the cache at {}",
                target.display()
            ))(error));
        }
        self.get(release).ok_or_else(|| {
            VmError::Invalid(format!(
                "the kernel {release} is not in the cache after fetching"
            ))
        })
    }
}

/// The names in a cache directory, but hidden ones (work in progress);
/// none when it does not exist yet.
pub(crate) fn entry_names(dir: &Path) -> Result<Vec<String>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(vec![]),
        Err(e) => return Err(VmError::os(format!("reading {}", dir.display()))(e)),
    };
    Ok(entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str().map(str::to_string))
        .filter(|name| !name.starts_with('.'))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `apt-cache pkgnames linux-image-` on Debian 12 with
    /// bookworm-security, cut down (real names).
    const PKGNAMES: &[&str] = &[
        "linux-image-6.1.0-47-cloud-amd64-dbg",
        "linux-image-6.1.0-57-cloud-amd64",
        "linux-image-6.1.0-57-cloud-amd64-unsigned",
        "linux-image-6.1.0-9-cloud-amd64",
        "linux-image-6.1.0-50-cloud-amd64",
        "linux-image-cloud-amd64",
        "linux-image-6.12-cloud-amd64",
        "linux-image-6.12.100+deb12-cloud-amd64",
        "linux-image-6.12.117+deb12-cloud-amd64",
        "linux-image-6.12.111+deb12-cloud-amd64",
        "linux-image-6.1.0-57-amd64",
        "linux-image-amd64",
        "linux-image-6.1.0-57-cloud-arm64-unsigned",
        "linux-image-6.1.0-57-cloud-arm64",
        "linux-image-6.12.118+deb12-arm64-16k",
        "linux-image-6.12.118+deb12-cloud-arm64",
    ];

    fn choose(spec: &str) -> Option<&'static str> {
        choose_package(&KernelSpec::parse(spec).unwrap(), "cloud-amd64", PKGNAMES)
    }

    #[test]
    fn arm64_is_its_own_flavour() {
        let arm64 = flavour(ImageArch::Arm64);
        let spec = |text| KernelSpec::parse(text).unwrap();
        assert_eq!(
            choose_package(&spec("debian:6.1"), &arm64, PKGNAMES),
            Some("linux-image-6.1.0-57-cloud-arm64")
        );
        assert_eq!(
            choose_package(&spec("debian:6.12"), &arm64, PKGNAMES),
            Some("linux-image-6.12.118+deb12-cloud-arm64")
        );
        assert_eq!(available_versions(&arm64, PKGNAMES), ["6.1", "6.12"]);
    }

    #[test]
    fn picks_the_newest_matching_cloud_image() {
        assert_eq!(
            choose("debian:6.1"),
            Some("linux-image-6.1.0-57-cloud-amd64")
        );
        assert_eq!(
            choose("debian:6.12"),
            Some("linux-image-6.12.117+deb12-cloud-amd64")
        );
        assert_eq!(
            choose("debian:6.1.0-50"),
            Some("linux-image-6.1.0-50-cloud-amd64")
        );
        assert_eq!(
            choose("debian:6.12.100"),
            Some("linux-image-6.12.100+deb12-cloud-amd64")
        );
        assert_eq!(choose("debian:6.2"), None);
        assert_eq!(
            choose("debian:6"),
            Some("linux-image-6.12.117+deb12-cloud-amd64")
        );
    }

    #[test]
    fn only_real_images() {
        let abi = |package| image_abi(package, "cloud-amd64");
        assert_eq!(abi("linux-image-6.1.0-57-cloud-amd64"), Some("6.1.0-57"));
        assert_eq!(abi("linux-image-6.12-cloud-amd64"), None);
        assert_eq!(abi("linux-image-cloud-amd64"), None);
        assert_eq!(abi("linux-image-6.1.0-57-cloud-amd64-dbg"), None);
        assert_eq!(abi("linux-image-6.1.0-57-amd64"), None);
        assert_eq!(abi("linux-image-6.1.0-57-cloud-arm64"), None);
        assert_eq!(available_versions("cloud-amd64", PKGNAMES), ["6.1", "6.12"]);
    }

    #[test]
    fn specs() {
        assert!(KernelSpec::parse("6.1").is_err());
        assert!(KernelSpec::parse("debian:").is_err());
        assert!(KernelSpec::parse("debian:latest").is_err());
        assert_eq!(KernelSpec::parse("debian:6.12").unwrap().version, "6.12");
    }

    #[test]
    fn lists_what_is_cached() {
        let dir = tempfile::tempdir().unwrap();
        let cache = KernelCache::new(dir.path().to_path_buf());
        assert!(cache.list().unwrap().is_empty());
        for release in ["6.12.117+deb12-cloud-amd64", "6.1.0-57-cloud-amd64"] {
            let kernel_dir = dir.path().join(release);
            std::fs::create_dir_all(&kernel_dir).unwrap();
            std::fs::write(kernel_dir.join(format!("vmlinuz-{release}")), b"x").unwrap();
        }
        std::fs::create_dir_all(dir.path().join(".fetch-1-partial")).unwrap();
        std::fs::create_dir_all(dir.path().join("empty")).unwrap();
        let kernels = cache.list().unwrap();
        let releases: Vec<&str> = kernels.iter().map(|k| k.release.as_str()).collect();
        assert_eq!(
            releases,
            ["6.1.0-57-cloud-amd64", "6.12.117+deb12-cloud-amd64"]
        );
        assert!(kernels[0].vmlinuz.is_absolute());
        assert!(
            kernels[0]
                .vmlinuz
                .ends_with("6.1.0-57-cloud-amd64/vmlinuz-6.1.0-57-cloud-amd64")
        );
        assert_eq!(cache.get("../etc"), None);
    }

    #[test]
    fn a_cached_kernel_is_one_step_and_no_download() {
        let dir = tempfile::tempdir().unwrap();
        let cache = KernelCache::new(dir.path().to_path_buf());
        let release = "6.1.0-57-cloud-amd64";
        let kernel_dir = dir.path().join(release);
        std::fs::create_dir_all(kernel_dir.join(MODULES_DIR)).unwrap();
        std::fs::write(kernel_dir.join(format!("vmlinuz-{release}")), b"x").unwrap();
        let config = kernel_dir.join(format!("config-{release}"));
        std::fs::write(&config, "CONFIG_VIRTIO_BLK=y\nCONFIG_VIRTIO_NET=y\n").unwrap();
        let mut steps = Vec::new();
        // A package apt could not download: the cache answers first.
        let kernel = cache
            .fetch_package("linux-image-no-such-package", release, &mut |s| {
                steps.push(s.clone())
            })
            .unwrap();
        assert_eq!(kernel.release, release);
        let cached = FetchStep::Cached {
            release: release.to_string(),
        };
        assert_eq!(cached.number(), FetchStep::TOTAL);
        assert_eq!(steps, [cached]);

        // Cached before its network driver was kept: fetched again.
        std::fs::write(&config, "CONFIG_VIRTIO_BLK=y\nCONFIG_VIRTIO_NET=m\n").unwrap();
        steps.clear();
        let again = cache.fetch_package("linux-image-no-such-package", release, &mut |s| {
            steps.push(s.clone())
        });
        assert!(again.is_err(), "apt has no such package");
        assert_eq!(
            steps.first(),
            Some(&FetchStep::Outdated {
                release: release.to_string()
            })
        );
    }

    #[test]
    fn steps_count_up_to_the_total() {
        let (release, package) = ("r".to_string(), "p".to_string());
        let steps = [
            FetchStep::Chosen {
                release: release.clone(),
                package: package.clone(),
            },
            FetchStep::Downloading {
                release: release.clone(),
                package,
            },
            FetchStep::Unpacking {
                release: release.clone(),
            },
            FetchStep::Storing { release },
        ];
        let numbers: Vec<u64> = steps.iter().map(FetchStep::number).collect();
        assert_eq!(numbers, [1, 2, 3, FetchStep::TOTAL]);
        assert_eq!(steps[1].to_string(), "r: downloading p");
        let outdated = FetchStep::Outdated {
            release: "r".into(),
        };
        assert_eq!(outdated.number(), 1);
        assert!(outdated.to_string().contains("without the modules"));
    }
}
