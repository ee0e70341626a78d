//! The levelled analysis through `compare_all`: designs, the one-unit
//! rule by hand, refusals, and what a comparison carries.

use kbench_model::Direction;

use crate::compare::{
    Analysis, CompareOptions, Comparison, Costs, DEFAULT_DRIFT, Design, Drift, DriftSource,
    Levelled, MetricInput, Unit, UnitKind, Verdict, Warning, compare_all,
};
use crate::dist::t_quantile;
use crate::{Samples, Side};

const COSTS: Costs = Costs {
    unit_s: 30.0,
    round_s: 1.0,
};

/// A unit at `start_ms` whose rounds' logs are `level` plus `offsets`.
fn unit(start_ms: i64, level: f64, offsets: &[f64]) -> Unit {
    Unit {
        start_ms,
        round_logs: Samples::new(offsets.iter().map(|o| level + o).collect()).unwrap(),
    }
}

/// Every round of every unit as one side's round means (what the summaries
/// and warnings read).
fn side_of(units: &[Unit]) -> Side {
    let rounds: Vec<Samples> = units
        .iter()
        .flat_map(|u| u.round_logs.as_slice())
        .map(|log| Samples::new(vec![log.exp()]).unwrap())
        .collect();
    Side::from_rounds(&rounds).unwrap()
}

fn compare(baseline: Vec<Unit>, current: Vec<Unit>, drift: Option<Drift>) -> Comparison {
    let (a, b) = (side_of(&baseline), side_of(&current));
    let levelled = Levelled::new(UnitKind::Boot, baseline, current, drift, COSTS).unwrap();
    let metric = MetricInput {
        baseline: &a,
        current: &b,
        better: Direction::Lower,
        blocks: None,
        units: Some(&levelled),
    };
    compare_all(&[metric], &CompareOptions::default()).remove(0)
}

const ROUNDS: [f64; 3] = [0.0, 0.004, -0.004];

/// A/A with a steady trend (+1 % per unit) and an effect of going first
/// in a pair (-3 %): in A B A B order every pair's d carries both, +4 %,
/// a false REGRESSION; in the counterbalanced A B B A order they alternate
/// in sign and cancel, and the pairs are still paired.
#[test]
fn counterbalanced_pairs_cancel_a_trend_and_going_first() {
    let jitter = [0.001, -0.002, 0.0, 0.002, -0.001, 0.0, 0.001, -0.001];
    let layout = |current_first: &[bool]| {
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for (pair, &b_first) in current_first.iter().enumerate() {
            for slot in 0..2 {
                let position = 2 * pair + slot;
                let level =
                    0.01 * position as f64 + jitter[position] - if slot == 0 { 0.03 } else { 0.0 };
                let unit = unit(position as i64, level, &ROUNDS);
                match (slot == 0) == b_first {
                    true => b.push(unit),
                    false => a.push(unit),
                }
            }
        }
        compare(a, b, None)
    };
    let in_turns = layout(&[false, false, false, false]);
    assert_eq!(in_turns.verdict, Verdict::Regression, "{in_turns:?}");
    assert!((in_turns.change_pct.point - 4.1).abs() < 0.2);
    let balanced = layout(&[false, true, false, true]);
    assert!(matches!(
        balanced.analysis,
        Analysis::Levels {
            design: Design::Alternating,
            units: [4, 4],
            ..
        }
    ));
    assert_ne!(balanced.verdict, Verdict::Regression, "{balanced:?}");
    assert!(balanced.change_pct.point.abs() < 0.5, "{balanced:?}");
}

/// Pairs of neighbouring boots share a level that wanders by +-8 % from
/// pair to pair; current is 3 % slower within each pair. Paired
/// neighbours see the 3 %; the boots as independent units see the
/// wandering.
#[test]
fn alternating_units_cancel_slow_drift() {
    let wander = [0.0, 0.08, -0.06, 0.05, -0.08, 0.02];
    let jitter = [0.002, -0.001, 0.0, 0.001, -0.002, 0.0];
    let layout = |turns: bool| {
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for (k, (w, j)) in wander.iter().zip(jitter).enumerate() {
            let k = k as i64;
            let (start_a, start_b) = if turns {
                (2 * k, 2 * k + 1)
            } else {
                (k, 100 + k)
            };
            a.push(unit(start_a, *w, &ROUNDS));
            b.push(unit(start_b, w + 0.03 + j, &ROUNDS));
        }
        (a, b)
    };
    let (a, b) = layout(true);
    let paired = compare(a, b, None);
    assert_eq!(
        paired.analysis,
        Analysis::Levels {
            unit: UnitKind::Boot,
            design: Design::Alternating,
            units: [6, 6]
        }
    );
    assert_eq!(paired.verdict, Verdict::Regression, "{paired:?}");
    assert!((paired.change_pct.point - 3.0).abs() < 0.1);
    let components = paired.components.unwrap();
    assert_eq!(components.df, 5.0);
    assert!(components.unit_sd < 0.002, "{components:?}");
    assert!((components.round_sd.unwrap() - 0.004).abs() < 1e-12);
    let (a, b) = layout(false);
    let apart = compare(a, b, None);
    assert!(matches!(
        apart.analysis,
        Analysis::Levels {
            design: Design::Independent,
            ..
        }
    ));
    assert_eq!(apart.verdict, Verdict::Inconclusive, "{apart:?}");
    assert!(apart.components.unwrap().unit_sd > 0.05);
}

