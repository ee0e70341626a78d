//! The blocked analysis of one metric: baseline and current measured in
//! the same interleaved blocks, each block giving one log ratio of the
//! block means (see [`crate::paired`]). The ratio is exp of the
//! Hodges-Lehmann shift with its signed-rank CI; the p-value is the
//! signed-rank test's, and the one-sample t-test on the same differences
//! is kept as a cross-check (in `p_welch`). The MDE and the blocks needed
//! use the SD of the differences: a paired SE of sd_d / sqrt(n).

use super::comparison::Analysis;
use super::input::MetricInput;
use super::options::CompareOptions;
use super::power::{Spread, detectable};
use super::tested::Tested;
use super::warning;
use crate::dist::t_two_sided;
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
    let mde_pct =
        sd.map(|sd| 100.0 * detectable(sd / (n as f64).sqrt(), df, options.alpha, options.power));
    let (raw_a, raw_b) = (
        metric.baseline.observations(),
        metric.current.observations(),
    );
    Some(Tested {
        better: metric.better,
        ratio: Estimate { n, ..shift.shift }.map(f64::exp),
        p_welch: Some(p_t),
        p_mwu: None,
        p_value: Some(shift.p_value),
        // Welch's SE of two spreads of variance sd_d^2 / 2 and n each is
        // the paired SE sd_d / sqrt(n), which the blocks needed follow.
        spreads: sd.map(|sd| {
            let spread = Spread {
                variance: sd * sd / 2.0,
                n,
            };
            (spread, spread)
        }),
        mde_pct,
        // As for independent sides: a change in spread alone is worth a
        // warning only when the blocks show no shift.
        warnings: warning::warnings(
            metric.baseline,
            metric.current,
            shift.p_value >= options.alpha,
        ),
        baseline: Summary::of(raw_a),
        current: Summary::of(raw_b),
        analysis: Analysis::Blocked { blocks: n },
        levels: None,
    })
}

#[cfg(test)]
mod tests {
    use crate::compare::{Analysis, CompareOptions, MetricInput, Verdict, Warning, compare_all};
    use crate::{Samples, Side};
    use kbench_model::Direction;

    fn rounds(values: &[f64]) -> Side {
        Side::from_rounds(
            &values
                .iter()
                .map(|x| Samples::new(vec![*x]).unwrap())
                .collect::<Vec<_>>(),
        )
        .unwrap()
    }

    fn has_variance_warning(base: &[f64], current: &[f64]) -> bool {
        let (a, b) = (rounds(base), rounds(current));
        let ratios: Vec<f64> = base
            .iter()
            .zip(current)
            .map(|(x, y)| (y / x).ln())
            .collect();
        let input = MetricInput {
            baseline: &a,
            current: &b,
            better: Direction::Lower,
            blocks: Some(&ratios),
            units: None,
        };
        let result = compare_all(&[input], &CompareOptions::default()).remove(0);
        assert_eq!(result.analysis, Analysis::Blocked { blocks: 16 });
        result
            .warnings
            .iter()
            .any(|w| matches!(w, Warning::VarianceOnlyChange { .. }))
    }

    /// Blocks whose spread changed but whose shift did not carry the
    /// variance-only warning; blocks that shifted do not.
    #[test]
    fn a_change_in_spread_alone_is_a_warning_and_a_shift_is_not() {
        let base: Vec<f64> = (0..16).map(|i| 100.0 + 0.2 * (i % 3) as f64).collect();
        let wide = |center: f64| -> Vec<f64> {
            (0..16)
                .map(|i| center + if i % 2 == 0 { 12.0 } else { -12.0 })
                .collect()
        };
        assert!(has_variance_warning(&base, &wide(100.0)));
        assert!(!has_variance_warning(&base, &wide(125.0)));
    }

    /// Round means drift by +-8 % from block to block, and current is 3 %
    /// slower within every block: as independent samples the drift hides
    /// the change; paired by block it cancels.
    #[test]
    fn pairing_by_block_cancels_drift_between_blocks() {
        let drift: Vec<f64> = (0..16)
            .map(|i| 1.0 + 0.08 * ((i * 7 % 5) as f64 - 2.0) / 2.0)
            .collect();
        let jitter = |i: usize| 1.0 + 0.002 * ((i * 3 % 4) as f64 - 1.5);
        let base: Vec<f64> = drift.iter().map(|d| 100.0 * d).collect();
        let slow: Vec<f64> = drift
            .iter()
            .enumerate()
            .map(|(i, d)| 103.0 * d * jitter(i))
            .collect();
        let (a, b) = (rounds(&base), rounds(&slow));
        let ratios: Vec<f64> = base.iter().zip(&slow).map(|(x, y)| (y / x).ln()).collect();
        let input = |blocks| MetricInput {
            baseline: &a,
            current: &b,
            better: Direction::Lower,
            blocks,
            units: None,
        };
        let options = CompareOptions::default();
        let apart = compare_all(&[input(None)], &options).remove(0);
        let paired = compare_all(&[input(Some(&ratios))], &options).remove(0);
        assert_eq!(apart.verdict, Verdict::Inconclusive, "{apart:?}");
        assert_eq!(paired.verdict, Verdict::Regression, "{paired:?}");
        assert_eq!(paired.analysis, Analysis::Blocked { blocks: 16 });
        assert!(
            (paired.change_pct.point - 3.0).abs() < 0.3,
            "{:?}",
            paired.change_pct
        );
        assert!(paired.mde_pct.unwrap() < 1.0);
    }
}
