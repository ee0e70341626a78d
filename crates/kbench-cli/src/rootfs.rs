//! Flags of `kbench rootfs`.

use clap::{Args, Subcommand};
use kbench_vm::rootfs::RootfsCache;
use std::path::PathBuf;

/// Build, list and remove guest root filesystems holding profiles' packages
#[derive(Debug, Subcommand)]
pub enum RootfsCommand {
    /// Build a Debian rootfs image with the packages of profiles (mmdebstrap, then an ext4 image)
    #[command(after_help = "Examples:\n  kbench rootfs build redis hackbench fio   \
# the packages `kbench install` would install\n  kbench rootfs build --package hostname     \
# plain Debian packages\n\nThe image (ext4, label kbench-rootfs, manifest.json beside it) is cached \
by its content: release, architecture and sorted packages; the same request again is not rebuilt. \
Packages the host's apt lists do not have are refused before building when the release and \
architecture are the host's. Needs root (or unprivileged user namespaces), mmdebstrap and \
e2fsprogs. Prints the rootfs id, the image's path and its size.")]
    Build(RootfsBuildArgs),
    /// List cached rootfs images: id, release, architecture, size, when built, packages, image
    List(RootfsListArgs),
    /// Remove cached rootfs images by id, or all of them
    Remove(RootfsRemoveArgs),
}

#[derive(Debug, Args)]
pub struct RootfsBuildArgs {
    /// Profiles (or tests of theirs) whose packages go in, e.g. redis fio hackbench
    #[arg(value_name = "PROFILE", required_unless_present = "packages")]
    pub profiles: Vec<String>,

    /// A Debian package to put in as well (repeatable)
    #[arg(long = "package", value_name = "PACKAGE")]
    pub packages: Vec<String>,

    /// Debian release (default: this host's, from /etc/os-release)
    #[arg(long, value_name = "CODENAME")]
    pub release: Option<String>,

    /// Debian architecture (default: this host's, `dpkg --print-architecture`)
    #[arg(long = "arch", value_name = "ARCH")]
    pub architecture: Option<String>,

    #[command(flatten)]
    pub cache: RootfsCacheArg,
}

#[derive(Debug, Args)]
pub struct RootfsListArgs {
    /// Print JSON on stdout (an array of manifests, each with its image's path)
    #[arg(long)]
    pub json: bool,

    #[command(flatten)]
    pub cache: RootfsCacheArg,
}

#[derive(Debug, Args)]
pub struct RootfsRemoveArgs {
    /// Rootfs ids, as `kbench rootfs list` shows them
    #[arg(
        value_name = "ID",
        required_unless_present = "all",
        conflicts_with = "all"
    )]
    pub ids: Vec<String>,

    /// Remove every cached rootfs
    #[arg(long)]
    pub all: bool,

    #[command(flatten)]
    pub cache: RootfsCacheArg,
}

#[derive(Debug, Args)]
pub struct RootfsCacheArg {
    /// Rootfs cache directory (default: $XDG_CACHE_HOME/kbench/rootfs)
    #[arg(long = "rootfs-cache", value_name = "DIR", env = "KBENCH_ROOTFS_CACHE")]
    pub rootfs_dir: Option<PathBuf>,
}

impl RootfsCacheArg {
    pub fn cache(&self) -> RootfsCache {
        RootfsCache::new(
            self.rootfs_dir
                .clone()
                .unwrap_or_else(RootfsCache::default_dir),
        )
    }
}
