//! What a comparison's report says of identifiers measured apart: how
//! they were decided ([`shape`]: the level, the design and the drift
//! assumed; a summary's level of analysis), and in a note ([`verdict_line`],
//! one for the identifiers decided alike) the noise of each level and the
//! degrees of freedom too; and, once, when the threshold is finer than
//! such a comparison can resolve.

use crate::number::date;
use kbench_stats::compare::{
    Analysis, CompareOptions, Comparison, Components, Design, DriftSource, Plan, UnitKind,
};
use kbench_stats::{Samples, Verdict};

/// A levelled comparison's facts, as the line reads them.
struct Decided<'a> {
    unit: UnitKind,
    design: Design,
    units: [usize; 2],
    components: &'a Components,
}

fn decided(comparison: &Comparison) -> Option<Decided<'_>> {
    match (comparison.analysis, &comparison.components) {
        (
            Analysis::Levels {
                unit,
                design,
                units,
            },
            Some(components),
        ) => Some(Decided {
            unit,
            design,
            units,
            components,
        }),
        _ => None,
    }
}

/// "run" or "boot".
pub fn unit_word(unit: UnitKind) -> &'static str {
    match unit {
        UnitKind::Run => "run",
        UnitKind::Boot => "boot",
    }
}

/// What was measured apart and how it was decided, over the comparisons
/// of one compared identifier's metrics (or of several decided alike):
/// [`shape`], then the noise of each level: "measured apart (1 and 1
/// runs): ...; median over 49 metric(s): run SD 3.5 %, 10.0 degrees of
/// freedom."; [`crate::notes`] puts the identifiers in front. `None` when
/// none was decided on units.
pub fn verdict_line(comparisons: &[&Comparison]) -> Option<String> {
    let levelled: Vec<Decided> = comparisons.iter().filter_map(|c| decided(c)).collect();
    let mut line = shape_of(&levelled)?;
    let kind = unit_word(levelled[0].unit);
    let components = |f: fn(&Components) -> Option<f64>| {
        let values: Vec<f64> = levelled.iter().filter_map(|d| f(d.components)).collect();
        (!values.is_empty()).then(|| median(values.into_iter()))
    };
    let unit_sd = components(|c| Some(c.unit_sd)).unwrap_or(0.0);
    let df = components(|c| Some(c.df)).unwrap_or(0.0);
    line.push_str(&format!(
        "; median over {} metric(s): {kind} SD {}",
        levelled.len(),
        percent(unit_sd)
    ));
    if let Some(round_sd) = components(|c| c.round_sd) {
        line.push_str(&format!(", round SD {}", percent(round_sd)));
    }
    line.push_str(&format!(", {df:.1} degrees of freedom."));
    Some(line)
}

/// How comparisons measured apart were decided, in one clause: the units
/// per side, the design and the drift assumed: "measured apart (1 and 1
/// runs): one run on a side, so the host's drift widens each CI: the
/// default run drift, 3.5 % (...)". The level of analysis a summary
/// states, and what identifiers share to be named in one note. `None`
/// when none was decided on units.
pub fn shape(comparisons: &[&Comparison]) -> Option<String> {
    let levelled: Vec<Decided> = comparisons.iter().filter_map(|c| decided(c)).collect();
    shape_of(&levelled)
}

fn shape_of(levelled: &[Decided]) -> Option<String> {
    let first = levelled.first()?;
    let kind = unit_word(first.unit);
    let most = |side: usize| levelled.iter().map(|d| d.units[side]).max().unwrap_or(0);
    let (a, b) = (most(0), most(1));
    let design = most_common(levelled.iter().map(|d| d.design));
    let how = match design {
        Design::Alternating => format!("the {kind}s alternated, so neighbours were paired"),
        Design::Independent => {
            format!("the {kind}s did not alternate, so their means were compared (Welch)")
        }
        Design::OneEach => format!("one {kind} on a side, so the host's drift widens each CI"),
    };
    let mut line = format!("measured apart ({a} and {b} {kind}s): {how}");
    let priors: Vec<(f64, DriftSource)> = levelled
        .iter()
        .filter_map(|d| d.components.drift)
        .filter(|d| !matches!(d.source, DriftSource::Units { .. }))
        .map(|d| (d.sd, d.source))
        .collect();
    if let Some(&(_, source)) = priors.first() {
        let sd = median(priors.iter().map(|(sd, _)| *sd));
        line.push_str(&match source {
            DriftSource::Calibrated { pairs, at_ms } => format!(
                ": this host's {kind} drift, {} (calibrated {}, {pairs} pairs)",
                percent(sd),
                date(at_ms)
            ),
            _ => format!(
                ": the default {kind} drift, {} (this host is not calibrated: `kbench \
                 calibrate`)",
                percent(sd)
            ),
        });
    }
    Some(line)
}

/// Once per report: when some levelled metrics stay INCONCLUSIVE because
/// the threshold is finer than drift between units lets any practical
/// number of them resolve, what ruling out a change of the threshold's
/// size would take. `None` when no metric is out of reach.
pub fn threshold_note(comparisons: &[&Comparison], thresholds: &[f64]) -> Option<String> {
    const PRACTICAL: usize = 30;
    let mut out_of_reach = vec![];
    for (comparison, &threshold) in comparisons.iter().zip(thresholds) {
        let Some(d) = decided(comparison) else {
            continue;
        };
        let far = comparison
            .plan
            .is_some_and(|p| p.units_per_side.is_none_or(|n| n > PRACTICAL));
        if comparison.verdict == Verdict::Inconclusive && far {
            let options = CompareOptions {
                threshold,
                ..CompareOptions::default()
            };
            let null = Plan::units_per_side(d.components, 0.0, &options);
            out_of_reach.push((d.unit, d.components.unit_sd, threshold, null));
        }
    }
    let &(unit, _, threshold, _) = out_of_reach.first()?;
    let kind = unit_word(unit);
    let sd = median(out_of_reach.iter().map(|o| o.1));
    let needed: Vec<usize> = out_of_reach.iter().filter_map(|o| o.3).collect();
    let cost = match needed.is_empty() {
        true => "more than 1000".to_string(),
        false => format!("about {}", median(needed.iter().map(|&n| n as f64)).round()),
    };
    Some(format!(
        "{} metric(s) cannot be decided within 30 {kind}s per side at the threshold of {}: \
         a {kind}'s level wanders by about {} (median), so telling a change from none at \
         ±{} takes {cost} alternating {kind}s per side, and more rounds per {kind} do not \
         replace them. Set --threshold to the smallest change that matters to you.",
        out_of_reach.len(),
        percent(threshold),
        percent(sd),
        percent(threshold),
    ))
}

fn percent(fraction: f64) -> String {
    format!("{:.1} %", 100.0 * fraction)
}

/// kbench-stats' median of `values` (NaN when there are none).
fn median(values: impl Iterator<Item = f64>) -> f64 {
    Samples::new(values.collect()).map_or(f64::NAN, |s| s.median())
}

fn most_common<T: PartialEq + Copy>(items: impl Iterator<Item = T>) -> T {
    let items: Vec<T> = items.collect();
    *items
        .iter()
        .max_by_key(|x| items.iter().filter(|y| y == x).count())
        .expect("at least one")
}
