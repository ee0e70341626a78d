//! A/B comparison of one metric, or of all metrics of one comparison, as
//! statistics.md prescribes:
//!
//! 1. Welch's t-test on ln(values) gives the ratio of geometric means
//!    current / baseline with its 95 % CI, and the p-value that decides.
//!    Welch alone decides, so that adding samples never loses power.
//! 2. With n >= 6 per side, Mann-Whitney U as a cross-check only: its
//!    normal approximation has a floor (p >= 0.0051 at n = 6) that would
//!    throw the power of small samples away. A warning says when the two
//!    clearly disagree.
//! 3. Benjamini-Hochberg q-values over all decidable metrics of the
//!    comparison (the caller passes every metric, whatever it shows).
//! 4. A direction-aware verdict (see `verdict`), and for INCONCLUSIVE the
//!    minimum detectable effect and the samples that would resolve it
//!    (Welch's standard error and degrees of freedom, see `power`).
//!
//! Observations are raw samples (one round) or per-round means (several;
//! see `side`). CANNOT DECIDE when no test can be made (see `undecided`):
//! a side with one observation, no spread on either side, or rounds against
//! one round. Such a metric has no p or q (NaN, JSON `null`), an unbounded
//! CI around its point estimate, a warning with the reason, and stays out
//! of the family.

mod blocked;
mod fdr;
mod mann_whitney;
mod power;
mod side;
mod undecided;
mod verdict;
mod warning;
mod welch;

pub use fdr::benjamini_hochberg;
pub use mann_whitney::{MannWhitney, mann_whitney};
pub use power::{Spread, min_detectable_effect, samples_needed};
pub use side::Side;
pub(crate) use verdict::decide;
pub use verdict::{Better, Verdict};
pub use warning::{MIN_SAMPLES, Sides, Warning};
pub use welch::{Welch, welch};

use serde::{Deserialize, Serialize};

use crate::{Estimate, Summary, serde_float};

/// Observations per side from which the Mann-Whitney cross-check runs.
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
    /// Ratio of geometric means current / baseline, with its CI (unbounded
    /// for CANNOT DECIDE).
    pub ratio: Estimate,
    /// The same as a change in percent: 100 (ratio - 1).
    pub change_pct: Estimate,
    /// Welch's t-test on logs (blocked: the paired t-test on the block log
    /// ratios, a cross-check); NaN (JSON `null`) for CANNOT DECIDE.
    #[serde(with = "serde_float::missing")]
    pub p_welch: f64,
    /// Mann-Whitney U, a cross-check only (it does not decide), with at
    /// least 6 observations per side.
    pub p_mwu: Option<f64>,
    /// The p-value that decides: Welch's (blocked: the signed-rank test's).
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
    /// threshold (no sample count resolves it).
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