/// One boot per side: SE^2 = sigma^2_round (1/3 + 1/3) + 2 sigma^2_drift,
/// df = SE^4 / (round^2 / 4 + drift^2 / 10), by hand.
#[test]
fn one_unit_per_side_by_hand() {
    let change = 0.05;
    let c = compare(
        vec![unit(0, 0.0, &[0.0, 0.02, -0.02])],
        vec![unit(1, change, &[0.0, 0.02, -0.02])],
        Some(DEFAULT_DRIFT),
    );
    let (round, drift): (f64, f64) = (0.0004 * 2.0 / 3.0, 2.0 * 0.035 * 0.035);
    let se = (round + drift).sqrt();
    let df = (round + drift).powi(2) / (round * round / 4.0 + drift * drift / 10.0);
    let components = c.components.unwrap();
    assert!((components.df - df).abs() < 1e-9, "{components:?} {df}");
    let half = c.ratio.ci_high.ln() - change;
    assert!((half - t_quantile(0.975, df) * se).abs() < 1e-12);
    assert_eq!(c.verdict, Verdict::Inconclusive, "5 % is within drift");
    let drift = components.drift.unwrap();
    assert_eq!((drift.source, drift.df), (DriftSource::Default, 10.0));
    assert!((components.unit_sd - 0.035).abs() < 1e-12);
    assert!(matches!(
        c.analysis,
        Analysis::Levels {
            design: Design::OneEach,
            units: [1, 1],
            ..
        }
    ));
    assert_eq!(c.samples_needed, None, "the plan counts units");
    assert!(c.plan.unwrap().units_per_side.is_some());
    let big = compare(
        vec![unit(0, 0.0, &ROUNDS)],
        vec![unit(1, 0.3f64.ln_1p(), &ROUNDS)],
        Some(DEFAULT_DRIFT),
    );
    assert_eq!(big.verdict, Verdict::Regression, "{big:?}");
}

/// One boot against four that spread wider than the prior: the spread is
/// the drift (conservative), and the result says so.
#[test]
fn a_wider_spread_of_the_other_sides_units_is_the_drift() {
    let four: Vec<Unit> = [0.0, 0.1, -0.1, 0.05]
        .iter()
        .enumerate()
        .map(|(i, &level)| unit(i as i64, level, &ROUNDS))
        .collect();
    let c = compare(four, vec![unit(9, 0.0, &ROUNDS)], Some(DEFAULT_DRIFT));
    let drift = c.components.unwrap().drift.unwrap();
    assert_eq!(drift.source, DriftSource::Units { units: 4 });
    assert_eq!(drift.df, 3.0);
    assert!(drift.sd > 0.07, "{drift:?}");
    let calibrated = Drift {
        variance: 0.2 * 0.2,
        df: 20.0,
        source: DriftSource::Calibrated {
            pairs: 21,
            at_ms: 5,
        },
    };
    let four: Vec<Unit> = (0..4).map(|i| unit(i, 0.0, &ROUNDS)).collect();
    let c = compare(four, vec![unit(9, 0.0, &ROUNDS)], Some(calibrated));
    assert_eq!(
        c.components.unwrap().drift.unwrap().source,
        calibrated.source
    );
}

/// One unit against one with no prior: CANNOT DECIDE, out of the family.
#[test]
fn one_unit_each_without_a_prior_cannot_be_decided() {
    let c = compare(
        vec![unit(0, 0.0, &ROUNDS)],
        vec![unit(1, 0.5, &ROUNDS)],
        None,
    );
    assert_eq!(c.verdict, Verdict::CannotDecide);
    assert!(c.p_value.is_nan() && c.q_value.is_nan());
    assert_eq!((c.ratio.ci_low, c.ratio.ci_high), (0.0, f64::INFINITY));
    assert!((c.ratio.point - 0.5f64.exp()).abs() < 1e-12);
    assert_eq!(c.components, None);
    assert_eq!(c.plan, None);
    assert_eq!(
        c.warnings[0],
        Warning::NoDriftPrior {
            sides: crate::compare::Sides::Both
        }
    );
}

