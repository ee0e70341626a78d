//! A `--rootfs` guest's move onto its disk: wait for /dev/vda (its driver
//! loaded by [`super::kernel_modules`]), mount it (ext4),
//! give it its own /proc, /sys, /dev, /tmp and /run, and chroot into it.
//! The running kbench goes on from there: the programs it starts resolve
//! in the rootfs, and the snapshot reads the rootfs's /etc/os-release.

use super::super::error::{Result, VmError};
use super::super::image::{PROFILES_PATH, ROOTFS_MOUNT};
use super::kernel_modules::kernel_messages;
use super::mounts::{mount, mount_filesystems};
use std::path::Path;
use std::time::{Duration, Instant};

/// The disk qemu gives the guest (the first virtio-blk device).
const DISK: &str = "/dev/vda";

/// Debian's PATH for root (/etc/login.defs' ENV_SUPATH).
const DEBIAN_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// How long the disk may take to appear once its driver is loaded; it
/// takes well under a second under TCG.
const DISK_WAIT: Duration = Duration::from_secs(20);

/// Where the tests do their I/O in the rootfs: on its disk (ext4 on
/// virtio-blk, as fio's file should be), not in a tmpfs that takes the
/// guest's memory. TMPDIR points there too (pgbench's cluster).
const WORK_DIR: &str = "/var/tmp/kbench";

/// Mounts the disk and chroots into it (the modules `loaded` should have
/// given it); returns the work directory.
pub(super) fn enter(loaded: &[String]) -> Result<&'static str> {
    wait_for_disk(loaded)?;
    mount(DISK, ROOTFS_MOUNT, "ext4").map_err(|e| {
        VmError::Invalid(format!(
            "mounting the --rootfs disk {DISK} as ext4 at {ROOTFS_MOUNT} failed ({e}): is the \
             image an ext4 file system?"
        ))
    })?;
    mount_filesystems(Path::new(ROOTFS_MOUNT))?;
    carry_profiles()?;
    std::os::unix::fs::chroot(ROOTFS_MOUNT)
        .map_err(VmError::os(format!("chroot into {ROOTFS_MOUNT}")))?;
    std::env::set_current_dir("/").map_err(VmError::os("changing to / in the rootfs"))?;
    // The kernel starts init without PATH; profiles find their programs
    // (redis-server, fio, ...) where Debian puts them.
    // SAFETY: PID 1 is single-threaded here.
    unsafe {
        std::env::set_var("PATH", DEBIAN_PATH);
        std::env::set_var("TMPDIR", WORK_DIR);
    }
    std::fs::create_dir_all(WORK_DIR).map_err(VmError::os(format!("creating {WORK_DIR}")))?;
    eprintln!("kbench guest: running in the rootfs on {DISK}");
    Ok(WORK_DIR)
}

/// Where the user's profiles are in the rootfs: its /run, a tmpfs.
pub(super) const CARRIED_PROFILES: &str = "/run/kbench-profiles";

/// Copies the user's profiles from the initramfs into the rootfs, before
/// the chroot leaves them behind.
fn carry_profiles() -> Result<()> {
    let Ok(entries) = std::fs::read_dir(PROFILES_PATH) else {
        return Ok(());
    };
    let target = Path::new(ROOTFS_MOUNT).join(CARRIED_PROFILES.trim_start_matches('/'));
    std::fs::create_dir_all(&target)
        .map_err(VmError::os(format!("creating {CARRIED_PROFILES}")))?;
    for entry in entries.flatten() {
        std::fs::copy(entry.path(), target.join(entry.file_name()))
            .map_err(VmError::os(format!("copying {}", entry.path().display())))?;
    }
    Ok(())
}

/// Polls devtmpfs for the disk until [`DISK_WAIT`] has passed.
fn wait_for_disk(loaded: &[String]) -> Result<()> {
    let started = Instant::now();
    while !Path::new(DISK).exists() {
        if started.elapsed() > DISK_WAIT {
            let modules = if loaded.is_empty() {
                "no modules were loaded (none were beside the kernel): a kernel of your own needs \
                 CONFIG_VIRTIO_PCI=y and CONFIG_VIRTIO_BLK=y for --rootfs"
                    .to_string()
            } else {
                format!("the modules {} were loaded", loaded.join(", "))
            };
            return Err(VmError::Invalid(format!(
                "the --rootfs disk {DISK} did not appear within {} s; {modules}. The kernel's \
                 last messages:\n{}",
                DISK_WAIT.as_secs(),
                kernel_messages(15)
            )));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(())
}
