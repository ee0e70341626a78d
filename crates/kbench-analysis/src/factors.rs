//! `kbench compare --by FACTOR`: a designed experiment's comparison. The
//! identifiers carry factors (`kernel=patched`, `cgroup=yes`); within each
//! combination of the other factors' levels (a group: `cgroup=no`, then
//! `cgroup=yes`), the identifier at the baseline level of FACTOR is
//! compared with those at its other levels. Each group is an ordinary
//! [`comparison`] of two or more identifiers, so the change CI, p/q values
//! and verdicts are the same as `compare`'s. Serialized, it is the
//! `kbench.factors/1` document of docs/json.md.

use crate::Error;
use crate::comparison::{self, CompareRequest, ComparisonReport};
use crate::thresholds::Thresholds;
use kbench_model::results::ResultSetData;
use serde::Serialize;
use std::collections::BTreeMap;

pub const SCHEMA: &str = "kbench.factors/1";

/// What `compare --by` asks.
#[derive(Debug, Clone, PartialEq)]
pub struct FactorRequest {
    /// The factor whose levels are compared.
    pub factor: String,
    /// Its level compared against; default: the level of `baseline`, else
    /// of the first identifier stored with the factor.
    pub baseline_level: Option<String>,
    /// An identifier whose level is the baseline level.
    pub baseline: Option<String>,
    /// Practical thresholds, per metric.
    pub threshold: Thresholds,
    /// Only metrics whose test name contains this text are shown.
    pub metric_filter: Option<String>,
    /// The store's calibrations of host drift, as [`CompareRequest`]'s.
    pub calibrations: Vec<kbench_model::Calibration>,
}

#[derive(Debug, Clone, Serialize)]
pub struct FactorReport {
    pub schema: &'static str,
    pub result_set: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub factor: String,
    pub baseline_level: String,
    pub groups: Vec<FactorGroup>,
    /// Identifiers and groups left out, and why.
    pub notes: Vec<String>,
}

/// One combination of the other factors' levels, and its comparison.
#[derive(Debug, Clone, Serialize)]
pub struct FactorGroup {
    /// The other factors' levels its identifiers share (empty when FACTOR
    /// is the only one).
    pub within: BTreeMap<String, String>,
    /// FACTOR's level of each identifier of the comparison, in its order
    /// (the baseline level first).
    pub levels: Vec<String>,
    /// The baseline-level identifier against the others, as `compare`
    /// makes it (without the set's title, which the report has once).
    pub comparison: ComparisonReport,
}

impl FactorGroup {
    /// Where the group stands: "cgroup=no, numa=off", or "all identifiers"
    /// for the only group.
    pub fn place(&self) -> String {
        place(&self.within)
    }
}

impl FactorReport {
    /// Whether any metric of any group is a REGRESSION.
    pub fn has_regression(&self) -> bool {
        self.groups.iter().any(|g| g.comparison.has_regression())
    }
}

/// Identifiers of one group: (name, level) in stored order.
type Members<'a> = Vec<(&'a str, &'a str)>;

