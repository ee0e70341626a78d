//! Just enough of ELF64 (little-endian) to know what a dynamically linked
//! program needs at run time: its interpreter (`PT_INTERP`, the dynamic
//! loader) and the libraries its dynamic section names (`DT_NEEDED`). The
//! guest image copies the running kbench binary with these files, so a plain
//! `cargo build` runs in the VM; a static binary has neither and goes alone.

use super::error::{Result, VmError, invalid};
use std::path::{Path, PathBuf};

const PT_LOAD: u32 = 1;
const PT_DYNAMIC: u32 = 2;
const PT_INTERP: u32 = 3;
const DT_NULL: u64 = 0;
const DT_NEEDED: u64 = 1;
const DT_STRTAB: u64 = 5;

/// Where glibc's loader looks when there is no ld.so.cache (Debian's
/// built-in system directories for the host's architecture, and the
/// non-multiarch ones).
#[cfg(target_arch = "aarch64")]
pub const LIBRARY_DIRS: &[&str] = &[
    "/lib/aarch64-linux-gnu",
    "/usr/lib/aarch64-linux-gnu",
    "/lib64",
    "/usr/lib64",
    "/lib",
    "/usr/lib",
];
#[cfg(not(target_arch = "aarch64"))]
pub const LIBRARY_DIRS: &[&str] = &[
    "/lib/x86_64-linux-gnu",
    "/usr/lib/x86_64-linux-gnu",
    "/lib64",
    "/usr/lib64",
    "/lib",
    "/usr/lib",
];

/// What an ELF file needs to run.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Needs {
    /// The dynamic loader's path; `None` for a static executable.
    pub interpreter: Option<String>,
    /// Library names (sonames) in the order listed.
    pub libraries: Vec<String>,
}

/// The `e_machine` of an ELF64 little-endian file: which processor it
/// runs on (62 x86-64, 183 AArch64).
pub fn machine(bytes: &[u8]) -> Result<u16> {
    check_elf64(bytes)?;
    u16_at(bytes, 0x12)
}

fn check_elf64(bytes: &[u8]) -> Result<()> {
    if bytes.get(..4) != Some(b"\x7fELF") {
        invalid!("not an ELF file");
    }
    if bytes.get(4) != Some(&2) || bytes.get(5) != Some(&1) {
        invalid!("not a 64-bit little-endian ELF file");
    }
    Ok(())
}

/// Reads `PT_INTERP` and `DT_NEEDED` from an ELF64 little-endian image.
pub fn needs(bytes: &[u8]) -> Result<Needs> {
    check_elf64(bytes)?;
    let phoff = u64_at(bytes, 0x20)? as usize;
    let phentsize = u16_at(bytes, 0x36)? as usize;
    let phnum = u16_at(bytes, 0x38)? as usize;
    let mut loads = Vec::new();
    let mut dynamic = None;
    let mut needs = Needs::default();
    for i in 0..phnum {
        let ph = phoff + i * phentsize;
        let kind = u32_at(bytes, ph)?;
        let offset = u64_at(bytes, ph + 8)?;
        let vaddr = u64_at(bytes, ph + 16)?;
        let filesz = u64_at(bytes, ph + 32)?;
        match kind {
            PT_LOAD => loads.push((vaddr, offset, filesz)),
            PT_DYNAMIC => dynamic = Some((offset, filesz)),
            PT_INTERP => {
                let text = slice(bytes, offset, filesz)?;
                let end = text.iter().position(|&b| b == 0).unwrap_or(text.len());
                needs.interpreter = Some(String::from_utf8_lossy(&text[..end]).into_owned());
            }
            _ => {}
        }
    }
    let Some((offset, size)) = dynamic else {
        return Ok(needs);
    };
    let mut strtab = None;
    let mut needed_offsets = Vec::new();
    for entry in slice(bytes, offset, size)?.chunks_exact(16) {
        let tag = u64::from_le_bytes(entry[..8].try_into().expect("8 bytes"));
        let value = u64::from_le_bytes(entry[8..].try_into().expect("8 bytes"));
        match tag {
            DT_NULL => break,
            DT_NEEDED => needed_offsets.push(value),
            DT_STRTAB => strtab = Some(value),
            _ => {}
        }
    }
    if needed_offsets.is_empty() {
        return Ok(needs);
    }
    let strtab = strtab.ok_or_else(|| malformed("a dynamic section without a string table"))?;
    // DT_STRTAB is an address: find the loaded segment holding it.
    let (vaddr, file_offset, _) = loads
        .iter()
        .find(|(vaddr, _, filesz)| (*vaddr..vaddr + filesz).contains(&strtab))
        .ok_or_else(|| malformed("the string table is outside every loaded segment"))?;
    let table = (strtab - vaddr + file_offset) as usize;
    for name_offset in needed_offsets {
        let start = table + name_offset as usize;
        let rest = bytes
            .get(start..)
            .ok_or_else(|| malformed("a library name past the end"))?;
        let end = rest
            .iter()
            .position(|&b| b == 0)
            .ok_or_else(|| malformed("an unterminated name"))?;
        needs
            .libraries
            .push(String::from_utf8_lossy(&rest[..end]).into_owned());
    }
    Ok(needs)
}

