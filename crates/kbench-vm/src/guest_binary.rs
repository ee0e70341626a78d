//! Which kbench binary a guest runs as /init. A guest of the host's
//! architecture runs the running binary, so the guest runs exactly the
//! code the host does. A guest of another architecture (an arm64 kernel on
//! an x86_64 host) needs kbench built for it: the one the user gives
//! (`--guest-kbench`), else a cross-build found beside the running binary,
//! where docs/contributing.md's command leaves it. [`check`] makes sure it
//! is for the guest's architecture and, when foreign, statically linked:
//! the host has no loader and libraries of that architecture to copy in.

use super::elf;
use super::error::{Result, VmError, invalid};
use super::kernel_image::ImageArch;
use std::path::{Path, PathBuf};

/// The kbench binary for a guest of `arch`: `given`, else the running one
/// for the host's architecture, else a cross-build beside it.
pub fn find(arch: ImageArch, given: Option<&Path>) -> Result<PathBuf> {
    if let Some(path) = given {
        return Ok(path.to_path_buf());
    }
    let exe = std::env::current_exe().map_err(VmError::os(
        "finding the kbench binary to put in the guest's initramfs",
    ))?;
    if arch == ImageArch::host() {
        return Ok(exe);
    }
    let places = cross_builds(&exe, arch);
    if let Some(found) = places.iter().find(|path| path.is_file()) {
        return Ok(found.clone());
    }
    invalid!(
        "an {} guest runs an {} build of kbench as its init, and none was found at {}; \
         cross-build one (docs/contributing.md, \"kbench for arm64\") or give one with \
         --guest-kbench PATH",
        arch.name(),
        arch.name(),
        places
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(" or ")
    )
}

/// Where a cross-build of kbench for `arch` lies beside `exe` (cargo's
/// `target/release/kbench`): in the target directory docs/contributing.md
/// names (`target/aarch64`), or in cargo's own `target/TRIPLE`.
fn cross_builds(exe: &Path, arch: ImageArch) -> Vec<PathBuf> {
    let triple = format!("{}-unknown-linux-gnu", arch.name());
    let Some(target) = exe.parent().and_then(Path::parent) else {
        return vec![];
    };
    [target.join(arch.name()).join(&triple), target.join(&triple)]
        .into_iter()
        .map(|dir| dir.join("release").join("kbench"))
        .collect()
}

/// Checks that `binary` (read from `path`) runs in a guest of `arch`.
pub fn check(path: &Path, binary: &[u8], arch: ImageArch) -> Result<()> {
    let machine =
        elf::machine(binary).map_err(|e| e.at(format!("the guest's kbench {}", path.display())))?;
    let built_for = ImageArch::of_elf_machine(machine);
    if built_for != Some(arch) {
        invalid!(
            "the guest's kbench {} is built for {}, but the guest's kernel is {}: give an {} \
             build of kbench with --guest-kbench",
            path.display(),
            built_for.map_or(format!("ELF machine {machine}"), |a| a.name().to_string()),
            arch.name(),
            arch.name()
        );
    }
    if arch != ImageArch::host() && elf::needs(binary)?.interpreter.is_some() {
        invalid!(
            "the guest's kbench {} is linked dynamically, and this {} host has no {} libraries \
             to put beside it: build it static (RUSTFLAGS=\"-C target-feature=+crt-static\", \
             docs/contributing.md)",
            path.display(),
            ImageArch::host().name(),
            arch.name()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_host_guest_runs_the_running_binary() {
        let exe = std::env::current_exe().unwrap();
        assert_eq!(find(ImageArch::host(), None).unwrap(), exe);
        let given = Path::new("/opt/kbench");
        assert_eq!(find(ImageArch::Arm64, Some(given)).unwrap(), given);
        let binary = std::fs::read(&exe).unwrap();
        check(&exe, &binary, ImageArch::host()).unwrap();
    }

    #[test]
    fn cross_builds_are_looked_for_beside_the_target_directory() {
        let places = cross_builds(Path::new("/src/target/release/kbench"), ImageArch::Arm64);
        assert_eq!(
            places,
            [
                PathBuf::from("/src/target/aarch64/aarch64-unknown-linux-gnu/release/kbench"),
                PathBuf::from("/src/target/aarch64-unknown-linux-gnu/release/kbench"),
            ]
        );
    }

    #[test]
    fn a_binary_of_another_architecture_is_refused_naming_both() {
        let exe = std::env::current_exe().unwrap();
        let binary = std::fs::read(&exe).unwrap();
        let other = match ImageArch::host() {
            ImageArch::X86_64 => ImageArch::Arm64,
            ImageArch::Arm64 => ImageArch::X86_64,
        };
        let error = check(&exe, &binary, other).unwrap_err().to_string();
        assert!(
            error.contains(&format!("built for {}", ImageArch::host().name())),
            "{error}"
        );
        assert!(
            error.contains(&format!("kernel is {}", other.name())),
            "{error}"
        );
        // This test binary, dynamic (cargo's default), as if built for the
        // other architecture: its e_machine rewritten.
        if elf::needs(&binary).unwrap().interpreter.is_some() {
            let mut foreign = binary.clone();
            let machine = match other {
                ImageArch::X86_64 => 62u16,
                ImageArch::Arm64 => 183,
            };
            foreign[0x12..0x14].copy_from_slice(&machine.to_le_bytes());
            let error = check(&exe, &foreign, other).unwrap_err().to_string();
            assert!(error.contains("linked dynamically"), "{error}");
            assert!(error.contains("crt-static"), "{error}");
        }
        let script = check(Path::new("/bin/x"), b"#!/bin/sh\n", other)
            .unwrap_err()
            .to_string();
        assert!(script.contains("not an ELF file"), "{script}");
    }
}
