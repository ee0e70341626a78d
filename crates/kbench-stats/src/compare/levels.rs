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
//! CI instead. The `plan` says how many units would decide.

mod components;
mod design;
mod drift;
mod plan;

pub use components::Components;
pub use design::Design;
pub use drift::{DEFAULT_DRIFT, Drift, DriftSource, DriftTerm};
pub use plan::{Costs, Plan};

use serde::{Deserialize, Serialize};

use super::comparison::Analysis;
use super::input::{CompareOptions, MetricInput};
use super::power::detectable;
use super::tested::{Levels, Tested};
use super::warning::{self, Warning};
use super::welch::t_test;
use crate::{Estimate, Samples, StatsError, Summary};
use components::Noise;

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
    kind: UnitKind,
    sides: [Vec<Unit>; 2],
    drift: Option<Drift>,
    costs: Costs,
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
    fn counts(&self) -> [usize; 2] {
        [self.sides[0].len(), self.sides[1].len()]
    }
}

/// The difference current - baseline of the unit levels that the design's
/// test reads, before its t-test: `se` its standard error on `df` degrees
/// of freedom, from `n` units.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Difference {
    point: f64,
    se: f64,
    df: f64,
    n: usize,
    /// The variance of one unit's level behind `se` (what the plan uses).
    unit_variance: f64,
    /// The drift prior or estimate in `se` (one unit on a side only).
    drift: Option<DriftTerm>,
}

/// The levelled test of one metric.
pub(super) fn test(metric: &MetricInput<'_>, units: &Levelled, options: &CompareOptions) -> Tested {
    let noise = Noise::of(units);
    let design = Design::of(units, &noise);
    let difference = design.difference(units, &noise);
    let point = difference
        .as_ref()
        .map_or(noise.mean_difference(), |d| d.point);
    let decided = difference.and_then(|d| {
        if d.se == 0.0 {
            Err(Warning::NoSpread)
        } else {
            Ok(d)
        }
    });
    let level = 1.0 - options.alpha;
    let test = decided
        .as_ref()
        .ok()
        .map(|d| t_test(d.point, d.se, d.df, d.n, level));
    let log_ratio = test.map_or(
        Estimate {
            point,
            ci_low: f64::NEG_INFINITY,
            ci_high: f64::INFINITY,
            n: units.counts().iter().sum(),
        },
        |t| t.diff,
    );
    let p_value = test.map(|t| t.p_value);
    let means_differ = p_value.is_some_and(|p| p < options.alpha);
    let mut warnings: Vec<Warning> = decided.as_ref().err().cloned().into_iter().collect();
    warnings.extend(warning::warnings(
        metric.baseline,
        metric.current,
        p_value.is_some() && !means_differ,
    ));
    let decided = decided.ok();
    Tested {
        better: metric.better,
        ratio: log_ratio.map(f64::exp),
        p_welch: p_value,
        p_mwu: None,
        p_value,
        spreads: None,
        mde_pct: decided.map(|d| 100.0 * detectable(d.se, d.df, options.alpha, options.power)),
        warnings,
        baseline: Summary::of(metric.baseline.observations()),
        current: Summary::of(metric.current.observations()),
        analysis: Analysis::Levels {
            unit: units.kind,
            design,
            units: units.counts(),
        },
        levels: decided.map(|d| Levels {
            components: Components {
                unit_sd: d.unit_variance.sqrt(),
                round_sd: noise.round().map(|r| r.variance.sqrt()),
                rounds_per_unit: noise.rounds_per_unit(),
                df: d.df,
                drift: d.drift,
            },
            costs: units.costs,
        }),
    }
}

#[cfg(test)]
mod tests;
