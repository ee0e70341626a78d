//! Running external profile tests ([`kbench_catalog::profile`]) in the
//! agent: their processes, services and scratch files.
//!
//! - [`command`], [`service`], [`scratch`]: processes, services,
//!   temporary files
//! - [`run`]: one test in the agent
//! - [`version`]: the tools' versions, read when a run begins
//! - [`starved`]: a failed run's full disk or OOM kill, said with it
//!
//! Ctrl-C: the terminal's SIGINT reaches `kbench run` and its agent, whose
//! handler ([`crate::agent::stop_on_signals`]) raises a flag instead of
//! killing it; the tool and its service run in process groups of their own,
//! so the profile runner sees the flag, stops them and removes their files
//! before the agent exits.

mod command;
mod run;
mod scratch;
mod service;
mod starved;
pub(crate) mod version;

pub use command::DEDICATED_ENV;
pub use run::run_test;
