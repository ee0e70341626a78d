//! File system and file mapping benchmarks (lmbench family): file creation
//! and deletion (lat_fs), mmap latency (lat_mmap), page faults
//! (lat_pagefault), and read bandwidth of a cached file through `read` and
//! through a mapping (bw_file_rd, bw_mmap_rd).
//!
//! Every workload works in its own temporary directory under
//! `std::env::temp_dir()` (a [`TempDir`]), removed with
//! everything in it when the workload is dropped, after its mappings and
//! descriptors. Files that are read are written, flushed (no writeback
//! during timing) and read back in `prepare`, so their pages are clean and
//! in the page cache.

use crate::sys::mapping::Mapping;
use crate::sys::memory::{available_memory, page_size};
use crate::sys::tempdir::TempDir;
use crate::sys::{check, os_error};
use crate::{
    BenchError, BenchInfo, Direction, Interval, OptionKind, OptionSpec, Options, Unit, Workload,
};
use std::ffi::CString;
use std::fs::File;
use std::hint::black_box;
use std::io::{self, Write};
use std::os::fd::{AsRawFd, FromRawFd, IntoRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::time::Instant;

const KIB: u64 = 1024;
const MIB: u64 = 1024 * 1024;

/// The read block of file-rd-bw and mmap-rd-bw (lmbench's 64 KiB).
const BLOCK: usize = 64 * 1024;

/// Files per directory of fs-create and fs-delete (lmbench lat_fs).
const PER_DIR: usize = 100;

/// The largest file of fs-create and fs-delete, in KiB (1 GiB).
const MAX_FILE_KIB: u64 = 1 << 20;

/// The largest mmap-lat file, in MiB (1 GiB).
const MAX_MAP_MIB: u64 = 1024;

/// mmap-lat touches one byte per this many bytes (lmbench lat_mmap).
const MMAP_STRIDE: usize = 16 * 1024;

/// The file of file-rd-bw and mmap-rd-bw: as large as mem-bw's default
/// buffer, above common LLC sizes, so both read memory, not cache.
const READ_FILE: u64 = 64 * MIB;

/// The cached pages pagefault faults on, per mapping.
const FAULT_PAGES: usize = 8192;

/// The kernel's default fault-around window (fault_around_bytes).
const FAULT_AROUND: usize = 64 * 1024;

/// The seed of pagefault's page order.
const SEED: u64 = 0x6b62_656e_6368;

const FILE_KIB: OptionSpec = OptionSpec {
    name: "size",
    kind: OptionKind::Whole {
        min: 0,
        max: MAX_FILE_KIB,
    },
    default: || "0".to_string(),
    help: "KiB written to each file (lmbench uses 0, 1, 4 and 10)",
};

const MAP_MIB: OptionSpec = OptionSpec {
    name: "size",
    kind: OptionKind::Whole {
        min: 1,
        max: MAX_MAP_MIB,
    },
    default: || "4".to_string(),
    help: "MiB of the mapped file",
};

pub const BENCHES: &[BenchInfo] = &[
    BenchInfo {
        id: "fs-create",
        unit: Unit::Rate("files/s"),
        direction: Direction::Higher,
        summary: "creat + write K KiB + close of a new file, 100 files per fresh directory \
                  (the files of the last interval are removed untimed first)",
        options: &[FILE_KIB],
        one_task: true,
        in_measuring_task: true,
        prepare: |o| Ok(Box::new(FsCreate::new(o)?)),
    },
    BenchInfo {
        id: "fs-delete",
        unit: Unit::Rate("files/s"),
        direction: Direction::Higher,
        summary: "unlink of a K KiB file created (untimed) just before the interval, 100 files per directory",
        options: &[FILE_KIB],
        one_task: true,
        in_measuring_task: true,
        prepare: |o| Ok(Box::new(FsDelete::new(o)?)),
    },
    BenchInfo {
        id: "mmap-lat",
        unit: Unit::Micros,
        direction: Direction::Lower,
        summary: "mmap of a cached M MiB file (shared, read-only), read one byte per 16 KiB, munmap",
        options: &[MAP_MIB],
        one_task: true,
        in_measuring_task: true,
        prepare: |o| Ok(Box::new(MmapLat::new(o)?)),
    },
    BenchInfo {
        id: "pagefault",
        unit: Unit::Nanos,
        direction: Direction::Lower,
        summary: "read fault on a cached file page, 8192 pages in fixed random order, one cached page per \
                  64 KiB so fault-around maps no other (map and unmap untimed)",
        options: &[],
        one_task: true,
        in_measuring_task: true,
        prepare: |_| Ok(Box::new(PageFault::new()?)),
    },
    BenchInfo {
        id: "file-rd-bw",
        unit: Unit::MegabytesPerSec,
        direction: Direction::Higher,
        summary: "pread of the next 64 KiB block of a cached 64 MiB file, wrapping around",
        options: &[],
        one_task: true,
        in_measuring_task: true,
        prepare: |_| Ok(Box::new(FileRead::new()?)),
    },
    BenchInfo {
        id: "mmap-rd-bw",
        unit: Unit::MegabytesPerSec,
        direction: Direction::Higher,
        summary: "sum of the u64 words of the next 64 KiB block of a cached 64 MiB file mapped (and \
                  populated) once, wrapping around",
        options: &[],
        one_task: true,
        in_measuring_task: true,
        prepare: |_| Ok(Box::new(MapRead::new()?)),
    },
];

// ------------------------------------------------------------------ helpers

/// Closes a descriptor, reporting an error (dropping would ignore it).
fn close(fd: OwnedFd, what: &str) -> Result<(), BenchError> {
    // SAFETY: the descriptor is ours and closed exactly once, here.
    check(unsafe { libc::close(fd.into_raw_fd()) }, what).map(|_| ())
}

/// The bytes unprivileged users may still write on the file system of `path`.
fn free_space(path: &Path) -> Option<u64> {
    let path = CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: statvfs is a plain C struct; all zeroes is valid.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `path` is NUL-terminated and `st` is writable; both outlive the call.
    if unsafe { libc::statvfs(path.as_ptr(), &mut st) } != 0 {
        return None;
    }
    Some(st.f_bavail as u64 * st.f_frsize as u64)
}

/// Why a file of `bytes` bytes (cached in memory) does not fit here: more
/// than half of the available memory or of the temp dir's free space.
fn no_room(bytes: u64) -> Option<String> {
    let mib = |b: u64| b / MIB;
    let memory = available_memory().unwrap_or(u64::MAX);
    if bytes > memory / 2 {
        return Some(format!(
            "{} MiB is more than half of the {} MiB of available memory",
            mib(bytes),
            mib(memory)
        ));
    }
    let temp = std::env::temp_dir();
    let free = free_space(&temp).unwrap_or(u64::MAX);
    if bytes > free / 2 {
        return Some(format!(
            "{} MiB is more than half of the {} MiB free in {}",
            mib(bytes),
            mib(free),
            temp.display()
        ));
    }
    None
}

/// A size option that does not fit here is an invalid option.
fn check_room(option: &str, bytes: u64) -> Result<(), BenchError> {
    match no_room(bytes) {
        Some(reason) => Err(BenchError::InvalidOption {
            option: option.to_string(),
            reason,
        }),
        None => Ok(()),
    }
}

/// A fixed-size benchmark that does not fit here is skipped.
fn check_fixed(bytes: u64) -> Result<(), BenchError> {
    match no_room(bytes) {
        Some(reason) => Err(BenchError::Skip(reason)),
        None => Ok(()),
    }
}

/// A file of `bytes` bytes of a non-zero pattern (no page is a hole),
/// flushed to disk and read back once: every page clean and cached.
fn cached_file(dir: &TempDir, bytes: u64) -> Result<File, BenchError> {
    let (mut file, path) = dir.new_file("file")?;
    let chunk: Vec<u8> = (0..MIB).map(|i| (i % 251) as u8 | 1).collect();
    let mut left = bytes;
    while left > 0 {
        let n = left.min(MIB) as usize;
        file.write_all(&chunk[..n])
            .map_err(os_error(format!("write {}", path.display())))?;
        left -= n as u64;
    }
    file.sync_data()
        .map_err(os_error(format!("fdatasync {}", path.display())))?;
    let mut buf = vec![0u8; MIB as usize];
    let mut offset = 0;
    while offset < bytes {
        let n = file
            .read_at(&mut buf, offset)
            .map_err(os_error(format!("read {}", path.display())))?;
        if n == 0 {
            break;
        }
        offset += n as u64;
    }
    black_box(&buf);
    Ok(file)
}

/// Minor page faults of the calling thread so far.
fn minor_faults() -> Result<u64, BenchError> {
    // SAFETY: rusage is a plain C struct; all zeroes is valid.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `usage` is writable for getrusage to fill.
    check(
        unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut usage) },
        "getrusage(RUSAGE_THREAD)",
    )?;
    Ok(usage.ru_minflt as u64)
}

