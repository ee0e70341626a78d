//! stress-ng's `madvise`, `vm-splice` and `memfd` stressors, one kernel
//! operation (or sequence) per iteration.

use super::xorshift::XorShift;
use crate::sys::fd::{self, open_fd};
use crate::sys::mapping::Mapping;
use crate::sys::memory::page_size;
use crate::sys::tempdir::TempDir;
use crate::sys::{check, os_error};
use crate::unit::timed;
use crate::{BenchError, Interval, Workload};
use libc::{c_int, c_long};
use std::ffi::CString;
use std::hint::black_box;
use std::io::Write;
use std::os::fd::{AsRawFd, OwnedFd};

// --------------------------------------------------------------------- madvise

/// The size of the madvise file and its mapping.
const MADVISE_SIZE: usize = 4 << 20;

/// The advice drawn at random. Each is harmless on a shared, read-only file
/// mapping: the first three only set the VMA's readahead hint (splitting and
/// merging VMAs as neighbouring pages get different hints), WILLNEED starts
/// readahead of pages already in the page cache, DONTNEED drops the page
/// table entries (the data stays in the page cache and in the file). Left
/// out: FREE (anonymous only), REMOVE (punches holes), PAGEOUT/COLD (reclaim,
/// would make the loop I/O bound), HUGEPAGE and friends (depend on THP and
/// kernel config), DONTFORK (other benchmarks fork this process).
const ADVICE: [c_int; 5] = [
    libc::MADV_NORMAL,
    libc::MADV_RANDOM,
    libc::MADV_SEQUENTIAL,
    libc::MADV_WILLNEED,
    libc::MADV_DONTNEED,
];

/// One iteration is one `madvise` of one random page of a 4 MiB temporary
/// file mapped `MAP_SHARED`, `PROT_READ` and populated at `prepare` (every
/// page cached and mapped). The generator's state carries over between runs,
/// so the sequence of (page, advice) is the same in every run of the
/// benchmark. DONTNEED'd pages are not faulted back in: after the untimed
/// calibration the mapping is in a steady state of mostly unmapped pages, as
/// in stress-ng's stressor, which does not touch them either.
pub(super) struct Madvise {
    // Unmapped before the directory is removed (field order is drop order).
    map: Mapping,
    page: usize,
    pages: u64,
    rng: XorShift,
    _dir: TempDir,
}

impl Madvise {
    pub(super) fn new() -> Result<Madvise, BenchError> {
        let dir = TempDir::new("madvise")?;
        let (mut file, path) = dir.new_file("file")?;
        let path_error = |what: &str| os_error(format!("{what} {}", path.display()));
        // Non-zero contents, written and synced so no writeback runs later.
        let contents: Vec<u8> = (0..MADVISE_SIZE).map(|i| (i % 251) as u8 | 1).collect();
        file.write_all(&contents).map_err(path_error("write"))?;
        file.sync_all().map_err(path_error("fsync"))?;
        let map = Mapping::shared(
            file.as_raw_fd(),
            MADVISE_SIZE,
            libc::MAP_POPULATE,
            "madvise",
        )?;
        // The mapping keeps the file open.
        drop(file);
        let page = page_size();
        Ok(Madvise {
            map,
            page,
            pages: (MADVISE_SIZE / page) as u64,
            rng: XorShift(0x6b62_656e_6368_6d61),
            _dir: dir,
        })
    }
}

impl Workload for Madvise {
    fn run(&mut self, iterations: u64) -> Result<Interval, BenchError> {
        let base = self.map.bytes().as_ptr() as usize;
        let (page, pages) = (self.page, self.pages);
        let rng = &mut self.rng;
        timed(iterations, || {
            let r = rng.next();
            let addr = base + ((r >> 32) % pages) as usize * page;
            let advice = ADVICE[(r as u32 % ADVICE.len() as u32) as usize];
            // SAFETY: one page inside our mapping; none of these advices
            // changes what the mapping holds (see ADVICE).
            let ret = unsafe { libc::syscall(libc::SYS_madvise, addr, page, advice as c_long) };
            black_box(check(ret, "madvise")?);
            Ok(())
        })
    }
}

// ------------------------------------------------------------------- vm-splice

/// The transfer size and the pipe size.
const SPLICE_BLOCK: usize = 64 * 1024;

/// The user buffer vmspliced: page aligned, so 64 KiB is exactly 16 pipe
/// buffers (pages) on 4 KiB pages.
#[repr(C, align(65536))]
struct Block([u8; SPLICE_BLOCK]);

/// One iteration vmsplices 64 KiB of a user buffer into a pipe of (at
/// least) 64 KiB and splices all of it from the pipe to /dev/null; the work
/// is the 64 KiB. A short vmsplice (a smaller pipe on other page sizes) is
/// drained and continued until the 64 KiB are through.
pub(super) struct VmSplice {
    buf: Box<Block>,
    rx: OwnedFd,
    tx: OwnedFd,
    null: OwnedFd,
}

impl VmSplice {
    pub(super) fn new() -> Result<VmSplice, BenchError> {
        let (rx, tx) = fd::pipe()?;
        // SAFETY: fcntl on our own pipe descriptor.
        let r = unsafe { libc::fcntl(tx.as_raw_fd(), libc::F_SETPIPE_SZ, SPLICE_BLOCK as c_int) };
        if r < 0 {
            let error = std::io::Error::last_os_error();
            return Err(BenchError::Skip(format!(
                "cannot size a pipe to {SPLICE_BLOCK} bytes: {error} (fs.pipe-user-pages-soft reached?)"
            )));
        }
        let mut w = VmSplice {
            buf: Box::new(Block([0x5a; SPLICE_BLOCK])),
            rx,
            tx,
            null: open_fd("/dev/null", true)?,
        };
        // A trial transfer: vmsplice or splice to /dev/null may be missing
        // (old kernels, seccomp filters, sandboxes).
        match w.transfer() {
            Err(BenchError::Os { what, error })
                if matches!(
                    error.raw_os_error(),
                    Some(libc::ENOSYS | libc::EINVAL | libc::EPERM)
                ) =>
            {
                Err(BenchError::Skip(format!(
                    "{what} is not supported here: {error}"
                )))
            }
            Err(other) => Err(other),
            Ok(()) => Ok(w),
        }
    }

