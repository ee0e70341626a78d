//! One metric's tests, before the q-values of the family it is compared
//! in: what the blocked, levelled and independent analyses all give.

use super::comparison::Analysis;
use super::levels::{Components, Costs};
use super::power::Spread;
use super::warning::Warning;
use crate::{Estimate, Summary};
use kbench_model::Direction;

/// Everything that does not depend on the other metrics.
pub(super) struct Tested {
    pub(super) better: Direction,
    pub(super) ratio: Estimate,
    /// Welch's (or, blocked, the paired t-test's) p.
    pub(super) p_welch: Option<f64>,
    pub(super) p_mwu: Option<f64>,
    /// The p that decides (Welch's; blocked, the signed-rank test's);
    /// `None` when no test can decide.
    pub(super) p_value: Option<f64>,
    /// Each side's spread of the logs: the noise behind the MDE.
    pub(super) spreads: Option<(Spread, Spread)>,
    pub(super) mde_pct: Option<f64>,
    pub(super) warnings: Vec<Warning>,
    pub(super) baseline: Summary,
    pub(super) current: Summary,
    pub(super) analysis: Analysis,
    /// The levelled analysis's noise and costs, when it decided.
    pub(super) levels: Option<Levels>,
}

/// What a decided levelled test leaves for the plan.
pub(super) struct Levels {
    pub(super) components: Components,
    pub(super) costs: Costs,
}
