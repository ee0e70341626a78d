//! The independent analysis of one metric: the sides as independent
//! samples. Welch's t-test on the logs decides (unless no test can, see
//! `undecided`); Mann-Whitney U is a cross-check from 6 observations per
//! side; the MDE follows Welch's standard error (see `power`).

use super::comparison::Analysis;
use super::input::MetricInput;
use super::mann_whitney::mann_whitney;
use super::options::CompareOptions;
use super::power::{Spread, min_detectable_effect};
use super::tested::Tested;
use super::warning::Warning;
use super::welch::welch;
use super::{undecided, warning};
use crate::{Estimate, Summary};

/// Observations per side from which the Mann-Whitney cross-check runs.
const MWU_MIN_N: usize = 6;

/// The independent test of one metric.
pub(super) fn test(metric: &MetricInput<'_>, options: &CompareOptions) -> Tested {
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
        levels: None,
    }
}
