//! The host's drift: how far one unit's level wanders from another's on an
//! unchanged kernel. With one unit on a side the data cannot measure it,
//! so a prior does: calibrated on the host (A/A pairs of units), or
//! [`DEFAULT_DRIFT`]. With several units on the other side their spread
//! estimates it too, and the larger of the two is used (conservative).

use serde::{Deserialize, Serialize};

use super::pooled::Pooled;
use crate::StatsError;

/// Where a drift figure comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum DriftSource {
    /// Measured on this host from `pairs` A/A pairs of units, at `at_ms`.
    Calibrated { pairs: usize, at_ms: i64 },
    /// [`DEFAULT_DRIFT`]: the host was not calibrated.
    Default,
    /// Estimated from the `units` of this comparison's side with several,
    /// because it exceeded the prior (in a result; a prior is calibrated or
    /// the default).
    Units { units: usize },
}

/// The host's drift prior.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Drift {
    /// sigma^2 of one unit's level on logs: two units of an unchanged
    /// kernel differ by a variance of twice this.
    pub variance: f64,
    /// Its degrees of freedom (calibration pairs - 1), above 0.
    pub df: f64,
    pub source: DriftSource,
}

/// The drift assumed without a calibration: SD 3.5 % on logs, because
/// unchanged metrics drifted 3.1-3.7 % rms between runs one identifier
/// apart on the 2-vCPU KVM guest of issue 33 (rounds within a run: about
/// 1 %). Its 10 degrees of freedom are a conservative stand-in for a
/// calibration of 11 pairs.
pub const DEFAULT_DRIFT: Drift = Drift {
    variance: 0.035 * 0.035,
    df: 10.0,
    source: DriftSource::Default,
};

impl Drift {
    /// A variance that is finite and not negative, on degrees of freedom
    /// above 0 (a t-test with none has no quantiles).
    pub(crate) fn check(&self) -> Result<(), StatsError> {
        StatsError::non_negative("drift variance", self.variance)?;
        StatsError::positive("drift degrees of freedom", self.df)?;
        Ok(())
    }
}

/// The drift a test assumed.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct DriftTerm {
    /// SD of one unit's level on logs (about a relative SD).
    pub sd: f64,
    /// Its degrees of freedom in the test's Satterthwaite sum.
    pub df: f64,
    /// The prior's source, or the units that gave a larger estimate.
    pub source: DriftSource,
}

/// The larger of the prior and of the estimate from `units` units (their
/// moments, see `components`); `None` when neither is known.
pub(crate) fn larger(
    prior: Option<Drift>,
    estimate: Option<Pooled>,
    units: usize,
) -> Option<DriftTerm> {
    let prior = prior.map(|d| DriftTerm {
        sd: d.variance.sqrt(),
        df: d.df,
        source: d.source,
    });
    let estimate = estimate.map(|e| DriftTerm {
        sd: e.variance.sqrt(),
        df: e.df,
        source: DriftSource::Units { units },
    });
    match (prior, estimate) {
        (Some(p), Some(e)) => Some(if e.sd > p.sd { e } else { p }),
        (p, e) => p.or(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn estimate(variance: f64) -> Option<Pooled> {
        Some(Pooled { variance, df: 3.0 })
    }

    #[test]
    fn the_larger_of_prior_and_estimate() {
        let wide = larger(Some(DEFAULT_DRIFT), estimate(0.05 * 0.05), 4).unwrap();
        assert_eq!(wide.source, DriftSource::Units { units: 4 });
        assert_eq!((wide.sd, wide.df), (0.05, 3.0));
        let narrow = larger(Some(DEFAULT_DRIFT), estimate(0.01 * 0.01), 4).unwrap();
        assert_eq!(narrow.source, DriftSource::Default);
        assert!((narrow.sd - 0.035).abs() < 1e-15 && narrow.df == 10.0);
        assert_eq!(larger(None, None, 1), None);
        assert_eq!(
            larger(None, estimate(0.0), 4).map(|d| d.source),
            Some(DriftSource::Units { units: 4 })
        );
    }

    #[test]
    fn a_prior_needs_degrees_of_freedom() {
        let none = Drift {
            df: 0.0,
            ..DEFAULT_DRIFT
        };
        assert!(matches!(
            none.check(),
            Err(StatsError::InvalidParameter { value: 0.0, .. })
        ));
        let negative = Drift {
            variance: -1e-4,
            ..DEFAULT_DRIFT
        };
        assert!(negative.check().is_err());
        assert_eq!(DEFAULT_DRIFT.check(), Ok(()));
    }
}
