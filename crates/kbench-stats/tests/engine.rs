//! The A/B engine against its requirements (docs/statistics.md), on simulated data
//! from a seeded generator (deterministic: the same numbers every run).
//! Run with `--nocapture` to see the measured rates.

use kbench_model::Direction;
use kbench_stats::changepoint::{ChangePointOptions, change_points};
use kbench_stats::{
    CompareOptions, Comparison, MetricInput, Samples, Side, StatsError, Verdict, Warning,
    compare_all, compare_metric,
};

mod support;

use support::Rng;

fn side(values: Vec<f64>) -> Side {
    Side::new(Samples::new(values).unwrap()).unwrap()
}

fn options(threshold: f64) -> CompareOptions {
    CompareOptions {
        threshold,
        ..CompareOptions::default()
    }
}

fn is_alarm(c: &Comparison) -> bool {
    matches!(c.verdict, Verdict::Regression | Verdict::Improvement)
}

/// Three standard errors of a rate estimated from `trials`.
fn tolerance(rate: f64, trials: usize) -> f64 {
    3.0 * (rate * (1.0 - rate) / trials as f64).sqrt()
}

/// Share of A/A comparisons that raise an alarm, single metric (q = p).
fn aa_alarm_rate(rng: &mut Rng, trials: usize, n: usize, cv: f64, threshold: f64) -> (f64, f64) {
    let (mut alarms, mut significant) = (0, 0);
    for _ in 0..trials {
        let a = side(rng.samples(n, 100.0, cv));
        let b = side(rng.samples(n, 100.0, cv));
        let c = compare_metric(&a, &b, Direction::Lower, &options(threshold));
        alarms += is_alarm(&c) as usize;
        significant += (c.p_value < 0.05) as usize;
    }
    (
        alarms as f64 / trials as f64,
        significant as f64 / trials as f64,
    )
}

#[test]
fn aa_false_alarm_rate_per_metric_is_at_most_5_percent() {
    let mut rng = Rng(1);
    let trials = 2000;
    for (n, cv, threshold) in [
        (10, 0.01, 0.01),
        (10, 0.01, 0.0),
        (5, 0.05, 0.0),
        (30, 0.02, 0.0),
    ] {
        let (alarms, significant) = aa_alarm_rate(&mut rng, trials, n, cv, threshold);
        println!(
            "A/A n={n} cv={cv} delta={threshold}: alarms {:.2} %, p < 0.05 {:.2} %",
            100.0 * alarms,
            100.0 * significant
        );
        assert!(alarms <= 0.05 + tolerance(0.05, trials), "{alarms}");
        assert!(
            significant <= 0.05 + tolerance(0.05, trials),
            "{significant}"
        );
    }
}

#[test]
fn aa_warnings_are_rare_on_clean_normal_data() {
    let mut rng = Rng(10);
    let trials = 1000;
    for n in [10, 30] {
        let (mut outliers, mut bimodal, mut variance) = (0, 0, 0);
        for _ in 0..trials {
            let a = side(rng.samples(n, 100.0, 0.01));
            let b = side(rng.samples(n, 100.0, 0.01));
            let c = compare_metric(&a, &b, Direction::Lower, &CompareOptions::default());
            for w in &c.warnings {
                match w {
                    Warning::OutliersPresent { .. } => outliers += 1,
                    Warning::Bimodal { .. } => bimodal += 1,
                    Warning::VarianceOnlyChange { .. } => variance += 1,
                    _ => {}
                }
            }
        }
        let rate = |count: usize| 100.0 * count as f64 / trials as f64;
        println!(
            "A/A n={n} warnings: outliers {:.1} %, bimodal {:.1} %, variance-only {:.1} %",
            rate(outliers),
            rate(bimodal),
            rate(variance)
        );
        assert!(outliers.max(bimodal).max(variance) <= trials / 10);
    }
}

