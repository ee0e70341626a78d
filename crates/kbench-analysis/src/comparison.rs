//! The comparison every `kbench compare` format renders: per metric and
//! identifier the summary and the verdict against the baseline (statistics
//! of kbench-stats), the geometric-mean summary, verdict counts, and the
//! system header. Built once from stored data; formats only lay it out.

use crate::apart::Apart;
use crate::explain::{Explanation, Secondaries, explain};
use crate::header::{self, Difference};
use crate::level;
use crate::notes;
use crate::sides::{chosen, filtered_specs, rounds_of, shown, side_of, summary_of};
use crate::thresholds::Thresholds;
use crate::{Error, blocks};
use kbench_model::results::{IdentifierData, ResultSetData};
use kbench_model::{Calibration, Direction, SystemSnapshot, TestKey};
use kbench_stats::compare::Levelled;
use kbench_stats::{
    CompareOptions, Comparison, MetricInput, Side, Summary, Verdict, compare_all_thresholded,
    geomean,
};
use serde::Serialize;

pub const SCHEMA: &str = "kbench.compare/1";

/// Which identifiers to compare, and how.
#[derive(Debug, Clone, PartialEq)]
pub struct CompareRequest {
    /// The baseline; default the first identifier stored.
    pub baseline: Option<String>,
    /// Identifiers to compare with it, in order; empty = all the others.
    pub identifiers: Vec<String>,
    /// Practical thresholds, per metric.
    pub threshold: Thresholds,
    /// Only metrics whose test name contains this text (e.g. "pipe-lat")
    /// are shown; the q-values are over every metric all the same.
    pub metric_filter: Option<String>,
    /// The store's calibrations of host drift, newest first (`kbench
    /// calibrate`): identifiers measured apart with one unit on a side are
    /// decided with the one of their hardware and unit, else the default.
    pub calibrations: Vec<Calibration>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ComparisonReport {
    pub schema: &'static str,
    pub result_set: String,
    /// The set's title and description (`kbench set edit`), when it has them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The baseline first, then the compared identifiers.
    pub identifiers: Vec<String>,
    pub baseline: String,
    /// The threshold of metrics no `--threshold` rule names.
    pub threshold_pct: f64,
    /// `--threshold`'s per-test rules, in percent, first match winning.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub threshold_rules: Vec<(String, f64)>,
    pub systems: Vec<IdentifierSystem>,
    pub differences: Vec<Difference>,
    pub metrics: Vec<MetricReport>,
    /// Per compared identifier (not the baseline).
    pub summaries: Vec<IdentifierSummary>,
    /// Things the reader must know: one round, emulation, differences.
    pub notes: Vec<String>,
}

/// An identifier's system, for the header.
#[derive(Debug, Clone, Serialize)]
pub struct IdentifierSystem {
    pub identifier: String,
    /// Its newest run's snapshot; `None` without a run or when the
    /// snapshot records nothing (imported samples).
    pub snapshot: Option<SystemSnapshot>,
    pub wrapper: Option<String>,
    pub runs: usize,
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct MetricReport {
    /// `bench[opts]` or `bench[opts]:metric`.
    pub test: String,
    /// "Redis 7.0.15 - Test: GET - Parallel Connections: 50" for a profile
    /// test whose runs recorded its tool ([`crate::title`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    pub key: TestKey,
    pub unit: String,
    pub direction: Direction,
    /// This metric's practical threshold, in percent.
    pub threshold_pct: f64,
    /// One per identifier, in [`ComparisonReport::identifiers`] order.
    pub results: Vec<IdentifierResult>,
}

#[derive(Debug, Clone, Serialize)]
pub struct IdentifierResult {
    pub identifier: String,
    /// `None` when the identifier has no sample of this metric.
    pub summary: Option<Summary>,
    pub rounds: usize,
    /// Against the baseline; `None` for the baseline itself or when either
    /// side has no usable sample.
    pub comparison: Option<Comparison>,
    /// Every raw sample value (all rounds, in measurement order), for the
    /// distribution plots of the html and svg formats. Not part of the
    /// `kbench.compare/1` document: `kbench export` has the raw samples.
    #[serde(skip)]
    pub values: Vec<f64>,
    /// The test's counters and monitors against the baseline's, when it
    /// is compared and either side recorded any ([`crate::explain`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explanation: Option<Explanation>,
}

/// Geometric mean and verdict counts of one identifier against the baseline.
#[derive(Debug, Clone, Serialize)]
pub struct IdentifierSummary {
    pub identifier: String,
    /// Geometric mean of the per-metric ratios oriented so that > 1 is
    /// better than the baseline; `None` when no metric is shared.
    pub geomean_better_ratio: Option<f64>,
    /// The direction every metric in the geometric mean shares; `None`
    /// when they mix both (or none is shared). It says how
    /// [`IdentifierSummary::worse_fraction`] reads the ratio.
    #[serde(skip)]
    pub geomean_direction: Option<Direction>,
    pub metrics_used: usize,
    pub metrics_left_out: usize,
    pub regressions: usize,
    pub improvements: usize,
    pub no_change: usize,
    pub inconclusive: usize,
    pub cannot_decide: usize,
    /// The level of analysis that decided its metrics, in words
    /// (`level`); `None` when none was compared.
    pub analysis: Option<String>,
}

impl IdentifierSummary {
    /// The geometric mean as a change that a row would show, > 0 worse:
    /// when every metric in it is lower-is-better, current / baseline - 1
    /// in their own units (a time up 21.4 % is 0.214 worse, not
    /// 1 - 1/1.214 = 0.176); otherwise 1 - the better-oriented ratio (a
    /// rate down 20 % is 0.20 worse). So with one metric it is that
    /// metric's change of means. `None` without a geometric mean.
    pub fn worse_fraction(&self) -> Option<f64> {
        let ratio = self.geomean_better_ratio?;
        Some(match self.geomean_direction {
            Some(Direction::Lower) => 1.0 / ratio - 1.0,
            _ => 1.0 - ratio,
        })
    }
}

impl ComparisonReport {
    /// "1.00 %", or with rules "2.00 % (pipe-lat 3.00 %, syscall-* 1.00 %)".
    pub fn threshold_text(&self) -> String {
        let rules: Vec<String> = self
            .threshold_rules
            .iter()
            .map(|(pattern, pct)| format!("{pattern} {pct:.2} %"))
            .collect();
        match rules.is_empty() {
            true => format!("{:.2} %", self.threshold_pct),
            false => format!("{:.2} % ({})", self.threshold_pct, rules.join(", ")),
        }
    }

