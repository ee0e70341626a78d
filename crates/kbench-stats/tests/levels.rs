//! The levelled analysis (identifiers measured apart, in units of rounds)
//! against issue 33's requirements, on simulated nested data from a seeded
//! generator: the same numbers every run. Run with `--nocapture` to see
//! the measured rates (docs/statistics.md, "Measured apart: units, boots
//! and the host's drift", quotes them).
//!
//! The generator: a metric has K units per side, each of 5 rounds of 5
//! samples. On logs, a sample is change + the unit's level + its round's
//! level + its own noise, with the round N(0, sigma_round) and the sample
//! N(0, 1 %). A round's mean is the mean of its samples' values, as
//! `kbench run` stores it. The unit levels follow one of two drift models:
//!
//! - **constant**: N(0, sigma_unit) for each unit, independent. One side's
//!   units are measured after the other's, so K >= 2 tests the independent
//!   units (order does not matter when drift does not grow);
//! - **growing**: a random walk over the units of both sides in time
//!   order, the sides taking turns (A B A B ...), so K >= 2 tests the
//!   alternating design. Its step SD is sqrt(2) sigma_unit: neighbours
//!   differ by as much as two units of the constant model, while units
//!   far apart in time differ more and more.
//!
//! Every family of 200 metrics goes through `compare_all_thresholded` with
//! Benjamini-Hochberg at a 1 % threshold and alpha 0.05. One unit per side
//! is compared with [`DEFAULT_DRIFT`] as the host's drift prior (3.5 %,
//! against the 3 % or 0.3 % simulated).

use kbench_model::Direction;
use kbench_stats::compare::{
    Components, Costs, DEFAULT_DRIFT, Levelled, Plan, Unit, UnitKind, compare_all_thresholded,
};
use kbench_stats::{CompareOptions, Comparison, MetricInput, Samples, Side, Verdict};

mod support;

use support::Rng;

const METRICS: usize = 200;
const ROUNDS: usize = 5;
const SAMPLES: usize = 5;
/// SD of one sample on logs.
const SAMPLE_SD: f64 = 0.01;
const COSTS: Costs = Costs {
    unit_s: 30.0,
    round_s: 1.0,
};

/// The noise of the two nested levels above the samples, on logs.
#[derive(Debug, Clone, Copy)]
struct Noise {
    unit_sd: f64,
    round_sd: f64,
}

/// Units apart in time by much (3 %) and rounds little (1 %), as issue
/// 33 measured; and the other way round (0.3 %, 4 %).
const NOISES: [Noise; 2] = [
    Noise {
        unit_sd: 0.03,
        round_sd: 0.01,
    },
    Noise {
        unit_sd: 0.003,
        round_sd: 0.04,
    },
];

#[derive(Debug, Clone, Copy, PartialEq)]
enum Drift {
    /// Independent unit levels, one side's units after the other's.
    Constant,
    /// A random walk over the units in time order, sides taking turns.
    Growing,
}

/// One setting of the generator.
#[derive(Debug, Clone, Copy)]
struct Setting {
    units: usize,
    noise: Noise,
    drift: Drift,
    /// Whether the sides take turns (the growing model always does).
    alternate: bool,
}

impl Setting {
    fn new(units: usize, noise: Noise, drift: Drift) -> Setting {
        Setting {
            units,
            noise,
            drift,
            alternate: drift == Drift::Growing,
        }
    }
}

/// One simulated metric: its units and every round as a side.
struct Metric {
    levelled: Levelled,
    sides: [Side; 2],
}

/// The unit levels of both sides in time order, and each unit's start
/// (its place in time): [baseline, current].
fn unit_levels(rng: &mut Rng, setting: &Setting) -> [Vec<(i64, f64)>; 2] {
    let k = setting.units;
    let order: Vec<usize> = if setting.alternate {
        (0..2 * k).map(|i| i % 2).collect()
    } else {
        (0..2 * k).map(|i| i / k).collect()
    };
    let sd = setting.noise.unit_sd;
    let mut walk = 0.0;
    let mut levels = [Vec::new(), Vec::new()];
    for (time, side) in order.into_iter().enumerate() {
        let level = match setting.drift {
            Drift::Constant => sd * rng.normal(),
            Drift::Growing => {
                walk += std::f64::consts::SQRT_2 * sd * rng.normal();
                walk
            }
        };
        levels[side].push((time as i64 * 60_000, level));
    }
    levels
}

