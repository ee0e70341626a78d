//! lmbench `lat_proc`: process creation latencies, in microseconds per
//! loop body, lower is better.
//!
//! Every loop body is `fork()` + something in the child + `waitpid()` in the
//! parent, and checks that the child exited with status 0. The child only
//! calls async-signal-safe functions (`execve`, `_exit`, `write`), with every
//! argument built before timing, so forking from a multi-threaded process is
//! sound. A child still running when a workload is dropped (a run that
//! stopped on an error) is killed and reaped.

use crate::ipc::partner;
use crate::syscalls::{TempDir, os_error};
use crate::{BenchError, BenchInfo, Direction, Interval, Options, Unit, Workload};
use libc::{c_char, c_int, pid_t};
use std::ffi::CString;
use std::hint::black_box;
use std::io::Read;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::time::{Duration, Instant};

pub const BENCHES: &[BenchInfo] = &[
    BenchInfo {
        id: "fork-exit",
        unit: Unit::Micros,
        direction: Direction::Lower,
        summary: "fork(); the child calls _exit(0); the parent waitpid()s it",
        options: &[],
        prepare: prepare_fork_exit,
    },
    BenchInfo {
        id: "fork-exec",
        unit: Unit::Micros,
        direction: Direction::Lower,
        summary: "fork(); the child execve()s a 129-byte static ELF that calls exit_group(0); waitpid()",
        options: &[],
        prepare: prepare_fork_exec,
    },
    BenchInfo {
        id: "fork-sh",
        unit: Unit::Micros,
        direction: Direction::Lower,
        summary: "fork(); the child execve()s /bin/sh -c true (env PATH=/usr/bin:/bin only); waitpid()",
        options: &[],
        prepare: prepare_fork_sh,
    },
];

/// The `fork-exec` helper: a minimal static x86_64 ELF executable whose only
/// code is `exit_group(0)`. One `PT_LOAD` segment maps the whole 129-byte
/// file read+execute at 0x400000; the entry point is the code right after
/// the headers, at file offset 0x78.
#[cfg(target_arch = "x86_64")]
const EXIT0_ELF: [u8; 129] = [
    // ---- ELF header (Elf64_Ehdr), offset 0x00, 64 bytes
    0x7f, b'E', b'L', b'F', // e_ident[EI_MAG0..=EI_MAG3]: magic
    2,    // e_ident[EI_CLASS] = ELFCLASS64
    1,    // e_ident[EI_DATA] = ELFDATA2LSB (little endian)
    1,    // e_ident[EI_VERSION] = EV_CURRENT
    0,    // e_ident[EI_OSABI] = ELFOSABI_SYSV
    0, 0, 0, 0, 0, 0, 0, 0, // e_ident[EI_ABIVERSION] = 0, then padding to 16
    2, 0, // e_type = ET_EXEC
    0x3e, 0, // e_machine = EM_X86_64
    1, 0, 0, 0, // e_version = EV_CURRENT
    0x78, 0x00, 0x40, 0, 0, 0, 0, 0, // e_entry = 0x400078 (the code below)
    0x40, 0, 0, 0, 0, 0, 0, 0, // e_phoff = 64: program headers follow this header
    0, 0, 0, 0, 0, 0, 0, 0, // e_shoff = 0: no section headers
    0, 0, 0, 0, // e_flags = 0
    0x40, 0, // e_ehsize = 64
    0x38, 0, // e_phentsize = 56
    1, 0, // e_phnum = 1
    0, 0, // e_shentsize = 0
    0, 0, // e_shnum = 0
    0, 0, // e_shstrndx = SHN_UNDEF
    // ---- program header (Elf64_Phdr), offset 0x40, 56 bytes
    1, 0, 0, 0, // p_type = PT_LOAD
    5, 0, 0, 0, // p_flags = PF_R | PF_X
    0, 0, 0, 0, 0, 0, 0, 0, // p_offset = 0: map from the start of the file
    0x00, 0x00, 0x40, 0, 0, 0, 0, 0, // p_vaddr = 0x400000
    0x00, 0x00, 0x40, 0, 0, 0, 0, 0, // p_paddr = 0x400000
    0x81, 0, 0, 0, 0, 0, 0, 0, // p_filesz = 129: the whole file
    0x81, 0, 0, 0, 0, 0, 0, 0, // p_memsz = 129
    0x00, 0x10, 0, 0, 0, 0, 0, 0, // p_align = 0x1000
    // ---- code, offset 0x78 (vaddr 0x400078), 9 bytes
    0xb8, 0xe7, 0x00, 0x00, 0x00, // mov eax, 231   ; SYS_exit_group
    0x31, 0xff, // xor edi, edi                     ; status 0
    0x0f, 0x05, // syscall
];

