//! The kernel modules the guest's initramfs carries ([`MODULES_PATH`]:
//! its disk's and network's virtio drivers), loaded before anything needs
//! them.

use super::super::error::{Result, VmError};
use super::super::image::MODULES_PATH;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

/// Loads the carried modules, if there are any; their file names.
pub(super) fn load_carried() -> Result<Vec<String>> {
    match Path::new(MODULES_PATH).is_dir() {
        true => load(),
        false => Ok(Vec::new()),
    }
}

/// Loads the modules in [`MODULES_PATH`] in their names' order (the
/// host numbered them dependencies first); returns their file names.
fn load() -> Result<Vec<String>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(MODULES_PATH)
        .map_err(VmError::os(format!("reading {MODULES_PATH}")))?
        .flatten()
        .map(|entry| entry.path())
        .collect();
    files.sort();
    let mut names = Vec::new();
    for file in files {
        let name = file
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let module = std::fs::File::open(&file)
            .map_err(VmError::os(format!("opening {}", file.display())))?;
        // SAFETY: finit_module reads the open module file; the parameter
        // string is an empty NUL-terminated string.
        let rc =
            unsafe { libc::syscall(libc::SYS_finit_module, module.as_raw_fd(), c"".as_ptr(), 0) };
        let error = std::io::Error::last_os_error();
        if rc != 0 && error.raw_os_error() != Some(libc::EEXIST) {
            return Err(VmError::Invalid(format!(
                "loading the kernel module {name} failed ({error}); the kernel said:\n{}",
                kernel_messages(5)
            )));
        }
        names.push(name);
    }
    Ok(names)
}

/// The last `lines` lines of the kernel's log buffer.
pub(super) fn kernel_messages(lines: usize) -> String {
    let text = kbench_sysinfo::kernel_log().unwrap_or_default();
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}