/// A metric of `setting`, current changed by the factor `1 + change`.
fn metric(rng: &mut Rng, setting: &Setting, change: f64) -> Metric {
    let shift = [0.0, change.ln_1p()];
    let mut rounds: [Vec<Samples>; 2] = [Vec::new(), Vec::new()];
    let units = unit_levels(rng, setting).map(|side| side.into_iter());
    let [a, b] = units
        .into_iter()
        .enumerate()
        .map(|(side, levels)| {
            levels
                .map(|(start_ms, level)| {
                    let mut logs = Vec::with_capacity(ROUNDS);
                    for _ in 0..ROUNDS {
                        let round = shift[side] + level + setting.noise.round_sd * rng.normal();
                        let values: Vec<f64> = (0..SAMPLES)
                            .map(|_| (round + SAMPLE_SD * rng.normal()).exp())
                            .collect();
                        let values = Samples::new(values).unwrap();
                        logs.push(values.mean().ln());
                        rounds[side].push(values);
                    }
                    Unit {
                        start_ms,
                        round_logs: Samples::new(logs).unwrap(),
                    }
                })
                .collect::<Vec<Unit>>()
        })
        .collect::<Vec<_>>()
        .try_into()
        .unwrap_or_else(|_| unreachable!("two sides"));
    let levelled = Levelled::new(UnitKind::Boot, a, b, Some(DEFAULT_DRIFT), COSTS).unwrap();
    Metric {
        levelled,
        sides: rounds.map(|r| Side::from_rounds(&r).unwrap()),
    }
}

/// How a family's metrics are compared.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Analysis {
    /// By units (the levelled analysis).
    Levelled,
    /// Every round as an observation, as before issue 33 (`units: None`).
    PooledRounds,
}

/// A family of `METRICS`, the first `changed` of them by `change`: each
/// metric's verdict.
fn family(
    rng: &mut Rng,
    setting: &Setting,
    changed: usize,
    change: f64,
    analysis: Analysis,
) -> Vec<Verdict> {
    let metrics: Vec<Metric> = (0..METRICS)
        .map(|i| metric(rng, setting, if i < changed { change } else { 0.0 }))
        .collect();
    let inputs: Vec<MetricInput<'_>> = metrics
        .iter()
        .map(|m| MetricInput {
            baseline: &m.sides[0],
            current: &m.sides[1],
            better: Direction::Lower,
            blocks: None,
            units: (analysis == Analysis::Levelled).then_some(&m.levelled),
        })
        .collect();
    compare_all_thresholded(&inputs, &CompareOptions::default(), &[0.01; METRICS])
        .iter()
        .map(|c: &Comparison| c.verdict)
        .collect()
}

fn is_alarm(verdict: &Verdict) -> bool {
    matches!(verdict, Verdict::Regression | Verdict::Improvement)
}

/// Trials per setting: 100 families of 200 metrics. An alarm-free rate of
/// 95 % would be measured within +-2.2 points (one SE).
const TRIALS: usize = 100;

/// Every setting of the A/A and half-changed requirements.
fn grid() -> Vec<Setting> {
    let mut grid = Vec::new();
    for noise in NOISES {
        for drift in [Drift::Constant, Drift::Growing] {
            for units in [1, 2, 4, 8] {
                grid.push(Setting::new(units, noise, drift));
            }
        }
    }
    grid
}

fn label(s: &Setting) -> String {
    format!(
        "{} unit(s)/side, unit {:.1} %, round {:.0} %, {:?}{}",
        s.units,
        100.0 * s.noise.unit_sd,
        100.0 * s.noise.round_sd,
        s.drift,
        if s.alternate { ", alternating" } else { "" }
    )
}