    #[inline(always)]
    fn transfer(&mut self) -> Result<(), BenchError> {
        let (rx, tx, null) = (
            self.rx.as_raw_fd() as c_long,
            self.tx.as_raw_fd() as c_long,
            self.null.as_raw_fd() as c_long,
        );
        let base = self.buf.0.as_ptr();
        let none = std::ptr::null_mut::<libc::loff_t>();
        let mut done = 0;
        while done < SPLICE_BLOCK {
            let iov = libc::iovec {
                // The kernel only reads through it (no SPLICE_F_GIFT).
                iov_base: base.wrapping_add(done) as *mut libc::c_void,
                iov_len: SPLICE_BLOCK - done,
            };
            // SAFETY: iov describes the rest of our buffer, which is neither
            // written nor freed while the pipe still holds its pages (it is
            // drained below before the next call).
            let n =
                unsafe { libc::syscall(libc::SYS_vmsplice, tx, &iov, 1 as c_long, 0 as c_long) };
            let mut left = check(n, "vmsplice")? as usize;
            if left == 0 {
                return Err(BenchError::Os {
                    what: "vmsplice".into(),
                    error: std::io::Error::other("moved nothing into an empty pipe"),
                });
            }
            done += left;
            while left > 0 {
                // SAFETY: both descriptors are ours; null offsets use the
                // descriptors' own positions.
                let m = unsafe {
                    libc::syscall(libc::SYS_splice, rx, none, null, none, left, 0 as c_long)
                };
                let m = check(m, "splice to /dev/null")? as usize;
                if m == 0 {
                    return Err(BenchError::Os {
                        what: "splice to /dev/null".into(),
                        error: std::io::Error::other("moved nothing out of a full pipe"),
                    });
                }
                left -= m;
            }
        }
        Ok(())
    }
}

impl Workload for VmSplice {
    fn run(&mut self, iterations: u64) -> Result<Interval, BenchError> {
        let interval = timed(iterations, || self.transfer())?;
        Ok(Interval {
            work: interval.work * SPLICE_BLOCK as f64,
            ..interval
        })
    }
}

// ----------------------------------------------------------------------- memfd

/// The size each memfd is truncated to.
const MEMFD_SIZE: usize = 64 * 1024;

/// One iteration: `memfd_create(MFD_CLOEXEC)`, `ftruncate` to 64 KiB, `mmap`
/// it shared read-write, write one byte to each page (allocating and
/// faulting in every shmem page), `munmap`, `close` (which frees the pages).
pub(super) struct Memfd {
    name: CString,
    page: usize,
}

impl Memfd {
    pub(super) fn new() -> Result<Memfd, BenchError> {
        let w = Memfd {
            name: CString::new("kbench-memfd").expect("no NUL"),
            page: page_size(),
        };
        match w.once() {
            Err(BenchError::Os { what, error })
                if matches!(error.raw_os_error(), Some(libc::ENOSYS | libc::EPERM)) =>
            {
                Err(BenchError::Skip(format!(
                    "{what} is not available here: {error}"
                )))
            }
            Err(other) => Err(other),
            Ok(()) => Ok(w),
        }
    }

    #[inline(always)]
    fn once(&self) -> Result<(), BenchError> {
        // SAFETY: name is a NUL-terminated string that outlives the call.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_memfd_create,
                self.name.as_ptr(),
                libc::MFD_CLOEXEC as c_long,
            )
        };
        let fd = check(fd, "memfd_create")?;
        let used = self.map_and_touch(fd);
        // SAFETY: fd was just created by us and is not used afterwards.
        let closed = unsafe { libc::syscall(libc::SYS_close, fd) };
        used?;
        black_box(check(closed, "close memfd")?);
        Ok(())
    }

    #[inline(always)]
    fn map_and_touch(&self, fd: c_long) -> Result<(), BenchError> {
        // SAFETY: fd is our open memfd.
        let r = unsafe { libc::syscall(libc::SYS_ftruncate, fd, MEMFD_SIZE as c_long) };
        check(r, "ftruncate memfd")?;
        let prot = libc::PROT_READ | libc::PROT_WRITE;
        // SAFETY: a new shared mapping of our memfd at an address the kernel chooses.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                MEMFD_SIZE,
                prot,
                libc::MAP_SHARED,
                fd as c_int,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(BenchError::last_os("mmap memfd"));
        }
        let base = ptr.cast::<u8>();
        for offset in (0..MEMFD_SIZE).step_by(self.page) {
            // SAFETY: offset < MEMFD_SIZE, inside the writable mapping made
            // above, which nothing else refers to.
            unsafe { std::ptr::write_volatile(base.add(offset), 1) };
        }
        // SAFETY: exactly the mapping made above, not used afterwards.
        if unsafe { libc::munmap(ptr, MEMFD_SIZE) } != 0 {
            return Err(BenchError::last_os("munmap memfd"));
        }
        Ok(())
    }
}

impl Workload for Memfd {
    fn run(&mut self, iterations: u64) -> Result<Interval, BenchError> {
        timed(iterations, || self.once())
    }
}
