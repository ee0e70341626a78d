//! The kernel modules a guest loads to mount its `--rootfs` disk and to
//! reach a kbench server on its network: Debian's cloud kernels build
//! virtio_pci, virtio_blk and virtio_net as modules (6.1: all; 6.12:
//! virtio_blk and virtio_net), which the guest's initramfs must carry
//! from that kernel's own package.
//!
//! The package has no modules.dep (depmod runs at install), so each
//! module's dependencies are read from its `.modinfo` section (`depends=`)
//! and the set is ordered dependencies first. Compressed modules (6.12's
//! `.ko.xz`) are decompressed here, on the host, with xz, zstd or gzip, so
//! the guest loads plain ELF whatever the kernel's CONFIG_MODULE_DECOMPRESS.
//! They are stored as `NN-NAME.ko`: their load order is their names' order.

use super::elf;
use super::error::{Result, VmError, invalid};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Where a cached kernel keeps its modules, beside its vmlinuz.
pub const MODULES_DIR: &str = "modules";

/// The drivers of a virtio-blk disk and a virtio-net card on qemu's PCI
/// bus.
pub const GUEST_DRIVERS: &[&str] = &["virtio_pci", "virtio_blk", "virtio_net"];

/// The drivers of [`GUEST_DRIVERS`] its kernel builds as modules (its
/// `config` says which; without one, none is known to be) that are not
/// among the modules stored in `dir`: a kernel cached before the
/// network's were added lacks virtio_net.
pub fn missing(dir: &Path, config: Option<&Path>) -> Vec<&'static str> {
    let config = config.and_then(|path| std::fs::read_to_string(path).ok());
    let stored = stored(dir).unwrap_or_default();
    GUEST_DRIVERS
        .iter()
        .copied()
        .filter(|driver| {
            let modular = format!("CONFIG_{}=m", driver.to_uppercase());
            let needed = config
                .as_deref()
                .is_some_and(|text| text.lines().any(|line| line.trim() == modular));
            needed && !stored.iter().any(|file| stored_name(file) == *driver)
        })
        .collect()
}

/// The module of a stored file (`03-virtio_net.ko` -> `virtio_net`).
fn stored_name(file: &Path) -> &str {
    let name = file.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    name.split_once('-').map_or(name, |(_, module)| module)
}

/// A module's name as the kernel spells it: `virtio-rng` is `virtio_rng`.
fn normalize(name: &str) -> String {
    name.replace('-', "_")
}

/// The module name of a file under lib/modules (`virtio_blk.ko.xz` ->
/// `virtio_blk`), if it is a module.
fn module_name(file: &Path) -> Option<String> {
    let name = file.file_name()?.to_str()?;
    let stem = ["", ".xz", ".zst", ".gz"]
        .iter()
        .find_map(|suffix| name.strip_suffix(suffix)?.strip_suffix(".ko"))?;
    Some(normalize(stem))
}

/// Every module file under `dir`, by module name.
fn index(dir: &Path, found: &mut BTreeMap<String, PathBuf>) -> Result<()> {
    let entries =
        std::fs::read_dir(dir).map_err(VmError::os(format!("reading {}", dir.display())))?;
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            index(&path, found)?;
        } else if let Some(name) = module_name(&path) {
            found.insert(name, path);
        }
    }
    Ok(())
}

/// A module file's ELF bytes, decompressed when it is compressed.
fn read_module(path: &Path) -> Result<Vec<u8>> {
    let extension = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    let tool = match extension {
        "xz" => "xz",
        "zst" => "zstd",
        "gz" => "gzip",
        _ => {
            return std::fs::read(path).map_err(VmError::os(format!("reading {}", path.display())));
        }
    };
    let output = Command::new(tool)
        .arg("-dc")
        .arg(path)
        .output()
        .map_err(VmError::os(format!(
            "cannot run {tool} to decompress the kernel module {} (install it: apt-get install \
             {})",
            path.display(),
            if tool == "xz" { "xz-utils" } else { tool }
        )))?;
    if !output.status.success() {
        return Err(VmError::Command(format!(
            "`{tool} -dc {}` failed ({}): {}",
            path.display(),
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        )));
    }
    Ok(output.stdout)
}

/// The modules a module needs loaded first: its `.modinfo` `depends=`.
pub fn depends(module: &[u8]) -> Result<Vec<String>> {
    let modinfo = elf::section(module, ".modinfo")?
        .ok_or_else(|| VmError::Invalid("a kernel module without .modinfo".into()))?;
    Ok(modinfo
        .split(|&b| b == 0)
        .filter_map(|field| field.strip_prefix(b"depends="))
        .flat_map(|list| list.split(|&b| b == b','))
        .map(|name| normalize(&String::from_utf8_lossy(name)))
        .filter(|name| !name.is_empty())
        .collect())
}