/// A/A families of 200 metrics: no metric called changed in at least 95 %
/// of the families, whatever the level of the noise and the drift.
///
/// Over a family where nothing changed, Benjamini-Hochberg raises an alarm
/// with probability alpha = 5 % when the p-values are exact (Simes), and
/// the 1 % threshold barely lowers that when the standard error is several
/// times the threshold (units 3 % apart, 2-8 per side): such settings are
/// quiet in about 95 % of families by design, not more (94.2 % over 2000
/// families of 4 alternating units per side). So each setting may fall
/// short of 95 % by two sampling SEs (90.6 % at 100 trials), and all
/// settings together must reach 95 %.
#[test]
fn aa_families_raise_no_alarm() {
    let mut rng = Rng(33);
    let settings = grid();
    let mut all_quiet = 0;
    for setting in &settings {
        let quiet = (0..TRIALS)
            .filter(|_| {
                let verdicts = family(&mut rng, setting, 0, 0.0, Analysis::Levelled);
                !verdicts.iter().any(is_alarm)
            })
            .count();
        all_quiet += quiet;
        let rate = quiet as f64 / TRIALS as f64;
        println!(
            "A/A {}: {:.1} % of families quiet",
            label(setting),
            100.0 * rate
        );
        let sampling = (0.95 * 0.05 / TRIALS as f64).sqrt();
        assert!(rate >= 0.95 - 2.0 * sampling, "{}: {rate}", label(setting));
    }
    let rate = all_quiet as f64 / (TRIALS * settings.len()) as f64;
    println!("A/A, all settings: {:.1} % of families quiet", 100.0 * rate);
    assert!(rate >= 0.95, "{rate}");
}

/// Half of each family changed by +10 %: at most 3 % of the unchanged
/// half is called changed. Counted per metric, so 50 families (5000
/// unchanged metrics per setting) measure a 3 % rate within +-0.25 points.
#[test]
fn half_changed_families_keep_the_unchanged_quiet() {
    let mut rng = Rng(34);
    let trials = TRIALS / 2;
    for setting in grid() {
        let (mut false_alarms, mut found) = (0, 0);
        for _ in 0..trials {
            let verdicts = family(&mut rng, &setting, METRICS / 2, 0.10, Analysis::Levelled);
            let (changed, unchanged) = verdicts.split_at(METRICS / 2);
            false_alarms += unchanged.iter().filter(|v| is_alarm(v)).count();
            found += changed
                .iter()
                .filter(|v| **v == Verdict::Regression)
                .count();
        }
        let half = (trials * METRICS / 2) as f64;
        let (false_rate, power) = (false_alarms as f64 / half, found as f64 / half);
        println!(
            "half +10 % {}: {:.2} % of the unchanged called changed, {:.1} % of the changed found",
            label(&setting),
            100.0 * false_rate,
            100.0 * power
        );
        assert!(false_rate <= 0.03, "{}: {false_rate}", label(&setting));
    }
}

/// The share of a half-changed family's changed metrics called a
/// REGRESSION (the metrics' lower is better), over `TRIALS` families.
fn power(rng: &mut Rng, setting: &Setting, change: f64) -> f64 {
    let found: usize = (0..TRIALS)
        .map(|_| {
            let verdicts = family(rng, setting, METRICS / 2, change, Analysis::Levelled);
            verdicts[..METRICS / 2]
                .iter()
                .filter(|v| **v == Verdict::Regression)
                .count()
        })
        .sum();
    found as f64 / (TRIALS * METRICS / 2) as f64
}

/// +10 % with 6 boots per side taking turns (units 3 %, rounds 1 %) is
/// found in at least 90 %, with either drift model.
#[test]
fn ten_percent_is_found_with_six_alternating_units() {
    let mut rng = Rng(35);
    for drift in [Drift::Constant, Drift::Growing] {
        let setting = Setting {
            alternate: true,
            ..Setting::new(6, NOISES[0], drift)
        };
        let found = power(&mut rng, &setting, 0.10);
        println!("+10 % {}: found in {:.1} %", label(&setting), 100.0 * found);
        assert!(found >= 0.90, "{}: {found}", label(&setting));
    }
}

