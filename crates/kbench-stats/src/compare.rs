//! A/B comparison of one metric, or of all metrics of one comparison, as
//! statistics.md prescribes:
//!
//! 1. Welch's t-test on ln(values) gives the ratio of geometric means
//!    current / baseline with its 95 % CI, and a p-value.
//! 2. With n >= 6 per side, Mann-Whitney U too; the larger p counts.
//! 3. Benjamini-Hochberg q-values over all metrics of the comparison.
//! 4. A direction-aware verdict (see `verdict`), and for INCONCLUSIVE the
//!    minimum detectable effect and the samples that would resolve it.
//!
//! Observations are raw samples (one round) or per-round means (several;
//! see `side`). Both sides constant: the ratio is exact, its CI a point,
//! p = 1 if equal, else 0 (no rank test: there is no noise to rank).
//! A side with one observation has no variance: the CI is unbounded, p = 1,
//! and the verdict INCONCLUSIVE.

mod blocked;
mod fdr;
mod mann_whitney;
mod power;
mod side;
mod verdict;
mod warning;
mod welch;

pub use fdr::benjamini_hochberg;
pub use mann_whitney::{MannWhitney, mann_whitney};
pub use power::{min_detectable_effect, samples_needed};
pub use side::Side;
pub use verdict::{Better, Verdict};
pub use warning::{MIN_SAMPLES, Sides, Warning};
pub(crate) use welch::welch_from;
pub use welch::{Welch, welch};

use serde::{Deserialize, Serialize};

use crate::{Estimate, Summary};

/// Observations per side from which Mann-Whitney U is also required.
const MWU_MIN_N: usize = 6;

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
    pub better: Better,
    /// Per-block log ratios current / baseline when both were measured in
    /// the same interleaved blocks: the blocked analysis then decides.
    pub blocks: Option<&'a [f64]>,
}

/// Which analysis a comparison used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Analysis {
    /// The sides as independent samples (Welch's t-test on logs).
    Independent,
    /// Paired block by block: the Hodges-Lehmann shift of the per-block
    /// log ratios, with the signed-rank CI and p.
    Blocked { blocks: usize },
}

/// The comparison of one metric, current against baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    pub better: Better,
    /// Ratio of geometric means current / baseline, with its CI.
    pub ratio: Estimate,
    /// The same as a change in percent: 100 (ratio - 1).
    pub change_pct: Estimate,
    /// Welch's t-test on logs; 1 when a side has one observation.
    pub p_welch: f64,
    /// Mann-Whitney U, with at least 6 observations per side.
    pub p_mwu: Option<f64>,
    /// The larger of the two p-values.
    pub p_value: f64,
    /// Benjamini-Hochberg over the metrics compared together.
    pub q_value: f64,
    pub verdict: Verdict,
    /// Smallest change (percent, on the log scale) found with the chosen
    /// power at the current sample counts; `None` without any spread
    /// estimate.
    pub mde_pct: Option<f64>,
    /// For INCONCLUSIVE: observations per side (rounds, when measured in
    /// rounds) that would resolve the verdict with the chosen power. `None`
    /// when decided, without a spread estimate, or when the change sits on
    /// the threshold (no sample count resolves it).
    pub samples_needed: Option<usize>,
    pub warnings: Vec<Warning>,
    /// Summary of the baseline observations (per-round means when
    /// measured in several rounds).
    pub baseline: Summary,
    /// Summary of the current observations.
    pub current: Summary,
    pub analysis: Analysis,
}

/// Compares one metric on its own (a family of one: q = p).
pub fn compare_metric(
    baseline: &Side,
    current: &Side,
    better: Better,
    options: &CompareOptions,
) -> Comparison {
    compare_all(
        &[MetricInput {
            baseline,
            current,
            better,
            blocks: None,
        }],
        options,
    )
    .remove(0)
}

