//! What a comparison gives for one metric: the ratio with its CI, the
//! p- and q-values, the verdict and what would resolve it, the warnings,
//! and which analysis decided.

use kbench_model::Direction;
use serde::{Deserialize, Serialize};

use super::levels::{Components, Design, Plan, UnitKind};
use super::verdict::Verdict;
use super::warning::Warning;
use crate::{Estimate, Summary, serde_float};

/// Which analysis a comparison used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Analysis {
    /// The sides as independent samples (Welch's t-test on logs).
    Independent,
    /// Paired block by block: the Hodges-Lehmann shift of the per-block
    /// log ratios, with the signed-rank CI and p.
    Blocked { blocks: usize },
    /// Measured apart, in units of rounds: the unit means compared by
    /// `design`, with the units per side ([baseline, current]).
    Levels {
        unit: UnitKind,
        design: Design,
        units: [usize; 2],
    },
}

/// The comparison of one metric, current against baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    pub better: Direction,
    /// Ratio of geometric means current / baseline, with its CI (unbounded
    /// for CANNOT DECIDE).
    pub ratio: Estimate,
    /// The same as a change in percent: 100 (ratio - 1).
    pub change_pct: Estimate,
    /// Welch's t-test on logs (blocked: the paired t-test on the block log
    /// ratios, a cross-check; levelled: the design's t-test, as `p_value`);
    /// NaN (JSON `null`) for CANNOT DECIDE.
    #[serde(with = "serde_float::missing")]
    pub p_welch: f64,
    /// Mann-Whitney U, a cross-check only (it does not decide), with at
    /// least 6 observations per side.
    pub p_mwu: Option<f64>,
    /// The p-value that decides: Welch's (blocked: the signed-rank test's;
    /// levelled: the t-test of the units' design).
    #[serde(with = "serde_float::missing")]
    pub p_value: f64,
    /// Benjamini-Hochberg over the decidable metrics compared together;
    /// NaN (JSON `null`) for CANNOT DECIDE.
    #[serde(with = "serde_float::missing")]
    pub q_value: f64,
    pub verdict: Verdict,
    /// Smallest change (percent, on the log scale) found with the chosen
    /// power at the current sample counts; `None` for CANNOT DECIDE.
    pub mde_pct: Option<f64>,
    /// For INCONCLUSIVE: observations per side (rounds, when measured in
    /// rounds) that would resolve the verdict with the chosen power. `None`
    /// when decided or CANNOT DECIDE, or when the change sits on the
    /// threshold (no sample count resolves it), and in the levelled
    /// analysis (its `plan` counts units).
    pub samples_needed: Option<usize>,
    pub warnings: Vec<Warning>,
    /// Summary of the baseline observations (per-round means when
    /// measured in several rounds).
    pub baseline: Summary,
    /// Summary of the current observations.
    pub current: Summary,
    pub analysis: Analysis,
    /// The levelled analysis only: the noise of each level its test used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub components: Option<Components>,
    /// The levelled analysis only (not CANNOT DECIDE): the units per side
    /// and rounds per unit that would decide the observed change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<Plan>,
}
