//! Which root filesystem a lab's guests boot with, and how much memory
//! they get. Built-in tests need none: they run in the initramfs. Profile
//! tests (redis, fio, hackbench, ...) need their tools, so without
//! `--rootfs` the lab builds, or finds cached, the rootfs holding their
//! packages ([`crate::rootfs`]); `--rootfs` names an image file or a
//! cached rootfs id. The profiles' `[guest]` needs set the image's free
//! space and the guest's memory unless `--memory` is given.

use super::error::{Result, VmError, invalid};
use super::kernel_image::ImageArch;
use super::rootfs::{self, Manifest, RootfsCache, RootfsStep};
use kbench_catalog::profile::guest::{GuestNeeds, mebibytes};
use kbench_catalog::profile::{Origin, Profiles};
use kbench_model::TestKey;
use std::path::{Path, PathBuf};

/// The smallest guest that boots kbench.
const MIN_MEMORY_MIB: u32 = 128;

/// The disk the guests boot with, and the line every run stores of it.
#[derive(Debug, Clone, PartialEq)]
pub struct GuestDisk {
    pub image: PathBuf,
    pub note: String,
}

/// The rootfs for `tests`: `given` (an image file or a cached id), else
/// the one their profiles' packages make (built unless cached; `observe`
/// hears the build's steps), else none when every test is built in.
pub fn choose(
    arch: ImageArch,
    given: Option<&str>,
    cache: &RootfsCache,
    profiles: &Profiles,
    tests: &[TestKey],
    observe: &mut dyn FnMut(&RootfsStep),
) -> Result<Option<GuestDisk>> {
    let names = profile_names(tests);
    if arch != ImageArch::X86_64 && (given.is_some() || !names.is_empty()) {
        invalid!(
            "an {} guest has no root filesystem yet: kbench's rootfs images are amd64 Debian, \
             so --rootfs and the profiles ({}) run in x86_64 guests only; give an {} guest the \
             built-in benchmarks",
            arch.name(),
            if names.is_empty() {
                "none asked".to_string()
            } else {
                names.join(", ")
            },
            arch.name()
        );
    }
    if let Some(given) = given {
        return given_disk(given, cache).map(Some);
    }
    if names.is_empty() {
        return Ok(None);
    }
    let packages = profiles.packages_of(&names)?;
    let free = profiles.guest_needs_of(&names)?.disk_or_default();
    let request = rootfs::request(None, None, packages, free)?;
    let built = rootfs::build(cache, &request, observe)?;
    Ok(Some(GuestDisk {
        note: cached_note(&built.manifest),
        image: built.image,
    }))
}

/// The guest's memory in MiB: `--memory` when given (a note when it is
/// below what the profiles need), else what they need, at least the
/// default.
pub fn memory_mib(
    given: Option<&str>,
    profiles: &Profiles,
    tests: &[TestKey],
) -> Result<(u32, Option<String>)> {
    let names = profile_names(tests);
    let needs = match names.is_empty() {
        true => GuestNeeds::default(),
        false => profiles.guest_needs_of(&names)?,
    };
    let Some(text) = given else {
        return Ok((needs.memory_or_default(), None));
    };
    let mib = mebibytes(text).ok_or_else(|| {
        VmError::Invalid(format!(
            "--memory '{text}' is not a size such as 1G or 512M"
        ))
    })?;
    if mib < MIN_MEMORY_MIB {
        invalid!("--memory {text} is too small: a guest needs at least {MIN_MEMORY_MIB}M");
    }
    let note = needs.memory_mib.filter(|need| mib < *need).map(|need| {
        format!(
            "--memory {mib}M is below the {need}M these profiles ask for; a test may run out of \
             memory"
        )
    });
    Ok((mib, note))
}

/// The names of the tests that are not built in: profile tests.
fn profile_names(tests: &[TestKey]) -> Vec<String> {
    let mut names: Vec<String> = tests
        .iter()
        .filter(|t| kbench_bench::find(&t.benchmark).is_none())
        .map(|t| t.benchmark.clone())
        .collect();
    names.sort();
    names.dedup();
    names
}

/// The files of the user's own profiles (`--profiles`) among `tests`,
/// which the guest's initramfs carries: it knows the built-in ones.
pub fn own_profile_files(profiles: &Profiles, tests: &[TestKey]) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = profile_names(tests)
        .iter()
        .filter_map(|name| profiles.profile_of(name))
        .filter_map(|profile| match &profile.origin {
            Origin::File(path) => Some(path.clone()),
            Origin::Builtin => None,
        })
        .collect();
    files.sort();
    files.dedup();
    files
}

/// `--rootfs`: an image file, else a cached rootfs id.
fn given_disk(given: &str, cache: &RootfsCache) -> Result<GuestDisk> {
    let path = Path::new(given);
    if let Ok(metadata) = std::fs::metadata(path) {
        if !metadata.is_file() {
            invalid!("the --rootfs image {given} is not a regular file; give an ext4 image file");
        }
        let image =
            std::path::absolute(path).map_err(VmError::os("resolving the --rootfs path"))?;
        let name = image.file_name().unwrap_or_default().to_string_lossy();
        let note = format!(
            "rootfs: the guest ran chrooted in the image {name} ({} MiB) on virtio-blk",
            metadata.len().div_ceil(1 << 20)
        );
        return Ok(GuestDisk { image, note });
    }
    match cache.get(given) {
        Some(cached) => Ok(GuestDisk {
            note: cached_note(&cached.manifest),
            image: cached.image,
        }),
        None => invalid!(
            "--rootfs {given} is neither an image file nor a rootfs id in {} (`kbench rootfs list` \
             shows them; `kbench rootfs build PROFILE...` builds one)",
            cache.dir.display()
        ),
    }
}

