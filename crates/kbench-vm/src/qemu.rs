//! The qemu side: finding `qemu-system-x86_64` (or `qemu-system-aarch64`
//! for an arm64 guest), its command line, and choosing the accelerator
//! (KVM when it works, else TCG, said loudly).
//!
//! An x86_64 guest is qemu's default PC: the console on the first 8250
//! serial port (ttyS0), the results channel on the second (ttyS1). An
//! arm64 guest is the `virt` board: the console on its PL011 (ttyAMA0),
//! the results channel on a 16550 on PCI (`pci-serial`, the guest's
//! ttyS0), whose drivers Debian's arm64 cloud kernels build in (virtio's
//! console is a module there).
//!
//! On some hosts /dev/kvm exists but a KVM guest dies at once ("failed to
//! set MSR", "KVM internal error"): [`kvm_failure`] recognises that in
//! qemu's output and [`decide_accel`] falls back to TCG after a probe boot.

use super::error::{Result, VmError, invalid};
use super::kernel_image::ImageArch;
use kbench_catalog::programs::find_program;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// qemu's program for guests of `arch`, and the Debian package that
/// installs it.
pub fn program(arch: ImageArch) -> (&'static str, &'static str) {
    match arch {
        ImageArch::X86_64 => ("qemu-system-x86_64", "qemu-system-x86"),
        ImageArch::Arm64 => ("qemu-system-aarch64", "qemu-system-arm"),
    }
}

/// The guest's console: the first serial port of its board.
pub fn console(arch: ImageArch) -> &'static str {
    match arch {
        ImageArch::X86_64 => "ttyS0",
        ImageArch::Arm64 => "ttyAMA0",
    }
}

/// What a kernel of one's own needs built in for the console to say
/// anything, for the message of a guest whose serial log stayed empty.
pub fn console_config(arch: ImageArch) -> &'static str {
    match arch {
        ImageArch::X86_64 => "CONFIG_SERIAL_8250=y and CONFIG_SERIAL_8250_CONSOLE=y",
        ImageArch::Arm64 => "CONFIG_SERIAL_AMBA_PL011=y and CONFIG_SERIAL_AMBA_PL011_CONSOLE=y",
    }
}

/// What every TCG run stores and prints.
pub const TCG_NOTE: &str = "emulated (TCG): absolute numbers are not the host's; \
relative kernel-to-kernel differences are real code-path differences";

/// How the guest's CPU runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Accel {
    /// Hardware virtualization: the host CPU model, near-native speed.
    Kvm,
    /// qemu's emulator: every instruction translated, so slower by 10-100x,
    /// but the guest kernel's code paths are the real ones.
    Tcg,
}

impl Accel {
    pub fn name(self) -> &'static str {
        match self {
            Accel::Kvm => "kvm",
            Accel::Tcg => "tcg",
        }
    }

    /// `-accel` and `-cpu`: KVM passes the host CPU through (its features
    /// and vulnerabilities, so the guest's mitigations are the host's);
    /// TCG emulates every feature it can (`max`) with all vCPUs on one host
    /// thread. Multi-threaded TCG let a vCPU run kernel text while another
    /// patched it (a static key flipped by opening a perf counter): a guest
    /// died of an `int3` oops in `__schedule` in one `vm compare` (4 boots)
    /// of 8 on a 2-CPU machine; with one thread, none of 8 (and steadier
    /// numbers).
    fn args(self) -> [&'static str; 4] {
        match self {
            Accel::Kvm => ["-accel", "kvm", "-cpu", "host"],
            Accel::Tcg => ["-accel", "tcg,thread=single", "-cpu", "max"],
        }
    }
}

/// What the user asked for with `--accel`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AccelChoice {
    /// KVM if /dev/kvm is usable and a probe boot reaches the agent, else TCG.
    Auto,
    Kvm,
    Tcg,
}

impl AccelChoice {
    pub fn parse(text: &str) -> Option<AccelChoice> {
        match text {
            "auto" => Some(AccelChoice::Auto),
            "kvm" => Some(AccelChoice::Kvm),
            "tcg" => Some(AccelChoice::Tcg),
            _ => None,
        }
    }
}