#[test]
fn aa_family_of_50_metrics_after_fdr_stays_within_q() {
    let mut rng = Rng(2);
    let (comparisons, metrics) = (1000, 50);
    for threshold in [0.0, 0.01] {
        let mut with_alarm = 0;
        let mut raw_alarms = 0;
        for _ in 0..comparisons {
            let sides: Vec<(Side, Side)> = (0..metrics)
                .map(|_| {
                    (
                        side(rng.samples(10, 100.0, 0.01)),
                        side(rng.samples(10, 100.0, 0.01)),
                    )
                })
                .collect();
            let inputs: Vec<MetricInput<'_>> = sides
                .iter()
                .map(|(a, b)| MetricInput {
                    baseline: a,
                    current: b,
                    better: Direction::Higher,
                    blocks: None,
                    units: None,
                })
                .collect();
            let results = compare_all(&inputs, &options(threshold));
            with_alarm += results.iter().any(is_alarm) as usize;
            raw_alarms += results.iter().filter(|c| c.p_value < 0.05).count();
        }
        let family_rate = with_alarm as f64 / comparisons as f64;
        let raw_rate = raw_alarms as f64 / (comparisons * metrics) as f64;
        println!(
            "A/A {metrics} metrics, delta={threshold}: comparisons with any alarm after BH {:.2} %, \
             metrics with p < 0.05 before BH {:.2} %",
            100.0 * family_rate,
            100.0 * raw_rate
        );
        assert!(
            family_rate <= 0.05 + tolerance(0.05, comparisons),
            "{family_rate}"
        );
    }
}

#[test]
fn three_percent_at_one_percent_cv_with_10_samples_is_found() {
    let mut rng = Rng(3);
    let trials = 1000;
    let cases = [
        (1.03, Direction::Lower, Verdict::Regression),
        (1.03, Direction::Higher, Verdict::Improvement),
        (0.97, Direction::Lower, Verdict::Improvement),
        (0.97, Direction::Higher, Verdict::Regression),
    ];
    for (shift, better, expected) in cases {
        let mut found = 0;
        for _ in 0..trials {
            let a = side(rng.samples(10, 100.0, 0.01));
            let b = side(rng.samples(10, 100.0 * shift, 0.01));
            let c = compare_metric(&a, &b, better, &CompareOptions::default());
            assert!(
                c.verdict == expected || c.verdict == Verdict::Inconclusive,
                "{c:?}"
            );
            found += (c.verdict == expected) as usize;
        }
        let power = found as f64 / trials as f64;
        println!(
            "shift {shift} {better:?}: {expected} {:.1} %",
            100.0 * power
        );
        assert!(power >= 0.95, "{power}");
    }
}

#[test]
fn rounds_absorb_drift_between_invocations() {
    // Each invocation lands 2 % off (placement, frequency), samples within it
    // vary 0.5 %: a single round per side mistakes drift for change.
    let mut rng = Rng(4);
    let trials = 1000;
    let round = |rng: &mut Rng| {
        let level = 100.0 * (1.0 + 0.02 * rng.normal());
        Samples::new(rng.samples(10, level, 0.005)).unwrap()
    };
    let (mut single, mut rounds) = (0, 0);
    for _ in 0..trials {
        let a: Vec<Samples> = (0..6).map(|_| round(&mut rng)).collect();
        let b: Vec<Samples> = (0..6).map(|_| round(&mut rng)).collect();
        let opts = CompareOptions::default();
        let one = compare_metric(
            &Side::from_rounds(&a[..1]).unwrap(),
            &Side::from_rounds(&b[..1]).unwrap(),
            Direction::Lower,
            &opts,
        );
        assert!(
            one.warnings
                .iter()
                .any(|w| matches!(w, Warning::OneRound { .. }))
        );
        single += is_alarm(&one) as usize;
        let all = compare_metric(
            &Side::from_rounds(&a).unwrap(),
            &Side::from_rounds(&b).unwrap(),
            Direction::Lower,
            &opts,
        );
        assert_eq!(all.baseline.n, 6);
        rounds += is_alarm(&all) as usize;
    }
    let (single, rounds) = (single as f64 / trials as f64, rounds as f64 / trials as f64);
    println!(
        "drift 2 %: alarms with one round {:.1} %, with 6 rounds {:.1} %",
        100.0 * single,
        100.0 * rounds
    );
    assert!(single > 0.3, "{single}");
    assert!(rounds <= 0.05 + tolerance(0.05, trials), "{rounds}");
}

