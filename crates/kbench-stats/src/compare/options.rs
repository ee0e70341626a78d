//! The knobs of a comparison's verdict.

/// Knobs of the verdict.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CompareOptions {
    /// Practical threshold delta as a fraction (`--threshold`, 0.01 = 1 %).
    pub threshold: f64,
    /// Significance level for q, and 1 - confidence level of the CIs.
    pub alpha: f64,
    /// Power for the minimum detectable effect and the samples needed.
    pub power: f64,
}

impl Default for CompareOptions {
    fn default() -> CompareOptions {
        CompareOptions {
            threshold: 0.01,
            alpha: 0.05,
            power: 0.8,
        }
    }
}
