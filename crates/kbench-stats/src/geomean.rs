//! One number per identifier: the geometric mean of its per-metric ratios
//! against the baseline. The geometric mean is the mean of ratios that does
//! not depend on which identifier is the reference (Fleming and Wallace,
//! "How not to lie with statistics: the correct way to summarize benchmark
//! results", CACM 29, 1986).
//!
//! Convention: every ratio is oriented so that > 1 means better than the
//! baseline (value / baseline when higher is better, baseline / value when
//! lower is better); so is the geometric mean. Only metrics that every
//! identifier has, with positive values, enter; the others are counted as
//! left out.

use kbench_model::Direction;
use serde::{Deserialize, Serialize};

use crate::StatsError;

/// One metric: the baseline's value and each other identifier's (e.g. the
/// means), `None` where an identifier lacks the metric.
#[derive(Debug, Clone, PartialEq)]
pub struct GeomeanRow {
    pub better: Direction,
    pub baseline: Option<f64>,
    pub current: Vec<Option<f64>>,
}

/// Per identifier (in `current` order) the geometric mean of oriented
/// ratios: > 1 is better than the baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Geomean {
    pub ratios: Vec<f64>,
    pub metrics_used: usize,
    pub metrics_left_out: usize,
}

/// The identifiers are as many as the longest `current`; a shorter row
/// lacks the metric for the rest.
pub fn geomean_vs_baseline(rows: &[GeomeanRow]) -> Result<Geomean, StatsError> {
    let identifiers = rows.iter().map(|r| r.current.len()).max().unwrap_or(0);
    let usable = |v: Option<f64>| v.filter(|v| v.is_finite() && *v > 0.0);
    let mut log_sums = vec![0.0; identifiers];
    let mut used = 0;
    for row in rows {
        let Some(base) = usable(row.baseline) else {
            continue;
        };
        let values: Option<Vec<f64>> = row.current.iter().map(|&v| usable(v)).collect();
        let Some(values) = values.filter(|v| v.len() == identifiers) else {
            continue;
        };
        for (sum, value) in log_sums.iter_mut().zip(values) {
            *sum += match row.better {
                Direction::Higher => (value / base).ln(),
                Direction::Lower => (base / value).ln(),
            };
        }
        used += 1;
    }
    let left_out = rows.len() - used;
    if used == 0 {
        return Err(StatsError::NoCommonMetrics { left_out });
    }
    Ok(Geomean {
        ratios: log_sums.iter().map(|s| (s / used as f64).exp()).collect(),
        metrics_used: used,
        metrics_left_out: left_out,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(better: Direction, baseline: f64, current: &[Option<f64>]) -> GeomeanRow {
        GeomeanRow {
            better,
            baseline: Some(baseline),
            current: current.to_vec(),
        }
    }

    #[test]
    fn oriented_so_that_above_one_is_better() {
        let rows = [
            // Throughput doubled (better x2), latency doubled (worse x2).
            row(Direction::Higher, 100.0, &[Some(200.0), Some(100.0)]),
            row(Direction::Lower, 10.0, &[Some(20.0), Some(5.0)]),
        ];
        let g = geomean_vs_baseline(&rows).unwrap();
        assert!((g.ratios[0] - 1.0).abs() < 1e-12);
        // Second: throughput same, latency halved -> sqrt(1 * 2).
        assert!((g.ratios[1] - 2f64.sqrt()).abs() < 1e-12);
        assert_eq!((g.metrics_used, g.metrics_left_out), (2, 0));
    }

    #[test]
    fn incomplete_or_non_positive_metrics_are_left_out() {
        let rows = [
            row(Direction::Higher, 100.0, &[Some(110.0), Some(121.0)]),
            row(Direction::Higher, 100.0, &[Some(50.0), None]),
            row(Direction::Higher, 100.0, &[Some(0.0), Some(1.0)]),
            row(Direction::Higher, 100.0, &[Some(50.0)]),
            GeomeanRow {
                better: Direction::Lower,
                baseline: None,
                current: vec![Some(1.0), Some(1.0)],
            },
        ];
        let g = geomean_vs_baseline(&rows).unwrap();
        assert_eq!((g.metrics_used, g.metrics_left_out), (1, 4));
        assert!((g.ratios[0] - 1.1).abs() < 1e-12 && (g.ratios[1] - 1.21).abs() < 1e-12);
    }

    #[test]
    fn nothing_in_common_is_an_error() {
        let rows = [row(Direction::Lower, 1.0, &[None])];
        assert_eq!(
            geomean_vs_baseline(&rows),
            Err(StatsError::NoCommonMetrics { left_out: 1 })
        );
    }
}