/// Compares all metrics of one comparison, with q-values over all of them.
pub fn compare_all(metrics: &[MetricInput<'_>], options: &CompareOptions) -> Vec<Comparison> {
    let tested: Vec<Tested> = metrics.iter().map(|m| test(m, options)).collect();
    let p_values: Vec<f64> = tested.iter().map(|t| t.p_value).collect();
    let q_values = benjamini_hochberg(&p_values);
    tested
        .into_iter()
        .zip(q_values)
        .map(|(t, q)| conclude(t, q, options))
        .collect()
}

/// Everything that does not depend on the other metrics.
struct Tested {
    better: Better,
    ratio: Estimate,
    p_welch: f64,
    p_mwu: Option<f64>,
    p_value: f64,
    /// Pooled SD of the logs: the noise behind the MDE.
    sd_log: Option<f64>,
    mde_pct: Option<f64>,
    warnings: Vec<Warning>,
    baseline: Summary,
    current: Summary,
    analysis: Analysis,
}

fn test(metric: &MetricInput<'_>, options: &CompareOptions) -> Tested {
    if let Some(tested) = metric
        .blocks
        .and_then(|blocks| blocked::test(metric, blocks, options))
    {
        return tested;
    }
    let (a, b) = (metric.baseline.logs(), metric.current.logs());
    let level = 1.0 - options.alpha;
    let unbounded = Estimate {
        point: b.mean() - a.mean(),
        ci_low: f64::NEG_INFINITY,
        ci_high: f64::INFINITY,
        n: a.len() + b.len(),
    };
    let (log_ratio, p_welch) = match welch(a, b, level) {
        Some(w) => (w.diff, w.p_value),
        None => (unbounded, 1.0),
    };
    let exact = a.variance() == Some(0.0) && b.variance() == Some(0.0);
    let (raw_a, raw_b) = (
        metric.baseline.observations(),
        metric.current.observations(),
    );
    let p_mwu =
        (a.len().min(b.len()) >= MWU_MIN_N && !exact).then(|| mann_whitney(raw_a, raw_b).p_value);
    let p_value = p_mwu.map_or(p_welch, |p| p.max(p_welch));
    let sd_log = pooled_sd(a.variance(), a.len(), b.variance(), b.len());
    let mde_pct = sd_log
        .and_then(|sd| min_detectable_effect(sd, a.len(), b.len(), options.alpha, options.power))
        .map(|mde| 100.0 * mde);
    Tested {
        better: metric.better,
        ratio: log_ratio.map(f64::exp),
        p_welch,
        p_mwu,
        p_value,
        sd_log,
        mde_pct,
        warnings: warning::warnings(metric.baseline, metric.current, p_value < options.alpha),
        baseline: Summary::of(raw_a),
        current: Summary::of(raw_b),
        analysis: Analysis::Independent,
    }
}

fn conclude(t: Tested, q_value: f64, options: &CompareOptions) -> Comparison {
    let verdict = verdict::decide(
        &t.ratio,
        q_value,
        t.better,
        options.alpha,
        options.threshold,
    );
    let samples_needed = match (verdict, t.sd_log) {
        (Verdict::Inconclusive, Some(sd)) => {
            // The CI must clear the threshold nearest to the point estimate:
            // by the gap between them, on the log scale.
            let log_ratio = t.ratio.point.ln();
            let edge = if log_ratio >= 0.0 {
                options.threshold.ln_1p()
            } else {
                -(-options.threshold).ln_1p()
            };
            let gap = (log_ratio.abs() - edge).abs();
            let have = t.baseline.n.max(t.current.n);
            samples_needed(sd, gap, options.alpha, options.power).map(|n| n.max(have + 1))
        }
        _ => None,
    };
    Comparison {
        better: t.better,
        change_pct: t.ratio.map(|r| 100.0 * (r - 1.0)),
        ratio: t.ratio,
        p_welch: t.p_welch,
        p_mwu: t.p_mwu,
        p_value: t.p_value,
        q_value,
        verdict,
        mde_pct: t.mde_pct,
        samples_needed,
        warnings: t.warnings,
        baseline: t.baseline,
        current: t.current,
        analysis: t.analysis,
    }
}

/// Pooled SD from the sides that have a variance.
fn pooled_sd(va: Option<f64>, na: usize, vb: Option<f64>, nb: usize) -> Option<f64> {
    let parts = [(va, na), (vb, nb)];
    let (squares, df) = parts
        .iter()
        .filter_map(|&(v, n)| v.map(|v| (v * (n - 1) as f64, n - 1)))
        .fold((0.0, 0), |(s, d), (vs, vd)| (s + vs, d + vd));
    (df > 0).then(|| (squares / df as f64).sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Samples;

    fn side(values: &[f64]) -> Side {
        Side::new(Samples::new(values.to_vec()).unwrap()).unwrap()
    }

    fn compare(a: &[f64], b: &[f64], better: Better) -> Comparison {
        compare_metric(&side(a), &side(b), better, &CompareOptions::default())
    }

    const A: [f64; 10] = [
        100.0, 101.0, 99.0, 100.5, 99.5, 100.2, 99.8, 100.7, 99.3, 100.0,
    ];

    #[test]
    fn clear_slowdown_is_a_regression_for_times() {
        let b: Vec<f64> = A.iter().map(|x| x * 1.05).collect();
        let c = compare(&A, &b, Better::Lower);
        assert_eq!(c.verdict, Verdict::Regression);
        assert!((c.ratio.point - 1.05).abs() < 1e-12);
        assert!((c.change_pct.point - 5.0).abs() < 1e-9);
        assert!(c.ratio.ci_low > 1.01 && c.ratio.ci_high < 1.09);
        assert!(c.p_mwu.is_some() && c.p_value >= c.p_welch);
        assert_eq!(c.q_value, c.p_value);
        assert_eq!(c.samples_needed, None);
        assert_eq!(
            compare(&A, &b, Better::Higher).verdict,
            Verdict::Improvement
        );
    }

    #[test]
    fn identical_samples_are_no_change() {
        let c = compare(&A, &A, Better::Lower);
        assert_eq!(c.verdict, Verdict::NoChange);
        assert_eq!(c.ratio.point, 1.0);
    }

    #[test]
    fn constants_are_exact() {
        let same = compare(&[5.0; 6], &[5.0; 6], Better::Lower);
        assert_eq!(same.verdict, Verdict::NoChange);
        assert_eq!(
            (same.p_value, same.p_mwu, same.mde_pct),
            (1.0, None, Some(0.0))
        );
        let slower = compare(&[5.0; 6], &[6.0; 6], Better::Lower);
        assert_eq!(slower.verdict, Verdict::Regression);
        assert_eq!(slower.p_value, 0.0);
        assert!((slower.ratio.ci_low - 1.2).abs() < 1e-12);
        assert_eq!(slower.ratio.ci_low, slower.ratio.ci_high);
    }

    #[test]
    fn one_sample_is_inconclusive_with_a_warning() {
        let c = compare(&[5.0], &[50.0], Better::Lower);
        assert_eq!(c.verdict, Verdict::Inconclusive);
        assert_eq!((c.ratio.ci_low, c.ratio.ci_high), (0.0, f64::INFINITY));
        assert_eq!(c.p_value, 1.0);
        assert_eq!((c.mde_pct, c.samples_needed), (None, None));
        assert!(c.warnings.contains(&Warning::TooFewSamples {
            baseline: 1,
            current: 1
        }));
        // With a spread estimate on the other side the MDE is known.
        let d = compare(&[5.0], &[5.0, 5.1, 4.9], Better::Lower);
        assert!(d.mde_pct.is_some() && d.samples_needed.is_some());
    }

    #[test]
    fn inconclusive_reports_what_would_resolve_it() {
        // 1.5 % apart at ~2 % noise and 5 samples: neither a change nor none.
        let a = [100.0, 102.0, 98.0, 101.0, 99.0];
        let b: Vec<f64> = a.iter().map(|x| x * 1.015).collect();
        let c = compare(&a, &b, Better::Lower);
        assert_eq!(c.verdict, Verdict::Inconclusive);
        let mde = c.mde_pct.unwrap();
        assert!(mde > 1.5 && mde < 5.0, "{mde}");
        let n = c.samples_needed.unwrap();
        assert!(n > 5, "{n}");
        // Measuring that many (same spread) decides it.
        let spread =
            |x: &[f64], k: usize| -> Vec<f64> { x.iter().cycle().take(k).copied().collect() };
        let more = compare(&spread(&a, n * 2), &spread(&b, n * 2), Better::Lower);
        assert_eq!(more.verdict, Verdict::Regression);
    }

    #[test]
    fn fdr_over_metrics_raises_q() {
        let a = side(&A);
        let b: Vec<f64> = A.iter().map(|x| x * 1.02).collect();
        let b = side(&b);
        let metrics: Vec<MetricInput<'_>> = (0..20)
            .map(|i| MetricInput {
                baseline: &a,
                current: if i == 0 { &b } else { &a },
                better: Better::Lower,
                blocks: None,
            })
            .collect();
        let all = compare_all(&metrics, &CompareOptions::default());
        assert!(all[0].q_value > all[0].p_value);
        assert!(all[1..].iter().all(|c| c.verdict == Verdict::NoChange));
    }

    #[test]
    fn pooled_sd_uses_the_sides_that_have_one() {
        assert_eq!(pooled_sd(None, 1, None, 1), None);
        assert_eq!(pooled_sd(None, 1, Some(4.0), 3), Some(2.0));
        assert_eq!(pooled_sd(Some(1.0), 2, Some(4.0), 2), Some(2.5f64.sqrt()));
    }
}