    /// Whether any metric of any identifier is a REGRESSION.
    pub fn has_regression(&self) -> bool {
        self.summaries.iter().any(|s| s.regressions > 0)
    }
}

/// Builds the comparison; errors name unknown identifiers and list the known
/// ones. With a single identifier there is nothing to compare, but the
/// report still holds its summaries (the `show --format` views).
pub fn build(data: &ResultSetData, request: &CompareRequest) -> Result<ComparisonReport, Error> {
    // Disturbed rounds that `--redo-disturbed` replaced are left out.
    let data = &crate::interference::without_replaced_rounds(data);
    let order = identifier_order(data, request)?;
    let chosen = chosen(data, &order);
    let options = CompareOptions::default();
    // Every metric is compared, so that the FDR family does not depend on
    // `--metric`; the filter only chooses what is shown.
    let specs = filtered_specs(data, None);
    let secondaries = Secondaries::of(data);
    // Sides per metric and identifier; None where there is no usable sample.
    let sides: Vec<Vec<Option<Side>>> = specs
        .iter()
        .map(|spec| chosen.iter().map(|id| side_of(id, &spec.key)).collect())
        .collect();
    // What the report says of calibrations not used.
    let mut prior_notes: Vec<String> = vec![];
    // One comparison (and one FDR family) per compared identifier.
    let mut comparisons: Vec<Vec<Option<Comparison>>> = vec![vec![None; chosen.len()]; specs.len()];
    for column in 1..chosen.len() {
        let rows: Vec<usize> = (0..specs.len())
            .filter(|&row| sides[row][0].is_some() && sides[row][column].is_some())
            .collect();
        let (baseline, current) = (chosen[0], chosen[column]);
        let blocks: Vec<Option<Vec<f64>>> = rows
            .iter()
            .map(|&row| blocks::log_ratios(baseline, current, &specs[row].key))
            .collect();
        let apart = Apart::of(baseline, current, &request.calibrations);
        let units: Vec<Option<Levelled>> = rows
            .iter()
            .map(|&row| {
                let apart = apart.as_ref()?;
                apart.levelled(baseline, current, &specs[row].key)
            })
            .collect();
        if let Some(note) = apart.and_then(|a| a.prior.note)
            && !prior_notes.contains(&note)
        {
            prior_notes.push(note);
        }
        let inputs: Vec<MetricInput> = rows
            .iter()
            .zip(&blocks)
            .zip(&units)
            .map(|((&row, blocks), units)| MetricInput {
                baseline: sides[row][0].as_ref().expect("filtered"),
                current: sides[row][column].as_ref().expect("filtered"),
                better: specs[row].direction,
                blocks: blocks.as_deref(),
                units: units.as_ref(),
            })
            .collect();
        let thresholds: Vec<f64> = rows
            .iter()
            .map(|&row| request.threshold.of(&specs[row].key))
            .collect();
        let compared = compare_all_thresholded(&inputs, &options, &thresholds);
        for (row, comparison) in rows.into_iter().zip(compared) {
            comparisons[row][column] = Some(comparison);
        }
    }
    let metrics: Vec<MetricReport> = specs
        .iter()
        .zip(comparisons)
        .zip(&sides)
        .filter(|((spec, _), _)| shown(spec, request.metric_filter.as_deref()))
        .map(|((spec, row), side_row)| MetricReport {
            test: spec.key.to_string(),
            title: crate::title::title(&spec.key, chosen.iter().copied()),
            key: spec.key.clone(),
            unit: spec.unit.clone(),
            direction: spec.direction,
            threshold_pct: request.threshold.of(&spec.key) * 100.0,
            results: chosen
                .iter()
                .zip(row)
                .zip(side_row)
                .map(|((id, comparison), side)| IdentifierResult {
                    identifier: id.name.clone(),
                    summary: summary_of(side.as_ref()),
                    rounds: rounds_of(side.as_ref()),
                    explanation: comparison
                        .as_ref()
                        .and_then(|_| explain(&secondaries, chosen[0], id, &spec.key)),
                    comparison,
                    values: id
                        .samples
                        .get(&spec.key)
                        .map(|samples| samples.iter().map(|s| s.value).collect())
                        .unwrap_or_default(),
                })
                .collect(),
        })
        .collect();
    let chosen_data: Vec<IdentifierData> = chosen.iter().map(|i| (*i).clone()).collect();
    let differences = header::differences(&chosen_data);
    Ok(ComparisonReport {
        schema: SCHEMA,
        result_set: data.name.clone(),
        title: data.title.clone(),
        description: data.description.clone(),
        baseline: order[0].clone(),
        summaries: summaries(&metrics, &order),
        notes: notes::of(&measured(&metrics), &chosen_data, prior_notes),
        identifiers: order,
        threshold_pct: request.threshold.default * 100.0,
        threshold_rules: request
            .threshold
            .rules
            .iter()
            .map(|(pattern, fraction)| (pattern.clone(), fraction * 100.0))
            .collect(),
        systems: chosen.iter().map(|id| system_of(id)).collect(),
        differences,
        metrics,
    })
}

/// What the notes read of `metrics` ([`notes::Measured`]).
fn measured(metrics: &[MetricReport]) -> notes::Measured<'_> {
    notes::Measured {
        metrics: metrics
            .iter()
            .map(|m| {
                let row = m.results.iter().map(|r| r.comparison.as_ref()).collect();
                (m.threshold_pct / 100.0, row)
            })
            .collect(),
        one_round: metrics
            .iter()
            .flat_map(|m| &m.results)
            .any(|r| r.summary.is_some() && r.rounds == 1),
    }
}

fn identifier_order(data: &ResultSetData, request: &CompareRequest) -> Result<Vec<String>, Error> {
    let known: Vec<&str> = data.identifiers.iter().map(|i| i.name.as_str()).collect();
    let check = |name: &String| {
        if known.contains(&name.as_str()) {
            Ok(name.clone())
        } else {
            Err(Error::UnknownIdentifier {
                set: data.name.clone(),
                name: name.clone(),
                known: known.iter().map(|k| k.to_string()).collect(),
            })
        }
    };
    let baseline = match &request.baseline {
        Some(name) => check(name)?,
        None => known
            .first()
            .map(|s| s.to_string())
            .ok_or_else(|| Error::NoIdentifiers {
                set: data.name.clone(),
            })?,
    };
    let mut order = vec![baseline.clone()];
    if request.identifiers.is_empty() {
        order.extend(
            known
                .iter()
                .filter(|k| **k != baseline)
                .map(|k| k.to_string()),
        );
    } else {
        for name in &request.identifiers {
            let name = check(name)?;
            if !order.contains(&name) {
                order.push(name);
            }
        }
    }
    Ok(order)
}

fn system_of(identifier: &IdentifierData) -> IdentifierSystem {
    let last = identifier.runs.last();
    IdentifierSystem {
        identifier: identifier.name.clone(),
        snapshot: header::recorded_snapshot(&identifier.runs).cloned(),
        wrapper: last.and_then(|r| r.info.wrapper.clone()),
        runs: identifier.runs.len(),
        notes: identifier
            .runs
            .iter()
            .flat_map(|r| r.info.notes.clone())
            .collect(),
    }
}

fn summaries(metrics: &[MetricReport], order: &[String]) -> Vec<IdentifierSummary> {
    let rows: Vec<geomean::GeomeanRow> = metrics
        .iter()
        .map(|m| geomean::GeomeanRow {
            better: m.direction,
            baseline: m.results[0].summary.as_ref().map(|s| s.mean),
            current: m.results[1..]
                .iter()
                .map(|r| r.summary.as_ref().map(|s| s.mean))
                .collect(),
        })
        .collect();
    let geomean = geomean::geomean_vs_baseline(&rows).ok();
    let direction = shared_direction(&rows);
    order
        .iter()
        .enumerate()
        .skip(1)
        .map(|(column, name)| {
            let count = |verdict: Verdict| {
                metrics
                    .iter()
                    .filter(|m| {
                        m.results[column]
                            .comparison
                            .as_ref()
                            .is_some_and(|c| c.verdict == verdict)
                    })
                    .count()
            };
            IdentifierSummary {
                identifier: name.clone(),
                geomean_better_ratio: geomean.as_ref().map(|g| g.ratios[column - 1]),
                geomean_direction: direction,
                metrics_used: geomean.as_ref().map_or(0, |g| g.metrics_used),
                metrics_left_out: geomean
                    .as_ref()
                    .map_or(metrics.len(), |g| g.metrics_left_out),
                regressions: count(Verdict::Regression),
                improvements: count(Verdict::Improvement),
                no_change: count(Verdict::NoChange),
                inconclusive: count(Verdict::Inconclusive),
                cannot_decide: count(Verdict::CannotDecide),
                analysis: level::describe(
                    &metrics
                        .iter()
                        .filter_map(|m| m.results[column].comparison.as_ref())
                        .collect::<Vec<_>>(),
                ),
            }
        })
        .collect()
}

/// The direction of every row that enters the geometric mean (as
/// `geomean_vs_baseline` chooses them: positive finite values on every
/// side), when they share one.
fn shared_direction(rows: &[geomean::GeomeanRow]) -> Option<Direction> {
    let usable = |v: &Option<f64>| v.is_some_and(|v| v.is_finite() && v > 0.0);
    let mut used = rows
        .iter()
        .filter(|r| usable(&r.baseline) && r.current.iter().all(usable))
        .map(|r| r.better);
    let first = used.next()?;
    used.all(|d| d == first).then_some(first)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::fixtures::disturbed;
    use kbench_model::is_monitor_metric;

    /// Monitors that changed a lot are no result: no verdict, no
    /// geometric-mean ratio, not in the FDR family (the main metric's q is
    /// what it is without them).
    #[test]
    fn monitors_get_no_verdict_and_stay_out_of_the_family() {
        let data = disturbed();
        let request = CompareRequest {
            baseline: None,
            identifiers: vec![],
            threshold: Thresholds::uniform(0.01),
            metric_filter: None,
            calibrations: vec![],
        };
        let report = build(&data, &request).unwrap();
        let tests: Vec<&str> = report.metrics.iter().map(|m| m.test.as_str()).collect();
        assert_eq!(tests, ["syscall-null"]);
        let summary = &report.summaries[0];
        assert_eq!(summary.metrics_used, 1);
        let decided = summary.regressions + summary.improvements + summary.no_change;
        assert_eq!(decided + summary.inconclusive, 1);
        // The same comparison with no monitor stored at all: the same q.
        let mut bare = data.clone();
        bare.tests.retain(|t| !is_monitor_metric(&t.key.metric));
        for id in &mut bare.identifiers {
            id.samples.retain(|k, _| !is_monitor_metric(&k.metric));
            id.sample_runs.retain(|k, _| !is_monitor_metric(&k.metric));
        }
        let plain = build(&bare, &request).unwrap();
        let q = |r: &ComparisonReport| r.metrics[0].results[1].comparison.as_ref().unwrap().q_value;
        assert_eq!(q(&report), q(&plain));
        // The notes name the slower machine and b's stolen rounds.
        assert!(
            report
                .notes
                .iter()
                .any(|n| n.contains("ran 99.9 % slower while 'b'")),
            "{:?}",
            report.notes
        );
        assert!(
            report
                .notes
                .iter()
                .any(|n| n.starts_with("'b': 4 of 4 round(s) ran disturbed")),
            "{:?}",
            report.notes
        );
    }
}
