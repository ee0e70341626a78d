//! A/B comparison of one metric, or of all metrics of one comparison, as
//! docs/statistics.md ("A/B verdict per metric") says:
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
//! see `side`). Measured in interleaved blocks, the blocks are paired (see
//! `blocked`); measured apart in units (runs or boots) of rounds, the
//! units are compared (see `levels`). CANNOT DECIDE when no test can be
//! made (see `undecided`): a side with one observation, no spread on
//! either side, or rounds against one round. Such a metric has no p or q
//! (NaN, JSON `null`), an unbounded CI around its point estimate, a
//! warning with the reason, and stays out of the family.

mod blocked;
mod comparison;
mod fdr;
mod independent;
mod input;
mod levelled;
mod levels;
mod mann_whitney;
mod options;
mod power;
mod side;
mod tested;
mod undecided;
mod verdict;
mod warning;
mod welch;

pub use comparison::{Analysis, Comparison};

pub use fdr::benjamini_hochberg;
pub use input::MetricInput;
pub use levels::{
    Components, Costs, DEFAULT_DRIFT, Design, Drift, DriftSource, DriftTerm, Levelled, Plan, Unit,
    UnitKind,
};
pub use mann_whitney::{MannWhitney, mann_whitney};
pub use options::CompareOptions;
pub use power::{Spread, min_detectable_effect, samples_needed};
pub use side::Side;
pub use verdict::Verdict;
pub(crate) use verdict::decide;
pub use warning::{MIN_SAMPLES, Sides, Warning};
pub use welch::{Welch, welch};

use kbench_model::Direction;
use power::gap_to_band;
use tested::Tested;

/// Compares one metric on its own (a family of one: q = p).
pub fn compare_metric(
    baseline: &Side,
    current: &Side,
    better: Direction,
    options: &CompareOptions,
) -> Comparison {
    compare_all(
        &[MetricInput {
            baseline,
            current,
            better,
            blocks: None,
            units: None,
        }],
        options,
    )
    .remove(0)
}

