//! What a guest root filesystem holds: the request it was built for, its
//! key (the rootfs id), and the manifest written beside its image.

use sha2::{Digest, Sha256};

/// The recipe's version, part of every key: a change to how images are
/// built (variant, exclusions, file system) makes new ones.
const RECIPE: &str = "kbench-rootfs/2";

/// A root filesystem to build: a Debian release and architecture with
/// these packages (sorted, without duplicates), and free space for the
/// tools' files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RootfsRequest {
    pub release: String,
    pub architecture: String,
    pub packages: Vec<String>,
    /// MiB free in the image beyond its files.
    pub free_mib: u32,
}

impl RootfsRequest {
    /// The request for `packages` in any order, duplicates allowed.
    pub fn new(
        release: String,
        architecture: String,
        mut packages: Vec<String>,
        free_mib: u32,
    ) -> RootfsRequest {
        packages.sort();
        packages.dedup();
        RootfsRequest {
            release,
            architecture,
            packages,
            free_mib,
        }
    }

    /// The SHA-256 of the recipe, release, architecture, free space and
    /// packages, in hex: the same request is the same key, whatever the
    /// packages' order.
    pub fn key(&self) -> String {
        let mut hash = Sha256::new();
        let free = format!("free={}M", self.free_mib);
        for part in [RECIPE, &self.release, &self.architecture, &free]
            .into_iter()
            .chain(self.packages.iter().map(String::as_str))
        {
            hash.update(part.as_bytes());
            hash.update(b"\n");
        }
        hash.finalize()
            .iter()
            .map(|byte| format!("{byte:02x}"))
            .collect()
    }

    /// The rootfs id: the key's first 16 hex digits, its cache directory.
    pub fn id(&self) -> String {
        self.key()[..16].to_string()
    }
}

/// A package installed in the image, as dpkg lists it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Installed {
    pub package: String,
    pub version: String,
}

/// `manifest.json` beside the image.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Manifest {
    /// The rootfs id: the first 16 hex digits of `key`.
    pub id: String,
    pub key: String,
    pub release: String,
    pub architecture: String,
    /// The packages asked for.
    pub packages: Vec<String>,
    /// Every package in the image, by name.
    pub installed: Vec<Installed>,
    /// The image file's size (its apparent size: the file is sparse).
    pub image_bytes: u64,
    /// MiB left free in it for the tools' files (0 in images built before
    /// kbench recorded it).
    #[serde(default)]
    pub free_mib: u32,
    /// When it was built, in milliseconds since the Unix epoch.
    pub built_ms: i64,
    pub build_seconds: f64,
    /// The kbench that built it, which the image holds in
    /// /usr/local/bin/kbench.
    pub kbench_version: String,
}

impl Manifest {
    /// The version of `package` in the image, when it is there.
    pub fn version_of(&self, package: &str) -> Option<&str> {
        self.installed
            .iter()
            .find(|i| i.package == package)
            .map(|i| i.version.as_str())
    }
}

/// The packages of `dpkg-query -W -f '${Package}\t${Version}\n'`.
pub fn parse_installed(text: &str) -> Vec<Installed> {
    text.lines()
        .filter_map(|line| {
            let (package, version) = line.split_once('\t')?;
            Some(Installed {
                package: package.to_string(),
                version: version.trim().to_string(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(release: &str, arch: &str, packages: &[&str]) -> RootfsRequest {
        let packages = packages.iter().map(|p| p.to_string()).collect();
        RootfsRequest::new(release.to_string(), arch.to_string(), packages, 512)
    }

    #[test]
    fn the_key_ignores_order_and_duplicates_only() {
        let base = request("bookworm", "amd64", &["redis-server", "fio"]);
        assert_eq!(base.packages, ["fio", "redis-server"]);
        let same = request("bookworm", "amd64", &["fio", "redis-server", "fio"]);
        assert_eq!(base.key(), same.key());
        assert_eq!(base.key().len(), 64);
        assert_eq!(base.id(), base.key()[..16]);
        for other in [
            request("trixie", "amd64", &["fio", "redis-server"]),
            request("bookworm", "arm64", &["fio", "redis-server"]),
            request("bookworm", "amd64", &["fio"]),
            RootfsRequest {
                free_mib: 2048,
                ..base.clone()
            },
        ] {
            assert_ne!(base.key(), other.key(), "{other:?}");
        }
    }

    #[test]
    fn installed_packages_from_dpkg_query() {
        let installed = parse_installed("redis-server\t5:7.0.15-1~deb12u6\nbash\t5.2.15-2+b9\n");
        assert_eq!(installed.len(), 2);
        assert_eq!(installed[0].package, "redis-server");
        assert_eq!(installed[0].version, "5:7.0.15-1~deb12u6");
    }
}