/// The accelerator to use and, for TCG, the notes to store and print.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccelDecision {
    pub accel: Accel,
    /// Empty for KVM; for TCG the emulation note, and why KVM was not used
    /// when it was not the user's choice.
    pub notes: Vec<String>,
}

/// Decides the accelerator. `probe` boots a guest under KVM and says why it
/// failed; it is called only for `Auto` with a usable /dev/kvm.
pub fn decide_accel(
    choice: AccelChoice,
    kvm_device: Result<(), String>,
    probe: impl FnOnce() -> Result<(), String>,
) -> Result<AccelDecision> {
    let tcg = |why: Option<String>| AccelDecision {
        accel: Accel::Tcg,
        notes: std::iter::once(TCG_NOTE.to_string())
            .chain(why.map(|why| format!("KVM was not used: {why}")))
            .collect(),
    };
    let kvm = AccelDecision {
        accel: Accel::Kvm,
        notes: vec![],
    };
    match choice {
        AccelChoice::Tcg => Ok(tcg(None)),
        AccelChoice::Kvm => match kvm_device {
            Ok(()) => Ok(kvm),
            Err(why) => invalid!("--accel kvm: {why}; use --accel tcg or auto"),
        },
        AccelChoice::Auto => match kvm_device.and_then(|()| probe()) {
            Ok(()) => Ok(kvm),
            Err(why) => Ok(tcg(Some(why))),
        },
    }
}

/// Whether a guest of `guest`'s architecture can run under KVM: it is the
/// host's, and /dev/kvm can be opened read-write (what qemu needs).
pub fn kvm_device(guest: ImageArch) -> Result<(), String> {
    if guest != ImageArch::host() {
        return Err(format!(
            "KVM runs guests of the host's architecture ({}) only, and this guest is {}",
            ImageArch::host().name(),
            guest.name()
        ));
    }
    let path = Path::new("/dev/kvm");
    if !path.exists() {
        return Err("/dev/kvm does not exist (no hardware virtualization here)".into());
    }
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .map(drop)
        .map_err(|e| format!("/dev/kvm cannot be opened ({e}); is this user in group kvm?"))
}

/// The line of qemu's output (stderr, or the guest console) that says the
/// KVM guest cannot run, if there is one.
pub fn kvm_failure(output: &str) -> Option<String> {
    const SIGNS: &[&str] = &[
        "KVM internal error",
        "failed to set MSR",
        "failed to initialize kvm",
        "failed to initialize KVM",
        "Could not access KVM kernel module",
        "KVM: entry failed",
        "kvm run failed",
        "kvm_buf_set_msrs",
    ];
    output
        .lines()
        .find(|line| SIGNS.iter().any(|sign| line.contains(sign)))
        .map(|line| {
            line.trim()
                .trim_start_matches("qemu-system-x86_64: ")
                .trim_start_matches("qemu-system-aarch64: ")
                .to_string()
        })
}

/// qemu for guests of `arch`: the given path, else the one on PATH; the
/// error says which package installs it.
pub fn find_qemu(given: Option<&Path>, arch: ImageArch) -> Result<PathBuf> {
    if let Some(path) = given {
        return find_program(&path.to_string_lossy()).ok_or_else(|| {
            VmError::Invalid(format!(
                "the qemu program {} is not an executable file",
                path.display()
            ))
        });
    }
    let (program, package) = program(arch);
    find_program(program).ok_or_else(|| {
        VmError::Invalid(format!(
            "{program} was not found on PATH, and an {} guest needs it; install it with \
             `apt-get install {package}` (Debian/Ubuntu package {package})",
            arch.name()
        ))
    })
}

/// One boot's machine.
#[derive(Debug, Clone, PartialEq)]
pub struct Machine {
    /// The guest's architecture: its board, console and results channel.
    pub arch: ImageArch,
    pub accel: Accel,
    pub memory_mib: u32,
    pub cpus: u32,
    /// Extra kernel command line, after kbench's own.
    pub append: Option<String>,
    /// The `--rootfs` image, the guest's virtio-blk disk /dev/vda. Opened
    /// with `snapshot=on`: the guest's writes go to a throwaway overlay and
    /// the image stays as it was.
    pub disk: Option<PathBuf>,
}

