//! Checking that a file is a kernel image qemu can boot with `-kernel`
//! (an x86 bzImage or an arm64 Image), and reading its architecture and
//! release before it boots.
//!
//! The x86 boot protocol (Documentation/arch/x86/boot.rst) puts the setup
//! header in the first sector: the magic "HdrS" at 0x202, the protocol
//! version at 0x206, and at 0x20E the offset (less 0x200) of a
//! NUL-terminated version string whose first word is the release, e.g.
//! "6.1.0-57-cloud-amd64 (debian-kernel@lists.debian.org) #1 SMP ...".
//!
//! The arm64 Image header (Documentation/arch/arm64/booting.rst) has the
//! magic "ARM\x64" at 0x38 and flags at 0x18 whose bit 0 is set for a
//! big-endian kernel. It has no pointer to the version: the release is read
//! from the kernel's banner, "Linux version RELEASE (...", in its data.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

const MAGIC_AT: usize = 0x202;
const VERSION_PTR_AT: usize = 0x20E;
const ARM64_MAGIC_AT: usize = 0x38;
const ARM64_FLAGS_AT: usize = 0x18;
/// A 32-bit arm zImage's magic number, at 0x24.
const ARM32_MAGIC_AT: usize = 0x24;
const ARM32_MAGIC: u32 = 0x016F_2818;
/// What precedes the release in a kernel's banner.
const BANNER: &[u8] = b"Linux version ";
/// The version string lies within the setup code, at most 32 KiB in.
const HEADER_BYTES: u64 = 64 * 1024;

/// The architecture a kernel image boots on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageArch {
    X86_64,
    Arm64,
}

impl ImageArch {
    /// Its name as `uname -m` says it.
    pub fn name(self) -> &'static str {
        match self {
            ImageArch::X86_64 => "x86_64",
            ImageArch::Arm64 => "aarch64",
        }
    }

    /// Its name as Debian says it (package names, `dpkg --print-architecture`).
    pub fn debian(self) -> &'static str {
        match self {
            ImageArch::X86_64 => "amd64",
            ImageArch::Arm64 => "arm64",
        }
    }

    /// The architecture an ELF file's `e_machine` names, if kbench knows it.
    pub fn of_elf_machine(machine: u16) -> Option<ImageArch> {
        match machine {
            62 => Some(ImageArch::X86_64),
            183 => Some(ImageArch::Arm64),
            _ => None,
        }
    }

    /// What `kbench kernel fetch --arch` takes: Debian's name or uname's.
    pub fn parse(text: &str) -> Option<ImageArch> {
        match text {
            "amd64" | "x86_64" => Some(ImageArch::X86_64),
            "arm64" | "aarch64" => Some(ImageArch::Arm64),
            _ => None,
        }
    }

    /// The architecture of the machine kbench was built for.
    pub fn host() -> ImageArch {
        match cfg!(target_arch = "aarch64") {
            true => ImageArch::Arm64,
            false => ImageArch::X86_64,
        }
    }
}

/// A kernel image that passed the check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelImage {
    pub path: PathBuf,
    pub arch: ImageArch,
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
        "{path} is not a kernel image kbench can boot: neither an x86 bzImage (boot header \
         \"HdrS\" at byte 0x202) nor an arm64 Image (\"ARM\\x64\" at byte 0x38){hint}; give \
         a bzImage such as arch/x86/boot/bzImage, an Image such as arch/arm64/boot/Image, or \
         /boot/vmlinuz-*, or fetch one with `kbench kernel fetch debian:6.1`"
    )]
    NotKernel { path: PathBuf, hint: &'static str },
    #[error(
        "{path} is a big-endian arm64 Image; kbench boots little-endian arm64 kernels only \
         (CONFIG_CPU_BIG_ENDIAN unset)"
    )]
    BigEndian { path: PathBuf },
    #[error(
        "{path} is a 32-bit arm zImage; kbench boots 64-bit arm kernels (arch/arm64/boot/Image)"
    )]
    Arm32 { path: PathBuf },
    /// An image of another architecture than the one wanted, and why.
    #[error("{path} is an {arch} kernel image, not {wanted}: {why}")]
    OtherArch {
        path: PathBuf,
        arch: &'static str,
        wanted: &'static str,
        why: &'static str,
    },
}

impl KernelImage {
    /// Reads the head of `path` and checks it; an arm64 Image is read
    /// whole for its banner.
    pub fn open(path: &Path) -> Result<KernelImage, ImageError> {
        let read_error = |error| ImageError::Read {
            path: path.to_path_buf(),
            error,
        };
        let mut head = Vec::new();
        File::open(path)
            .and_then(|file| file.take(HEADER_BYTES).read_to_end(&mut head))
            .map_err(read_error)?;
        if is_arm64(&head) && head.len() as u64 == HEADER_BYTES {
            head = std::fs::read(path).map_err(read_error)?;
        }
        KernelImage::from_head(path, &head)
    }