/// splitmix64: a small fixed-seed generator for the page order.
fn next_random(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Fisher-Yates shuffle with a fixed seed.
fn shuffle<T>(items: &mut [T], seed: u64) {
    let mut state = seed;
    for i in (1..items.len()).rev() {
        let j = (next_random(&mut state) % (i as u64 + 1)) as usize;
        items.swap(i, j);
    }
}

// ---------------------------------------------------- fs-create, fs-delete

/// The files of fs-create and fs-delete: one batch per interval, file `i`
/// of a batch being `d{i / 100}/f{i % 100}` in the temporary directory.
/// Every batch starts with fresh, empty directories: the previous batch's
/// are removed (untimed) first, so directories never grow past 100 files.
struct Tree {
    /// The open directories of the current batch (files are made and
    /// removed relative to them: no path walk from the root).
    dirs: Vec<OwnedFd>,
    /// "f00" to "f99".
    names: Vec<CString>,
    /// What each file gets written: `size` KiB, empty for 0.
    block: Vec<u8>,
    /// The directories of the current batch on disk.
    made: usize,
    /// Last: removed (with whatever is left) after the descriptors close.
    temp: TempDir,
}

impl Tree {
    fn new(bench: &str, options: &Options) -> Result<Tree, BenchError> {
        let kib = options.number("size");
        check_room("size", kib * KIB)?;
        Ok(Tree {
            dirs: Vec::new(),
            names: (0..PER_DIR)
                .map(|i| CString::new(format!("f{i:02}")).expect("no NUL"))
                .collect(),
            block: (0..kib * KIB).map(|i| (i % 251) as u8 | 1).collect(),
            made: 0,
            temp: TempDir::new(bench)?,
        })
    }

    fn dir_path(&self, i: usize) -> PathBuf {
        self.temp.path().join(format!("d{i}"))
    }

    /// Removes the last batch and makes empty directories for `files` files.
    fn new_batch(&mut self, files: u64) -> Result<(), BenchError> {
        self.dirs.clear();
        while self.made > 0 {
            let path = self.dir_path(self.made - 1);
            std::fs::remove_dir_all(&path)
                .map_err(os_error(format!("remove {}", path.display())))?;
            self.made -= 1;
        }
        let count =
            usize::try_from(files.div_ceil(PER_DIR as u64)).expect("a sane iteration count");
        for i in 0..count {
            let path = self.dir_path(i);
            std::fs::create_dir(&path).map_err(os_error(format!("mkdir {}", path.display())))?;
            self.made += 1;
            let dir = File::open(&path).map_err(os_error(format!("open {}", path.display())))?;
            self.dirs.push(OwnedFd::from(dir));
        }
        Ok(())
    }

    /// The directory and name of file `i` of the batch.
    fn at(&self, i: usize) -> (RawFd, &CString) {
        (self.dirs[i / PER_DIR].as_raw_fd(), &self.names[i % PER_DIR])
    }

    /// creat + write `size` KiB + close of file `i`.
    fn create(&self, i: usize) -> Result<(), BenchError> {
        let (dir, name) = self.at(i);
        let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC | libc::O_CLOEXEC;
        // SAFETY: `dir` is an open directory, `name` a NUL-terminated string;
        // both outlive the call.
        let fd = check(
            unsafe { libc::openat(dir, name.as_ptr(), flags, 0o600 as libc::c_uint) },
            "fs-create: open",
        )?;
        // SAFETY: fd was just opened and is owned by nobody else.
        let file = unsafe { OwnedFd::from_raw_fd(fd) };
        let mut done = 0;
        while done < self.block.len() {
            let rest = &self.block[done..];
            // SAFETY: `rest` is valid for reads of `rest.len()` bytes.
            let n = unsafe { libc::write(fd, rest.as_ptr().cast(), rest.len()) };
            if n <= 0 {
                if n < 0 && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(BenchError::last_os("fs-create: write"));
            }
            done += n as usize;
        }
        close(file, "fs-create: close")
    }

    /// unlink of file `i`.
    fn unlink(&self, i: usize) -> Result<(), BenchError> {
        let (dir, name) = self.at(i);
        // SAFETY: `dir` is an open directory, `name` a NUL-terminated string.
        let r = unsafe { libc::unlinkat(dir, name.as_ptr(), 0) };
        black_box(check(r, "fs-delete: unlink")?);
        Ok(())
    }
}

/// fs-create: one iteration creates, writes and closes one file.
struct FsCreate {
    tree: Tree,
}

impl FsCreate {
    fn new(options: &Options) -> Result<FsCreate, BenchError> {
        Ok(FsCreate {
            tree: Tree::new("fs-create", options)?,
        })
    }
}

impl Workload for FsCreate {
    fn run(&mut self, iterations: u64) -> Result<Interval, BenchError> {
        self.tree.new_batch(iterations)?;
        let start = Instant::now();
        for i in 0..iterations as usize {
            self.tree.create(i)?;
        }
        Ok(Interval::since(start, iterations as f64))
    }
}

/// fs-delete: the files are created untimed before each interval; one
/// iteration unlinks one of them.
struct FsDelete {
    tree: Tree,
}

impl FsDelete {
    fn new(options: &Options) -> Result<FsDelete, BenchError> {
        Ok(FsDelete {
            tree: Tree::new("fs-delete", options)?,
        })
    }
}

impl Workload for FsDelete {
    fn run(&mut self, iterations: u64) -> Result<Interval, BenchError> {
        self.tree.new_batch(iterations)?;
        for i in 0..iterations as usize {
            self.tree.create(i)?;
        }
        let start = Instant::now();
        for i in 0..iterations as usize {
            self.tree.unlink(i)?;
        }
        Ok(Interval::since(start, iterations as f64))
    }
}

// ----------------------------------------------------------------- mmap-lat

/// mmap-lat (lmbench lat_mmap): one iteration maps the whole cached file,
/// reads one byte per 16 KiB (whatever the kernel maps per fault, e.g.
/// fault-around and large folios, is part of the number) and unmaps it.
struct MmapLat {
    file: File,
    len: usize,
    _dir: TempDir,
}

impl MmapLat {
    fn new(options: &Options) -> Result<MmapLat, BenchError> {
        let mib = options.number("size");
        check_room("size", mib * MIB)?;
        let dir = TempDir::new("mmap-lat")?;
        let file = cached_file(&dir, mib * MIB)?;
        Ok(MmapLat {
            file,
            len: (mib * MIB) as usize,
            _dir: dir,
        })
    }
}

impl Workload for MmapLat {
    fn run(&mut self, iterations: u64) -> Result<Interval, BenchError> {
        let fd = self.file.as_raw_fd();
        let start = Instant::now();
        for _ in 0..iterations {
            let map = Mapping::shared(fd, self.len, 0, "mmap-lat")?;
            let mut sum = 0u64;
            for offset in (0..self.len).step_by(MMAP_STRIDE) {
                sum = sum.wrapping_add(u64::from(black_box(map.bytes())[offset]));
            }
            black_box(sum);
            map.unmap("mmap-lat")?;
        }
        Ok(Interval::since(start, iterations as f64))
    }
}

// ---------------------------------------------------------------- pagefault

/// pagefault (lmbench lat_pagefault): one iteration reads one byte of a
/// cached file page not yet mapped, in a fixed random order; the mappings
/// are made (and unmapped) outside the timed interval, as many fresh ones
/// as the iterations need.
///
/// Fault-around: on a read fault the kernel also maps the neighbours of the
/// page within `fault_around_bytes` (64 KiB) that are in the page cache,
/// and since Linux 6.18 a whole large folio, so touching every page of a
/// dense file faults only once per 16+ pages (measured here: 4096 touches,
/// 256 faults with 4 KiB folios, 31 with large ones). MADV_RANDOM does not
/// turn that off (same counts with it), and fault_around_bytes is a root
/// debugfs knob. So the file is sparse: one page written (order-0 folio)
/// per 64 KiB, holes between, which are not in the page cache and are
/// never touched; fault-around then finds nothing else to map, and every
/// touched page is one fault. MADV_RANDOM is still set on each mapping so
/// that a page evicted meanwhile is read back alone (no readahead). Every
/// interval checks the thread's minor fault count against the pages
/// touched.
struct PageFault {
    file: File,
    /// The (mostly sparse) file length; each mapping covers all of it.
    len: usize,
    /// The offsets of the cached pages, in the order they are touched.
    order: Vec<usize>,
    _dir: TempDir,
}

impl PageFault {
    fn new() -> Result<PageFault, BenchError> {
        let page = page_size();
        let stride = FAULT_AROUND.max(page);
        check_fixed((FAULT_PAGES * page) as u64)?;
        let dir = TempDir::new("pagefault")?;
        let (file, path) = dir.new_file("sparse")?;
        let len = FAULT_PAGES * stride;
        file.set_len(len as u64)
            .map_err(os_error(format!("truncate {}", path.display())))?;
        let data: Vec<u8> = (0..page).map(|i| (i % 251) as u8 | 1).collect();
        for k in 0..FAULT_PAGES {
            file.write_all_at(&data, (k * stride) as u64)
                .map_err(os_error(format!("write {}", path.display())))?;
        }
        file.sync_data()
            .map_err(os_error(format!("fdatasync {}", path.display())))?;
        // SAFETY: fadvise only sets the read pattern of our open file.
        unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_RANDOM) };
        let mut order: Vec<usize> = (0..FAULT_PAGES).map(|k| k * stride).collect();
        shuffle(&mut order, SEED);
        let w = PageFault {
            file,
            len,
            order,
            _dir: dir,
        };
        // A trial: every touch must be a (minor) fault here. A page evicted
        // in between faults as a major fault, so the trial is tried again
        // with the pages read back; fewer faults every time means the
        // kernel maps more than one cached page per fault.
        let mut faults_seen = Vec::new();
        for _ in 0..3 {
            w.cache_pages(&path)?;
            let (_, touched, faults) = w.touch(256)?;
            if faults >= touched {
                return Ok(w);
            }
            faults_seen.push(faults);
        }
        Err(BenchError::Skip(format!(
            "256 touched pages faulted only {faults_seen:?} times in three trials: the kernel maps \
             more than one cached page per fault (fault_around_bytes above {} KiB?)",
            FAULT_AROUND / 1024
        )))
    }

    /// Reads the written pages back so they are cached, without readahead
    /// pulling the holes around them into the page cache (the file is
    /// advised random).
    fn cache_pages(&self, path: &Path) -> Result<(), BenchError> {
        let page = page_size();
        let stride = FAULT_AROUND.max(page);
        let mut buf = vec![0u8; page];
        for k in 0..FAULT_PAGES {
            self.file
                .read_exact_at(&mut buf, (k * stride) as u64)
                .map_err(os_error(format!("read {}", path.display())))?;
        }
        black_box(&buf);
        Ok(())
    }
    /// Maps the file afresh, times touching `n` pages (one fault each) and
    /// unmaps; the interval, `n` and the minor faults counted meanwhile.
    fn touch(&self, n: u64) -> Result<(Interval, u64, u64), BenchError> {
        let per_map = self.order.len() as u64;
        let mut mappings = Vec::with_capacity(n.div_ceil(per_map) as usize);
        for _ in 0..n.div_ceil(per_map) {
            let map = Mapping::shared(self.file.as_raw_fd(), self.len, 0, "pagefault")?;
            map.advise(libc::MADV_RANDOM, "pagefault")?;
            mappings.push(map);
        }
        let mut left = n;
        let mut sum = 0u64;
        let before = minor_faults()?;
        let start = Instant::now();
        for map in &mappings {
            let count = left.min(per_map) as usize;
            for &offset in &self.order[..count] {
                sum = sum.wrapping_add(u64::from(black_box(map.bytes())[offset]));
            }
            left -= count as u64;
        }
        let interval = Interval::since(start, n as f64);
        let faults = minor_faults()? - before;
        black_box(sum);
        for map in mappings {
            map.unmap("pagefault")?;
        }
        Ok((interval, n, faults))
    }
}