/// Compares all metrics of one comparison, with q-values over all the
/// decidable ones: pass every metric, and filter what is shown afterwards,
/// so that the family does not depend on the view.
pub fn compare_all(metrics: &[MetricInput<'_>], options: &CompareOptions) -> Vec<Comparison> {
    compare_all_thresholded(metrics, options, &vec![options.threshold; metrics.len()])
}

/// [`compare_all`] with each metric's own practical threshold (`thresholds`
/// in the order of `metrics`; `options.threshold` is not used): one FDR
/// family, verdicts against each metric's band.
pub fn compare_all_thresholded(
    metrics: &[MetricInput<'_>],
    options: &CompareOptions,
    thresholds: &[f64],
) -> Vec<Comparison> {
    assert_eq!(metrics.len(), thresholds.len(), "one threshold per metric");
    let tested: Vec<Tested> = metrics.iter().map(|m| test(m, options)).collect();
    let family: Vec<f64> = tested.iter().filter_map(|t| t.p_value).collect();
    let mut q_values = benjamini_hochberg(&family).into_iter();
    tested
        .into_iter()
        .zip(thresholds)
        .map(|(t, &threshold)| {
            let q = t.p_value.map(|_| q_values.next().expect("one q per p"));
            let options = CompareOptions {
                threshold,
                ..*options
            };
            conclude(t, q, &options)
        })
        .collect()
}

/// One metric's tests: blocked when it was measured in at least two
/// interleaved blocks, else levelled when it was measured apart in units,
/// else the sides as independent samples.
fn test(metric: &MetricInput<'_>, options: &CompareOptions) -> Tested {
    metric
        .blocks
        .and_then(|blocks| blocked::test(metric, blocks, options))
        .unwrap_or_else(|| match metric.units {
            Some(units) => levelled::test(metric, units, options),
            None => independent::test(metric, options),
        })
}

/// The verdict from the q-value (`None`: CANNOT DECIDE).
fn conclude(t: Tested, q_value: Option<f64>, options: &CompareOptions) -> Comparison {
    let verdict = q_value.map_or(Verdict::CannotDecide, |q| {
        verdict::decide(&t.ratio, q, t.better, options.alpha, options.threshold)
    });
    let samples_needed = match (verdict, t.spreads) {
        (Verdict::Inconclusive, Some((a, b))) => {
            let gap = gap_to_band(t.ratio.point.ln(), options.threshold);
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
        plan: t
            .levels
            .as_ref()
            .map(|l| Plan::new(&l.components, l.costs, t.ratio.point.ln(), options)),
        components: t.levels.map(|l| l.components),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Samples;

    fn side(values: &[f64]) -> Side {
        Side::new(Samples::new(values.to_vec()).unwrap()).unwrap()
    }

    fn compare(a: &[f64], b: &[f64], better: Direction) -> Comparison {
        compare_metric(&side(a), &side(b), better, &CompareOptions::default())
    }

    const A: [f64; 10] = [
        100.0, 101.0, 99.0, 100.5, 99.5, 100.2, 99.8, 100.7, 99.3, 100.0,
    ];

    #[test]
    fn clear_slowdown_is_a_regression_for_times() {
        let b: Vec<f64> = A.iter().map(|x| x * 1.05).collect();
        let c = compare(&A, &b, Direction::Lower);
        assert_eq!(c.verdict, Verdict::Regression);
        assert!((c.ratio.point - 1.05).abs() < 1e-12);
        assert!((c.change_pct.point - 5.0).abs() < 1e-9);
        assert!(c.ratio.ci_low > 1.01 && c.ratio.ci_high < 1.09);
        assert!(c.p_mwu.is_some() && c.p_value == c.p_welch);
        assert_eq!(c.q_value, c.p_value);
        assert_eq!(c.samples_needed, None);
        assert_eq!(
            compare(&A, &b, Direction::Higher).verdict,
            Verdict::Improvement
        );
    }

    #[test]
    fn identical_samples_are_no_change() {
        let c = compare(&A, &A, Direction::Lower);
        assert_eq!(c.verdict, Verdict::NoChange);
        assert_eq!(c.ratio.point, 1.0);
    }

    /// Both sides constant: no spread, so no test. The old code called
    /// [5, 5] against [6, 6] a REGRESSION with p = 0, and [5; 6] against
    /// itself NO CHANGE with p = 1.
    #[test]
    fn constants_cannot_be_decided() {
        for (a, b) in [(&[5.0, 5.0][..], &[6.0, 6.0][..]), (&[5.0; 6], &[5.0; 6])] {
            let c = compare(a, b, Direction::Lower);
            assert_eq!(c.verdict, Verdict::CannotDecide, "{a:?} vs {b:?}");
            assert!(c.p_value.is_nan() && c.q_value.is_nan() && c.p_welch.is_nan());
            assert_eq!((c.p_mwu, c.mde_pct, c.samples_needed), (None, None, None));
            assert_eq!(c.warnings[0], Warning::NoSpread);
            assert_eq!((c.ratio.ci_low, c.ratio.ci_high), (0.0, f64::INFINITY));
        }
        let c = compare(&[5.0, 5.0], &[6.0, 6.0], Direction::Lower);
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
        let c = compare(&[5.0; 6], &noisy, Direction::Lower);
        assert_eq!(c.verdict, Verdict::Regression);
        assert!(c.p_welch < 1e-6 && c.mde_pct.is_some());
    }

    #[test]
    fn one_sample_cannot_be_decided() {
        let c = compare(&[5.0], &[50.0], Direction::Lower);
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
        let d = compare(&[5.0], &[5.0, 5.1, 4.9], Direction::Lower);
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
                    better: Direction::Lower,
                    blocks: None,
                    units: None,
                },
                MetricInput {
                    baseline: &base,
                    current: &base,
                    better: Direction::Lower,
                    blocks: None,
                    units: None,
                },
            ];
            metrics.extend(extra.iter().map(|&(baseline, current)| MetricInput {
                baseline,
                current,
                better: Direction::Lower,
                blocks: None,
                units: None,
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

    /// Each metric is judged against its own band, in one FDR family.
    #[test]
    fn thresholds_per_metric_change_verdicts_not_q_values() {
        let base = side(&A);
        let shifted: Vec<f64> = A.iter().map(|x| x * 1.02).collect();
        let slow = side(&shifted);
        let metric = MetricInput {
            baseline: &base,
            current: &slow,
            better: Direction::Lower,
            blocks: None,
            units: None,
        };
        let options = CompareOptions::default();
        let same = compare_all(&[metric, metric], &options);
        let banded = compare_all_thresholded(&[metric, metric], &options, &[0.01, 0.10]);
        assert_eq!(same[0].verdict, Verdict::Regression);
        assert_eq!(banded[0].verdict, Verdict::Regression);
        assert_eq!(
            banded[1].verdict,
            Verdict::NoChange,
            "2 % within a 10 % band"
        );
        assert_eq!(banded[1].q_value, same[1].q_value);
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
            Direction::Lower,
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
        let c = compare(&A, &b, Direction::Lower);
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
        let c = compare(&a, &b, Direction::Lower);
        assert_eq!(c.verdict, Verdict::Inconclusive);
        let mde = c.mde_pct.unwrap();
        assert!(mde > 1.5 && mde < 5.0, "{mde}");
        let n = c.samples_needed.unwrap();
        assert!(n > 5, "{n}");
        // Measuring that many (same spread) decides it.
        let spread =
            |x: &[f64], k: usize| -> Vec<f64> { x.iter().cycle().take(k).copied().collect() };
        let more = compare(&spread(&a, n * 2), &spread(&b, n * 2), Direction::Lower);
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
                better: Direction::Lower,
                blocks: None,
                units: None,
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
                    better: Direction::Lower,
                    blocks: None,
                    units: None,
                })
                .collect();
            let all = compare_all(&metrics, &CompareOptions::default());
            assert_eq!(all[0].verdict, Verdict::Regression, "n = {n}: {:?}", all[0]);
            assert!(all[0].q_value < 1e-8, "n = {n}: q = {}", all[0].q_value);
        }
    }
}
