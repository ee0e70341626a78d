//! The levelled analysis of one metric: the sides' units compared by the
//! test their layout in time calls for (see `levels`, and
//! docs/statistics.md, "Measured apart").

use super::comparison::Analysis;
use super::input::MetricInput;
use super::levels::{Components, Design, Levelled, Noise};
use super::options::CompareOptions;
use super::power::detectable;
use super::tested::{Levels, Tested};
use super::warning::{self, Warning};
use super::welch::t_test;
use crate::{Estimate, Summary};

/// The levelled test of one metric.
pub(super) fn test(metric: &MetricInput<'_>, units: &Levelled, options: &CompareOptions) -> Tested {
    let noise = Noise::of(units);
    let design = Design::of(units, &noise);
    let difference = design.difference(units, &noise);
    let point = difference
        .as_ref()
        .map_or(noise.mean_difference(), |d| d.point);
    let decided = difference.and_then(|d| {
        if d.se == 0.0 {
            Err(Warning::NoSpread)
        } else {
            Ok(d)
        }
    });
    let level = 1.0 - options.alpha;
    let test = decided
        .as_ref()
        .ok()
        .map(|d| t_test(d.point, d.se, d.df, d.n, level));
    let log_ratio = test.map_or(
        Estimate {
            point,
            ci_low: f64::NEG_INFINITY,
            ci_high: f64::INFINITY,
            n: units.counts().iter().sum(),
        },
        |t| t.diff,
    );
    let p_value = test.map(|t| t.p_value);
    let means_differ = p_value.is_some_and(|p| p < options.alpha);
    let mut warnings: Vec<Warning> = decided.as_ref().err().cloned().into_iter().collect();
    warnings.extend(warning::warnings(
        metric.baseline,
        metric.current,
        p_value.is_some() && !means_differ,
    ));
    let decided = decided.ok();
    Tested {
        better: metric.better,
        ratio: log_ratio.map(f64::exp),
        p_welch: p_value,
        p_mwu: None,
        p_value,
        spreads: None,
        mde_pct: decided.map(|d| 100.0 * detectable(d.se, d.df, options.alpha, options.power)),
        warnings,
        baseline: Summary::of(metric.baseline.observations()),
        current: Summary::of(metric.current.observations()),
        analysis: Analysis::Levels {
            unit: units.kind,
            design,
            units: units.counts(),
        },
        levels: decided.map(|d| Levels {
            components: Components {
                unit_sd: d.unit_variance.sqrt(),
                round_sd: noise.round().map(|r| r.variance.sqrt()),
                rounds_per_unit: noise.rounds_per_unit(),
                df: d.df,
                drift: d.drift,
            },
            costs: units.costs,
        }),
    }
}