/// A program to execve in the child, with argv and envp built before timing.
struct Exec {
    path: CString,
    /// Own the strings `argv` and `envp` point into.
    _strings: Vec<CString>,
    argv: Vec<*const c_char>,
    envp: Vec<*const c_char>,
}

impl Exec {
    fn new(path: &Path, args: &[&str], env: &[&str]) -> Exec {
        let path = CString::new(path.as_os_str().as_bytes()).expect("paths have no NUL byte");
        let strings: Vec<CString> = args
            .iter()
            .chain(env)
            .map(|s| CString::new(*s).expect("no NUL byte"))
            .collect();
        let pointers = |range: &[CString]| {
            let mut v: Vec<*const c_char> = range.iter().map(|s| s.as_ptr()).collect();
            v.push(std::ptr::null());
            v
        };
        let argv = pointers(&strings[..args.len()]);
        let envp = pointers(&strings[args.len()..]);
        Exec {
            path,
            _strings: strings,
            argv,
            envp,
        }
    }

    /// In a forked child: execve the program. Should that fail, writes errno
    /// to `report` (unless it is -1) and exits with status 127.
    fn exec_in_child(&self, report: c_int) -> ! {
        // SAFETY: path, argv and envp are NUL-terminated and null-terminated
        // arrays owned by self; execve only returns on failure.
        unsafe { libc::execve(self.path.as_ptr(), self.argv.as_ptr(), self.envp.as_ptr()) };
        let errno: c_int = partner::errno();
        if report >= 0 {
            // SAFETY: writes the 4 bytes of errno to the report pipe; nothing
            // can be done about a failure in the child.
            unsafe { libc::write(report, (&errno as *const c_int).cast(), size_of::<c_int>()) };
        }
        // SAFETY: _exit is async-signal-safe and ends the child at once.
        unsafe { libc::_exit(127) }
    }
}

/// What the forked child does.
enum Child {
    Exit,
    Exec(Exec),
}

/// fork + (exit | execve) + waitpid.
struct Spawn {
    child: Child,
    /// The child forked and not yet reaped, 0 if none.
    pid: pid_t,
    what: &'static str,
    /// Holds the fork-exec helper; removed on drop (after the child is reaped).
    _dir: Option<TempDir>,
}

impl Workload for Spawn {
    fn run(&mut self, iterations: u64) -> Result<Interval, BenchError> {
        let start = Instant::now();
        for _ in 0..iterations {
            // SAFETY: fork has no memory-safety preconditions here; the child
            // only calls async-signal-safe functions (execve, write, _exit).
            let pid = unsafe { libc::fork() };
            if pid == 0 {
                match &self.child {
                    // SAFETY: _exit ends the child at once.
                    Child::Exit => unsafe { libc::_exit(0) },
                    Child::Exec(exec) => exec.exec_in_child(-1),
                }
            }
            if pid < 0 {
                return Err(BenchError::last_os("fork"));
            }
            self.pid = pid;
            let status = wait_for(pid)?;
            self.pid = 0;
            check_status(black_box(status), self.what)?;
        }
        Ok(Interval::since(start, iterations as f64))
    }
}

impl Drop for Spawn {
    fn drop(&mut self) {
        if self.pid > 0 {
            kill_and_reap(self.pid);
            self.pid = 0;
        }
    }
}

/// Kills our unreaped child `pid` and reaps it.
pub(crate) fn kill_and_reap(pid: pid_t) {
    // SAFETY: pid is our own unreaped child, so it cannot have been reused
    // by another process.
    unsafe { libc::kill(pid, libc::SIGKILL) };
    let _ = wait_for(pid);
}

/// Waits for the child `pid` (retrying on EINTR) and returns its status.
pub(crate) fn wait_for(pid: pid_t) -> Result<c_int, BenchError> {
    let mut status: c_int = 0;
    loop {
        // SAFETY: status is a valid c_int; pid is our child.
        let r = unsafe { libc::waitpid(pid, &mut status, 0) };
        if r == pid {
            return Ok(status);
        }
        let error = std::io::Error::last_os_error();
        if error.kind() != std::io::ErrorKind::Interrupted {
            return Err(BenchError::Os {
                what: format!("waitpid {pid}"),
                error,
            });
        }
    }
}