    /// Checks the first bytes of an image (at least the first 64 KiB, or
    /// the whole file when shorter; an arm64 Image's release is found
    /// only in as much of it as is given).
    pub fn from_head(path: &Path, head: &[u8]) -> Result<KernelImage, ImageError> {
        let path_buf = || path.to_path_buf();
        if is_arm64(head) {
            return match head.get(ARM64_FLAGS_AT) {
                Some(flags) if flags & 1 == 1 => Err(ImageError::BigEndian { path: path_buf() }),
                _ => Ok(arm64(path, head)),
            };
        }
        let word = |at: usize| {
            head.get(at..at + 4)
                .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        };
        if word(ARM32_MAGIC_AT) == Some(ARM32_MAGIC) {
            return Err(ImageError::Arm32 { path: path_buf() });
        }
        if head.get(MAGIC_AT..MAGIC_AT + 4) != Some(b"HdrS") {
            return Err(ImageError::NotKernel {
                path: path_buf(),
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
            arch: ImageArch::X86_64,
            release,
            version,
        })
    }
}

impl KernelImage {
    /// This image if it is for `arch`; else the error saying `why` it
    /// must be.
    pub fn require(self, arch: ImageArch, why: &'static str) -> Result<KernelImage, ImageError> {
        match self.arch == arch {
            true => Ok(self),
            false => Err(ImageError::OtherArch {
                path: self.path,
                arch: self.arch.name(),
                wanted: arch.name(),
                why,
            }),
        }
    }
}

fn is_arm64(head: &[u8]) -> bool {
    head.get(ARM64_MAGIC_AT..ARM64_MAGIC_AT + 4) == Some(b"ARM\x64")
}

/// An arm64 Image, its version read from the banner in `bytes`.
fn arm64(path: &Path, bytes: &[u8]) -> KernelImage {
    let version = bytes
        .windows(BANNER.len())
        .position(|window| window == BANNER)
        .map(|at| &bytes[at + BANNER.len()..])
        .map(|text| {
            let end = (text.iter())
                .position(|&b| b == 0 || b == b'\n')
                .unwrap_or(text.len());
            String::from_utf8_lossy(&text[..end.min(256)]).into_owned()
        })
        .filter(|text| !text.trim().is_empty());
    let release = (version.as_deref())
        .and_then(|v| v.split_whitespace().next())
        .map(str::to_string);
    KernelImage {
        path: path.to_path_buf(),
        arch: ImageArch::Arm64,
        release,
        version,
    }
}

/// A hint for common mistakes.
fn what_it_is(head: &[u8]) -> &'static str {
    if head.starts_with(b"\x7fELF") {
        " (it is an ELF file: an uncompressed vmlinux? qemu needs the bzImage or Image)"
    } else if head.starts_with(&[0x1f, 0x8b]) {
        " (it is gzip-compressed: an arm64 vmlinuz is a gzipped Image; gunzip it)"
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
        assert_eq!(image.arch, ImageArch::X86_64);
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
        let cases: [(&[u8], &str); 5] = [
            (b"\x7fELF\x02\x01\x01", "vmlinux"),
            (b"\x1f\x8b\x08\x00", "gunzip it"),
            (b"!<arch>\ndebian-binary", ".deb"),
            (b"", "empty"),
            (b"hello, world", "neither an x86 bzImage"),
        ];
        for (head, expected) in cases {
            let error = KernelImage::from_head(Path::new("/tmp/x"), head)
                .unwrap_err()
                .to_string();
            assert!(error.contains(expected), "{error}");
            assert!(error.contains("/tmp/x"), "{error}");
        }
    }

    /// A minimal arm64 Image: the header, then a banner further in.
    fn fake_arm64(flags: u8, banner: &str) -> Vec<u8> {
        let mut image = vec![0u8; 0x2000];
        image[ARM64_MAGIC_AT..ARM64_MAGIC_AT + 4].copy_from_slice(b"ARM\x64");
        image[ARM64_FLAGS_AT] = flags;
        image[0x1000..0x1000 + banner.len()].copy_from_slice(banner.as_bytes());
        image
    }

    #[test]
    fn an_arm64_image_is_read_for_its_release() {
        let banner =
            "Linux version 6.1.0-57-cloud-arm64 (debian-kernel@lists.debian.org) (gcc-12) #1 SMP\n";
        let image =
            KernelImage::from_head(Path::new("Image"), &fake_arm64(0b0010, banner)).unwrap();
        assert_eq!(image.arch, ImageArch::Arm64);
        assert_eq!(image.release.as_deref(), Some("6.1.0-57-cloud-arm64"));
        let bare = KernelImage::from_head(Path::new("Image"), &fake_arm64(0, "")).unwrap();
        assert_eq!(bare.release, None);
    }

    #[test]
    fn big_endian_and_32_bit_arm_images_are_refused() {
        let error = KernelImage::from_head(Path::new("Image"), &fake_arm64(1, ""))
            .unwrap_err()
            .to_string();
        assert!(error.contains("big-endian arm64"), "{error}");
        let mut zimage = vec![0u8; 0x100];
        zimage[ARM32_MAGIC_AT..ARM32_MAGIC_AT + 4].copy_from_slice(&ARM32_MAGIC.to_le_bytes());
        let error = KernelImage::from_head(Path::new("zImage"), &zimage)
            .unwrap_err()
            .to_string();
        assert!(error.contains("32-bit arm zImage"), "{error}");
    }

    #[test]
    fn missing_file_says_which() {
        let error = KernelImage::open(Path::new("/no/such/bzImage"))
            .unwrap_err()
            .to_string();
        assert!(error.contains("/no/such/bzImage"), "{error}");
    }
}
