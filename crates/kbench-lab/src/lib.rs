//! kbench's running side: the sampler, the agent that measures, launchers
//! that start agents, the runner that stores what they stream, suites, and
//! the system snapshot.

pub mod agent;
pub mod launcher;
pub mod runner;
pub mod sampler;
pub mod suite;
pub mod sysinfo;
