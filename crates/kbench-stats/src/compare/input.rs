//! What a comparison is given: each metric's two sides (and blocks, when
//! measured interleaved, or units, when measured apart).

use super::levels::Levelled;
use super::side::Side;
use kbench_model::Direction;

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