pub(crate) fn check_status(status: c_int, what: &str) -> Result<(), BenchError> {
    if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0 {
        return Ok(());
    }
    let how = if libc::WIFEXITED(status) {
        format!("exited with status {}", libc::WEXITSTATUS(status))
    } else if libc::WIFSIGNALED(status) {
        format!("was killed by signal {}", libc::WTERMSIG(status))
    } else {
        format!("ended with wait status {status:#x}")
    };
    Err(BenchError::Os {
        what: format!("{what} child"),
        error: std::io::Error::other(how),
    })
}

/// Runs `exec` once, untimed: checks that it can run here and exits 0.
/// Retries while execve says ETXTBSY: a child another thread forked while the
/// helper was open for writing still holds that fd until it execs or exits
/// (O_CLOEXEC does not help before exec). Once one exec succeeds, no writer
/// is left and none can appear, so the timed loop cannot hit it.
fn trial(exec: &Exec, what: &str) -> Result<(), BenchError> {
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        let errno = match try_exec(exec, what)? {
            None => return Ok(()),
            Some(errno) => errno,
        };
        let error = std::io::Error::from_raw_os_error(errno);
        let path = exec.path.to_string_lossy();
        match errno {
            libc::ETXTBSY if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(5));
            }
            libc::ENOENT | libc::EACCES | libc::EPERM | libc::ENOEXEC => {
                return Err(BenchError::Skip(format!(
                    "cannot execute {path}: {error} (temp dir mounted noexec?)"
                )));
            }
            _ => {
                return Err(BenchError::Os {
                    what: format!("execve {path}"),
                    error,
                });
            }
        }
    }
}

/// fork + execve once; the errno of a failed execve comes back through a
/// close-on-exec pipe (None when the exec worked and the child exited 0).
fn try_exec(exec: &Exec, what: &str) -> Result<Option<c_int>, BenchError> {
    let (reader, writer) = partner::pipe()?;
    // SAFETY: as in the timed loop, the child only calls execve/write/_exit.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        exec.exec_in_child(writer.as_raw_fd());
    }
    if pid < 0 {
        return Err(BenchError::last_os("fork"));
    }
    drop(writer);
    let mut report = Vec::new();
    let read = std::fs::File::from(reader).read_to_end(&mut report);
    let status = wait_for(pid)?;
    read.map_err(os_error("read the exec report pipe"))?;
    if let Ok(bytes) = <[u8; size_of::<c_int>()]>::try_from(report.as_slice()) {
        return Ok(Some(c_int::from_ne_bytes(bytes)));
    }
    check_status(status, what)?;
    Ok(None)
}

impl Spawn {
    /// A workload forking `child` in every iteration.
    fn boxed(what: &'static str, child: Child, dir: Option<TempDir>) -> Box<dyn Workload> {
        Box::new(Spawn {
            child,
            pid: 0,
            what,
            _dir: dir,
        })
    }
}

fn prepare_fork_exit(_: &Options) -> Result<Box<dyn Workload>, BenchError> {
    Ok(Spawn::boxed("fork-exit", Child::Exit, None))
}

/// Writes the exit(0) helper as `<dir>/exit0`, mode 0755, and returns its
/// path.
#[cfg(target_arch = "x86_64")]
fn write_exit0_helper(dir: &TempDir) -> Result<std::path::PathBuf, BenchError> {
    use std::io::Write;
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let path = dir.path().join("exit0");
    let path_error = |what: &str| os_error(format!("{what} {}", path.display()));
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o755)
        .open(&path)
        .map_err(path_error("create"))?;
    file.write_all(&EXIT0_ELF).map_err(path_error("write"))?;
    drop(file);
    // The umask may have taken bits off the mode given to open.
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
        .map_err(path_error("chmod"))?;
    Ok(path)
}

/// fork + execve of the exit(0) helper + waitpid, named `what`: `fork-exec`
/// here, aim9's `exec-test`.
#[cfg(target_arch = "x86_64")]
pub(crate) fn prepare_exit0(what: &'static str) -> Result<Box<dyn Workload>, BenchError> {
    let dir = TempDir::new(what)?;
    let path = write_exit0_helper(&dir)?;
    let exec = Exec::new(&path, &["exit0"], &[]);
    trial(&exec, what)?;
    Ok(Spawn::boxed(what, Child::Exec(exec), Some(dir)))
}

