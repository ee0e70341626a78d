//! A point estimate with its confidence interval: the one shape every report
//! prints (criterion.rs's `Estimate` is the model).
//!
//! An unknown bound is infinite (e.g. the mean of a single sample); it is
//! serialized as `null` and read back as infinity.

use serde::{Deserialize, Serialize};

use crate::serde_float;

/// `point` with a confidence interval `[ci_low, ci_high]` from `n` values.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    pub point: f64,
    #[serde(with = "serde_float::lower")]
    pub ci_low: f64,
    #[serde(with = "serde_float::upper")]
    pub ci_high: f64,
    pub n: usize,
}

impl Estimate {
    /// Half the interval's width; infinite when a bound is unknown.
    pub fn half_width(&self) -> f64 {
        (self.ci_high - self.ci_low) / 2.0
    }

    /// Half-width over |point|: the `--target-ci` stopping rule. Zero for
    /// an exact estimate, infinite when the point is zero but uncertain.
    pub fn relative_half_width(&self) -> f64 {
        let half = self.half_width();
        if half == 0.0 {
            0.0
        } else {
            half / self.point.abs()
        }
    }

    /// The same estimate with every number mapped by an increasing `f`.
    pub(crate) fn map(self, f: impl Fn(f64) -> f64) -> Estimate {
        Estimate {
            point: f(self.point),
            ci_low: f(self.ci_low),
            ci_high: f(self.ci_high),
            n: self.n,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::de::value::{Error, UnitDeserializer};

    #[test]
    fn half_widths() {
        let e = Estimate {
            point: 100.0,
            ci_low: 99.0,
            ci_high: 101.0,
            n: 10,
        };
        assert_eq!(e.half_width(), 1.0);
        assert_eq!(e.relative_half_width(), 0.01);
        let exact = Estimate {
            point: 0.0,
            ci_low: 0.0,
            ci_high: 0.0,
            n: 3,
        };
        assert_eq!(exact.relative_half_width(), 0.0);
        let unknown = Estimate {
            point: 5.0,
            ci_low: f64::NEG_INFINITY,
            ci_high: f64::INFINITY,
            n: 1,
        };
        assert_eq!(unknown.relative_half_width(), f64::INFINITY);
    }

    #[test]
    fn null_bounds_read_back_as_infinities() {
        let low = serde_float::lower::deserialize(UnitDeserializer::<Error>::new()).unwrap();
        let high = serde_float::upper::deserialize(UnitDeserializer::<Error>::new()).unwrap();
        assert_eq!((low, high), (f64::NEG_INFINITY, f64::INFINITY));
    }
}