/// Builds the factor comparison. Errors: no identifier has the factor, an
/// unknown baseline identifier or level, and a group with two identifiers
/// at the baseline level (which of them is the baseline?).
pub fn build(data: &ResultSetData, request: &FactorRequest) -> Result<FactorReport, Error> {
    let factor = &request.factor;
    let with: Vec<_> = data
        .identifiers
        .iter()
        .filter(|i| i.factors.contains_key(factor))
        .collect();
    let without: Vec<&str> = data
        .identifiers
        .iter()
        .filter(|i| !i.factors.contains_key(factor))
        .map(|i| i.name.as_str())
        .collect();
    if with.is_empty() {
        let mut factors: Vec<&str> = data
            .identifiers
            .iter()
            .flat_map(|i| i.factors.keys().map(String::as_str))
            .collect();
        factors.sort_unstable();
        factors.dedup();
        return Err(Error::UnknownFactor {
            set: data.name.clone(),
            factor: factor.clone(),
            known: factors.into_iter().map(str::to_string).collect(),
        });
    }
    let level_of = |name: &str| {
        with.iter()
            .find(|i| i.name == name)
            .map(|i| i.factors[factor].clone())
    };
    let baseline_level = match (&request.baseline_level, &request.baseline) {
        (Some(level), _) => level.clone(),
        (None, Some(name)) => level_of(name).ok_or_else(|| Error::BaselineWithoutFactor {
            name: name.clone(),
            factor: factor.clone(),
        })?,
        (None, None) => with[0].factors[factor].clone(),
    };
    let mut levels: Vec<&str> = with.iter().map(|i| i.factors[factor].as_str()).collect();
    levels.sort_unstable();
    levels.dedup();
    if !levels.contains(&baseline_level.as_str()) {
        return Err(Error::UnknownLevel {
            factor: factor.clone(),
            level: baseline_level,
            known: levels.into_iter().map(str::to_string).collect(),
        });
    }

    let mut notes = Vec::new();
    if !without.is_empty() {
        notes.push(format!(
            "Left out, without factor '{factor}': {}.",
            without.join(", ")
        ));
    }
    let mut groups: BTreeMap<BTreeMap<String, String>, Members> = BTreeMap::new();
    for identifier in &with {
        let mut within = identifier.factors.clone();
        within.remove(factor);
        groups
            .entry(within)
            .or_default()
            .push((&identifier.name, &identifier.factors[factor]));
    }
    let mut built = Vec::new();
    for (within, members) in groups {
        let place = place(&within);
        let base: Vec<&str> = members
            .iter()
            .filter(|(_, level)| *level == baseline_level)
            .map(|(name, _)| *name)
            .collect();
        let others: Members = members
            .iter()
            .filter(|(_, level)| *level != baseline_level)
            .copied()
            .collect();
        match (base.as_slice(), others.is_empty()) {
            ([], _) => notes.push(format!(
                "{place}: no identifier has {factor}={baseline_level}; {} left out.",
                names(&members)
            )),
            ([only], true) => notes.push(format!(
                "{place}: only '{only}' ({factor}={baseline_level}); nothing to compare it with."
            )),
            ([baseline], false) => {
                let mut comparison = comparison::build(
                    data,
                    &CompareRequest {
                        baseline: Some(baseline.to_string()),
                        identifiers: others.iter().map(|(n, _)| n.to_string()).collect(),
                        threshold: request.threshold.clone(),
                        metric_filter: request.metric_filter.clone(),
                        calibrations: request.calibrations.clone(),
                    },
                )?;
                comparison.title = None;
                comparison.description = None;
                let mut levels = vec![baseline_level.clone()];
                levels.extend(others.iter().map(|(_, level)| level.to_string()));
                built.push(FactorGroup {
                    within,
                    levels,
                    comparison,
                });
            }
            (several, _) => {
                return Err(Error::SeveralAtBaseline {
                    place,
                    factor: factor.clone(),
                    level: baseline_level,
                    names: several.iter().map(|n| n.to_string()).collect(),
                });
            }
        }
    }
    Ok(FactorReport {
        schema: SCHEMA,
        result_set: data.name.clone(),
        title: data.title.clone(),
        description: data.description.clone(),
        factor: factor.clone(),
        baseline_level,
        groups: built,
        notes,
    })
}

/// "cgroup=no, numa=off", or "all identifiers" for the only group.
fn place(within: &BTreeMap<String, String>) -> String {
    if within.is_empty() {
        return "all identifiers".to_string();
    }
    let pairs: Vec<String> = within.iter().map(|(k, v)| format!("{k}={v}")).collect();
    pairs.join(", ")
}

fn names(members: &Members) -> String {
    let quoted: Vec<String> = members.iter().map(|(n, _)| format!("'{n}'")).collect();
    quoted.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures;

    fn request(baseline_level: Option<&str>) -> FactorRequest {
        FactorRequest {
            factor: "kernel".into(),
            baseline_level: baseline_level.map(str::to_string),
            baseline: None,
            threshold: Thresholds::uniform(0.01),
            metric_filter: None,
            calibrations: vec![],
        }
    }

    #[test]
    fn the_effect_is_compared_within_each_other_level() {
        let report = build(&fixtures::factor_design(), &request(None)).unwrap();
        assert_eq!(report.baseline_level, "stock");
        let within: Vec<&str> = report
            .groups
            .iter()
            .map(|g| g.within["cgroup"].as_str())
            .collect();
        assert_eq!(within, ["no", "yes"]);
        for group in &report.groups {
            assert_eq!(group.levels, ["stock", "patched"]);
            assert!(group.comparison.has_regression(), "{:?}", group.within);
        }
        assert!(report.notes[0].contains("loose"), "{:?}", report.notes);
        // From the other side, the change is an improvement.
        let report = build(&fixtures::factor_design(), &request(Some("patched"))).unwrap();
        assert!(!report.has_regression());
        assert_eq!(report.groups[1].comparison.baseline, "patched-cg");
    }

    #[test]
    fn bad_requests_are_refused_with_what_there_is() {
        let mut bad = request(None);
        bad.factor = "kernal".into();
        let err = build(&fixtures::factor_design(), &bad)
            .unwrap_err()
            .to_string();
        assert!(err.contains("cgroup, kernel"), "{err}");
        let err = build(&fixtures::factor_design(), &request(Some("old")))
            .unwrap_err()
            .to_string();
        assert!(err.contains("patched, stock"), "{err}");
        let mut twice = fixtures::factor_design();
        twice.identifiers[1]
            .factors
            .insert("kernel".into(), "stock".into());
        let err = build(&twice, &request(None)).unwrap_err().to_string();
        assert!(err.contains("'stock', 'patched'"), "{err}");
    }
}
