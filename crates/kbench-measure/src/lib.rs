//! kbench's measuring side: the sampler and the agent that measures, the
//! launchers that start agents, the runner that writes what they stream to
//! a store, interleaved blocks of variants taking turns or running as a duet,
//! adaptive rounds, the interference monitors, and the snapshot a run
//! records (kbench-sysinfo's, with what the measuring process can record).

mod error;

pub mod adaptive;
pub mod agent;
pub mod counters;
pub mod duet;
pub mod interleave;
pub mod launcher;
pub mod monitor;
pub mod placement;
pub mod plan;
pub mod process;
pub mod profile;
pub mod redo;
pub mod runner;
pub mod sampler;
pub mod shown;
mod snapshot;
pub mod sysmon;
pub mod turns;
pub mod variant;
pub mod variant_run;

pub use error::{MeasureError, Result};
pub use snapshot::snapshot;
