//! Units of built-in benchmarks, how an interval is timed, and how a timed
//! interval becomes a value.

use crate::BenchError;
use std::time::{Duration, Instant};

/// One timed interval: how long it took and how much work it did
/// (operations, or bytes for bandwidth units).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    pub elapsed: Duration,
    pub work: f64,
}

impl Interval {
    /// An interval of `work` operations (or bytes) measured since `start`.
    pub fn since(start: Instant, work: f64) -> Interval {
        Interval {
            elapsed: start.elapsed(),
            work,
        }
    }
}

/// Times exactly `iterations` runs of `body`; the first error stops the loop.
#[inline(always)]
pub(crate) fn timed(
    iterations: u64,
    mut body: impl FnMut() -> Result<(), BenchError>,
) -> Result<Interval, BenchError> {
    let start = Instant::now();
    for _ in 0..iterations {
        body()?;
    }
    Ok(Interval::since(start, iterations as f64))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Nanoseconds per operation.
    Nanos,
    /// Microseconds per operation.
    Micros,
    /// Seconds per operation (one operation = one whole run, hackbench style).
    Seconds,
    /// 10^6 bytes per second; `work` counts bytes.
    MegabytesPerSec,
    /// Operations per second, with the label of the operation ("ops/s",
    /// "files/s", "calls/s", "pages/s", "loads/s").
    Rate(&'static str),
}

impl Unit {
    pub fn label(self) -> &'static str {
        match self {
            Unit::Nanos => "ns",
            Unit::Micros => "us",
            Unit::Seconds => "s",
            Unit::MegabytesPerSec => "MB/s",
            Unit::Rate(label) => label,
        }
    }

    /// The value of one interval in this unit.
    pub fn value(self, interval: Interval) -> f64 {
        let secs = interval.elapsed.as_secs_f64();
        match self {
            Unit::Nanos => secs * 1e9 / interval.work,
            Unit::Micros => secs * 1e6 / interval.work,
            Unit::Seconds => secs / interval.work,
            Unit::MegabytesPerSec => interval.work / 1e6 / secs,
            Unit::Rate(_) => interval.work / secs,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converts_intervals() {
        let i = Interval {
            elapsed: Duration::from_millis(10),
            work: 1000.0,
        };
        assert!((Unit::Nanos.value(i) - 10_000.0).abs() < 1e-6);
        assert!((Unit::Micros.value(i) - 10.0).abs() < 1e-9);
        assert!((Unit::Rate("ops/s").value(i) - 100_000.0).abs() < 1e-6);
        assert!((Unit::MegabytesPerSec.value(i) - 0.1).abs() < 1e-12);
    }
}
