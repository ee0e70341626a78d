//! What the levelled analysis is given: each side's units of rounds,
//! checked.

use serde::{Deserialize, Serialize};

use super::drift::Drift;
use crate::{Samples, StatsError};

/// What one unit of measurement is: what its rounds share.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UnitKind {
    /// One `kbench run` invocation.
    Run,
    /// One boot of the machine (its runs share it).
    Boot,
}

/// One unit of one side: when it started and the logs of its round means.
#[derive(Debug, Clone, PartialEq)]
pub struct Unit {
    /// Start time (ms since the epoch): orders the units of both sides.
    pub start_ms: i64,
    /// ln(mean of each round's samples), at least one round.
    pub round_logs: Samples,
}

/// Both sides' units of one metric, checked: the levelled analysis's input.
#[derive(Debug, Clone, PartialEq)]
pub struct Levelled {
    pub(crate) kind: UnitKind,
    pub(crate) sides: [Vec<Unit>; 2],
    pub(crate) drift: Option<Drift>,
    pub(crate) costs: Costs,
}

impl Levelled {
    /// The units of `baseline` and `current` (each in measurement order,
    /// at least one), what a unit is, the host's drift prior if known (the
    /// caller passes [`DEFAULT_DRIFT`] without a calibration; with none, a
    /// comparison of one unit against one cannot be decided) and what the
    /// plan trades.
    pub fn new(
        kind: UnitKind,
        baseline: Vec<Unit>,
        current: Vec<Unit>,
        drift: Option<Drift>,
        costs: Costs,
    ) -> Result<Levelled, StatsError> {
        if baseline.is_empty() || current.is_empty() {
            return Err(StatsError::NoUnits);
        }
        if let Some(drift) = drift {
            drift.check()?;
        }
        costs.check()?;
        Ok(Levelled {
            kind,
            sides: [baseline, current],
            drift,
            costs,
        })
    }

    /// Units per side: [baseline, current].
    pub(crate) fn counts(&self) -> [usize; 2] {
        [self.sides[0].len(), self.sides[1].len()]
    }
}

/// What a unit and a round cost, in seconds: what the plan trades.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Costs {
    /// Starting one unit: a boot, or a run's start-up.
    pub unit_s: f64,
    /// One round within a unit.
    pub round_s: f64,
}

impl Costs {
    /// Finite, a unit's cost not negative, a round's above 0.
    pub(crate) fn check(&self) -> Result<(), StatsError> {
        StatsError::non_negative("unit cost", self.unit_s)?;
        StatsError::positive("round cost", self.round_s)?;
        Ok(())
    }
}