impl Machine {
    /// The kernel command line: the console on the first serial port, a
    /// panic reboots at once (and `-no-reboot` turns that into qemu's
    /// exit), kbench is /init.
    pub fn kernel_cmdline(&self) -> String {
        let mut cmdline = format!(
            "console={} panic=-1 oops=panic rdinit=/init",
            console(self.arch)
        );
        if let Some(extra) = self.append.as_deref().filter(|a| !a.trim().is_empty()) {
            cmdline.push(' ');
            cmdline.push_str(extra.trim());
        }
        cmdline
    }

    /// A short description, recorded as the run's wrapper: what the
    /// measuring process ran under.
    pub fn describe(&self) -> String {
        let mut text = format!(
            "qemu -accel {} -smp {} -m {}M",
            self.accel.name(),
            self.cpus,
            self.memory_mib
        );
        if let Some(extra) = self.append.as_deref().filter(|a| !a.trim().is_empty()) {
            text.push_str(&format!(" -append \"{}\"", extra.trim()));
        }
        text
    }

    /// qemu's arguments. No default devices, no display; the console goes
    /// to `serial_log`, the results channel (the agent's events) to qemu's
    /// stdout.
    pub fn args(&self, kernel: &Path, initrd: &Path, serial_log: &Path) -> Vec<OsString> {
        let mut args: Vec<OsString> = ["-nodefaults", "-no-user-config", "-display", "none"]
            .iter()
            .map(OsString::from)
            .collect();
        if self.arch == ImageArch::Arm64 {
            // GICv3 where the host's KVM has it, and under TCG.
            args.extend(["-machine".into(), "virt,gic-version=max".into()]);
        }
        args.extend(self.accel.args().iter().map(OsString::from));
        args.extend(
            [
                "-m".to_string(),
                format!("{}M", self.memory_mib),
                "-smp".to_string(),
                self.cpus.to_string(),
                "-no-reboot".to_string(),
                "-kernel".to_string(),
            ]
            .map(OsString::from),
        );
        args.push(kernel.into());
        args.push("-initrd".into());
        args.push(initrd.into());
        args.push("-append".into());
        args.push(self.kernel_cmdline().into());
        let mut log = OsString::from("file:");
        log.push(serial_log);
        args.extend([
            "-serial".into(),
            log,
            "-chardev".into(),
            "stdio,id=results,signal=off".into(),
        ]);
        args.extend(
            match self.arch {
                ImageArch::X86_64 => ["-serial", "chardev:results"],
                ImageArch::Arm64 => ["-device", "pci-serial,chardev=results"],
            }
            .map(OsString::from),
        );
        if let Some(disk) = &self.disk {
            args.push("-drive".into());
            args.push(drive(disk));
        }
        args
    }
}