/// Every file a program needs besides itself, as (path in the guest, path
/// to read on the host): the interpreter and the libraries, transitively.
/// Libraries are looked up in [`LIBRARY_DIRS`] and kept at the path found,
/// which the guest's loader searches too.
pub fn runtime_files(program: &[u8]) -> Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = Vec::new();
    let mut pending = vec![needs(program)?];
    while let Some(needs) = pending.pop() {
        if let Some(interpreter) = needs.interpreter {
            let path = PathBuf::from(interpreter);
            if !files.contains(&path) {
                if !path.exists() {
                    invalid!("the dynamic loader {} is missing", path.display());
                }
                files.push(path);
            }
        }
        for library in needs.libraries {
            let path = find_library(&library).ok_or_else(|| {
                VmError::Invalid(format!(
                    "the library {library} was not found in {}",
                    LIBRARY_DIRS.join(", ")
                ))
            })?;
            if files.contains(&path) {
                continue;
            }
            let bytes =
                std::fs::read(&path).map_err(VmError::os(format!("reading {}", path.display())))?;
            pending.push(self::needs(&bytes).map_err(|e| e.at(path.display().to_string()))?);
            files.push(path);
        }
    }
    Ok(files)
}

/// The contents of the section called `name` (by the section headers and
/// their string table), e.g. a kernel module's `.modinfo`; `None` when the
/// file has no such section.
pub fn section<'a>(bytes: &'a [u8], name: &str) -> Result<Option<&'a [u8]>> {
    if bytes.get(..4) != Some(b"\x7fELF") || bytes.get(4) != Some(&2) || bytes.get(5) != Some(&1) {
        invalid!("not a 64-bit little-endian ELF file");
    }
    let shoff = u64_at(bytes, 0x28)? as usize;
    let shentsize = u16_at(bytes, 0x3a)? as usize;
    let shnum = u16_at(bytes, 0x3c)? as usize;
    let shstrndx = u16_at(bytes, 0x3e)? as usize;
    // (name offset, file offset, size) of section `i`.
    let header = |i: usize| -> Result<(u32, u64, u64)> {
        let at = shoff + i * shentsize;
        Ok((
            u32_at(bytes, at)?,
            u64_at(bytes, at + 0x18)?,
            u64_at(bytes, at + 0x20)?,
        ))
    };
    let (_, names_offset, names_size) = header(shstrndx)?;
    let names = slice(bytes, names_offset, names_size)?;
    for i in 0..shnum {
        let (name_offset, offset, size) = header(i)?;
        let rest = names.get(name_offset as usize..).unwrap_or_default();
        let end = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
        if &rest[..end] == name.as_bytes() {
            return slice(bytes, offset, size).map(Some);
        }
    }
    Ok(None)
}

fn find_library(name: &str) -> Option<PathBuf> {
    if name.contains('/') {
        return Some(PathBuf::from(name)).filter(|p| p.exists());
    }
    LIBRARY_DIRS
        .iter()
        .map(|dir| Path::new(dir).join(name))
        .find(|path| path.is_file())
}

fn slice(bytes: &[u8], offset: u64, size: u64) -> Result<&[u8]> {
    let past_the_end = || malformed("a segment past the end of the file");
    let start = usize::try_from(offset).map_err(|_| past_the_end())?;
    let end = usize::try_from(size)
        .ok()
        .and_then(|size| start.checked_add(size))
        .ok_or_else(|| malformed("a segment size overflows"))?;
    bytes.get(start..end).ok_or_else(past_the_end)
}

/// An ELF file whose headers do not hold together.
fn malformed(what: &str) -> VmError {
    VmError::Invalid(what.to_string())
}

fn u16_at(bytes: &[u8], at: usize) -> Result<u16> {
    let b = bytes
        .get(at..at + 2)
        .ok_or_else(|| malformed("truncated ELF header"))?;
    Ok(u16::from_le_bytes(b.try_into().expect("2 bytes")))
}

fn u32_at(bytes: &[u8], at: usize) -> Result<u32> {
    let b = bytes
        .get(at..at + 4)
        .ok_or_else(|| malformed("truncated ELF header"))?;
    Ok(u32::from_le_bytes(b.try_into().expect("4 bytes")))
}

fn u64_at(bytes: &[u8], at: usize) -> Result<u64> {
    let b = bytes
        .get(at..at + 8)
        .ok_or_else(|| malformed("truncated ELF header"))?;
    Ok(u64::from_le_bytes(b.try_into().expect("8 bytes")))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The test binary itself is a dynamic Rust program on glibc.
    #[test]
    fn reads_this_test_binary() {
        let exe = std::fs::read(std::env::current_exe().unwrap()).unwrap();
        let arch = crate::kernel_image::ImageArch::of_elf_machine(machine(&exe).unwrap());
        assert_eq!(arch, Some(crate::kernel_image::ImageArch::host()));
        let needs = needs(&exe).unwrap();
        if needs.interpreter.is_none() {
            // Built static (crt-static): nothing else to check.
            assert!(needs.libraries.is_empty());
            return;
        }
        assert!(
            needs.libraries.iter().any(|l| l.starts_with("libc.so")),
            "{needs:?}"
        );
        let files = runtime_files(&exe).unwrap();
        assert!(files.iter().any(|f| f.ends_with("libc.so.6")), "{files:?}");
        assert!(
            files
                .iter()
                .any(|f| Some(f.to_string_lossy().as_ref()) == needs.interpreter.as_deref())
        );
    }

    #[test]
    fn rejects_what_is_not_elf64() {
        assert!(needs(b"#!/bin/sh\n").is_err());
        assert!(machine(b"#!/bin/sh\n").is_err());
        let mut header = b"\x7fELF".to_vec();
        header.extend([1, 1]); // 32-bit
        assert!(needs(&header).is_err());
        let mut truncated = b"\x7fELF".to_vec();
        truncated.extend([2, 1, 1]);
        assert!(needs(&truncated).is_err());
    }
}
