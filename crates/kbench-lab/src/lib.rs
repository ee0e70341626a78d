//! kbench's running side: the sampler, the agent that measures, launchers
//! that start agents, the runner that stores what they stream, suites, and
//! the system snapshot, VMs that boot a kernel under test, and what a lab
//! job may ask a worker to run.

pub mod adaptive;
pub mod agent;
pub mod bisect;
pub mod interleave;
pub mod job;
pub mod launcher;
pub mod monitor;
pub mod profile;
pub mod redo;
pub mod runner;
pub mod sampler;
pub mod suite;
pub mod sysinfo;
pub mod turns;
pub mod variant;
pub mod vm;
