//! Axes: a linear scale, "nice" ticks (steps of 1, 2 or 5 times a power of
//! ten) and short tick labels.

/// Maps the domain `[d0, d1]` linearly onto the range `[r0, r1]`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Linear {
    pub d0: f64,
    pub d1: f64,
    pub r0: f64,
    pub r1: f64,
}

impl Linear {
    pub fn at(&self, v: f64) -> f64 {
        if self.d1 == self.d0 {
            return (self.r0 + self.r1) / 2.0;
        }
        self.r0 + (v - self.d0) / (self.d1 - self.d0) * (self.r1 - self.r0)
    }

    /// [`Linear::at`], kept within the range (for unbounded CI ends).
    pub fn clamped(&self, v: f64) -> f64 {
        let (lo, hi) = if self.r0 <= self.r1 {
            (self.r0, self.r1)
        } else {
            (self.r1, self.r0)
        };
        if v.is_nan() {
            return lo;
        }
        self.at(v).clamp(lo, hi)
    }
}

/// Ticks of a nice axis covering `[lo, hi]`: the domain rounded out to the
/// step, the ticks in it, and the step. About `target` ticks.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    pub lo: f64,
    pub hi: f64,
    pub step: f64,
    pub ticks: Vec<f64>,
}

impl Axis {
    pub fn new(lo: f64, hi: f64, target: usize) -> Axis {
        let (mut lo, mut hi) = if lo.is_finite() && hi.is_finite() && lo <= hi {
            (lo, hi)
        } else {
            (0.0, 1.0)
        };
        if hi - lo <= f64::EPSILON * hi.abs().max(1.0) {
            let pad = if lo == 0.0 { 1.0 } else { lo.abs() * 0.05 };
            lo -= pad;
            hi += pad;
        }
        let step = nice_step((hi - lo) / target.max(1) as f64);
        let lo = (lo / step).floor() * step;
        let hi = (hi / step).ceil() * step;
        let count = ((hi - lo) / step).round() as usize;
        let ticks = (0..=count).map(|i| lo + i as f64 * step).collect();
        Axis {
            lo,
            hi,
            step,
            ticks,
        }
    }

    /// The label of tick `v`: enough decimals for the step, thousands as
    /// k, M, G.
    pub fn label(&self, v: f64) -> String {
        tick_label(v, self.step, self.lo.abs().max(self.hi.abs()))
    }
}

/// 1, 2 or 5 times a power of ten, the nearest to `raw` on a log scale.
fn nice_step(raw: f64) -> f64 {
    let magnitude = 10f64.powf(raw.log10().floor());
    let norm = raw / magnitude;
    let factor = if norm >= 50f64.sqrt() {
        10.0
    } else if norm >= 10f64.sqrt() {
        5.0
    } else if norm >= 2f64.sqrt() {
        2.0
    } else {
        1.0
    };
    factor * magnitude
}

fn tick_label(v: f64, step: f64, largest: f64) -> String {
    let (divisor, suffix) = if largest >= 1e9 {
        (1e9, "G")
    } else if largest >= 1e6 {
        (1e6, "M")
    } else if largest >= 1e4 {
        (1e3, "k")
    } else {
        (1.0, "")
    };
    let step = step / divisor;
    let decimals = (-step.log10().floor()).clamp(0.0, 9.0) as usize;
    let v = v / divisor;
    if v.abs() < step / 2.0 {
        return "0".to_string();
    }
    format!("{v:.decimals$}{suffix}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nice_ticks() {
        let a = Axis::new(0.0, 113.0, 5);
        assert_eq!(a.step, 20.0);
        assert_eq!(a.ticks, vec![0.0, 20.0, 40.0, 60.0, 80.0, 100.0, 120.0]);
        assert_eq!(a.label(40.0), "40");
        let b = Axis::new(9.97, 10.53, 3);
        assert_eq!(b.step, 0.2);
        assert_eq!(b.label(b.ticks[1]), "10.0");
        assert!(b.lo <= 9.97 && b.hi >= 10.53);
        let big = Axis::new(8.6e6, 8.75e6, 4);
        assert_eq!(big.label(8.65e6), "8.65M");
        let k = Axis::new(0.0, 20000.0, 4);
        assert_eq!(k.label(15000.0), "15k");
    }

    #[test]
    fn degenerate_domains_still_have_an_axis() {
        let same = Axis::new(5.0, 5.0, 4);
        assert!(same.lo < 5.0 && same.hi > 5.0);
        let zero = Axis::new(0.0, 0.0, 4);
        assert!(zero.hi > 0.0);
        let nan = Axis::new(f64::NAN, 1.0, 4);
        assert_eq!((nan.lo, nan.hi), (0.0, 1.0));
        assert_eq!(Axis::new(-1.0, 1.0, 4).label(-0.0), "0");
        assert_eq!(Axis::new(0.0, 2.1e6, 4).label(0.0), "0");
    }

    #[test]
    fn scales_and_clamps() {
        let s = Linear {
            d0: 0.0,
            d1: 10.0,
            r0: 100.0,
            r1: 200.0,
        };
        assert_eq!(s.at(5.0), 150.0);
        assert_eq!(s.clamped(f64::INFINITY), 200.0);
        assert_eq!(s.clamped(f64::NEG_INFINITY), 100.0);
    }
}
