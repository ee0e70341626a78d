//! The hardware watchdog across a switch: armed before the switch with the
//! hook's timeout, so that a kernel that hangs while booting is reset to
//! the firmware's default (the user's kernel) without a person, and
//! disarmed by the hook once the new kernel runs it. A watchdog keeps
//! counting through a kexec; a software one (softdog) dies with its kernel
//! and is of no use here, so only a device that is there is used.

use std::fs::OpenOptions;
use std::io::Write;
use std::os::fd::AsRawFd;
use std::path::Path;

/// The watchdog device.
const DEVICE: &str = "/dev/watchdog";
/// `WDIOC_SETTIMEOUT` and `WDIOC_KEEPALIVE` of <linux/watchdog.h>.
const SET_TIMEOUT: libc::c_ulong = 0xC004_5706;
const KEEPALIVE: libc::c_ulong = 0x8004_5705;

/// Arms the watchdog to reset the machine in `timeout_s` seconds unless
/// someone disarms it; whether it counts now, and what was done, for the
/// log.
pub fn arm(timeout_s: u64) -> (bool, String) {
    if !Path::new(DEVICE).exists() {
        let absent =
            format!("no watchdog ({DEVICE} is absent): a kernel that hangs needs a power cycle");
        return (false, absent);
    }
    let file = match OpenOptions::new().write(true).open(DEVICE) {
        Ok(file) => file,
        Err(error) => {
            return (
                false,
                format!("the watchdog was not armed: opening {DEVICE}: {error}"),
            );
        }
    };
    let mut timeout = libc::c_int::try_from(timeout_s).unwrap_or(libc::c_int::MAX);
    // SAFETY: the descriptor is open; both calls read or write one int.
    let armed = unsafe {
        libc::ioctl(file.as_raw_fd(), SET_TIMEOUT as _, &mut timeout) == 0
            && libc::ioctl(file.as_raw_fd(), KEEPALIVE as _, 0) == 0
    };
    // Closed without the magic 'V': the watchdog keeps counting.
    drop(file);
    // Opened, it counts, set or not.
    let how = match armed {
        true => format!("armed {DEVICE} to reset the machine in {timeout} s"),
        false => format!(
            "{DEVICE} was opened but not set ({}); it counts with its own timeout",
            std::io::Error::last_os_error()
        ),
    };
    (true, how)
}

/// Disarms the watchdog if there is one (the magic close); what was done.
pub fn disarm() -> Option<String> {
    let mut file = OpenOptions::new().write(true).open(DEVICE).ok()?;
    Some(match file.write_all(b"V") {
        Ok(()) => format!("disarmed {DEVICE}"),
        Err(error) => format!("could not disarm {DEVICE}: {error}"),
    })
}