/// Compares all metrics of one comparison, with q-values over all the
/// decidable ones: pass every metric, and filter what is shown afterwards,
/// so that the family does not depend on the view.
pub fn compare_all(metrics: &[MetricInput<'_>], options: &CompareOptions) -> Vec<Comparison> {
    let tested: Vec<Tested> = metrics.iter().map(|m| test(m, options)).collect();
    let family: Vec<f64> = tested.iter().filter_map(|t| t.p_value).collect();
    let mut q_values = benjamini_hochberg(&family).into_iter();
    tested
        .into_iter()
        .map(|t| {
            let q = t.p_value.map(|_| q_values.next().expect("one q per p"));
            conclude(t, q, options)
        })
        .collect()
}

/// Everything that does not depend on the other metrics.
struct Tested {
    better: Better,
    ratio: Estimate,
    /// Welch's (or, blocked, the paired t-test's) p.
    p_welch: Option<f64>,
    p_mwu: Option<f64>,
    /// The p that decides (Welch's; blocked, the signed-rank test's);
    /// `None` when no test can decide.
    p_value: Option<f64>,
    /// Each side's spread of the logs: the noise behind the MDE.
    spreads: Option<(Spread, Spread)>,
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
    let (raw_a, raw_b) = (
        metric.baseline.observations(),
        metric.current.observations(),
    );
    let refusal = undecided::reason(metric.baseline, metric.current);
    let welch = refusal
        .is_none()
        .then(|| welch(a, b, 1.0 - options.alpha))
        .flatten();
    let log_ratio = welch.map_or(
        Estimate {
            point: b.mean() - a.mean(),
            ci_low: f64::NEG_INFINITY,
            ci_high: f64::INFINITY,
            n: a.len() + b.len(),
        },
        |w| w.diff,
    );
    let p_welch = welch.map(|w| w.p_value);
    let p_mwu = welch
        .filter(|_| a.len().min(b.len()) >= MWU_MIN_N)
        .map(|_| mann_whitney(raw_a, raw_b).p_value);
    let spreads = welch.and_then(|_| Some((Spread::of(a)?, Spread::of(b)?)));
    let mde_pct = spreads
        .and_then(|(sa, sb)| min_detectable_effect(sa, sb, options.alpha, options.power))
        .map(|mde| 100.0 * mde);
    let means_differ = p_welch.is_some_and(|p| p < options.alpha);
    let mut warnings: Vec<Warning> = refusal.into_iter().collect();
    warnings.extend(warning::warnings(
        metric.baseline,
        metric.current,
        p_welch.is_some() && !means_differ,
    ));
    if let (Some(pw), Some(pm)) = (p_welch, p_mwu) {
        warnings.extend(warning::cross_check(pw, pm, options.alpha));
    }
    Tested {
        better: metric.better,
        ratio: log_ratio.map(f64::exp),
        p_welch,
        p_mwu,
        p_value: p_welch,
        spreads,
        mde_pct,
        warnings,
        baseline: Summary::of(raw_a),
        current: Summary::of(raw_b),
        analysis: Analysis::Independent,
    }
}

/// The verdict from the q-value (`None`: CANNOT DECIDE).
fn conclude(t: Tested, q_value: Option<f64>, options: &CompareOptions) -> Comparison {
    let verdict = q_value.map_or(Verdict::CannotDecide, |q| {
        verdict::decide(&t.ratio, q, t.better, options.alpha, options.threshold)
    });
    let samples_needed = match (verdict, t.spreads) {
        (Verdict::Inconclusive, Some((a, b))) => {
            // The CI must clear the threshold nearest to the point estimate:
            // by the gap between them, on the log scale.
            let log_ratio = t.ratio.point.ln();
            let edge = if log_ratio >= 0.0 {
                options.threshold.ln_1p()
            } else {
                -(-options.threshold).ln_1p()
            };
            let gap = (log_ratio.abs() - edge).abs();
            let have = a.n.max(b.n);
            samples_needed(a.variance, b.variance, gap, options.alpha, options.power)
                .map(|n| n.max(have + 1))
        }
        _ => None,
    };
    Comparison {
        better: t.better,
        change_pct: t.ratio.map(|r| 100.0 * (r - 1.0)),
        ratio: t.ratio,
        p_welch: t.p_welch.unwrap_or(f64::NAN),
        p_mwu: t.p_mwu,
        p_value: t.p_value.unwrap_or(f64::NAN),
        q_value: q_value.unwrap_or(f64::NAN),
        verdict,
        mde_pct: t.mde_pct,
        samples_needed,
        warnings: t.warnings,
        baseline: t.baseline,
        current: t.current,
        analysis: t.analysis,
    }
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
        assert!(c.p_mwu.is_some() && c.p_value == c.p_welch);
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

    /// Both sides constant: no spread, so no test. The old code called
    /// [5, 5] against [6, 6] a REGRESSION with p = 0, and [5; 6] against
    /// itself NO CHANGE with p = 1.
    #[test]
    fn constants_cannot_be_decided() {
        for (a, b) in [(&[5.0, 5.0][..], &[6.0, 6.0][..]), (&[5.0; 6], &[5.0; 6])] {
            let c = compare(a, b, Better::Lower);
            assert_eq!(c.verdict, Verdict::CannotDecide, "{a:?} vs {b:?}");
            assert!(c.p_value.is_nan() && c.q_value.is_nan() && c.p_welch.is_nan());
            assert_eq!((c.p_mwu, c.mde_pct, c.samples_needed), (None, None, None));
            assert_eq!(c.warnings[0], Warning::NoSpread);
            assert_eq!((c.ratio.ci_low, c.ratio.ci_high), (0.0, f64::INFINITY));
        }
        let c = compare(&[5.0, 5.0], &[6.0, 6.0], Better::Lower);
        assert!(
            (c.ratio.point - 1.2).abs() < 1e-12,
            "the point estimate stays"
        );
    }

    /// One side constant and the other not: Welch takes the variance from
    /// the noisy side, so the metric is decided.
    #[test]
    fn one_constant_side_is_decided() {
        let noisy = [6.0, 6.1, 5.9, 6.05, 5.95, 6.02];
        let c = compare(&[5.0; 6], &noisy, Better::Lower);
        assert_eq!(c.verdict, Verdict::Regression);
        assert!(c.p_welch < 1e-6 && c.mde_pct.is_some());
    }

    #[test]
    fn one_sample_cannot_be_decided() {
        let c = compare(&[5.0], &[50.0], Better::Lower);
        assert_eq!(c.verdict, Verdict::CannotDecide);
        assert_eq!((c.ratio.ci_low, c.ratio.ci_high), (0.0, f64::INFINITY));
        assert!(c.p_value.is_nan() && c.q_value.is_nan());
        assert_eq!((c.mde_pct, c.samples_needed), (None, None));
        assert_eq!(
            c.warnings[0],
            Warning::SingleObservation { sides: Sides::Both }
        );
        assert!(c.warnings.contains(&Warning::TooFewSamples {
            baseline: 1,
            current: 1
        }));
        let d = compare(&[5.0], &[5.0, 5.1, 4.9], Better::Lower);
        assert_eq!(d.verdict, Verdict::CannotDecide);
        assert_eq!(
            d.warnings[0],
            Warning::SingleObservation {
                sides: Sides::Baseline
            }
        );
    }

    /// Metrics that cannot be decided stay out of the BH family: the old
    /// code gave n = 1 a made-up p = 1 (which raised the others' q) and
    /// 2 + 2 equal values p = 0 (a REGRESSION).
    #[test]
    fn undecidable_metrics_leave_the_others_q_alone() {
        let base = side(&A);
        let shifted: Vec<f64> = A.iter().map(|x| x * 1.02).collect();
        let slow = side(&shifted);
        let decided = |extra: &[(&Side, &Side)]| {
            let mut metrics = vec![
                MetricInput {
                    baseline: &base,
                    current: &slow,
                    better: Better::Lower,
                    blocks: None,
                },
                MetricInput {
                    baseline: &base,
                    current: &base,
                    better: Better::Lower,
                    blocks: None,
                },
            ];
            metrics.extend(extra.iter().map(|&(baseline, current)| MetricInput {
                baseline,
                current,
                better: Better::Lower,
                blocks: None,
            }));
            compare_all(&metrics, &CompareOptions::default())
        };
        let alone = decided(&[]);
        let (one, other_one) = (side(&[5.0]), side(&[9.0]));
        let (fives, sixes) = (side(&[5.0, 5.0]), side(&[6.0, 6.0]));
        let with = decided(&[(&one, &other_one), (&fives, &sixes), (&one, &sixes)]);
        assert_eq!(with[0].q_value, alone[0].q_value);
        assert_eq!(with[1].q_value, alone[1].q_value);
        assert_eq!(with[0].verdict, alone[0].verdict);
        assert!(with[2..].iter().all(|c| c.verdict == Verdict::CannotDecide));
    }

    /// Round means on one side and one round's raw samples on the other are
    /// refused, with a warning naming the side and the command.
    #[test]
    fn rounds_against_one_round_are_refused() {
        let rounds: Vec<Samples> = [100.0, 101.0, 99.5]
            .iter()
            .map(|&v| Samples::new(vec![v, v * 1.001]).unwrap())
            .collect();
        let measured_in_rounds = Side::from_rounds(&rounds).unwrap();
        let slower: Vec<f64> = A.iter().map(|x| x * 1.3).collect();
        let c = compare_metric(
            &measured_in_rounds,
            &side(&slower),
            Better::Lower,
            &CompareOptions::default(),
        );
        assert_eq!(c.verdict, Verdict::CannotDecide);
        assert_eq!(
            c.warnings[0],
            Warning::MixedRounds {
                baseline_rounds: 3,
                current_rounds: 1
            }
        );
        assert!(
            c.warnings[0]
                .to_string()
                .contains("measure the current with `kbench run --rounds 3`")
        );
        assert!(c.q_value.is_nan());
    }

    /// The cross-check warns when Mann-Whitney clearly disagrees; the
    /// verdict follows Welch. Every value 2 % slower but one far low
    /// outlier: the ranks see the shift (SciPy MWU p = 0.0036), the outlier
    /// inflates the variance of the logs (Welch p = 0.42).
    #[test]
    fn a_disagreeing_cross_check_is_a_warning() {
        let mut b: Vec<f64> = A.iter().map(|x| x * 1.02).collect();
        b[0] = 30.0;
        let c = compare(&A, &b, Better::Lower);
        let (pw, pm) = (c.p_welch, c.p_mwu.unwrap());
        assert!(
            c.warnings.contains(&Warning::TestsDisagree {
                p_welch: pw,
                p_mwu: pm
            }),
            "{pw} {pm} {:?}",
            c.warnings
        );
        assert!((pw - 0.4238).abs() < 1e-3 && (pm - 0.0036).abs() < 1e-4);
        assert_eq!(c.p_value, pw);
        assert_ne!(c.verdict, Verdict::Regression);
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

    /// Issue 19: a +20 % change with a tight spread among 10 metrics. Its
    /// Welch p is ~1e-10 at n = 5 and ~1e-11 at n = 6; Mann-Whitney's normal
    /// approximation cannot go below 0.0051 at n = 6, so when the larger p
    /// counted, BH's q = 10 x 0.0051 > 0.05 turned the sixth sample into
    /// INCONCLUSIVE. Adding a sample must never lose power.
    #[test]
    fn a_sixth_sample_keeps_a_clear_regression() {
        let a = [100.0, 100.4, 99.7, 100.2, 99.9, 100.1];
        let b = [121.0, 119.5, 120.6, 120.2, 119.8, 120.9];
        for n in [5, 6] {
            let (base, slow) = (side(&a[..n]), side(&b[..n]));
            let metrics: Vec<MetricInput<'_>> = (0..10)
                .map(|i| MetricInput {
                    baseline: &base,
                    current: if i == 0 { &slow } else { &base },
                    better: Better::Lower,
                    blocks: None,
                })
                .collect();
            let all = compare_all(&metrics, &CompareOptions::default());
            assert_eq!(all[0].verdict, Verdict::Regression, "n = {n}: {:?}", all[0]);
            assert!(all[0].q_value < 1e-8, "n = {n}: q = {}", all[0].q_value);
        }
    }
}