/// +30 % with one boot per side, under the default drift prior: found in
/// at least 90 %.
#[test]
fn thirty_percent_is_found_with_one_unit_per_side() {
    let mut rng = Rng(36);
    for drift in [Drift::Constant, Drift::Growing] {
        let setting = Setting::new(1, NOISES[0], drift);
        let found = power(&mut rng, &setting, 0.30);
        println!("+30 % {}: found in {:.1} %", label(&setting), 100.0 * found);
        assert!(found >= 0.90, "{}: {found}", label(&setting));
    }
}

/// The plan's units per side find its target with the power it promises
/// (within 10 points): each metric compared alone (the plan's alpha is
/// per test, not per family), the units taking turns.
#[test]
fn the_plan_keeps_its_promise() {
    let mut rng = Rng(37);
    let trials = 2000;
    for (noise, change, power) in [
        (NOISES[0], 0.10f64, 0.9),
        (NOISES[0], 0.05, 0.8),
        (NOISES[1], 0.05, 0.8),
        (
            Noise {
                unit_sd: 0.01,
                round_sd: 0.01,
            },
            0.03,
            0.8,
        ),
    ] {
        let options = CompareOptions {
            power,
            ..CompareOptions::default()
        };
        // A round's log varies by its level and the mean of its samples.
        let round_sd = (noise.round_sd.powi(2) + SAMPLE_SD.powi(2) / SAMPLES as f64).sqrt();
        let components = Components {
            unit_sd: noise.unit_sd,
            round_sd: Some(round_sd),
            rounds_per_unit: ROUNDS as f64,
            df: 0.0,
            drift: None,
        };
        let plan = Plan::new(&components, COSTS, change.ln_1p(), &options);
        let units = plan.units_per_side.expect("within reach");
        let setting = Setting {
            alternate: true,
            ..Setting::new(units, noise, Drift::Constant)
        };
        let found = (0..trials)
            .filter(|_| {
                let m = metric(&mut rng, &setting, change);
                let input = MetricInput {
                    baseline: &m.sides[0],
                    current: &m.sides[1],
                    better: Direction::Lower,
                    blocks: None,
                    units: Some(&m.levelled),
                };
                compare_all_thresholded(&[input], &options, &[0.01])[0].verdict
                    == Verdict::Regression
            })
            .count() as f64
            / trials as f64;
        println!(
            "plan for +{:.0} % at {:.0} % power, {}: {units} units/side, found in {:.1} %",
            100.0 * change,
            100.0 * power,
            label(&setting),
            100.0 * found
        );
        assert!(
            (found - power).abs() <= 0.10,
            "{}: {found}",
            label(&setting)
        );
    }
}

/// The motivation: every round taken as an observation (as before), A/A
/// families call many metrics changed (at least 10 %), with 1 and with 4
/// runs per side; the levelled analysis calls next to none.
#[test]
fn pooling_rounds_calls_drift_a_change() {
    let mut rng = Rng(38);
    let trials = 20;
    for units in [1, 4] {
        let setting = Setting::new(units, NOISES[0], Drift::Constant);
        let alarms = |rng: &mut Rng, analysis| -> f64 {
            let total: usize = (0..trials)
                .map(|_| {
                    let verdicts = family(rng, &setting, 0, 0.0, analysis);
                    verdicts.iter().filter(|v| is_alarm(v)).count()
                })
                .sum();
            total as f64 / trials as f64
        };
        let pooled = alarms(&mut rng, Analysis::PooledRounds);
        let levelled = alarms(&mut rng, Analysis::Levelled);
        println!(
            "A/A {}: rounds pooled call {pooled:.1} of {METRICS} changed, units {levelled:.2}",
            label(&setting)
        );
        assert!(pooled >= 20.0, "{}: {pooled}", label(&setting));
        assert!(levelled < 1.0, "{}: {levelled}", label(&setting));
    }
}