/// Identical units everywhere: no spread to test with.
#[test]
fn no_spread_at_any_level_cannot_be_decided() {
    let same = |start| unit(start, 0.0, &[0.0, 0.0]);
    let c = compare(vec![same(0), same(2)], vec![same(1), same(3)], None);
    assert_eq!(c.verdict, Verdict::CannotDecide);
    assert_eq!(c.warnings[0], Warning::NoSpread);
}

/// One round per unit: the round level is unknown and the units carry it.
#[test]
fn single_rounds_leave_the_unit_level_to_carry_all() {
    let levels = [0.0, 0.01, -0.01, 0.02];
    let a: Vec<Unit> = levels
        .iter()
        .enumerate()
        .map(|(i, &l)| unit(2 * i as i64, l, &[0.0]))
        .collect();
    let b: Vec<Unit> = levels
        .iter()
        .enumerate()
        .map(|(i, &l)| unit(2 * i as i64 + 1, l + 0.001 * i as f64, &[0.0]))
        .collect();
    let components = compare(a, b, None).components.unwrap();
    assert_eq!(components.round_sd, None);
    assert_eq!(components.rounds_per_unit, 1.0);
    assert!(components.unit_sd > 0.0);
}

/// Blocks, when there are two, still decide before units.
#[test]
fn blocks_come_first() {
    let (a, b) = (vec![unit(0, 0.0, &ROUNDS)], vec![unit(1, 0.0, &ROUNDS)]);
    let (side_a, side_b) = (side_of(&a), side_of(&b));
    let levelled = Levelled::new(UnitKind::Run, a, b, Some(DEFAULT_DRIFT), COSTS).unwrap();
    let blocks = [0.01, 0.012, 0.008];
    let metric = MetricInput {
        baseline: &side_a,
        current: &side_b,
        better: Direction::Lower,
        blocks: Some(&blocks),
        units: Some(&levelled),
    };
    let c = compare_all(&[metric], &CompareOptions::default()).remove(0);
    assert_eq!(c.analysis, Analysis::Blocked { blocks: 3 });
    assert_eq!((c.components, c.plan), (None, None));
}

#[test]
fn json_names_the_levels() {
    let c = compare(
        vec![unit(0, 0.0, &ROUNDS)],
        vec![unit(1, 0.02, &ROUNDS)],
        Some(DEFAULT_DRIFT),
    );
    let json = serde_json::to_value(&c).unwrap();
    assert_eq!(
        json["analysis"],
        serde_json::json!({"kind": "levels", "unit": "boot", "design": "one_each", "units": [1, 1]})
    );
    let components = &json["components"];
    for field in ["unit_sd", "round_sd", "rounds_per_unit", "df"] {
        assert!(components[field].is_number(), "{field}: {components}");
    }
    assert_eq!(components["drift"]["source"]["kind"], "default");
    for field in ["change_pct", "units_per_side", "rounds_per_unit"] {
        assert!(json["plan"][field].is_number(), "{field}: {json}");
    }
    assert!(json["plan"]["more_rounds_help"].is_boolean());
    let back: Comparison = serde_json::from_value(json).unwrap();
    assert_eq!(back.components, c.components);
    // The other analyses carry neither field.
    let side = side_of(&[unit(0, 0.0, &ROUNDS), unit(1, 0.01, &ROUNDS)]);
    let independent = crate::compare_metric(&side, &side, Direction::Lower, &Default::default());
    let json = serde_json::to_value(&independent).unwrap();
    assert!(json.get("components").is_none() && json.get("plan").is_none());
}

#[test]
fn levelled_input_is_checked() {
    use crate::StatsError;
    let one = || vec![unit(0, 0.0, &ROUNDS)];
    let levelled = |a, b, drift, costs| Levelled::new(UnitKind::Run, a, b, drift, costs);
    assert_eq!(
        levelled(Vec::new(), one(), None, COSTS),
        Err(StatsError::NoUnits)
    );
    let no_df = Drift {
        df: 0.0,
        ..DEFAULT_DRIFT
    };
    assert!(levelled(one(), one(), Some(no_df), COSTS).is_err());
    let free_rounds = Costs {
        unit_s: 1.0,
        round_s: 0.0,
    };
    assert!(matches!(
        levelled(one(), one(), None, free_rounds),
        Err(StatsError::InvalidParameter {
            name: "round cost",
            ..
        })
    ));
}
