//! The hardware lines PTS prints in its system table: the motherboard
//! (`class/dmi/id`), the disks (`block`) and the network adapters' drivers
//! (`class/net`), read under a sysfs root (`/sys`; a directory of the same
//! shape in tests). A VM or container often lacks DMI, and some files are
//! root-only: what cannot be read is left out, never an error.

use std::fs;
use std::path::Path;

/// "ASUSTeK PRIME X570-P (System Product Name)": the board's vendor and
/// name, then the product name when it says something else; empty when
/// DMI cannot be read.
pub(super) fn motherboard(sys: &Path) -> String {
    let dmi = |file: &str| text(&sys.join("class/dmi/id").join(file));
    let board = join(&[dmi("board_vendor"), dmi("board_name")]);
    let product = dmi("product_name");
    match (
        board.is_empty(),
        product.is_empty() || board.contains(&product),
    ) {
        (_, true) => board,
        (true, false) => product,
        (false, false) => format!("{board} ({product})"),
    }
}

/// Each disk that is a device (not loop, zram, device-mapper or other
/// virtual block devices) and not empty: "275GB Samsung SSD 970", or the
/// size and its name when it has no model ("275GB vda"), by name.
pub(super) fn disks(sys: &Path) -> Vec<String> {
    let mut disks: Vec<(String, String)> = entries(&sys.join("block"))
        .filter_map(|(name, path)| {
            let real = fs::canonicalize(&path).ok()?;
            if real.components().any(|c| c.as_os_str() == "virtual") {
                return None;
            }
            let sectors: u64 = text(&path.join("size")).parse().ok()?;
            let model = text(&path.join("device/model"));
            let size = size_text(sectors.checked_mul(512)?)?;
            let what = if model.is_empty() {
                name.clone()
            } else {
                model
            };
            Some((name, format!("{size} {what}")))
        })
        .collect();
    disks.sort();
    disks.into_iter().map(|(_, text)| text).collect()
}

/// The drivers of the network interfaces that are devices ("virtio_net",
/// "e1000e"), each once, sorted; the loopback and virtual interfaces
/// (bridges, veth, tun) have no device and so no driver.
pub(super) fn network(sys: &Path) -> Vec<String> {
    let mut drivers: Vec<String> = entries(&sys.join("class/net"))
        .filter(|(name, _)| name != "lo")
        .filter_map(|(_, path)| {
            let link = fs::read_link(path.join("device/driver")).ok()?;
            Some(link.file_name()?.to_string_lossy().into_owned())
        })
        .collect();
    drivers.sort();
    drivers.dedup();
    drivers
}

/// A size in decimal units as PTS writes it: "275GB", "2000GB", "512MB";
/// `None` for an empty device.
fn size_text(bytes: u64) -> Option<String> {
    const GB: u64 = 1_000_000_000;
    match bytes {
        0 => None,
        b if b >= GB => Some(format!("{}GB", (b + GB / 2) / GB)),
        b => Some(format!("{}MB", (b + 500_000) / 1_000_000)),
    }
}

/// The entries of a directory as (name, path); none when it cannot be read.
fn entries(dir: &Path) -> impl Iterator<Item = (String, std::path::PathBuf)> {
    fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
}

/// A sysfs file's text, trimmed; empty when missing or unreadable, and
/// for DMI's placeholder texts that say nothing.
fn text(path: &Path) -> String {
    let text = fs::read_to_string(path).unwrap_or_default();
    let text = text.trim();
    let placeholder = ["To be filled by O.E.M.", "Default string", "Not Specified"];
    if placeholder.contains(&text) {
        String::new()
    } else {
        text.to_string()
    }
}

fn join(parts: &[String]) -> String {
    let present: Vec<&str> = parts
        .iter()
        .map(String::as_str)
        .filter(|p| !p.is_empty())
        .collect();
    present.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn write(root: &Path, path: &str, text: &str) {
        let path = root.join(path);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }

    /// A sysfs of a PC with an NVMe disk, a loop device, e1000e and a
    /// bridge, as the kernel lays it out (block/ and class/net/ entries
    /// are links into devices/).
    fn pc() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, "class/dmi/id/board_vendor", "ASUSTeK COMPUTER INC.\n");
        write(root, "class/dmi/id/board_name", "PRIME X570-P\n");
        write(root, "class/dmi/id/product_name", "System Product Name\n");
        write(root, "devices/pci/nvme/nvme0n1/size", "3907029168\n");
        write(
            root,
            "devices/pci/nvme/nvme0n1/device/model",
            "Samsung SSD 970 EVO Plus 2TB \n",
        );
        write(root, "devices/virtual/block/loop0/size", "1024\n");
        write(root, "devices/pci/eth/net/enp5s0/x", "");
        write(root, "devices/virtual/net/br0/x", "");
        write(root, "devices/virtual/net/lo/x", "");
        fs::create_dir_all(root.join("bus/pci/drivers/e1000e")).unwrap();
        fs::create_dir_all(root.join("block")).unwrap();
        fs::create_dir_all(root.join("class/net")).unwrap();
        symlink("../devices/pci/nvme/nvme0n1", root.join("block/nvme0n1")).unwrap();
        symlink("../devices/virtual/block/loop0", root.join("block/loop0")).unwrap();
        symlink(
            "../../devices/pci/eth/net/enp5s0",
            root.join("class/net/enp5s0"),
        )
        .unwrap();
        symlink("../../devices/virtual/net/br0", root.join("class/net/br0")).unwrap();
        symlink("../../devices/virtual/net/lo", root.join("class/net/lo")).unwrap();
        symlink(
            root.join("devices/pci/eth"),
            root.join("devices/pci/eth/net/enp5s0/device"),
        )
        .unwrap();
        symlink(
            root.join("bus/pci/drivers/e1000e"),
            root.join("devices/pci/eth/driver"),
        )
        .unwrap();
        dir
    }

    #[test]
    fn reads_what_pts_shows() {
        let dir = pc();
        assert_eq!(
            motherboard(dir.path()),
            "ASUSTeK COMPUTER INC. PRIME X570-P (System Product Name)"
        );
        assert_eq!(disks(dir.path()), ["2000GB Samsung SSD 970 EVO Plus 2TB"]);
        assert_eq!(network(dir.path()), ["e1000e"]);
    }

    #[test]
    fn what_is_missing_is_left_out() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(motherboard(dir.path()), "");
        assert!(disks(dir.path()).is_empty());
        assert!(network(dir.path()).is_empty());
        write(
            dir.path(),
            "class/dmi/id/board_vendor",
            "To be filled by O.E.M.\n",
        );
        write(
            dir.path(),
            "class/dmi/id/product_name",
            "Standard PC (Q35 + ICH9, 2009)\n",
        );
        assert_eq!(motherboard(dir.path()), "Standard PC (Q35 + ICH9, 2009)");
        assert_eq!(size_text(274_877_906_944).as_deref(), Some("275GB"));
        assert_eq!(size_text(0), None);
    }
}