/// The modules of `tree` (a package's lib/modules/RELEASE) that `drivers`
/// need, dependencies first, as (name, ELF bytes). A driver built into
/// the kernel (modules.builtin) needs nothing; one that is neither is an
/// error naming it.
pub fn resolve(tree: &Path, drivers: &[&str]) -> Result<Vec<(String, Vec<u8>)>> {
    let mut files = BTreeMap::new();
    index(&tree.join("kernel"), &mut files)?;
    let builtin: Vec<String> = std::fs::read_to_string(tree.join("modules.builtin"))
        .unwrap_or_default()
        .lines()
        .filter_map(|line| module_name(Path::new(line)))
        .collect();
    let mut loaded = Vec::new();
    for driver in drivers {
        add(
            &normalize(driver),
            &files,
            &builtin,
            &mut loaded,
            &mut vec![],
        )?;
    }
    Ok(loaded)
}

/// Adds `name` after its dependencies (depth first); `path` is the chain
/// that led here, to refuse a cycle.
fn add(
    name: &str,
    files: &BTreeMap<String, PathBuf>,
    builtin: &[String],
    loaded: &mut Vec<(String, Vec<u8>)>,
    path: &mut Vec<String>,
) -> Result<()> {
    if loaded.iter().any(|(n, _)| n == name) || builtin.iter().any(|b| b == name) {
        return Ok(());
    }
    if path.iter().any(|p| p == name) {
        invalid!(
            "the kernel modules depend on each other in a cycle: {}",
            path.join(" -> ")
        );
    }
    let Some(file) = files.get(name) else {
        invalid!(
            "the kernel package has no module {name} and does not build it in (modules.builtin): \
             a guest needs it for its virtio disk (--rootfs) or network (a LAVA push); use a \
             kernel with CONFIG_VIRTIO_PCI, CONFIG_VIRTIO_BLK and CONFIG_VIRTIO_NET"
        );
    };
    let bytes = read_module(file)?;
    let needs = depends(&bytes).map_err(|e| e.at(file.display().to_string()))?;
    path.push(name.to_string());
    for dependency in needs {
        add(&dependency, files, builtin, loaded, path)?;
    }
    path.pop();
    loaded.push((name.to_string(), bytes));
    Ok(())
}

/// Writes `modules` into `dir` (made here) as `NN-NAME.ko`, in load order.
pub fn store(dir: &Path, modules: &[(String, Vec<u8>)]) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(VmError::os(format!("creating {}", dir.display())))?;
    for (i, (name, bytes)) in modules.iter().enumerate() {
        let path = dir.join(format!("{:02}-{name}.ko", i + 1));
        std::fs::write(&path, bytes).map_err(VmError::os(format!("writing {}", path.display())))?;
    }
    Ok(())
}

/// The modules stored in `dir`, in load order.
pub fn stored(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(VmError::os(format!("reading {}", dir.display())))?
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|e| e == "ko"))
        .collect();
    files.sort();
    Ok(files)
}