/// Both sides constant: no spread, so no test can tell a change from noise
/// (issue 19; this used to be NO CHANGE / a REGRESSION with p = 0).
#[test]
fn zero_variance() {
    let opts = CompareOptions::default();
    for current in [7.0, 7.7, 7.035] {
        let c = compare_metric(
            &side(vec![7.0; 5]),
            &side(vec![current; 5]),
            Direction::Lower,
            &opts,
        );
        assert_eq!(c.verdict, Verdict::CannotDecide, "{current}");
        assert!(c.warnings.contains(&Warning::NoSpread));
        assert!((c.ratio.point - current / 7.0).abs() < 1e-12);
    }
    // One constant side against a noisy one is an ordinary test.
    let mixed = compare_metric(
        &side(vec![7.0; 8]),
        &side(vec![6.9, 7.1, 7.0, 6.95, 7.05, 7.0, 6.98, 7.02]),
        Direction::Lower,
        &opts,
    );
    assert_eq!(mixed.verdict, Verdict::NoChange);
}

#[test]
fn ties_from_coarse_timers() {
    // Values rounded to whole units: many ties. A/A must stay quiet and a
    // 5 % shift must still be found.
    let mut rng = Rng(5);
    let coarse = |v: Vec<f64>| v.into_iter().map(f64::round).collect::<Vec<_>>();
    let trials = 500;
    let (mut false_alarms, mut found) = (0, 0);
    for _ in 0..trials {
        let a = side(coarse(rng.samples(12, 40.0, 0.02)));
        let same = side(coarse(rng.samples(12, 40.0, 0.02)));
        let shifted = side(coarse(rng.samples(12, 42.0, 0.02)));
        let opts = CompareOptions::default();
        false_alarms += is_alarm(&compare_metric(&a, &same, Direction::Lower, &opts)) as usize;
        let c = compare_metric(&a, &shifted, Direction::Lower, &opts);
        assert!(c.p_mwu.is_some());
        found += (c.verdict == Verdict::Regression) as usize;
    }
    println!("ties: A/A alarms {false_alarms}/{trials}, 5 % shift found {found}/{trials}");
    assert!(false_alarms as f64 / trials as f64 <= 0.05);
    assert!(found as f64 / trials as f64 >= 0.9);
}

#[test]
fn two_samples_per_side() {
    let mut rng = Rng(6);
    let trials = 1000;
    let mut alarms = 0;
    for _ in 0..trials {
        let c = compare_metric(
            &side(rng.samples(2, 100.0, 0.01)),
            &side(rng.samples(2, 100.0, 0.01)),
            Direction::Lower,
            &CompareOptions::default(),
        );
        assert!(c.warnings.contains(&Warning::TooFewSamples {
            baseline: 2,
            current: 2
        }));
        assert!(c.ratio.ci_low.is_finite() && c.ratio.ci_high.is_finite());
        alarms += is_alarm(&c) as usize;
    }
    assert!(alarms as f64 / trials as f64 <= 0.05, "{alarms}");
}

#[test]
fn one_sample_cannot_be_decided() {
    let c = compare_metric(
        &side(vec![100.0]),
        &side(vec![200.0]),
        Direction::Lower,
        &CompareOptions::default(),
    );
    assert_eq!(c.verdict, Verdict::CannotDecide);
    assert!(c.warnings.contains(&Warning::TooFewSamples {
        baseline: 1,
        current: 1
    }));
    assert_eq!(c.change_pct.ci_low, -100.0);
    assert_eq!(c.change_pct.ci_high, f64::INFINITY);
}

#[test]
fn a_single_huge_outlier_is_flagged_not_called_a_regression() {
    let mut rng = Rng(7);
    let trials = 500;
    for _ in 0..trials {
        let a = side(rng.samples(10, 100.0, 0.01));
        let mut b = rng.samples(10, 100.0, 0.01);
        b[3] = 10_000.0;
        let c = compare_metric(&a, &side(b), Direction::Lower, &CompareOptions::default());
        assert_ne!(c.verdict, Verdict::Regression, "{c:?}");
        let flagged =
            |w: &Warning| matches!(w, Warning::OutliersPresent { current, .. } if *current >= 1);
        assert!(c.warnings.iter().any(flagged), "{:?}", c.warnings);
        assert!(
            !c.warnings
                .iter()
                .any(|w| matches!(w, Warning::VarianceOnlyChange { .. }))
        );
    }
}

