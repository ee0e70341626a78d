//! The levelled analysis of one metric: two identifiers measured apart, in
//! units of rounds (docs/statistics.md, "Measured apart: units, boots and
//! the host's drift").
//!
//! Two kernels cannot be interleaved on one machine: each needs a boot,
//! so each identifier is measured in units of its own, a run (one `kbench
//! run` invocation) or a boot. Samples nest in rounds, rounds in units,
//! and the rounds of one unit share its state: they are not independent
//! observations of the identifier. So the unit is what is compared: each
//! unit's mean of its round logs, with the noise of each level (see
//! `components`) and a test chosen by how the units were laid out in time
//! (see `design`). With one unit on a side the data cannot tell the host's
//! drift from a change, and a prior on that drift (see `drift`) widens the
//! CI instead; `calibration` measures that drift on the host. The `plan` says how many units would decide.

mod calibration;
mod components;
mod design;
mod drift;
mod plan;
mod pooled;
mod units;

pub use components::Components;
pub use design::Design;
pub use drift::{DEFAULT_DRIFT, Drift, DriftSource, DriftTerm};
pub use plan::Plan;
pub use units::{Costs, Levelled, Unit, UnitKind};

pub(crate) use components::Noise;

#[cfg(test)]
mod tests;