/// `-drive`'s value for the disk at `path`; qemu reads a comma in a file
/// name as the option separator unless it is doubled.
fn drive(path: &Path) -> OsString {
    use std::os::unix::ffi::{OsStrExt, OsStringExt};
    let mut value = b"file=".to_vec();
    for &byte in path.as_os_str().as_bytes() {
        value.push(byte);
        if byte == b',' {
            value.push(b',');
        }
    }
    value.extend_from_slice(b",format=raw,if=virtio,snapshot=on,readonly=off");
    OsString::from_vec(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// qemu 7.2 on a host whose /dev/kvm exists but cannot run guests.
    const MSR_FAILURE: &str = include_str!("fixtures/qemu-kvm-msr.stderr");

    #[test]
    fn recognises_kvm_failures_in_captured_output() {
        assert_eq!(
            kvm_failure(MSR_FAILURE).as_deref(),
            Some("error: failed to set MSR 0x10a to 0x69")
        );
        // qemu's report of a failed KVM_RUN (accel/kvm/kvm-all.c).
        let internal =
            "KVM internal error. Suberror: 1\nextra data[0]: 0x0000000000000000\nEAX=00000000";
        assert_eq!(
            kvm_failure(internal).as_deref(),
            Some("KVM internal error. Suberror: 1")
        );
        assert_eq!(
            kvm_failure("qemu-system-x86_64: terminating on signal 15 from pid 7"),
            None
        );
        assert_eq!(kvm_failure(""), None);
    }

    #[test]
    fn auto_falls_back_to_tcg_and_says_why() {
        let decision = decide_accel(AccelChoice::Auto, Ok(()), || {
            Err("failed to set MSR 0x10a to 0x69".into())
        })
        .unwrap();
        assert_eq!(decision.accel, Accel::Tcg);
        assert_eq!(decision.notes[0], TCG_NOTE);
        assert!(
            decision.notes[1].contains("failed to set MSR"),
            "{decision:?}"
        );

        let no_device = decide_accel(AccelChoice::Auto, Err("no /dev/kvm".into()), || {
            panic!("no probe")
        })
        .unwrap();
        assert_eq!(no_device.accel, Accel::Tcg);
        assert!(no_device.notes[1].contains("no /dev/kvm"));

        let works = decide_accel(AccelChoice::Auto, Ok(()), || Ok(())).unwrap();
        assert_eq!(works.accel, Accel::Kvm);
        assert!(works.notes.is_empty());
    }

    #[test]
    fn explicit_choices() {
        let tcg = decide_accel(AccelChoice::Tcg, Ok(()), || panic!("no probe")).unwrap();
        assert_eq!(tcg.notes, vec![TCG_NOTE.to_string()]);
        assert!(decide_accel(AccelChoice::Kvm, Err("gone".into()), || Ok(())).is_err());
        assert_eq!(AccelChoice::parse("kvm"), Some(AccelChoice::Kvm));
        assert_eq!(AccelChoice::parse("xen"), None);
    }

    #[test]
    fn command_line() {
        let machine = Machine {
            arch: ImageArch::X86_64,
            accel: Accel::Tcg,
            memory_mib: 1024,
            cpus: 2,
            append: Some("mitigations=off".into()),
            disk: Some("/i/root,fs.img".into()),
        };
        let args: Vec<String> = machine
            .args(
                Path::new("/k/vmlinuz"),
                Path::new("/t/initrd"),
                Path::new("/l/serial.log"),
            )
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let text = args.join(" ");
        for part in [
            "-accel tcg,thread=single",
            "-m 1024M",
            "-smp 2",
            "-kernel /k/vmlinuz",
            "-initrd /t/initrd",
            "-serial file:/l/serial.log -chardev stdio,id=results,signal=off -serial chardev:results",
            "-no-reboot",
            "-drive file=/i/root,,fs.img,format=raw,if=virtio,snapshot=on,readonly=off",
        ] {
            assert!(text.contains(part), "{part} missing from {text}");
        }
        let append = args.iter().position(|a| a == "-append").unwrap();
        assert_eq!(
            args[append + 1],
            "console=ttyS0 panic=-1 oops=panic rdinit=/init mitigations=off"
        );
        assert_eq!(
            machine.describe(),
            "qemu -accel tcg -smp 2 -m 1024M -append \"mitigations=off\""
        );
    }

    #[test]
    fn an_arm64_guest_is_a_virt_board_with_its_results_on_pci() {
        let machine = Machine {
            arch: ImageArch::Arm64,
            accel: Accel::Tcg,
            memory_mib: 512,
            cpus: 1,
            append: None,
            disk: None,
        };
        let text = machine
            .args(
                Path::new("/k/Image"),
                Path::new("/t/rd"),
                Path::new("/l/log"),
            )
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join(" ");
        for part in [
            "-machine virt,gic-version=max -accel tcg,thread=single -cpu max",
            "-serial file:/l/log -chardev stdio,id=results,signal=off -device pci-serial,chardev=results",
        ] {
            assert!(text.contains(part), "{part} missing from {text}");
        }
        assert!(!text.contains("chardev:results"), "{text}");
        assert!(
            machine.kernel_cmdline().starts_with("console=ttyAMA0 "),
            "{}",
            machine.kernel_cmdline()
        );
        assert_eq!(program(ImageArch::Arm64).1, "qemu-system-arm");
    }

    #[test]
    fn a_given_qemu_must_be_executable() {
        let error = find_qemu(Some(Path::new("/no/such/qemu")), ImageArch::X86_64)
            .unwrap_err()
            .to_string();
        assert!(error.contains("/no/such/qemu"), "{error}");
        // A missing qemu on PATH (the package name) is checked end to end
        // in crates/kbench/tests/vm.rs with an empty PATH.
    }
}
