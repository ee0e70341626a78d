//! Outlier flags; data is never dropped, only marked.
//!
//! - Tukey's fences (Tukey, "Exploratory Data Analysis", 1977): beyond
//!   1.5 IQR outside the quartiles is mild, beyond 3 IQR severe.
//! - The MAD rule (Iglewicz and Hoaglin, "How to Detect and Handle
//!   Outliers", 1993): modified z-score |x - median| / (1.4826 MAD) > 3.5.
//!   When more than half the values are equal (MAD = 0), every value that
//!   differs from the median has an infinite score and is flagged.

use serde::{Deserialize, Serialize};

use crate::Samples;
use crate::samples::quantile_of_sorted;

/// How far outside Tukey's fences a value lies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Beyond 1.5 IQR.
    Mild,
    /// Beyond 3 IQR.
    Severe,
}

/// A flagged sample, by index into the samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outlier {
    pub index: usize,
    pub severity: Severity,
}

/// Tukey's four fences.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fences {
    pub low_severe: f64,
    pub low_mild: f64,
    pub high_mild: f64,
    pub high_severe: f64,
}

/// Modified z-score above which the MAD rule flags a value.
const MAD_LIMIT: f64 = 3.5;
/// Makes the MAD a consistent estimate of the SD for normal data.
const MAD_SCALE: f64 = 1.4826;

pub fn tukey_fences(samples: &Samples) -> Fences {
    let sorted = samples.sorted();
    let q1 = quantile_of_sorted(&sorted, 0.25);
    let q3 = quantile_of_sorted(&sorted, 0.75);
    let iqr = q3 - q1;
    Fences {
        low_severe: q1 - 3.0 * iqr,
        low_mild: q1 - 1.5 * iqr,
        high_mild: q3 + 1.5 * iqr,
        high_severe: q3 + 3.0 * iqr,
    }
}

/// Values outside Tukey's mild fences, in index order.
pub fn tukey_outliers(samples: &Samples) -> Vec<Outlier> {
    let f = tukey_fences(samples);
    let classify = |x: f64| {
        if x < f.low_severe || x > f.high_severe {
            Some(Severity::Severe)
        } else if x < f.low_mild || x > f.high_mild {
            Some(Severity::Mild)
        } else {
            None
        }
    };
    let flagged = samples.as_slice().iter().enumerate();
    flagged
        .filter_map(|(index, &x)| classify(x).map(|severity| Outlier { index, severity }))
        .collect()
}

/// Indices whose modified z-score exceeds 3.5.
pub fn mad_outliers(samples: &Samples) -> Vec<usize> {
    let median = samples.median();
    let deviations: Vec<f64> = samples
        .as_slice()
        .iter()
        .map(|x| (x - median).abs())
        .collect();
    let mad = Samples::new(deviations.clone()).map_or(0.0, |d| d.median());
    deviations
        .iter()
        .enumerate()
        .filter(|&(_, &d)| {
            if mad == 0.0 {
                d > 0.0
            } else {
                d / (MAD_SCALE * mad) > MAD_LIMIT
            }
        })
        .map(|(index, _)| index)
        .collect()
}

/// Indices beyond Tukey's severe fences and flagged by the MAD rule, in
/// order: the outliers worth a warning. On clean normal data, A/A
/// comparisons of 10 + 10 samples have a value flagged by either rule 23 %
/// of the time, by both 8 % (3 % at 30 + 30).
pub fn severe_outliers(samples: &Samples) -> Vec<usize> {
    let mad = mad_outliers(samples);
    tukey_outliers(samples)
        .iter()
        .filter(|o| o.severity == Severity::Severe && mad.contains(&o.index))
        .map(|o| o.index)
        .collect()
}

/// The first sample is a severe outlier (both rules): warm-up was too
/// short.
pub fn first_sample_is_outlier(samples: &Samples) -> bool {
    severe_outliers(samples).first() == Some(&0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(values: &[f64]) -> Samples {
        Samples::new(values.to_vec()).unwrap()
    }

    #[test]
    fn tukey_fences_of_a_known_sample() {
        // Quartiles 2 and 4 (type 7) -> IQR 2.
        let x = s(&[1.0, 2.0, 3.0, 4.0, 10.0]);
        let f = tukey_fences(&x);
        assert_eq!(
            (f.low_severe, f.low_mild, f.high_mild, f.high_severe),
            (-4.0, -1.0, 7.0, 10.0)
        );
        // 10 is beyond 7 but not beyond 10: mild.
        assert_eq!(
            tukey_outliers(&x),
            vec![Outlier {
                index: 4,
                severity: Severity::Mild
            }]
        );
        let y = s(&[1.0, 2.0, 3.0, 4.0, 10.5]);
        assert_eq!(
            tukey_outliers(&y),
            vec![Outlier {
                index: 4,
                severity: Severity::Severe
            }]
        );
    }

    #[test]
    fn mad_rule_flags_a_far_value_and_keeps_the_rest() {
        // Median 10.2, MAD 0.2 -> scaled 0.2965; 13 scores 9.4, 9.8 scores 1.3.
        let x = s(&[10.0, 10.2, 9.8, 10.4, 13.0, 10.3, 10.1]);
        assert_eq!(mad_outliers(&x), vec![4]);
        assert_eq!(x.len(), 7, "nothing is dropped");
    }

    #[test]
    fn zero_mad_flags_every_value_off_the_median() {
        assert_eq!(mad_outliers(&s(&[5.0, 5.0, 5.0, 5.0, 6.0])), vec![4]);
        assert!(mad_outliers(&s(&[5.0, 5.0, 5.0])).is_empty());
    }

    #[test]
    fn severe_outliers_skip_mild_ones() {
        // Quartiles 3.25, 7.75: 17 is mild (fences 14.5, 21.25); median 5.5,
        // MAD 2.5: 17 scores 3.1, 30 scores 6.6.
        let mut x = vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 17.0];
        assert!(severe_outliers(&s(&x)).is_empty());
        assert_eq!(tukey_outliers(&s(&x)).len(), 1);
        x[9] = 30.0;
        assert_eq!(severe_outliers(&s(&x)), vec![9]);
    }

    #[test]
    fn warm_up_detection() {
        assert!(first_sample_is_outlier(&s(&[
            20.0, 10.0, 10.1, 9.9, 10.0, 10.2
        ])));
        assert!(!first_sample_is_outlier(&s(&[
            10.0, 10.1, 9.9, 10.0, 10.2, 20.0
        ])));
        assert!(!first_sample_is_outlier(&s(&[10.0])));
    }
}