#[cfg(not(target_arch = "x86_64"))]
pub(crate) fn prepare_exit0(what: &'static str) -> Result<Box<dyn Workload>, BenchError> {
    Err(BenchError::Skip(format!(
        "{what} embeds its exit(0) helper for x86_64 only; this machine is {}",
        std::env::consts::ARCH
    )))
}

fn prepare_fork_exec(_: &Options) -> Result<Box<dyn Workload>, BenchError> {
    prepare_exit0("fork-exec")
}

fn prepare_fork_sh(_: &Options) -> Result<Box<dyn Workload>, BenchError> {
    let sh = Path::new("/bin/sh");
    if !sh.exists() {
        return Err(BenchError::Skip("/bin/sh is missing".into()));
    }
    // `true` is a shell builtin; a fixed environment keeps the shell's start
    // the same whatever the runner's environment holds.
    let exec = Exec::new(sh, &["sh", "-c", "true"], &["PATH=/usr/bin:/bin"]);
    trial(&exec, "fork-sh")?;
    Ok(Spawn::boxed("fork-sh", Child::Exec(exec), None))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{assert_calibrated, assert_no_children, prepare};

    /// The values are plausible and the workload left no child behind.
    fn assert_plausible(id: &str, low: f64, high: f64) {
        assert_calibrated(id, low, high);
        assert_no_children();
    }

    #[test]
    fn fork_exit() {
        assert_plausible("fork-exit", 5.0, 50_000.0);
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn fork_exec_cleans_up() {
        assert_plausible("fork-exec", 10.0, 100_000.0);
        crate::testing::assert_temp_dir_gone();
    }

    #[test]
    #[cfg(not(target_arch = "x86_64"))]
    fn fork_exec_skips() {
        assert!(matches!(
            prepare("fork-exec", &[]),
            Err(BenchError::Skip(_))
        ));
    }

    #[test]
    fn fork_sh() {
        if !Path::new("/bin/sh").exists() {
            assert!(matches!(prepare("fork-sh", &[]), Err(BenchError::Skip(_))));
            return;
        }
        assert_plausible("fork-sh", 20.0, 500_000.0);
    }

    #[test]
    fn drop_kills_and_reaps_a_running_child() {
        // SAFETY: the child only calls pause and _exit.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            loop {
                // SAFETY: pause just waits for the SIGKILL.
                unsafe { libc::pause() };
            }
        }
        assert!(pid > 0);
        let w = Spawn {
            child: Child::Exit,
            pid,
            what: "test",
            _dir: None,
        };
        drop(w);
        assert_no_children();
    }

    #[test]
    fn failing_child_is_an_error() {
        let exec = Exec::new(Path::new("/bin/sh"), &["sh", "-c", "exit 3"], &[]);
        if !Path::new("/bin/sh").exists() {
            return;
        }
        let mut w = Spawn {
            child: Child::Exec(exec),
            pid: 0,
            what: "test",
            _dir: None,
        };
        match w.run(1) {
            Err(BenchError::Os { error, .. }) => assert!(error.to_string().contains("status 3")),
            other => panic!("expected an error, got {other:?}"),
        }
        drop(w);
        assert_no_children();
        let missing = Exec::new(Path::new("/nonexistent/kbench"), &["x"], &[]);
        assert!(matches!(trial(&missing, "test"), Err(BenchError::Skip(_))));
        assert_no_children();
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn helper_elf_is_consistent() {
        let elf = &EXIT0_ELF;
        let u16_at = |o: usize| u16::from_le_bytes([elf[o], elf[o + 1]]) as u64;
        let u64_at = |o: usize| u64::from_le_bytes(elf[o..o + 8].try_into().unwrap());
        assert_eq!(&elf[..4], b"\x7fELF");
        assert_eq!(u16_at(16), 2, "ET_EXEC");
        assert_eq!(u16_at(18), 0x3e, "EM_X86_64");
        let (entry, phoff) = (u64_at(24), u64_at(32));
        assert_eq!((u16_at(52), u16_at(54), u16_at(56)), (64, 56, 1));
        let ph = phoff as usize;
        let (vaddr, filesz, memsz) = (u64_at(ph + 16), u64_at(ph + 32), u64_at(ph + 40));
        assert_eq!(filesz, elf.len() as u64);
        assert_eq!(memsz, filesz);
        assert_eq!(
            ph + 56,
            (entry - vaddr) as usize,
            "code follows the headers"
        );
        assert_eq!(
            &elf[(entry - vaddr) as usize..],
            [0xb8, 231, 0, 0, 0, 0x31, 0xff, 0x0f, 0x05]
        );
    }
}
