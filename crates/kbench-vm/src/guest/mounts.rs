//! The guest's file systems: the kernel's own (/proc, /sys, /dev) and
//! tmpfs (/tmp, /run), under the initramfs's root or the rootfs's.

use super::super::error::{Result, VmError};
use std::ffi::CString;
use std::path::Path;

/// /proc, /sys, /dev, /tmp and /run under `root` (the initramfs's, or the
/// rootfs's), each made first if missing.
pub(super) fn mount_filesystems(root: &Path) -> Result<()> {
    for (source, target, fstype) in [
        ("proc", "proc", "proc"),
        ("sysfs", "sys", "sysfs"),
        ("devtmpfs", "dev", "devtmpfs"),
        ("tmpfs", "tmp", "tmpfs"),
        ("tmpfs", "run", "tmpfs"),
    ] {
        let target = root.join(target);
        let target = target.to_string_lossy();
        std::fs::create_dir_all(&*target)
            .and_then(|()| mount(source, &target, fstype))
            .map_err(VmError::os(format!("mounting {fstype} on {target}")))?;
    }
    // Optional: the preempt model is read from debugfs when it is there.
    let debugfs = root.join("sys/kernel/debug");
    let _ = mount("debugfs", &debugfs.to_string_lossy(), "debugfs");
    Ok(())
}

pub(super) fn mount(source: &str, target: &str, fstype: &str) -> std::io::Result<()> {
    let c = |s: &str| CString::new(s).expect("no NUL in mount arguments");
    let (source, target, fstype) = (c(source), c(target), c(fstype));
    // SAFETY: all pointers are valid NUL-terminated strings; no data.
    let rc = unsafe {
        libc::mount(
            source.as_ptr(),
            target.as_ptr(),
            fstype.as_ptr(),
            0,
            std::ptr::null(),
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}