/// The note of a cached rootfs.
fn cached_note(manifest: &Manifest) -> String {
    format!(
        "rootfs: the guest ran chrooted in rootfs {} ({}, {} MiB) on virtio-blk",
        manifest.id,
        manifest.release,
        manifest.image_bytes.div_ceil(1 << 20)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(names: &[&str]) -> Vec<TestKey> {
        kbench_catalog::expand_with(
            &names.iter().map(|n| n.to_string()).collect::<Vec<_>>(),
            &Profiles::builtin(),
        )
        .unwrap()
    }

    #[test]
    fn built_in_tests_need_no_rootfs_and_the_default_memory() {
        let cache = RootfsCache::new(tempfile::tempdir().unwrap().path().join("none"));
        let tests = keys(&["syscall-null"]);
        let builtin = Profiles::builtin();
        let chosen = choose(
            ImageArch::X86_64,
            None,
            &cache,
            &builtin,
            &tests,
            &mut |_| {},
        );
        assert_eq!(chosen.unwrap(), None);
        let arm64 = choose(
            ImageArch::Arm64,
            None,
            &cache,
            &builtin,
            &tests,
            &mut |_| {},
        );
        assert_eq!(arm64.unwrap(), None, "built-ins boot an arm64 guest");
        let (mib, note) = memory_mib(None, &Profiles::builtin(), &tests).unwrap();
        assert_eq!((mib, note), (1024, None));
    }

    #[test]
    fn an_arm64_guest_is_refused_a_rootfs_before_one_is_built() {
        let cache = RootfsCache::new(tempfile::tempdir().unwrap().path().join("none"));
        let builtin = Profiles::builtin();
        let error = choose(
            ImageArch::Arm64,
            None,
            &cache,
            &builtin,
            &keys(&["redis", "syscall-null"]),
            &mut |_| panic!("nothing is built"),
        )
        .unwrap_err()
        .to_string();
        assert!(
            error.contains("aarch64 guest has no root filesystem"),
            "{error}"
        );
        assert!(error.contains("(redis)"), "{error}");
        let given = choose(
            ImageArch::Arm64,
            Some("/some/root.img"),
            &cache,
            &builtin,
            &keys(&["syscall-null"]),
            &mut |_| {},
        );
        assert!(given.unwrap_err().to_string().contains("--rootfs"));
    }

    #[test]
    fn memory_follows_the_profiles_unless_given() {
        let tests = keys(&["7zip", "syscall-null"]);
        let profiles = Profiles::builtin();
        assert_eq!(memory_mib(None, &profiles, &tests).unwrap(), (2048, None));
        let (mib, note) = memory_mib(Some("1G"), &profiles, &tests).unwrap();
        assert_eq!(mib, 1024);
        assert!(note.unwrap().contains("below the 2048M"));
        assert_eq!(
            memory_mib(Some("4G"), &profiles, &tests).unwrap(),
            (4096, None)
        );
        let small = memory_mib(Some("64M"), &profiles, &tests).unwrap_err();
        assert!(small.to_string().contains("at least 128M"), "{small}");
        let bad = memory_mib(Some("lots"), &profiles, &tests).unwrap_err();
        assert!(bad.to_string().contains("not a size"), "{bad}");
    }

    #[test]
    fn the_guest_carries_the_user_s_own_profiles_only() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("mine.toml");
        std::fs::write(
            &file,
            "name = \"mine\"\ncommand = \"true\"\n[[metrics]]\nname = \"t\"\nunit = \"s\"\n\
             direction = \"lower\"\nelapsed = true\n[[tests]]\nid = \"mine\"\n",
        )
        .unwrap();
        let profiles = Profiles::load(&[dir.path().to_path_buf()]).unwrap();
        let names = ["mine", "hackbench", "syscall-null"].map(String::from);
        let tests = kbench_catalog::expand_with(&names, &profiles).unwrap();
        assert_eq!(own_profile_files(&profiles, &tests), [file]);
    }

    #[test]
    fn a_given_rootfs_is_a_file_or_a_cached_id() {
        let dir = tempfile::tempdir().unwrap();
        let cache = RootfsCache::new(dir.path().join("cache"));
        let image = dir.path().join("disk.img");
        std::fs::write(&image, vec![0u8; 3 << 20]).unwrap();
        let disk = given_disk(image.to_str().unwrap(), &cache).unwrap();
        assert_eq!(disk.image, image);
        assert!(disk.note.contains("disk.img (3 MiB)"), "{}", disk.note);
        let dir_given = given_disk(dir.path().to_str().unwrap(), &cache).unwrap_err();
        assert!(dir_given.to_string().contains("not a regular file"));
        let unknown = given_disk("0123456789abcdef", &cache)
            .unwrap_err()
            .to_string();
        assert!(
            unknown.contains("neither an image file nor a rootfs id"),
            "{unknown}"
        );
    }
}