#[test]
fn bimodal_data_is_flagged_and_not_mistaken_for_change() {
    // Half the runs land 10 % slower (e.g. a different NUMA node).
    let mut rng = Rng(8);
    let bimodal = |rng: &mut Rng| {
        let mut v: Vec<f64> = (0..20)
            .map(|i| if i % 2 == 0 { 100.0 } else { 110.0 } * (1.0 + 0.005 * rng.normal()))
            .collect();
        v.rotate_left((rng.next_u64() % 20) as usize);
        v
    };
    let trials = 500;
    let (mut alarms, mut flagged) = (0, 0);
    for _ in 0..trials {
        let a = side(bimodal(&mut rng));
        let b = side(bimodal(&mut rng));
        let c = compare_metric(&a, &b, Direction::Lower, &CompareOptions::default());
        alarms += is_alarm(&c) as usize;
        flagged += c
            .warnings
            .iter()
            .any(|w| matches!(w, Warning::Bimodal { .. })) as usize;
    }
    println!("bimodal A/A: alarms {alarms}/{trials}, flagged {flagged}/{trials}");
    assert!(alarms as f64 / trials as f64 <= 0.05);
    assert_eq!(flagged, trials);
}

#[test]
fn non_positive_values_are_an_error() {
    let samples = Samples::new(vec![1.0, 0.0, 2.0]).unwrap();
    assert_eq!(
        Side::new(samples),
        Err(StatsError::NonPositive {
            index: 1,
            value: 0.0
        })
    );
}

/// Change points as (index, verdict).
type Changes = [(usize, Verdict)];

/// Share of simulated histories (10 samples per version, 1 % CV) whose
/// change points are exactly `expected`.
fn history_rate(rng: &mut Rng, levels: &[f64], expected: &Changes) -> f64 {
    let trials = 200;
    let mut exact = 0;
    for _ in 0..trials {
        let versions: Vec<Side> = levels
            .iter()
            .map(|&l| side(rng.samples(10, l, 0.01)))
            .collect();
        let found: Vec<(usize, Verdict)> =
            change_points(&versions, Direction::Lower, &ChangePointOptions::default())
                .iter()
                .map(|c| (c.index, c.verdict))
                .collect();
        exact += (found == expected) as usize;
    }
    exact as f64 / trials as f64
}

#[test]
fn change_points_in_noisy_histories() {
    let mut rng = Rng(9);
    let flat = [100.0; 12];
    let mut spike = flat;
    spike[6] = 110.0;
    let mut small_spike = flat;
    small_spike[3] = 103.0;
    let mut last = flat;
    last[11] = 103.0;
    let mut regress_fix = flat;
    regress_fix[5] = 105.0;
    regress_fix[6] = 105.0;
    let mut long = [100.0; 30];
    long[14] = 97.0;
    long[15] = 97.0;
    let cases: [(&str, &[f64], &Changes, f64); 6] = [
        ("flat", &flat, &[], 0.95),
        ("one-version spike +10 %", &spike, &[], 0.95),
        ("one-version spike +3 %", &small_spike, &[], 0.95),
        (
            "30 versions, -3 % at 14, back at 16",
            &long,
            &[(14, Verdict::Improvement), (16, Verdict::Regression)],
            0.9,
        ),
        (
            "+3 % at the last version",
            &last,
            &[(11, Verdict::Regression)],
            0.9,
        ),
        (
            "+5 % at 5, fixed at 7",
            &regress_fix,
            &[(5, Verdict::Regression), (7, Verdict::Improvement)],
            0.9,
        ),
    ];
    for (name, levels, expected, minimum) in cases {
        let rate = history_rate(&mut rng, levels, expected);
        println!("history {name}: exactly right {:.1} %", 100.0 * rate);
        assert!(rate >= minimum, "{name}: {rate}");
    }
}
