//! The kernels of a campaign, as given (`NAME=PATH` or `NAME=RELEASE`),
//! checked before anything switches: a bootable image for this machine,
//! its release read from it, and an initrd that is one and belongs to it;
//! and the origin, the kernel running now.

use crate::cmdline::boot_image;
use crate::command;
use crate::error::{Result, refuse};
use kbench_model::campaign::{CampaignKernel, OriginKernel};
use kbench_vm::KernelImage;
use kbench_vm::kernel_image::ImageArch;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Resolves kernel `name` given as `given` (an image's path, or the
/// release of an image installed in `boot_dir`), with `initrd` if given,
/// else the installed one of its release if there is one.
pub fn resolve(
    name: &str,
    given: &str,
    initrd: Option<&Path>,
    boot_dir: &Path,
) -> Result<CampaignKernel> {
    let as_path = Path::new(given);
    let by_path = given.contains('/') || as_path.is_file();
    let image = if by_path {
        if !as_path.is_file() {
            refuse!("kernel {name}: {given} is not a file");
        }
        std::path::absolute(as_path).unwrap_or_else(|_| as_path.to_path_buf())
    } else {
        let installed = boot_dir.join(format!("vmlinuz-{given}"));
        if !installed.is_file() {
            refuse!(
                "kernel {name}: no image of release {given} ({} is absent); installed: {}. Give \
                 a release installed here or the path of an image",
                installed.display(),
                installed_releases(boot_dir).join(", ")
            );
        }
        installed
    };
    let checked = KernelImage::open(&image)?.require(
        ImageArch::host(),
        "kexec boots kernels of the machine's own architecture",
    )?;
    let Some(release) = checked.release else {
        refuse!(
            "kernel {name}: {} names no release in its header, so the campaign could not tell \
             it booted; build it with a version string (any kernel build has one)",
            image.display()
        );
    };
    if !by_path && release != given {
        refuse!(
            "kernel {name}: {} says it is release {release}, not {given}",
            image.display()
        );
    }
    let initrd = match initrd {
        Some(path) => Some(path.to_path_buf()),
        None => Some(boot_dir.join(format!("initrd.img-{release}"))).filter(|p| p.is_file()),
    };
    if let Some(initrd) = &initrd {
        check_initrd(name, initrd, &release)?;
    }
    Ok(CampaignKernel {
        name: name.to_string(),
        image: image.to_string_lossy().into_owned(),
        initrd: initrd.map(|p| p.to_string_lossy().into_owned()),
        release,
    })
}

/// The releases of the images in `boot_dir`.
fn installed_releases(boot_dir: &Path) -> Vec<String> {
    let mut releases: Vec<String> = std::fs::read_dir(boot_dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            name.strip_prefix("vmlinuz-").map(str::to_string)
        })
        .collect();
    releases.sort();
    if releases.is_empty() {
        releases.push(format!("none in {}", boot_dir.display()));
    }
    releases
}

/// The compressions an initramfs comes in, by their first bytes (cpio
/// itself first: Debian's start with an uncompressed microcode archive).
const INITRD_MAGICS: &[(&[u8], &str)] = &[
    (b"070701", "cpio"),
    (b"070702", "cpio"),
    (&[0x1f, 0x8b], "gzip"),
    (&[0x28, 0xb5, 0x2f, 0xfd], "zstd"),
    (&[0xfd, b'7', b'z', b'X', b'Z'], "xz"),
    (&[0x02, 0x21, 0x4c, 0x18], "lz4"),
    (b"BZh", "bzip2"),
    (&[0x5d, 0x00, 0x00], "lzma"),
    (&[0x89, b'L', b'Z', b'O'], "lzo"),
];

