//! Checking that a file is an x86 kernel image qemu can boot with `-kernel`,
//! and reading its release before it boots.
//!
//! The x86 boot protocol (Documentation/arch/x86/boot.rst) puts the setup
//! header in the first sector: the magic "HdrS" at 0x202, the protocol
//! version at 0x206, and at 0x20E the offset (less 0x200) of a
//! NUL-terminated version string whose first word is the release, e.g.
//! "6.1.0-57-cloud-amd64 (debian-kernel@lists.debian.org) #1 SMP ...".

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

const MAGIC_AT: usize = 0x202;
const VERSION_PTR_AT: usize = 0x20E;
/// The version string lies within the setup code, at most 32 KiB in.
const HEADER_BYTES: u64 = 64 * 1024;

/// A kernel image that passed the check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelImage {
    pub path: PathBuf,
    /// The release (first word of the version string), when the image has one.
    pub release: Option<String>,
    /// The whole version string (release, builder, build number, date).
    pub version: Option<String>,
}

/// Why a file is not a bootable kernel image.
#[derive(Debug, thiserror::Error)]
pub enum ImageError {
    #[error("cannot read the kernel image {path}: {error}")]
    Read {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error(
        "{path} is not an x86 kernel image (no boot header \"HdrS\" at byte 0x202){hint}; \
         give a bzImage such as arch/x86/boot/bzImage or /boot/vmlinuz-*, \
         or fetch one with `kbench kernel fetch debian:6.1`"
    )]
    NotBzImage { path: PathBuf, hint: &'static str },
}

impl KernelImage {
    /// Reads the head of `path` and checks it.
    pub fn open(path: &Path) -> Result<KernelImage, ImageError> {
        let read_error = |error| ImageError::Read {
            path: path.to_path_buf(),
            error,
        };
        let mut head = Vec::new();
        File::open(path)
            .and_then(|file| file.take(HEADER_BYTES).read_to_end(&mut head))
            .map_err(read_error)?;
        KernelImage::from_head(path, &head)
    }

    /// Checks the first bytes of an image (at least the first 64 KiB, or
    /// the whole file when shorter).
    pub fn from_head(path: &Path, head: &[u8]) -> Result<KernelImage, ImageError> {
        if head.get(MAGIC_AT..MAGIC_AT + 4) != Some(b"HdrS") {
            return Err(ImageError::NotBzImage {
                path: path.to_path_buf(),
                hint: what_it_is(head),
            });
        }
        let version = head
            .get(VERSION_PTR_AT..VERSION_PTR_AT + 2)
            .map(|b| u16::from_le_bytes([b[0], b[1]]) as usize)
            .filter(|&offset| offset != 0)
            .and_then(|offset| head.get(offset + 0x200..))
            .map(|text| {
                let end = text.iter().position(|&b| b == 0).unwrap_or(text.len());
                String::from_utf8_lossy(&text[..end.min(256)]).into_owned()
            })
            .filter(|text| !text.trim().is_empty());
        let release = version
            .as_deref()
            .and_then(|v| v.split_whitespace().next())
            .map(str::to_string);
        Ok(KernelImage {
            path: path.to_path_buf(),
            release,
            version,
        })
    }
}

/// A hint for common mistakes.
fn what_it_is(head: &[u8]) -> &'static str {
    if head.starts_with(b"\x7fELF") {
        " (it is an ELF file: an uncompressed vmlinux? qemu needs the bzImage)"
    } else if head.starts_with(b"!<arch>\n") {
        " (it is an ar archive: a .deb? `kbench kernel fetch` unpacks Debian's)"
    } else if head.is_empty() {
        " (the file is empty)"
    } else {
        ""
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A minimal image head: magic, protocol 2.15, version string at 0x400.
    fn fake_head(version: &str) -> Vec<u8> {
        let mut head = vec![0u8; 0x600];
        head[0x1FE..0x200].copy_from_slice(&[0x55, 0xAA]);
        head[0x202..0x206].copy_from_slice(b"HdrS");
        head[0x206..0x208].copy_from_slice(&0x020Fu16.to_le_bytes());
        head[0x20E..0x210].copy_from_slice(&0x200u16.to_le_bytes());
        head[0x400..0x400 + version.len()].copy_from_slice(version.as_bytes());
        head
    }

    #[test]
    fn reads_the_release() {
        let version =
            "6.1.0-57-cloud-amd64 (debian-kernel@lists.debian.org) #1 SMP PREEMPT_DYNAMIC";
        let image = KernelImage::from_head(Path::new("vmlinuz"), &fake_head(version)).unwrap();
        assert_eq!(image.release.as_deref(), Some("6.1.0-57-cloud-amd64"));
        assert_eq!(image.version.as_deref(), Some(version));
    }

    #[test]
    fn no_version_string_is_still_an_image() {
        let mut head = fake_head("");
        head[0x20E..0x210].copy_from_slice(&[0, 0]);
        let image = KernelImage::from_head(Path::new("bzImage"), &head).unwrap();
        assert_eq!(image.release, None);
    }

    #[test]
    fn rejects_other_files_with_a_hint() {
        let cases: [(&[u8], &str); 4] = [
            (b"\x7fELF\x02\x01\x01", "vmlinux"),
            (b"!<arch>\ndebian-binary", ".deb"),
            (b"", "empty"),
            (b"hello, world", "HdrS"),
        ];
        for (head, expected) in cases {
            let error = KernelImage::from_head(Path::new("/tmp/x"), head)
                .unwrap_err()
                .to_string();
            assert!(error.contains(expected), "{error}");
            assert!(error.contains("/tmp/x"), "{error}");
        }
    }

    #[test]
    fn missing_file_says_which() {
        let error = KernelImage::open(Path::new("/no/such/bzImage"))
            .unwrap_err()
            .to_string();
        assert!(error.contains("/no/such/bzImage"), "{error}");
    }
}