impl Workload for PageFault {
    fn run(&mut self, iterations: u64) -> Result<Interval, BenchError> {
        let (interval, touched, faults) = self.touch(iterations)?;
        if faults < touched {
            return Err(BenchError::Os {
                what: "pagefault".to_string(),
                error: io::Error::other(format!(
                    "{touched} touched pages faulted only {faults} times (fault-around?)"
                )),
            });
        }
        Ok(interval)
    }
}

// --------------------------------------------------------------- file-rd-bw

/// file-rd-bw (lmbench bw_file_rd): one iteration preads the next 64 KiB
/// block of the cached file into the same buffer, wrapping around at the
/// end; the work is the bytes read.
struct FileRead {
    file: File,
    offset: u64,
    buf: Vec<u8>,
    _dir: TempDir,
}

impl FileRead {
    fn new() -> Result<FileRead, BenchError> {
        check_fixed(READ_FILE)?;
        let dir = TempDir::new("file-rd-bw")?;
        let file = cached_file(&dir, READ_FILE)?;
        Ok(FileRead {
            file,
            offset: 0,
            buf: vec![0; BLOCK],
            _dir: dir,
        })
    }
}

impl Workload for FileRead {
    fn run(&mut self, iterations: u64) -> Result<Interval, BenchError> {
        let fd = self.file.as_raw_fd();
        let start = Instant::now();
        for _ in 0..iterations {
            // SAFETY: `buf` is valid for writes of BLOCK bytes.
            let n = unsafe {
                libc::pread(
                    fd,
                    self.buf.as_mut_ptr().cast(),
                    BLOCK,
                    self.offset as libc::off_t,
                )
            };
            if n != BLOCK as isize {
                if n < 0 {
                    return Err(BenchError::last_os("file-rd-bw: pread"));
                }
                return Err(BenchError::Os {
                    what: "file-rd-bw: pread".to_string(),
                    error: io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        format!("{n} of {BLOCK} bytes"),
                    ),
                });
            }
            self.offset += BLOCK as u64;
            if self.offset >= READ_FILE {
                self.offset = 0;
            }
        }
        let interval = Interval::since(start, (iterations * BLOCK as u64) as f64);
        black_box(&self.buf);
        Ok(interval)
    }
}