/// Refuses an initrd that is not an initramfs, or whose modules are of
/// another release than the kernel's (read with `lsinitramfs` where
/// initramfs-tools is installed).
fn check_initrd(name: &str, initrd: &Path, release: &str) -> Result<()> {
    let mut head = [0u8; 8];
    let read = std::fs::File::open(initrd).and_then(|mut file| file.read(&mut head));
    if !read.is_ok_and(|n| {
        INITRD_MAGICS
            .iter()
            .any(|(magic, _)| head[..n].starts_with(magic))
    }) {
        refuse!(
            "kernel {name}: {} is not an initramfs (neither a cpio archive nor a compressed \
             one); give its initrd with --initrd {name}=PATH",
            initrd.display()
        );
    }
    let Ok(listing) = command::output("lsinitramfs", &[&initrd.to_string_lossy()]) else {
        return Ok(());
    };
    let releases = module_releases(&listing);
    if !releases.is_empty() && !releases.iter().any(|r| r == release) {
        refuse!(
            "kernel {name}: the initrd {} holds the modules of {}, not of the kernel's release \
             {release}: it belongs to another kernel. Give the right one with --initrd \
             {name}=PATH (or `update-initramfs -c -k {release}`)",
            initrd.display(),
            releases.join(", ")
        );
    }
    Ok(())
}

/// The releases whose module trees an initramfs listing holds
/// (`usr/lib/modules/R/` or `lib/modules/R/`).
fn module_releases(listing: &str) -> Vec<String> {
    let mut releases: Vec<String> = listing
        .lines()
        .filter_map(|line| {
            let rest = line
                .strip_prefix("usr/lib/modules/")
                .or_else(|| line.strip_prefix("lib/modules/"))?;
            Some(rest.split('/').next()?.to_string()).filter(|r| !r.is_empty())
        })
        .collect();
    releases.sort();
    releases.dedup();
    releases
}

/// The kernel running now: its release and command line, and its image
/// and initrd where found (in `boot_dir` by release, or GRUB's
/// `BOOT_IMAGE=`).
pub fn origin(boot_dir: &Path) -> OriginKernel {
    let release = kbench_sysinfo::kernel_release();
    let cmdline = std::fs::read_to_string("/proc/cmdline")
        .map(|text| text.trim().to_string())
        .unwrap_or_default();
    let installed = boot_dir.join(format!("vmlinuz-{release}"));
    let image = match installed.is_file() {
        true => Some(installed),
        false => boot_image(&cmdline)
            .map(PathBuf::from)
            .filter(|path| path.is_file()),
    };
    let initrd = Some(boot_dir.join(format!("initrd.img-{release}"))).filter(|p| p.is_file());
    let text = |path: PathBuf| path.to_string_lossy().into_owned();
    OriginKernel {
        release,
        image: image.map(text),
        initrd: initrd.map(text),
        cmdline,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn module_trees_name_their_releases() {
        let listing = "usr\nusr/lib/modules\nusr/lib/modules/6.1.0-57-cloud-amd64\n\
                       usr/lib/modules/6.1.0-57-cloud-amd64/kernel/virtio_blk.ko\nlib/modules/6.2/x\n";
        assert_eq!(module_releases(listing), ["6.1.0-57-cloud-amd64", "6.2"]);
        assert!(module_releases("bin\nusr/lib/modules/\n").is_empty());
    }

    #[test]
    fn a_release_not_installed_names_those_that_are() {
        let boot = tempfile::tempdir().unwrap();
        std::fs::write(boot.path().join("vmlinuz-6.1.0-57-cloud-amd64"), b"x").unwrap();
        let error = resolve("B", "6.12.9", None, boot.path())
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("no image of release 6.12.9")
                && error.contains("installed: 6.1.0-57-cloud-amd64"),
            "{error}"
        );
    }

    #[test]
    fn a_file_that_is_no_kernel_or_no_initrd_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let text = dir.path().join("notes.txt");
        std::fs::write(&text, vec![b'a'; 4096]).unwrap();
        let error = resolve("A", &text.to_string_lossy(), None, dir.path())
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("is not a kernel image kbench can boot"),
            "{error}"
        );
        let error = check_initrd("A", &text, "6.1").unwrap_err().to_string();
        assert!(error.contains("is not an initramfs"), "{error}");
    }
}