/// The modules a guest of the kernel at `kernel` loads for its `--rootfs`
/// disk: those stored beside it (a kernel from `kbench kernel fetch`), else
/// none, which works when the kernel has the drivers built in. A kernel
/// whose configuration (`config`) says virtio_blk is a module but has none
/// beside it is refused before it boots.
pub fn for_kernel(kernel: &Path, config: Option<&Path>) -> Result<Vec<PathBuf>> {
    let dir = kernel.with_file_name(MODULES_DIR);
    if dir.is_dir() {
        return stored(&dir);
    }
    let config = config.and_then(|path| std::fs::read_to_string(path).ok());
    if config.is_some_and(|text| {
        text.lines()
            .any(|line| line.trim() == "CONFIG_VIRTIO_BLK=m")
    }) {
        invalid!(
            "the kernel {} builds virtio_blk as a module, but no modules are beside it for the \
             --rootfs disk: fetch it again with `kbench kernel fetch` (kernels fetched before \
             --rootfs existed lack them), or use a kernel with CONFIG_VIRTIO_BLK=y",
            kernel.display()
        );
    }
    Ok(vec![])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A virtio disk's drivers (the test's tree has no network's).
    const DISK: &[&str] = &["virtio_pci", "virtio_blk"];

    /// A relocatable ELF64 with one `.modinfo` section holding `modinfo`,
    /// laid out as the section reader expects.
    fn module(modinfo: &[u8]) -> Vec<u8> {
        let names = b"\0.modinfo\0.shstrtab\0";
        let mut bytes = vec![0u8; 64];
        bytes[..6].copy_from_slice(b"\x7fELF\x02\x01");
        let modinfo_at = bytes.len() as u64;
        bytes.extend(modinfo);
        let names_at = bytes.len() as u64;
        bytes.extend(names);
        let shoff = bytes.len() as u64;
        bytes[0x28..0x30].copy_from_slice(&shoff.to_le_bytes());
        bytes[0x3a..0x3c].copy_from_slice(&64u16.to_le_bytes());
        bytes[0x3c..0x3e].copy_from_slice(&3u16.to_le_bytes());
        bytes[0x3e..0x40].copy_from_slice(&2u16.to_le_bytes());
        for (name, offset, size) in [
            (0u32, 0u64, 0u64),
            (1, modinfo_at, modinfo.len() as u64),
            (10, names_at, names.len() as u64),
        ] {
            let mut header = [0u8; 64];
            header[..4].copy_from_slice(&name.to_le_bytes());
            header[0x18..0x20].copy_from_slice(&offset.to_le_bytes());
            header[0x20..0x28].copy_from_slice(&size.to_le_bytes());
            bytes.extend(header);
        }
        bytes
    }

    #[test]
    fn reads_depends_from_modinfo() {
        let bytes = module(b"license=GPL\0depends=virtio,virtio-ring\0intree=Y\0");
        assert_eq!(depends(&bytes).unwrap(), ["virtio", "virtio_ring"]);
        assert!(depends(&module(b"depends=\0")).unwrap().is_empty());
        assert!(depends(b"#!/bin/sh").is_err());
    }

    #[test]
    fn resolves_dependencies_first_and_skips_built_ins() {
        let tree = tempfile::tempdir().unwrap();
        let virtio = tree.path().join("kernel/drivers/virtio");
        let block = tree.path().join("kernel/drivers/block");
        std::fs::create_dir_all(&virtio).unwrap();
        std::fs::create_dir_all(&block).unwrap();
        let write = |path: PathBuf, modinfo: &[u8]| std::fs::write(path, module(modinfo)).unwrap();
        write(
            virtio.join("virtio_pci.ko"),
            b"depends=virtio_ring,virtio\0",
        );
        write(virtio.join("virtio_ring.ko"), b"depends=\0");
        write(block.join("virtio_blk.ko"), b"depends=virtio,virtio_ring\0");
        std::fs::write(
            tree.path().join("modules.builtin"),
            "kernel/drivers/virtio/virtio.ko\n",
        )
        .unwrap();
        let names: Vec<String> = resolve(tree.path(), DISK)
            .unwrap()
            .into_iter()
            .map(|(name, _)| name)
            .collect();
        assert_eq!(names, ["virtio_ring", "virtio_pci", "virtio_blk"]);

        let stored_dir = tree.path().join("stored");
        store(&stored_dir, &resolve(tree.path(), DISK).unwrap()).unwrap();
        let files: Vec<String> = stored(&stored_dir)
            .unwrap()
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            files,
            ["01-virtio_ring.ko", "02-virtio_pci.ko", "03-virtio_blk.ko"]
        );

        std::fs::remove_file(block.join("virtio_blk.ko")).unwrap();
        let missing = resolve(tree.path(), DISK).unwrap_err().to_string();
        assert!(missing.contains("no module virtio_blk"), "{missing}");
    }

    #[test]
    fn a_kernel_without_its_modules_is_refused_when_it_needs_them() {
        let dir = tempfile::tempdir().unwrap();
        let kernel = dir.path().join("vmlinuz-6.1");
        let config = dir.path().join("config-6.1");
        std::fs::write(&config, "CONFIG_EXT4_FS=y\nCONFIG_VIRTIO_BLK=m\n").unwrap();
        let error = for_kernel(&kernel, Some(&config)).unwrap_err().to_string();
        assert!(error.contains("kbench kernel fetch"), "{error}");
        assert!(
            for_kernel(&kernel, None).unwrap().is_empty(),
            "unknown: the guest tells"
        );
        std::fs::create_dir(dir.path().join("modules")).unwrap();
        std::fs::write(dir.path().join("modules/01-virtio.ko"), b"").unwrap();
        let found = for_kernel(&kernel, Some(&config)).unwrap();
        assert!(found[0].ends_with("modules/01-virtio.ko"), "{found:?}");
    }

    #[test]
    fn module_names() {
        assert_eq!(
            module_name(Path::new("a/virtio_blk.ko.xz")).as_deref(),
            Some("virtio_blk")
        );
        assert_eq!(
            module_name(Path::new("virtio-rng.ko")).as_deref(),
            Some("virtio_rng")
        );
        assert_eq!(module_name(Path::new("modules.order")), None);
    }

    #[test]
    fn a_cache_without_the_network_module_misses_it() {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("config");
        std::fs::write(
            &config,
            "CONFIG_VIRTIO_PCI=y\nCONFIG_VIRTIO_BLK=m\nCONFIG_VIRTIO_NET=m\n",
        )
        .unwrap();
        let modules = dir.path().join("modules");
        std::fs::create_dir(&modules).unwrap();
        std::fs::write(modules.join("01-virtio_blk.ko"), b"").unwrap();
        assert_eq!(missing(&modules, Some(&config)), ["virtio_net"]);
        std::fs::write(modules.join("02-virtio_net.ko"), b"").unwrap();
        assert!(missing(&modules, Some(&config)).is_empty());
        // Built in: nothing to carry.
        std::fs::write(&config, "CONFIG_VIRTIO_BLK=y\nCONFIG_VIRTIO_NET=y\n").unwrap();
        std::fs::remove_file(modules.join("02-virtio_net.ko")).unwrap();
        std::fs::remove_file(modules.join("01-virtio_blk.ko")).unwrap();
        assert!(missing(&modules, Some(&config)).is_empty());
    }
}
