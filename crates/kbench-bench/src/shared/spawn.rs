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

/// The `fork-exec` helper's code on this machine: its ELF machine number
/// and instructions that call `exit_group(0)`; `None` on an architecture
/// kbench has none for.
#[cfg(target_arch = "x86_64")]
const EXIT0_CODE: Option<(u16, &[u8])> = Some((
    0x3e, // EM_X86_64
    &[
        0xb8, 0xe7, 0x00, 0x00, 0x00, // mov eax, 231   ; SYS_exit_group
        0x31, 0xff, // xor edi, edi                     ; status 0
        0x0f, 0x05, // syscall
    ],
));
#[cfg(target_arch = "aarch64")]
const EXIT0_CODE: Option<(u16, &[u8])> = Some((
    0xb7, // EM_AARCH64
    &[
        0x00, 0x00, 0x80, 0xd2, // mov x0, #0     ; status 0
        0xc8, 0x0b, 0x80, 0xd2, // mov x8, #94    ; SYS_exit_group
        0x01, 0x00, 0x00, 0xd4, // svc #0
    ],
));
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const EXIT0_CODE: Option<(u16, &[u8])> = None;

/// Where the helper is mapped.
const EXIT0_VADDR: u64 = 0x40_0000;
/// The ELF header's and the program header's sizes: the code follows them.
const ELF_HEADER: usize = 64;
const PROGRAM_HEADER: usize = 56;

/// A minimal static little-endian ELF64 executable for `machine` whose
/// only code is `code`: one `PT_LOAD` segment maps the whole file
/// read+execute at [`EXIT0_VADDR`], and the entry point is the code right
/// after the headers (offset 0x78, 4-byte aligned as arm64 needs).
fn exit0_elf(machine: u16, code: &[u8]) -> Vec<u8> {
    let size = (ELF_HEADER + PROGRAM_HEADER + code.len()) as u64;
    let entry = EXIT0_VADDR + (ELF_HEADER + PROGRAM_HEADER) as u64;
    let mut elf = Vec::with_capacity(size as usize);
    // ---- ELF header (Elf64_Ehdr)
    elf.extend_from_slice(b"\x7fELF"); // magic
    elf.extend_from_slice(&[2, 1, 1, 0]); // ELFCLASS64, ELFDATA2LSB, EV_CURRENT, ELFOSABI_SYSV
    elf.extend_from_slice(&[0; 8]); // ABI version and padding to 16
    elf.extend_from_slice(&2u16.to_le_bytes()); // e_type = ET_EXEC
    elf.extend_from_slice(&machine.to_le_bytes()); // e_machine
    elf.extend_from_slice(&1u32.to_le_bytes()); // e_version = EV_CURRENT
    elf.extend_from_slice(&entry.to_le_bytes()); // e_entry
    elf.extend_from_slice(&(ELF_HEADER as u64).to_le_bytes()); // e_phoff: right after
    elf.extend_from_slice(&0u64.to_le_bytes()); // e_shoff: no section headers
    elf.extend_from_slice(&0u32.to_le_bytes()); // e_flags
    for half in [ELF_HEADER, PROGRAM_HEADER, 1, 0, 0, 0] {
        // e_ehsize, e_phentsize, e_phnum, e_shentsize, e_shnum, e_shstrndx
        elf.extend_from_slice(&(half as u16).to_le_bytes());
    }
    // ---- program header (Elf64_Phdr)
    elf.extend_from_slice(&1u32.to_le_bytes()); // p_type = PT_LOAD
    elf.extend_from_slice(&5u32.to_le_bytes()); // p_flags = PF_R | PF_X
    for word in [0, EXIT0_VADDR, EXIT0_VADDR, size, size, 0x1000] {
        // p_offset, p_vaddr, p_paddr, p_filesz, p_memsz, p_align
        elf.extend_from_slice(&word.to_le_bytes());
    }
    elf.extend_from_slice(code);
    elf
}

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

/// Writes the exit(0) helper `elf` as `<dir>/exit0`, mode 0755, and
/// returns its path.
fn write_exit0_helper(dir: &TempDir, elf: &[u8]) -> Result<std::path::PathBuf, BenchError> {
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
    file.write_all(elf).map_err(path_error("write"))?;
    drop(file);
    // The umask may have taken bits off the mode given to open.
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
        .map_err(path_error("chmod"))?;
    Ok(path)
}

/// fork + execve of the exit(0) helper + waitpid, named `what`: `fork-exec`
/// or aim9's `exec-test`. Skipped on an architecture without a helper.
pub(crate) fn prepare_exit0(what: &'static str) -> Result<Box<dyn Workload>, BenchError> {
    let Some((machine, code)) = EXIT0_CODE else {
        return Err(BenchError::Skip(format!(
            "{what} embeds its exit(0) helper for x86_64 and aarch64 only; this machine is {}",
            std::env::consts::ARCH
        )));
    };
    let dir = TempDir::new(what)?;
    let path = write_exit0_helper(&dir, &exit0_elf(machine, code))?;
    let exec = Exec::new(&path, &["exit0"], &[]);
    trial(&exec, what)?;
    Ok(Spawn::boxed(what, Child::Exec(exec), Some(dir)))
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
    fn helper_elf_is_consistent() {
        for (machine, code) in [
            (0x3e, &[0x0f, 0x05][..]),
            (0xb7, &[0x01, 0x00, 0x00, 0xd4][..]),
        ] {
            let elf = exit0_elf(machine, code);
            let u16_at = |o: usize| u16::from_le_bytes([elf[o], elf[o + 1]]) as u64;
            let u64_at = |o: usize| u64::from_le_bytes(elf[o..o + 8].try_into().unwrap());
            assert_eq!(&elf[..4], b"\x7fELF");
            assert_eq!(u16_at(16), 2, "ET_EXEC");
            assert_eq!(u16_at(18), u64::from(machine));
            let (entry, phoff) = (u64_at(24), u64_at(32));
            assert_eq!((u16_at(52), u16_at(54), u16_at(56)), (64, 56, 1));
            let ph = phoff as usize;
            assert_eq!(u16_at(ph), 1, "PT_LOAD");
            let (vaddr, filesz, memsz) = (u64_at(ph + 16), u64_at(ph + 32), u64_at(ph + 40));
            assert_eq!(filesz, elf.len() as u64);
            assert_eq!(memsz, filesz);
            assert_eq!(
                ph + 56,
                (entry - vaddr) as usize,
                "code follows the headers"
            );
            assert_eq!(entry % 4, 0, "arm64 code is 4-byte aligned");
            assert_eq!(&elf[(entry - vaddr) as usize..], code);
        }
        // This machine's helper is the one tested by running it.
        if cfg!(target_arch = "x86_64") {
            assert_eq!(EXIT0_CODE.map(|(machine, _)| machine), Some(0x3e));
        }
    }
}
