//! The noise of one version's mean, estimated from the series itself.
//!
//! Samples of one version share what differs between versions (drift
//! between invocations, the machine's slow spells), so their spread cannot
//! stand for the spread of version means. The series shows it: successive
//! version means differ by noise except at the few change points. The
//! noise is estimated from the first differences of the version means, as
//! difference-based change-point methods do (Fryzlewicz, "Wild binary
//! segmentation for multiple change-point detection", Annals of
//! Statistics 42, 2014: MAD of the differences over sqrt 2), made more
//! efficient by one cleaning step (Hampel's rule): differences more than 3
//! MADs (as sd) from their median are dropped, and the variance of the rest
//! about their median, over 2, corrected for the 3-sd truncation, is the
//! noise. A step moves one difference and a spike two, which are dropped;
//! a linear trend moves all of them alike, which centring removes.

use crate::Side;

/// Normal consistency factor of the MAD.
const MAD_TO_SD: f64 = 1.4826;

/// Differences further than this many (MAD-based) sd from the median are
/// dropped, and the variance of a normal cut there.
const CUT: f64 = 3.0;
const CUT_VARIANCE: f64 = 0.9733;

/// Degrees of freedom of the estimate per difference: what matching the
/// first two moments of the estimate to a scaled chi-square gives on
/// simulated normal series (0.41 at 6 versions, 0.51 at 12, 0.55 at 30,
/// 0.60 at 200; the MAD alone gives 0.3).
const DF_PER_DIFFERENCE: f64 = 0.5;

/// The variance of one version's mean of logs, with its degrees of freedom.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Noise {
    pub variance: f64,
    pub df: f64,
}

impl Noise {
    /// The larger of the between-version estimate (from the series) and
    /// the pooled within-version one (the variance of a version's mean from
    /// its own observations: round means with several rounds), each with
    /// its own df. The within-version estimate is a floor: a series of
    /// versions that agree exactly still has the noise of their samples.
    /// `None` when neither estimate is above zero: nothing can be decided.
    pub(crate) fn of(versions: &[Side]) -> Option<Noise> {
        let means: Vec<f64> = versions.iter().map(|v| v.logs().mean()).collect();
        [between(&means), within(versions)]
            .into_iter()
            .flatten()
            .filter(|noise| noise.variance > 0.0)
            .max_by(|a, b| a.variance.total_cmp(&b.variance))
    }
}

/// From the first differences of the version means; `None` below three
/// versions (one difference has no spread to measure).
fn between(means: &[f64]) -> Option<Noise> {
    if means.len() < 3 {
        return None;
    }
    let differences: Vec<f64> = means.windows(2).map(|w| w[1] - w[0]).collect();
    let centre = median(differences.clone());
    let deviations: Vec<f64> = differences.iter().map(|d| (d - centre).abs()).collect();
    let limit = CUT * MAD_TO_SD * median(deviations.clone());
    let kept: Vec<f64> = deviations.into_iter().filter(|d| *d <= limit).collect();
    let squares: f64 = kept.iter().map(|d| d * d).sum();
    Some(Noise {
        variance: squares / kept.len() as f64 / CUT_VARIANCE / 2.0,
        df: DF_PER_DIFFERENCE * differences.len() as f64,
    })
}

/// The mean over versions with two or more observations of their
/// variance over their count, with df the sum of their counts less one.
fn within(versions: &[Side]) -> Option<Noise> {
    let (mut sum, mut versions_used, mut df) = (0.0, 0usize, 0usize);
    for logs in versions.iter().map(Side::logs) {
        if let Some(variance) = logs.variance() {
            sum += variance / logs.len() as f64;
            versions_used += 1;
            df += logs.len() - 1;
        }
    }
    (versions_used > 0).then(|| Noise {
        variance: sum / versions_used as f64,
        df: df as f64,
    })
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_unstable_by(f64::total_cmp);
    let half = values.len() / 2;
    if values.len() % 2 == 1 {
        values[half]
    } else {
        (values[half - 1] + values[half]) / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Samples;

    fn version(values: &[f64]) -> Side {
        Side::new(Samples::new(values.to_vec()).unwrap()).unwrap()
    }

    fn one_each(values: &[f64]) -> Vec<Side> {
        values.iter().map(|&v| version(&[v])).collect()
    }

    #[test]
    fn the_cleaned_spread_of_the_differences_over_root_two() {
        // Log means 0, .01, .03, .02, .05, .04, .20: differences .01, .02,
        // -.01, .03, -.01, .16 around their median .015, absolute
        // deviations .005 .005 .025 .015 .025 .145, MAD .02: .145 is beyond
        // 3 x 1.4826 x .02 and dropped.
        let logs = [0.0, 0.01, 0.03, 0.02, 0.05, 0.04, 0.20];
        let values: Vec<f64> = logs.iter().map(|l: &f64| l.exp()).collect();
        let noise = Noise::of(&one_each(&values)).unwrap();
        let kept = [0.005f64, 0.005, 0.025, 0.015, 0.025];
        let expected = kept.iter().map(|d| d * d).sum::<f64>() / 5.0 / CUT_VARIANCE / 2.0;
        assert!((noise.variance / expected - 1.0).abs() < 1e-9, "{noise:?}");
        assert!((noise.df - 3.0).abs() < 1e-12);
    }

    #[test]
    fn a_step_barely_moves_it_and_a_trend_is_not_noise() {
        let wobble = |i: usize| 1.0 + ((i * 37 % 11) as f64 - 5.0) / 500.0;
        let flat: Vec<f64> = (0..20).map(wobble).collect();
        let stepped: Vec<f64> = (0..20)
            .map(|i| wobble(i) * if i >= 10 { 1.2 } else { 1.0 })
            .collect();
        let (a, b) = (
            Noise::of(&one_each(&flat)).unwrap(),
            Noise::of(&one_each(&stepped)).unwrap(),
        );
        assert!(b.variance / a.variance < 1.5, "{a:?} {b:?}");
        // A steady trend of 1 % per version: differences all alike.
        let trend: Vec<f64> = (0..9).map(|i| 1.01f64.powi(i)).collect();
        let trend = Noise::of(&one_each(&trend));
        assert!(trend.is_none_or(|n| n.variance < 1e-20), "{trend:?}");
    }

    #[test]
    fn the_within_version_spread_is_a_floor() {
        // Identical versions: no between-version noise, the samples' own.
        let spread = [1.0, 1.02, 0.98, 1.01];
        let versions = vec![version(&spread); 5];
        let noise = Noise::of(&versions).unwrap();
        let logs = versions[0].logs();
        let expected = logs.variance().unwrap() / 4.0;
        assert!((noise.variance - expected).abs() < 1e-15);
        assert_eq!(noise.df, 15.0);
        // Too few versions and one sample each: nothing to go on.
        assert_eq!(Noise::of(&one_each(&[1.0, 2.0])), None);
        assert_eq!(Noise::of(&one_each(&[1.0, 1.0, 1.0])), None);
    }
}
