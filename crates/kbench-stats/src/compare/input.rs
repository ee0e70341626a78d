//! What a comparison is given: each metric's two sides (and blocks, when
//! measured interleaved, or units, when measured apart), and the knobs of
//! the verdict.

use super::levels::Levelled;
use super::side::Side;
use kbench_model::Direction;

/// Knobs of the verdict.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CompareOptions {
    /// Practical threshold delta as a fraction (`--threshold`, 0.01 = 1 %).
    pub threshold: f64,
    /// Significance level for q, and 1 - confidence level of the CIs.
    pub alpha: f64,
    /// Power for the minimum detectable effect and the samples needed.
    pub power: f64,
}

impl Default for CompareOptions {
    fn default() -> CompareOptions {
        CompareOptions {
            threshold: 0.01,
            alpha: 0.05,
            power: 0.8,
        }
    }
}

/// One metric of a comparison.
#[derive(Debug, Clone, Copy)]
pub struct MetricInput<'a> {
    pub baseline: &'a Side,
    pub current: &'a Side,
    pub better: Direction,
    /// Per-block log ratios current / baseline when both were measured in
    /// the same interleaved blocks: the blocked analysis then decides.
    pub blocks: Option<&'a [f64]>,
    /// Each side's units (runs or boots) with their rounds, when the sides
    /// were measured apart: without two blocks, the levelled analysis then
    /// decides.
    pub units: Option<&'a Levelled>,
}
