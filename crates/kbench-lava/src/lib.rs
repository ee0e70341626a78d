//! kbench's lab on LAVA, the device-farm scheduler of the kernel world
//! (Linaro's LKFT, KernelCI): a comparison becomes one LAVA job that boots
//! its kernels in turn, each boot running kbench's tests in kbench's own
//! initramfs, and the finished job's log becomes a result set whose runs
//! are the boots.
//!
//! - [`job`] writes the job's files: kernels, each boot's initramfs, and
//!   the definition ([`definition`], as YAML by [`yaml`]); [`board`] what a
//!   U-Boot board needs besides.
//! - [`log`] reads LAVA's logs, [`blocks`] the guests' framed results in
//!   them, and [`import`] stores them.
//! - [`rest`] submits a job to a LAVA server and follows it.

mod error;

pub mod blocks;
pub mod board;
pub mod definition;
pub mod import;
pub mod job;
pub mod log;
pub mod rest;
pub mod yaml;

pub use error::{LavaError, Result};
