//! The model every `kbench history` format renders: per metric of a
//! result set, the identifiers as an ordered series of versions (mean and
//! CI per version) and the change points found in it (kbench-stats'
//! `changepoint`: E-divisive means on the version means, tested with the
//! noise the series shows, a change only when its CI lies wholly beyond the
//! threshold), each with the version where the change happened, its size
//! with a 95 % CI and its p-value. Built once from stored data; formats
//! only lay it out.
//!
//! A version without samples of a metric is left out of that metric's
//! series (and listed); change points fall between the versions that have
//! samples.

use crate::Error;
use crate::sides::{chosen, filtered_specs, rounds_of, side_of, summary_of};
use crate::units;
use kbench_model::results::{IdentifierData, ResultSetData, SetPart};
use kbench_model::{Direction, TestKey};
use kbench_stats::changepoint::{ChangePointOptions, change_points};
use kbench_stats::compare::UnitKind;
use kbench_stats::{Estimate, Samples, Side, Summary, Verdict};
use serde::Serialize;

pub const SCHEMA: &str = "kbench.history/1";

/// What to look at.
#[derive(Debug, Clone, PartialEq)]
pub struct HistoryRequest {
    /// Identifiers in version order; empty = the stored order. Listed
    /// identifiers only; each once.
    pub order: Vec<String>,
    /// Only metrics whose test name contains this text.
    pub metric_filter: Option<String>,
    /// Smallest change that counts, as a fraction (0.01 = 1 %): a change's
    /// whole CI must lie beyond it.
    pub threshold: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct HistoryReport {
    pub schema: &'static str,
    pub result_set: String,
    /// The versions, in order.
    pub identifiers: Vec<String>,
    pub threshold_pct: f64,
    pub metrics: Vec<MetricHistory>,
    /// Metrics with at least one change point.
    pub changed_metrics: usize,
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct MetricHistory {
    /// `bench[opts]` or `bench[opts]:metric`.
    pub test: String,
    pub key: TestKey,
    pub unit: String,
    pub direction: Direction,
    /// One per identifier, in [`HistoryReport::identifiers`] order.
    pub series: Vec<VersionPoint>,
    pub changes: Vec<ChangeReport>,
}

/// One version of one metric.
#[derive(Debug, Clone, Serialize)]
pub struct VersionPoint {
    pub identifier: String,
    /// `None` when the version has no usable sample of the metric.
    pub summary: Option<Summary>,
    /// Rounds (fresh invocations) the observations come from.
    pub rounds: usize,
    /// Whether a change point falls at this version (the first version of
    /// a new level).
    pub changed: bool,
}

/// A change point.
#[derive(Debug, Clone, Serialize)]
pub struct ChangeReport {
    /// The first version of the new level.
    pub identifier: String,
    /// The version before it (the last of the old level).
    pub previous: String,
    /// Position of `identifier` in [`HistoryReport::identifiers`].
    pub index: usize,
    /// Geometric mean of the new level's version means over the old one's
    /// (neighbouring segments), 95 % CI; `n` counts their versions.
    pub ratio: Estimate,
    /// The same in percent.
    pub change_pct: Estimate,
    pub p_value: f64,
    /// REGRESSION or IMPROVEMENT, direction-aware.
    pub verdict: Verdict,
}

impl HistoryRequest {
    /// What [`build`] reads of the set: the versions listed (all without
    /// a list) and the metrics the filter matches.
    pub fn part(&self) -> SetPart {
        SetPart {
            identifiers: (!self.order.is_empty()).then(|| self.order.clone()),
            first: false,
            metric_filter: self.metric_filter.clone(),
        }
    }
}

/// A version's observations of `key`: with two or more units (its runs,
/// or its boots when it ran in two or more), one per unit, the mean of its
/// round means, so that the version's own spread includes the drift
/// between its units (docs/statistics.md, "Measured apart"); else its
/// rounds (or raw samples), as compare's sides.
fn version_side(identifier: &IdentifierData, key: &TestKey) -> Option<Side> {
    let level = match units::boots(identifier) >= 2 {
        true => UnitKind::Boot,
        false => UnitKind::Run,
    };
    match units::units_of(identifier, key, level) {
        Some(units) if units.len() >= 2 => {
            let rounds: Option<Vec<Samples>> = units
                .iter()
                .map(|u| {
                    Samples::new(u.round_logs.as_slice().iter().map(|l| l.exp()).collect()).ok()
                })
                .collect();
            Side::from_rounds(&rounds?).ok()
        }
        _ => side_of(identifier, key),
    }
}

/// Builds the history; an unknown or repeated name in `order` is an error
/// that lists the known identifiers.
pub fn build(data: &ResultSetData, request: &HistoryRequest) -> Result<HistoryReport, Error> {
    let order = identifier_order(data, &request.order)?;
    let chosen = chosen(data, &order);
    let options = ChangePointOptions {
        threshold: request.threshold,
        ..ChangePointOptions::default()
    };
    // Metrics are independent: built on every core, kept in order.
    let specs = filtered_specs(data, request.metric_filter.as_deref());
    let built = crate::parallel::map(&specs, |spec| {
        let better = spec.direction;
        let sides: Vec<Option<Side>> = chosen
            .iter()
            .map(|id| version_side(id, &spec.key))
            .collect();
        // The versions that have samples, and where they sit.
        let present: Vec<usize> = (0..sides.len()).filter(|&i| sides[i].is_some()).collect();
        let series: Vec<Side> = present
            .iter()
            .map(|&i| sides[i].clone().expect("present"))
            .collect();
        let changes: Vec<ChangeReport> = change_points(&series, better, &options)
            .into_iter()
            .map(|c| {
                let index = present[c.index];
                ChangeReport {
                    identifier: order[index].clone(),
                    previous: order[present[c.index - 1]].clone(),
                    index,
                    change_pct: Estimate {
                        point: 100.0 * (c.ratio.point - 1.0),
                        ci_low: 100.0 * (c.ratio.ci_low - 1.0),
                        ci_high: 100.0 * (c.ratio.ci_high - 1.0),
                        n: c.ratio.n,
                    },
                    ratio: c.ratio,
                    p_value: c.p_value,
                    verdict: c.verdict,
                }
            })
            .collect();
        let missing: Vec<&str> = (0..sides.len())
            .filter(|&i| sides[i].is_none())
            .map(|i| order[i].as_str())
            .collect();
        let note = (!missing.is_empty() && missing.len() < sides.len()).then(|| {
            format!(
                "{}: no samples in {}; left out of its series",
                spec.key,
                missing.join(", ")
            )
        });
        let metric = MetricHistory {
            test: spec.key.to_string(),
            key: spec.key.clone(),
            unit: spec.unit.clone(),
            direction: spec.direction,
            series: chosen
                .iter()
                .zip(&sides)
                .enumerate()
                .map(|(i, (id, side))| VersionPoint {
                    identifier: id.name.clone(),
                    summary: summary_of(side.as_ref()),
                    rounds: rounds_of(side.as_ref()),
                    changed: changes.iter().any(|c| c.index == i),
                })
                .collect(),
            changes,
        };
        (metric, note)
    });
    let notes: Vec<String> = built.iter().filter_map(|(_, note)| note.clone()).collect();
    let metrics: Vec<MetricHistory> = built
        .into_iter()
        .map(|(metric, _)| metric)
        .filter(|m| m.series.iter().any(|p| p.summary.is_some()))
        .collect();
    Ok(HistoryReport {
        schema: SCHEMA,
        result_set: data.name.clone(),
        changed_metrics: metrics.iter().filter(|m| !m.changes.is_empty()).count(),
        identifiers: order,
        threshold_pct: request.threshold * 100.0,
        metrics,
        notes,
    })
}

fn identifier_order(data: &ResultSetData, order: &[String]) -> Result<Vec<String>, Error> {
    let known: Vec<String> = data.identifiers.iter().map(|i| i.name.clone()).collect();
    if known.is_empty() {
        return Err(Error::NoIdentifiers {
            set: data.name.clone(),
        });
    }
    if order.is_empty() {
        return Ok(known);
    }
    let mut chosen: Vec<String> = Vec::new();
    for name in order {
        if !known.contains(name) {
            return Err(Error::UnknownVersion {
                set: data.name.clone(),
                name: name.clone(),
                known,
            });
        }
        if chosen.contains(name) {
            return Err(Error::RepeatedVersion { name: name.clone() });
        }
        chosen.push(name.clone());
    }
    Ok(chosen)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{history_data as data, history_request as request};

    /// Four rounds in two invocations: two observations, one per run; in
    /// one invocation, the four rounds.
    #[test]
    fn a_version_of_several_runs_has_one_observation_per_run() {
        let rounds: Vec<crate::fixtures::Round> = [100.0, 101.0, 110.0, 111.0]
            .into_iter()
            .map(|value| crate::fixtures::Round {
                value,
                ..crate::fixtures::quiet(1.0)
            })
            .collect();
        let mut id = crate::fixtures::identifier("v", 2, &rounds);
        for (i, run) in id.runs.iter_mut().enumerate() {
            run.info.pid = 1 + i as u32 / 2;
        }
        let key = crate::fixtures::test();
        let side = version_side(&id, &key).unwrap();
        assert_eq!(side.rounds(), 2);
        // Each run's mean of its round means: 101.5 and 111.5 (a round's
        // samples are its value + 0, 1, 2).
        let observations = side.observations().as_slice().to_vec();
        assert!((observations[0] - 101.5).abs() < 1e-9, "{observations:?}");
        assert!((observations[1] - 111.5).abs() < 1e-9, "{observations:?}");
        for run in &mut id.runs {
            run.info.pid = 1;
        }
        assert_eq!(version_side(&id, &key).unwrap().rounds(), 4);
    }

    #[test]
    fn finds_the_step_where_it_happened() {
        let report = build(&data(), &request()).unwrap();
        assert_eq!(report.schema, SCHEMA);
        assert_eq!(report.changed_metrics, 1);
        let lat = &report.metrics[0];
        assert_eq!(lat.changes.len(), 1);
        let change = &lat.changes[0];
        assert_eq!(
            (change.identifier.as_str(), change.previous.as_str()),
            ("v3", "v2")
        );
        assert_eq!(change.verdict, Verdict::Regression);
        assert!((change.change_pct.point - 10.0).abs() < 0.01);
        assert!(change.change_pct.ci_low > 9.0 && change.change_pct.ci_high < 11.0);
        assert!(change.p_value < 1e-6);
        assert!(lat.series[3].changed && !lat.series[2].changed);
        assert!(report.metrics[1].changes.is_empty());
        assert!(report.metrics[1].series[5].summary.is_none());
        assert!(
            report.notes[0].contains("bw: no samples in v5"),
            "{:?}",
            report.notes
        );
    }

    #[test]
    fn order_and_filter() {
        let mut request = request();
        request.order = ["v5", "v4", "v3", "v2", "v1", "v0"]
            .map(String::from)
            .to_vec();
        request.metric_filter = Some("pipe".into());
        let report = build(&data(), &request).unwrap();
        assert_eq!(report.metrics.len(), 1);
        // Read backwards, the step is an improvement at v2.
        let change = &report.metrics[0].changes[0];
        assert_eq!(change.identifier, "v2");
        assert_eq!(change.verdict, Verdict::Improvement);
        request.order = vec!["v0".into(), "v9".into()];
        let error = build(&data(), &request).unwrap_err().to_string();
        assert!(
            error.contains("no identifier 'v9'") && error.contains("v0, v1, v2, v3, v4, v5"),
            "{error}"
        );
        request.order = vec!["v0".into(), "v0".into()];
        assert!(
            build(&data(), &request)
                .unwrap_err()
                .to_string()
                .contains("twice")
        );
    }

    #[test]
    fn a_change_below_the_threshold_is_not_reported() {
        let mut request = request();
        request.threshold = 0.2;
        let report = build(&data(), &request).unwrap();
        assert_eq!(report.changed_metrics, 0);
    }

    /// Monitors are no result: they are not in history.
    #[test]
    fn monitors_stay_out_of_history() {
        let history = build(&crate::fixtures::disturbed(), &request()).unwrap();
        let tests: Vec<&str> = history.metrics.iter().map(|m| m.test.as_str()).collect();
        assert_eq!(tests, ["syscall-null"]);
    }
}
