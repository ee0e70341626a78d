//! The machine's memory as the benchmarks size against it: the base page
//! and the memory still available.

/// The size of a base page.
pub(crate) fn page_size() -> usize {
    // SAFETY: sysconf has no memory preconditions.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if size > 0 { size as usize } else { 4096 }
}

/// MemAvailable from /proc/meminfo, in bytes.
pub(crate) fn available_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}
