//! Loading a kernel with `kexec_file_load(2)` and rebooting into it. The
//! kernel checks the image itself (format, signature under lockdown), so a
//! load is also the check that kexec works here at all.

use crate::error::{CampaignError, Result, refuse};
use std::ffi::CString;
use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::Path;

/// `KEXEC_FILE_UNLOAD` and `KEXEC_FILE_NO_INITRAMFS` of <linux/kexec.h>.
const UNLOAD: libc::c_ulong = 0x1;
const NO_INITRAMFS: libc::c_ulong = 0x4;

/// Where the kernel says whether a kexec kernel is loaded ("1").
const LOADED: &str = "/sys/kernel/kexec_loaded";

/// Loads `image` (with `initrd`, if any) to boot with `cmdline` at the
/// next kexec reboot, replacing any kernel loaded before.
pub fn load(image: &Path, initrd: Option<&Path>, cmdline: &str) -> Result<()> {
    let open = |path: &Path| {
        File::open(path).map_err(CampaignError::os(format!("opening {}", path.display())))
    };
    let kernel = open(image)?;
    let initrd = initrd.map(open).transpose()?;
    let line = CString::new(cmdline)
        .map_err(|_| CampaignError::Invalid("the kernel command line holds a NUL byte".into()))?;
    let flags = if initrd.is_some() { 0 } else { NO_INITRAMFS };
    // SAFETY: both descriptors are open for the call; the command line is
    // NUL-terminated and its length counts the NUL, as the call wants.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_kexec_file_load,
            kernel.as_raw_fd(),
            initrd.as_ref().map_or(-1, |f| f.as_raw_fd()),
            line.as_bytes_with_nul().len(),
            line.as_ptr(),
            flags,
        )
    };
    if rc == 0 {
        return Ok(());
    }
    let error = std::io::Error::last_os_error();
    let why = match error.raw_os_error() {
        Some(libc::ENOSYS) => "this kernel has no kexec_file_load (CONFIG_KEXEC_FILE)".to_string(),
        Some(libc::EPERM) => "not permitted: kexec needs root (CAP_SYS_BOOT), and a kernel locked \
            down (Secure Boot, /sys/kernel/security/lockdown) loads only signed images, or \
            kexec was disabled (/proc/sys/kernel/kexec_load_disabled)"
            .to_string(),
        Some(libc::EKEYREJECTED) | Some(libc::EBADMSG) => {
            "the image's signature was rejected (this kernel verifies kexec images)".to_string()
        }
        Some(libc::ENOEXEC) => {
            "the kernel does not take this file as an image it can kexec".to_string()
        }
        _ => error.to_string(),
    };
    refuse!(
        "kexec_file_load of {} failed: {why}. Give a boot-loader command instead \
         (--switch-command, e.g. \"grub-reboot 'ENTRY' && reboot\")",
        image.display()
    )
}

/// Unloads the kernel [`load`] loaded, if any.
pub fn unload() -> Result<()> {
    // SAFETY: with KEXEC_FILE_UNLOAD the descriptors and line are ignored.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_kexec_file_load,
            -1,
            -1,
            0usize,
            std::ptr::null::<libc::c_char>(),
            UNLOAD,
        )
    };
    match rc {
        0 => Ok(()),
        _ => Err(CampaignError::os("unloading the kexec kernel")(
            std::io::Error::last_os_error(),
        )),
    }
}

/// Whether a kexec kernel is loaded.
pub fn loaded() -> bool {
    std::fs::read_to_string(LOADED).is_ok_and(|text| text.trim() == "1")
}

/// Reboots into the loaded kernel: `systemctl kexec` where systemd is PID 1
/// (units stopped, file systems unmounted; it finds the kernel loaded), or
/// else sync and the kexec reboot at once. Returns once systemd has the
/// job; without systemd it does not return.
pub fn reboot(systemd: bool) -> Result<()> {
    if !loaded() {
        refuse!("no kexec kernel is loaded ({LOADED} is not 1): nothing to reboot into");
    }
    if systemd {
        return crate::command::run("systemctl", &["kexec"]);
    }
    // SAFETY: sync has no preconditions; reboot(2) with LINUX_REBOOT_CMD_KEXEC
    // only returns on failure.
    unsafe {
        libc::sync();
        libc::reboot(libc::LINUX_REBOOT_CMD_KEXEC);
    }
    Err(CampaignError::os("rebooting with kexec")(
        std::io::Error::last_os_error(),
    ))
}
