//! The guest side: kbench as PID 1 of a VM booted by `kbench vm`.
//!
//! It mounts /proc, /sys, /dev and /tmp, brings up the loopback interface,
//! reads its job from the initramfs, and runs it in a child process (so the
//! benchmarks run as an ordinary process, not as init with its special
//! signal rules) whose events go to the results channel, a serial port the
//! host reads ([`RESULTS_PORT`]). When the child ends, PID 1 writes
//! [`EXIT_MARKER`] with its status, waits for the port to drain and powers
//! the machine off. Messages go to the console (the first serial port),
//! which the host keeps as the serial log. A gated guest
//! ([`GATE_PATH`]) first writes [`READY_MARKER`] and waits for one byte
//! from the host on the same port, so that two guests booted at once start
//! measuring together. A guest with a `--rootfs` disk ([`ROOTFS_PATH`])
//! runs its job chrooted in it ([`rootfs`]). A console guest (a LAVA
//! boot, [`crate::image::CONSOLE_PLAN_PATH`]) has no results port: it frames its
//! results on the console ([`console`]).

mod console;
mod kernel_modules;
mod mounts;
mod network;
mod push;
mod rootfs;

use super::error::{Result, VmError};
use super::image::{GATE_PATH, JOB_PATH, PROFILES_PATH, ROOTFS_PATH};
use kbench_measure::agent::{AgentJob, run_job};
use mounts::mount_filesystems;
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// The results channel: on x86_64 the guest's second 8250 serial port (the
/// driver is built into every x86 distribution kernel; virtio-console is a
/// module in some, e.g. Debian's 6.1 cloud kernel); on arm64 the 16550 on
/// PCI qemu adds beside the board's PL011 console, the first 8250 port
/// ([`super::qemu`]).
#[cfg(not(target_arch = "aarch64"))]
pub const RESULTS_PORT: &str = "/dev/ttyS1";
#[cfg(target_arch = "aarch64")]
pub const RESULTS_PORT: &str = "/dev/ttyS0";

/// The line PID 1 writes on the results channel once the agent has ended:
/// `#kbench-guest-exit STATUS`. Its absence means the guest died first.
pub const EXIT_MARKER: &str = "#kbench-guest-exit";

/// The line a gated guest writes on the results channel once it is ready to
/// run its job; it runs it when the host sends a byte back.
pub const READY_MARKER: &str = "#kbench-guest-ready";

/// What a failed write on the results channel was doing.
const WRITING: &str = "writing to the results channel";

/// Whether this process is the init of a kbench guest: PID 1 with a job.
pub fn is_guest() -> bool {
    std::process::id() == 1 && Path::new(JOB_PATH).exists()
}

/// PID 1's whole life; powers the machine off and never returns.
pub fn main() -> ! {
    if let Err(error) = run() {
        eprintln!("kbench guest: {error:#}");
    }
    power_off()
}

fn run() -> Result<()> {
    mount_filesystems(Path::new("/"))?;
    // What the initramfs says, read before a chroot leaves it behind.
    let job: AgentJob = serde_json::from_slice(
        &std::fs::read(JOB_PATH).map_err(VmError::os(format!("reading {JOB_PATH}")))?,
    )
    .map_err(|e| VmError::Invalid(format!("reading the job in {JOB_PATH}: {e}")))?;
    let gated = Path::new(GATE_PATH).exists();
    // What the initramfs says, read before a chroot leaves it behind.
    let console_plan = console::plan()?;
    let push_plan = console::push_plan()?;
    // A console guest in a kernel its plan does not name says so and
    // measures nothing: its modules (another kernel's) are not loaded.
    let wrong_kernel = console_plan
        .as_ref()
        .is_some_and(|plan| plan.refuses(&kbench_sysinfo::kernel_release()).is_some());
    let rootfs = Path::new(ROOTFS_PATH).exists() && !wrong_kernel;
    let loaded = match wrong_kernel {
        true => Ok(Vec::new()),
        false => kernel_modules::load_carried(),
    };
    let loaded = match loaded {
        Ok(loaded) => loaded,
        Err(error) if rootfs => return Err(error),
        // Only a push needed them: it will say it found no card.
        Err(error) => {
            eprintln!("kbench guest: {error}");
            Vec::new()
        }
    };
    let work_dir = match rootfs {
        true => rootfs::enter(&loaded)?,
        false => "/tmp",
    };
    // The user's profiles, in the initramfs or carried into the rootfs.
    if let Some(dir) = [PROFILES_PATH, rootfs::CARRIED_PROFILES]
        .into_iter()
        .find(|dir| Path::new(dir).is_dir())
    {
        // SAFETY: PID 1 is single-threaded here.
        unsafe { std::env::set_var(kbench_catalog::PROFILES_ENV, dir) };
    }
    // The machine is the tests' alone: an OOM kill is a test's doing.
    // SAFETY: PID 1 is single-threaded here.
    unsafe { std::env::set_var(kbench_measure::profile::DEDICATED_ENV, "1") };
    if let Err(error) = network::loopback_up() {
        eprintln!(
            "kbench guest: the loopback interface stays down ({error}); network benchmarks will skip"
        );
    }
    let name = b"kbench-guest";
    // SAFETY: the pointer and length describe a valid byte string.
    unsafe { libc::sethostname(name.as_ptr().cast(), name.len()) };
    std::env::set_current_dir(work_dir).map_err(VmError::os(format!("changing to {work_dir}")))?;
    if let Some(plan) = console_plan {
        return on_console(&job, plan, push_plan.as_ref());
    }
    let mut port = open_results_port()?;
    if gated {
        wait_for_start(&mut port)?;
    }
    eprintln!(
        "kbench guest: running {} test(s){}",
        job.tests.len(),
        if job.snapshot {
            " after the snapshot"
        } else {
            ""
        }
    );
    let status = run_child(|| {
        // Nothing stops a guest's agent but its VM's end.
        let never = std::sync::atomic::AtomicBool::new(false);
        run_job(&job, &mut &port, None, &never)
    })?;
    writeln!(port, "{EXIT_MARKER} {status}").map_err(VmError::os(WRITING))?;
    // SAFETY: the descriptor is open; tcdrain waits until the UART sent all.
    unsafe { libc::tcdrain(port.as_raw_fd()) };
    eprintln!("kbench guest: the agent ended with status {status}; powering off");
    Ok(())
}

