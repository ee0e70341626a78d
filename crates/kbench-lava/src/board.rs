//! What a U-Boot board needs besides the kernel: the initramfs wrapped in
//! U-Boot's legacy image header (`booti` takes a ramdisk's size from it;
//! LAVA would add it only when it unpacks the ramdisk, which kbench's
//! does not need), and the device tree checked for what it is.

use crate::error::{Result, refuse};
use std::path::Path;

/// `IH_MAGIC` of U-Boot's `include/image.h`.
const IMAGE_MAGIC: u32 = 0x2705_1956;
/// `IH_OS_LINUX`, `IH_ARCH_ARM64`, `IH_TYPE_RAMDISK`, `IH_COMP_NONE`.
const OS_LINUX: u8 = 5;
const ARCH_ARM64: u8 = 22;
const TYPE_RAMDISK: u8 = 3;
const COMP_NONE: u8 = 0;
const HEADER_BYTES: usize = 64;
const NAME_BYTES: usize = 32;

/// `ramdisk` behind a legacy header naming it `name` (cut to 31 bytes),
/// as `mkimage -A arm64 -O linux -T ramdisk -C none` writes it: the
/// payload's size and CRC-32, then the header's own CRC-32. The time
/// stamp is zero, so the same ramdisk gives the same bytes.
pub fn uboot_ramdisk(ramdisk: &[u8], name: &str) -> Result<Vec<u8>> {
    let Ok(size) = u32::try_from(ramdisk.len()) else {
        refuse!(
            "the initramfs is {} bytes, more than U-Boot's legacy header can describe (4 GiB)",
            ramdisk.len()
        );
    };
    let mut header = Vec::with_capacity(HEADER_BYTES + ramdisk.len());
    header.extend(IMAGE_MAGIC.to_be_bytes());
    header.extend(0u32.to_be_bytes()); // header CRC, below
    header.extend(0u32.to_be_bytes()); // time
    header.extend(size.to_be_bytes());
    header.extend(0u32.to_be_bytes()); // load address: a ramdisk's is U-Boot's choice
    header.extend(0u32.to_be_bytes()); // entry point
    header.extend(crc32fast::hash(ramdisk).to_be_bytes());
    header.extend([OS_LINUX, ARCH_ARM64, TYPE_RAMDISK, COMP_NONE]);
    let mut field = [0u8; NAME_BYTES];
    let name = &name.as_bytes()[..name.len().min(NAME_BYTES - 1)];
    field[..name.len()].copy_from_slice(name);
    header.extend(field);
    let crc = crc32fast::hash(&header[..HEADER_BYTES]);
    header[4..8].copy_from_slice(&crc.to_be_bytes());
    header.extend_from_slice(ramdisk);
    Ok(header)
}

/// `FDT_MAGIC`: a flattened device tree's first four bytes.
const FDT_MAGIC: [u8; 4] = [0xd0, 0x0d, 0xfe, 0xed];

/// Refuses a `--dtb` that is not a device tree blob.
pub fn check_dtb(path: &Path) -> Result<()> {
    let head = std::fs::read(path).map(|bytes| bytes.get(..4).map(<[u8]>::to_vec));
    match head {
        Ok(Some(magic)) if magic == FDT_MAGIC => Ok(()),
        Ok(_) => refuse!(
            "--dtb {} is not a device tree blob (no FDT magic d00dfeed at its start): give the \
             board's compiled .dtb, e.g. /usr/lib/linux-image-RELEASE/broadcom/bcm2711-rpi-4-b.dtb \
             from Debian's arm64 kernel package, or arch/arm64/boot/dts/VENDOR/BOARD.dtb of a build",
            path.display()
        ),
        Err(error) => refuse!("cannot read --dtb {}: {error}", path.display()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_header_is_the_one_mkimage_writes() {
        let wrapped = uboot_ramdisk(b"0707010000", "kbench boot1").unwrap();
        assert_eq!(wrapped.len(), HEADER_BYTES + 10);
        assert_eq!(wrapped[..4], [0x27, 0x05, 0x19, 0x56]);
        assert_eq!(wrapped[12..16], 10u32.to_be_bytes());
        assert_eq!(
            wrapped[24..28],
            crc32fast::hash(b"0707010000").to_be_bytes()
        );
        assert_eq!(wrapped[28..32], [5, 22, 3, 0]);
        assert_eq!(&wrapped[32..44], b"kbench boot1");
        assert_eq!(wrapped[44], 0);
        // The header's CRC is over the header with its CRC field zero.
        let mut header = wrapped[..HEADER_BYTES].to_vec();
        let stored = header[4..8].to_vec();
        header[4..8].fill(0);
        assert_eq!(stored, crc32fast::hash(&header).to_be_bytes());
        assert_eq!(&wrapped[HEADER_BYTES..], b"0707010000");
    }

    #[test]
    fn a_long_name_keeps_its_terminating_zero() {
        let wrapped = uboot_ramdisk(b"x", &"n".repeat(40)).unwrap();
        assert_eq!(wrapped[32..63], [b'n'; 31]);
        assert_eq!(wrapped[63], 0);
    }

    #[test]
    fn only_a_device_tree_is_a_dtb() {
        let dir = tempfile::tempdir().unwrap();
        let dtb = dir.path().join("board.dtb");
        std::fs::write(&dtb, [0xd0, 0x0d, 0xfe, 0xed, 0, 0]).unwrap();
        check_dtb(&dtb).unwrap();
        let other = dir.path().join("board.dts");
        std::fs::write(&other, "/dts-v1/;").unwrap();
        let error = check_dtb(&other).unwrap_err().to_string();
        assert!(error.contains("not a device tree blob"), "{error}");
        let missing = check_dtb(&dir.path().join("none.dtb")).unwrap_err();
        assert!(missing.to_string().contains("cannot read --dtb"));
    }
}
