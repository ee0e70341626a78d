//! The seeded generator the simulation tests (and the speed example) share.

// Each test binary uses a part of it.
#![allow(dead_code)]

/// SplitMix64 (Steele, Lea and Flood, OOPSLA 2014) with Box-Muller normals:
/// the same numbers every run.
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in (0, 1).
    pub fn uniform(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    /// An integer in `range`.
    pub fn pick(&mut self, range: std::ops::Range<usize>) -> usize {
        range.start + (self.next_u64() % (range.end - range.start) as u64) as usize
    }

    pub fn normal(&mut self) -> f64 {
        let (u, v) = (self.uniform(), self.uniform());
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }

    /// `n` samples around `mean` with coefficient of variation `cv`.
    pub fn samples(&mut self, n: usize, mean: f64, cv: f64) -> Vec<f64> {
        (0..n).map(|_| mean * (1.0 + cv * self.normal())).collect()
    }
}