/// A LAVA boot: checks its kernel, then runs the job with its results
/// framed on the console (and pushed, with a `push` plan); a block the
/// agent did not close (it died) is closed here, cut short, so that
/// LAVA's monitors end.
fn on_console(
    job: &AgentJob,
    plan: crate::console_frames::ConsoleBoot,
    push: Option<&crate::console_frames::GuestPush>,
) -> Result<()> {
    console::quiet_kernel();
    let mut out = console::open()?;
    let Some(header) = console::begin(&mut out, plan, job)? else {
        return Ok(());
    };
    eprintln!(
        "kbench guest: running {} test(s), results framed on the console",
        job.tests.len()
    );
    let status = run_child(|| {
        out.try_clone()
            .and_then(|console| console::measure(&header, push, console))
    })?;
    if status != 0 {
        let failed = [console::case("agent", "fail")];
        out.write_all(console::close(None, &failed).as_bytes())
            .map_err(VmError::os("writing to the console"))?;
    }
    eprintln!("kbench guest: the agent ended with status {status}; powering off");
    Ok(())
}

/// Says it is ready on `port` and waits for the host's start byte.
fn wait_for_start(port: &mut File) -> Result<()> {
    writeln!(port, "{READY_MARKER}").map_err(VmError::os(WRITING))?;
    // SAFETY: the descriptor is open; tcdrain waits until the UART sent all.
    unsafe { libc::tcdrain(port.as_raw_fd()) };
    eprintln!("kbench guest: ready; waiting for the host's start signal");
    let mut byte = [0u8; 1];
    port.read_exact(&mut byte).map_err(VmError::os(
        "waiting for the host's start signal on the results channel",
    ))
}

/// The results port, raw (no newline translation, no echo, a read returns
/// each byte as it comes); read for the start signal, written with events.
fn open_results_port() -> Result<File> {
    let port = OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NOCTTY)
        .open(RESULTS_PORT)
        .map_err(VmError::os(format!(
            "opening the results channel {RESULTS_PORT}"
        )))?;
    // SAFETY: `termios` is plain C data; the calls get and set the port's.
    unsafe {
        let mut termios: libc::termios = std::mem::zeroed();
        if libc::tcgetattr(port.as_raw_fd(), &mut termios) == 0 {
            libc::cfmakeraw(&mut termios);
            // The speed as Linux keeps it, in c_cflag (what cfsetospeed
            // does; the libc crate links that by a symbol version a static
            // binary does not have).
            termios.c_cflag = (termios.c_cflag & !libc::CBAUD) | libc::B115200;
            libc::tcsetattr(port.as_raw_fd(), libc::TCSANOW, &termios);
        }
    }
    Ok(port)
}

/// Runs `work` (the agent) in a child process, which exits 0 when it
/// succeeds and 1 when it could not write its results; reaps every child
/// (init inherits orphans) until that one has ended, and returns its exit
/// status (128 + signal when killed).
fn run_child(work: impl FnOnce() -> std::io::Result<()>) -> Result<i32> {
    // SAFETY: PID 1 is single-threaded here; the child only runs `work`
    // and leaves with _exit.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(VmError::os("starting the agent (fork)")(
            std::io::Error::last_os_error(),
        ));
    }
    if pid == 0 {
        // A guest out of memory loses the tool that took it, not the agent
        // that reports it: the OOM killer passes over -1000, and the tools
        // the agent starts go back to 0 (kbench-measure's profile command).
        let _ = std::fs::write("/proc/self/oom_score_adj", "-1000");
        let code = match work() {
            Ok(()) => 0,
            Err(error) => {
                eprintln!("kbench guest: the agent could not write its results: {error}");
                1
            }
        };
        // SAFETY: ends the child without running PID 1's destructors.
        unsafe { libc::_exit(code) };
    }
    loop {
        let mut status = 0;
        // SAFETY: waits for any child; `status` is a valid out pointer.
        let reaped = unsafe { libc::waitpid(-1, &mut status, 0) };
        if reaped < 0 {
            let error = std::io::Error::last_os_error();
            if error.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(VmError::os("waiting for the agent")(error));
        }
        if reaped == pid {
            return Ok(if libc::WIFEXITED(status) {
                libc::WEXITSTATUS(status)
            } else {
                128 + libc::WTERMSIG(status)
            });
        }
    }
}

fn power_off() -> ! {
    // SAFETY: flushing caches and powering off is what PID 1 does last.
    unsafe {
        libc::sync();
        libc::reboot(libc::RB_POWER_OFF);
    }
    // Only reached when powering off failed (no ACPI?): exiting makes the
    // kernel panic, which `panic=-1 -no-reboot` also turns into qemu's exit.
    std::process::exit(1)
}
