//! Read-only shared mappings of a file, unmapped on drop.

use crate::BenchError;
use std::os::fd::RawFd;
use std::ptr::NonNull;

/// A read-only mapping of the first `len` bytes of a file; munmap on drop.
pub(crate) struct Mapping {
    ptr: NonNull<u8>,
    len: usize,
}

impl Mapping {
    /// mmap(PROT_READ, MAP_SHARED | `flags`) of `len` (> 0) bytes of `fd`
    /// from offset 0.
    pub(crate) fn shared(
        fd: RawFd,
        len: usize,
        flags: libc::c_int,
        what: &str,
    ) -> Result<Mapping, BenchError> {
        assert!(len > 0, "an empty mapping");
        // SAFETY: a fresh mapping chosen by the kernel (null hint) overlaps
        // nothing of ours; the result is checked before use.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_SHARED | flags,
                fd,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(BenchError::last_os(format!("{what}: mmap")));
        }
        let ptr = NonNull::new(ptr.cast::<u8>()).expect("mmap succeeded");
        Ok(Mapping { ptr, len })
    }

    /// madvise over the whole mapping.
    pub(crate) fn advise(&self, advice: libc::c_int, what: &str) -> Result<(), BenchError> {
        // SAFETY: the range is exactly our live mapping.
        if unsafe { libc::madvise(self.ptr.as_ptr().cast(), self.len, advice) } != 0 {
            return Err(BenchError::last_os(format!("{what}: madvise")));
        }
        Ok(())
    }

    /// The mapped bytes. Reading one may fault the page in.
    pub(crate) fn bytes(&self) -> &[u8] {
        // SAFETY: the mapping is `len` readable bytes, alive as long as
        // `self`; the file behind it is private to the workload and never
        // written while mapped, so the bytes do not change under the slice.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    /// The mapped bytes as u64 words (a page-aligned start; a trailing
    /// partial word is left out).
    pub(crate) fn words(&self) -> &[u64] {
        // SAFETY: as for `bytes`; mmap returns page-aligned memory, so the
        // start is aligned for u64, and the length is rounded down.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr().cast(), self.len / size_of::<u64>()) }
    }

    /// munmap, reporting an error (drop ignores it).
    pub(crate) fn unmap(self, what: &str) -> Result<(), BenchError> {
        let (ptr, len) = (self.ptr, self.len);
        std::mem::forget(self);
        // SAFETY: the range is exactly our mapping, which nothing borrows
        // any more (`self` was consumed).
        if unsafe { libc::munmap(ptr.as_ptr().cast(), len) } != 0 {
            return Err(BenchError::last_os(format!("{what}: munmap")));
        }
        Ok(())
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: the range is exactly our mapping, which nothing borrows
        // any more (we are being dropped).
        unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.len) };
    }
}
