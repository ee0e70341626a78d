//! The one error type of this crate: input that statistics cannot use.

use std::fmt;

/// Why input was rejected. Raised once, where data enters the crate.
#[derive(Debug, Clone, PartialEq)]
pub enum StatsError {
    /// No values at all.
    Empty,
    /// A NaN or infinite value at `index`.
    NonFinite { index: usize, value: f64 },
    /// A value <= 0 at `index` where ratios need logarithms.
    NonPositive { index: usize, value: f64 },
    /// A side or series given with no rounds / groups.
    NoRounds,
    /// A geometric mean with no metric that every identifier has.
    NoCommonMetrics { left_out: usize },
    /// A side of a levelled comparison given with no units.
    NoUnits,
    /// A calibration of fewer than two A/A pairs of units has no spread.
    TooFewPairs { pairs: usize },
    /// A parameter outside its range (`name` says which).
    InvalidParameter { name: &'static str, value: f64 },
}

impl fmt::Display for StatsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StatsError::Empty => write!(f, "no samples"),
            StatsError::NonFinite { index, value } => {
                write!(f, "sample {index} is not a finite number ({value})")
            }
            StatsError::NonPositive { index, value } => {
                write!(f, "sample {index} is {value}: ratios need positive values")
            }
            StatsError::NoRounds => write!(f, "no rounds"),
            StatsError::NoCommonMetrics { left_out } => write!(
                f,
                "no metric is shared by every identifier ({left_out} left out)"
            ),
            StatsError::NoUnits => write!(f, "a side has no units"),
            StatsError::TooFewPairs { pairs } => write!(
                f,
                "{pairs} pair(s) of units measured: a drift needs at least 2"
            ),
            StatsError::InvalidParameter { name, value } => {
                write!(f, "{name} {value} is out of range")
            }
        }
    }
}

impl std::error::Error for StatsError {}

impl StatsError {
    /// `value` if finite and at least 0, else an invalid `name`.
    pub(crate) fn non_negative(name: &'static str, value: f64) -> Result<f64, StatsError> {
        (value.is_finite() && value >= 0.0)
            .then_some(value)
            .ok_or(StatsError::InvalidParameter { name, value })
    }

    /// `value` if finite and above 0, else an invalid `name`.
    pub(crate) fn positive(name: &'static str, value: f64) -> Result<f64, StatsError> {
        (value.is_finite() && value > 0.0)
            .then_some(value)
            .ok_or(StatsError::InvalidParameter { name, value })
    }
}
