//! The blocked analysis of one metric: baseline and current measured in
//! the same interleaved blocks, each block giving one log ratio of the
//! block means (see [`crate::paired`]). The ratio is exp of the
//! Hodges-Lehmann shift with its signed-rank CI; the p-value is the
//! signed-rank test's, and the one-sample t-test on the same differences
//! is kept as a cross-check (in `p_welch`). The MDE and the blocks needed
//! use the SD of the differences: a paired SE of sd_d / sqrt(n).

use super::{Analysis, CompareOptions, MetricInput, Tested, warning};
use crate::dist::{t_quantile, t_two_sided};
use crate::paired::hodges_lehmann;
use crate::{Estimate, Samples, Summary};

/// The blocked test, or `None` with fewer than two blocks (the caller then
/// compares the sides as independent).
pub(super) fn test(
    metric: &MetricInput<'_>,
    blocks: &[f64],
    options: &CompareOptions,
) -> Option<Tested> {
    let level = 1.0 - options.alpha;
    let shift = hodges_lehmann(blocks, level)?;
    let diffs = Samples::new(blocks.to_vec()).ok()?;
    let n = diffs.len();
    let sd = diffs.sd().filter(|sd| *sd > 0.0);
    let p_t = sd.map_or(1.0, |sd| {
        t_two_sided(diffs.mean() / (sd / (n as f64).sqrt()), (n - 1) as f64)
    });
    let df = (n - 1) as f64;
    let mde_pct = sd.map(|sd| {
        let quantiles = t_quantile(1.0 - options.alpha / 2.0, df) + t_quantile(options.power, df);
        100.0 * quantiles * sd / (n as f64).sqrt()
    });
    let (raw_a, raw_b) = (
        metric.baseline.observations(),
        metric.current.observations(),
    );
    Some(Tested {
        better: metric.better,
        ratio: Estimate { n, ..shift.shift }.map(f64::exp),
        p_welch: p_t,
        p_mwu: None,
        p_value: shift.p_value,
        // The two-sample formulas of `power` see sd * sqrt(2 / n): with
        // sd_d / sqrt(2) that is the paired SE.
        sd_log: sd.map(|sd| sd / 2f64.sqrt()),
        mde_pct,
        warnings: warning::warnings(
            metric.baseline,
            metric.current,
            shift.p_value < options.alpha,
        ),
        baseline: Summary::of(raw_a),
        current: Summary::of(raw_b),
        analysis: Analysis::Blocked { blocks: n },
    })
}
