//! fork + (exit | execve) + waitpid, timed: the loop of the process
//! family's `fork-exit`, `fork-exec` and `fork-sh`, and of aim9's
//! `exec-test` (the stress family), with the exit(0) helper program that
//! `fork-exec` and `exec-test` execute.
//!
//! Every loop body checks that the child exited with status 0. The child
//! only calls async-signal-safe functions (`execve`, `_exit`, `write`), with
//! every argument built before timing, so forking from a multi-threaded
//! process is sound. A child still running when a workload is dropped (a
//! run that stopped on an error) is killed and reaped.

use crate::sys::exec::{Exec, trial};
use crate::sys::process::{check_status, kill_and_reap, wait_for};
use crate::sys::tempdir::TempDir;
use crate::{BenchError, Interval, Workload};
use libc::pid_t;
use std::hint::black_box;
use std::time::Instant;

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

/// What the forked child does.
pub(crate) enum Child {
    Exit,
    Exec(Exec),
}

/// fork + (exit | execve) + waitpid.
pub(crate) struct Spawn {
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

impl Spawn {
    /// A workload forking `child` in every iteration; `dir` (holding the
    /// program the child runs) is removed when it is dropped.
    pub(crate) fn boxed(
        what: &'static str,
        child: Child,
        dir: Option<TempDir>,
    ) -> Box<dyn Workload> {
        Box::new(Spawn {
            child,
            pid: 0,
            what,
            _dir: dir,
        })
    }
}

/// Writes the exit(0) helper as `<dir>/exit0`, mode 0755, and returns its
/// path.
#[cfg(target_arch = "x86_64")]
fn write_exit0_helper(dir: &TempDir) -> Result<std::path::PathBuf, BenchError> {
    use crate::sys::os_error;
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
/// or aim9's `exec-test`.
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::assert_no_children;
    use std::path::Path;

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
