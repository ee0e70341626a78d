//! Benchmarks in a VM that boots the kernel under test with kbench as its
//! init, so kernels are compared on one machine without touching the host.
//!
//! - [`kernel_image`]: checks a file is a bootable x86_64 or arm64 kernel,
//!   reads its architecture and release.
//! - [`initramfs`]: the newc cpio writer; [`elf`] and [`image`] put the
//!   kbench binary ([`guest_binary`]: the running one, or an arm64 guest's
//!   cross-build), its loader and libraries, and the job in it.
//! - [`qemu`]: qemu's command line and the KVM-or-TCG decision, whose
//!   probe boot's answer [`accel_memo`] keeps for the host's boot.
//! - [`launcher`]: [`VmLauncher`], the [`Launcher`](kbench_measure::launcher::Launcher)
//!   that boots one guest per round and streams its events.
//! - [`guest`]: the PID-1 side inside the VM; a LAVA boot's results go
//!   framed on its console ([`console_frames`]) and are stored as one run
//!   ([`console_replay`]).
//! - [`guest_config`]: the smallest kernel configuration that boots the
//!   guest, for kernels built from a tree.
//! - [`kernel_fetch`]: Debian's cloud kernels, fetched and cached;
//!   [`modules`]: the modules of theirs a `--rootfs` guest loads.
//! - [`rootfs`]: Debian root filesystems for profiles, built by
//!   mmdebstrap into cached ext4 images; [`guest_disk`]: which one a
//!   lab's guests boot with, and their memory.
//! - [`lab`]: `kbench vm run` and `vm compare` from request to guests ready
//!   to boot, and their boot loops ([`Lab::measure`]: A B A B rounds;
//!   [`Lab::measure_duet`]), which tell their progress as [`LabEvent`]s.

mod command;
mod compare;
mod error;

pub mod accel_memo;
pub mod console_frames;
pub mod console_replay;
pub mod elf;
pub mod event;
pub mod guest;
pub mod guest_binary;
pub mod guest_config;
pub mod guest_disk;
pub mod image;
pub mod initramfs;
pub mod kernel_fetch;
pub mod kernel_image;
pub mod lab;
pub mod launcher;
pub mod modules;
pub mod qemu;
pub mod rootfs;

pub use error::{Result, VmError};
pub use event::{LabEvent, Note};
pub use image::GuestImage;
pub use kernel_image::KernelImage;
pub use lab::{Guests, Lab, LabRequest, MachineRequest};
pub use launcher::{BootTimes, VmLauncher, VmSpec};
