//! kbench's measuring side: the sampler and the agent that measures, the
//! launchers that start agents (and what is kept of their processes'
//! output), the one reader of their events, the runner that writes what
//! they stream to a store, interleaved blocks of variants taking turns or
//! running as a duet, adaptive rounds, the interference monitors, and the
//! snapshot a run records (kbench-sysinfo's, with what the measuring
//! process can record).

mod counters;
mod error;
mod monitor;
mod sampler;
mod shown;
mod snapshot;
mod sysmon;

pub mod adaptive;
pub mod agent;
pub mod calibration;
pub mod duet;
pub mod events;
pub mod interleave;
pub mod launcher;
pub mod placement;
pub mod plan;
pub mod process;
pub mod profile;
pub mod redo;
pub mod round;
pub mod runner;
pub mod turns;
pub mod variant;
pub mod variant_run;

pub use error::{MeasureError, Result};
pub use snapshot::snapshot;
pub use sysmon::DEFAULT_MONITORS;