// --------------------------------------------------------------- mmap-rd-bw

/// mmap-rd-bw (lmbench bw_mmap_rd, "mmap_only"): the cached file is mapped
/// once, populated (MAP_POPULATE: no fault in a timed interval); one
/// iteration sums the u64 words of the next 64 KiB block, wrapping around;
/// the work is the bytes summed.
struct MapRead {
    map: Mapping,
    block: usize,
    _file: File,
    _dir: TempDir,
}

impl MapRead {
    fn new() -> Result<MapRead, BenchError> {
        check_fixed(READ_FILE)?;
        let dir = TempDir::new("mmap-rd-bw")?;
        let file = cached_file(&dir, READ_FILE)?;
        let map = Mapping::shared(
            file.as_raw_fd(),
            READ_FILE as usize,
            libc::MAP_POPULATE,
            "mmap-rd-bw",
        )?;
        Ok(MapRead {
            map,
            block: 0,
            _file: file,
            _dir: dir,
        })
    }
}

impl Workload for MapRead {
    fn run(&mut self, iterations: u64) -> Result<Interval, BenchError> {
        let words = self.map.words();
        let per_block = BLOCK / size_of::<u64>();
        let blocks = words.len() / per_block;
        let start = Instant::now();
        for _ in 0..iterations {
            let block = &black_box(words)[self.block * per_block..][..per_block];
            black_box(block.iter().fold(0u64, |sum, &w| sum.wrapping_add(w)));
            self.block += 1;
            if self.block == blocks {
                self.block = 0;
            }
        }
        Ok(Interval::since(start, (iterations * BLOCK as u64) as f64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{
        LAST_TEMP_DIR, assert_plausible, canonical, invalid, key, options, serial,
    };

    #[test]
    fn fs_create_is_plausible() {
        assert_plausible("fs-create", &[], 10.0, 1e8);
        assert_plausible("fs-create", &[("size", "10")], 10.0, 1e8);
    }

    #[test]
    fn fs_delete_is_plausible() {
        assert_plausible("fs-delete", &[], 10.0, 1e8);
        assert_plausible("fs-delete", &[("size", "10")], 10.0, 1e8);
    }

    #[test]
    fn mmap_lat_is_plausible() {
        assert_plausible("mmap-lat", &[], 0.1, 1e6);
        assert_plausible("mmap-lat", &[("size", "1")], 0.1, 1e6);
    }

    #[test]
    fn pagefault_is_plausible() {
        assert_plausible("pagefault", &[], 10.0, 1e6);
    }

    #[test]
    fn file_rd_bw_is_plausible() {
        assert_plausible("file-rd-bw", &[], 10.0, 1e6);
    }

    #[test]
    fn mmap_rd_bw_is_plausible() {
        assert_plausible("mmap-rd-bw", &[], 10.0, 1e6);
    }

    #[test]
    fn defaults_and_canonical_keys() {
        assert_eq!(canonical("fs-create"), "fs-create[size=0]");
        assert_eq!(canonical("fs-delete"), "fs-delete[size=0]");
        assert_eq!(canonical("mmap-lat"), "mmap-lat[size=4]");
        for id in ["pagefault", "file-rd-bw", "mmap-rd-bw"] {
            assert_eq!(canonical(id), id);
        }
    }

    #[test]
    fn rejects_invalid_options() {
        for id in ["fs-create", "fs-delete"] {
            assert_eq!(invalid(id, &[("size", "1048577")]), "size");
            assert_eq!(invalid(id, &[("size", "-1")]), "size");
            assert_eq!(invalid(id, &[("size", "ten")]), "size");
            assert_eq!(invalid(id, &[("placement", "same")]), "placement");
        }
        assert_eq!(invalid("mmap-lat", &[("size", "0")]), "size");
        assert_eq!(invalid("mmap-lat", &[("size", "1025")]), "size");
        assert_eq!(invalid("mmap-lat", &[("size", "4M")]), "size");
        for id in ["pagefault", "file-rd-bw", "mmap-rd-bw"] {
            assert_eq!(invalid(id, &[("size", "4")]), "size");
        }
    }

    #[test]
    fn sizes_beyond_memory_are_invalid() {
        let Some(memory) = available_memory() else {
            return;
        };
        let mib = memory / MIB;
        if mib / 2 < MAX_MAP_MIB {
            assert_eq!(
                invalid("mmap-lat", &[("size", &MAX_MAP_MIB.to_string())]),
                "size"
            );
        }
        assert!(no_room(u64::MAX / 2).is_some());
        assert!(no_room(MIB).is_none());
    }

    /// The files of the directory `path`, recursively.
    fn count_files(path: &Path) -> usize {
        std::fs::read_dir(path)
            .unwrap()
            .flatten()
            .map(|e| {
                if e.file_type().unwrap().is_dir() {
                    count_files(&e.path())
                } else {
                    1
                }
            })
            .sum()
    }

    #[test]
    fn fs_batches_replace_each_other() {
        let opts = options(&[("size", "1")], &[FILE_KIB]);
        let mut w = FsCreate::new(&opts).unwrap();
        let root = w.tree.temp.path().to_path_buf();
        w.run(250).unwrap();
        assert_eq!(count_files(&root), 250);
        for (dir, files) in [("d0", 100), ("d1", 100), ("d2", 50)] {
            assert_eq!(count_files(&root.join(dir)), files, "{dir}");
        }
        let len = std::fs::metadata(root.join("d2/f49")).unwrap().len();
        assert_eq!(len, KIB, "size=1 writes 1 KiB");
        w.run(10).unwrap();
        assert_eq!(count_files(&root), 10, "the last batch was removed");
        assert!(!root.join("d1").exists());

        let mut w = FsDelete::new(&opts).unwrap();
        let root = w.tree.temp.path().to_path_buf();
        let interval = w.run(150).unwrap();
        assert_eq!(interval.work, 150.0);
        assert_eq!(count_files(&root), 0, "every file unlinked");
        assert!(root.join("d1").is_dir());
    }

    #[test]
    fn pagefault_faults_once_per_page() {
        let _serial = serial();
        let w = PageFault::new().unwrap();
        // More pages than one mapping holds: two fresh mappings.
        let n = FAULT_PAGES as u64 + 100;
        let (interval, touched, faults) = w.touch(n).unwrap();
        assert_eq!(touched, n);
        assert_eq!(interval.work, n as f64);
        assert!(faults >= n, "{faults} faults for {n} pages");
        assert!(faults < n + n / 10, "{faults} faults for {n} pages");
        // The order is a permutation of the cached pages.
        let mut sorted = w.order.clone();
        sorted.sort_unstable();
        let stride = FAULT_AROUND.max(page_size());
        assert!(sorted.iter().enumerate().all(|(k, &o)| o == k * stride));
        assert_ne!(sorted, w.order, "shuffled");
    }

    /// Exactly the written pages of pagefault's file are in the page cache.
    #[test]
    fn pagefault_file_is_sparse_and_cached() {
        let w = PageFault::new().unwrap();
        let map = Mapping::shared(w.file.as_raw_fd(), w.len, 0, "test").unwrap();
        let page = page_size();
        let mut resident = vec![0u8; w.len.div_ceil(page)];
        // SAFETY: the range is our live mapping; `resident` has one byte per page.
        let r =
            unsafe { libc::mincore(map.bytes().as_ptr() as *mut _, w.len, resident.as_mut_ptr()) };
        assert_eq!(r, 0);
        let stride_pages = FAULT_AROUND.max(page) / page;
        for (p, &byte) in resident.iter().enumerate() {
            assert_eq!(byte & 1 == 1, p % stride_pages == 0, "page {p}");
        }
    }

    #[test]
    fn readers_read_the_whole_file() {
        let mut w = FileRead::new().unwrap();
        let blocks = READ_FILE / BLOCK as u64;
        let interval = w.run(blocks + 3).unwrap();
        assert_eq!(interval.work, ((blocks + 3) * BLOCK as u64) as f64);
        assert_eq!(w.offset, 3 * BLOCK as u64, "wrapped around");
        assert!(w.buf.iter().all(|&b| b & 1 == 1), "the pattern, no hole");

        let mut w = MapRead::new().unwrap();
        w.run(blocks + 5).unwrap();
        assert_eq!(w.block, 5);
    }

    /// Whether anything of this process (a mapping or a descriptor) still
    /// refers to a path under `dir`.
    fn still_used(dir: &Path) -> bool {
        let dir = dir.to_str().unwrap();
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
        let mapped = maps.lines().any(|l| l.contains(dir));
        let open = std::fs::read_dir("/proc/self/fd")
            .unwrap()
            .flatten()
            .filter_map(|e| std::fs::read_link(e.path()).ok())
            .any(|target| target.to_string_lossy().contains(dir));
        mapped || open
    }

    #[test]
    fn dropping_removes_everything() {
        let _serial = serial();
        for (id, options) in [
            ("fs-create", &[("size", "4")][..]),
            ("fs-delete", &[][..]),
            ("mmap-lat", &[("size", "1")][..]),
            ("pagefault", &[][..]),
            ("file-rd-bw", &[][..]),
            ("mmap-rd-bw", &[][..]),
        ] {
            let info = crate::find(id).unwrap();
            let (_, opts) = info.resolve(&key(id, options)).unwrap();
            let mut w = info.prepare(&opts).unwrap();
            let dir = LAST_TEMP_DIR
                .with(|d| d.borrow().clone())
                .expect("a temp dir");
            assert!(dir.starts_with(std::env::temp_dir()), "{}", dir.display());
            w.run(150).unwrap();
            assert!(dir.is_dir());
            drop(w);
            assert!(!dir.exists(), "{id}: {} is left", dir.display());
            assert!(!still_used(&dir), "{id}: still mapped or open");
        }
    }
}
