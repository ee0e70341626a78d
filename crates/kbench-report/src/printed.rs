//! What `kbench compare` prints, built and laid out in one call: the
//! comparison of a request, or with a factor the comparison by factor
//! ([`kbench_analysis::factors`]), in a format of the registry; and whether it holds
//! a regression (the `--fail-on-regression` gate).

use crate::Error;
use crate::format::{self, Style};
use kbench_analysis::comparison::{self, CompareRequest, ComparisonReport};
use kbench_analysis::factors::{self, FactorReport, FactorRequest};
use kbench_analysis::thresholds::Thresholds;

use kbench_model::Calibration;
use kbench_model::results::{ResultSetData, SetPart};

/// A report as text, and whether any metric in it is a REGRESSION.
#[derive(Debug, Clone, PartialEq)]
pub struct Printed {
    pub text: String,
    pub regression: bool,
}

/// `--by FACTOR` and `--baseline-level LEVEL`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct By<'a> {
    pub factor: &'a str,
    pub baseline_level: Option<&'a str>,
}

/// The comparison of `identifiers` (empty: all the others) with
/// `baseline` (`None`: the first identifier) at the 1 % threshold, every
/// metric, in format `name`, as it stands: without [`compare`]'s checks,
/// so that `show --format` and the report after `run --variant` print
/// even a set that has nothing measured yet. `calibrations` are the
/// store's, as [`CompareRequest`]'s.
pub fn whole(
    data: &ResultSetData,
    baseline: Option<String>,
    identifiers: Vec<String>,
    calibrations: Vec<Calibration>,
    name: &str,
) -> Result<String, Error> {
    let formatter = format::by_name(name).ok_or_else(|| Error::UnknownFormat {
        format: name.to_string(),
    })?;
    let request = CompareRequest {
        baseline,
        identifiers,
        threshold: Thresholds::default(),
        metric_filter: None,
        calibrations,
    };
    let report = comparison::build(data, &request)?;
    Ok(formatter.render(&report, Style::default()))
}

/// What [`compare`] reads of the set for `request`: the baseline and the
/// identifiers named (the first stored when no baseline is named), all of
/// them when none is named or by factor. Every metric, as the FDR family
/// is over every metric whatever `--metric` shows.
pub fn part(request: &CompareRequest, by: Option<By>) -> SetPart {
    if by.is_some() || request.identifiers.is_empty() {
        return SetPart::all();
    }
    SetPart {
        identifiers: Some(
            request
                .baseline
                .iter()
                .chain(&request.identifiers)
                .cloned()
                .collect(),
        ),
        first: request.baseline.is_none(),
        metric_filter: None,
    }
}

/// The comparison `request` asks for (by factor with `by`) in format
/// `name`. Besides the builders' errors: a set with one identifier, or
/// identifiers named that leave the baseline alone, have nothing to
/// compare, and a `--metric` that matches nothing is refused.
pub fn compare(
    data: &ResultSetData,
    request: &CompareRequest,
    by: Option<By>,
    name: &str,
    style: Style,
) -> Result<Printed, Error> {
    if let Some(by) = by {
        let report = factors::build(
            data,
            &FactorRequest {
                factor: by.factor.to_string(),
                baseline_level: by.baseline_level.map(str::to_string),
                baseline: request.baseline.clone(),
                threshold: request.threshold.clone(),
                metric_filter: request.metric_filter.clone(),
                calibrations: request.calibrations.clone(),
            },
        )?;
        let renderer = format::find::<FactorReport>(name).ok_or_else(|| Error::FormatWithBy {
            format: name.to_string(),
            known: format::formats::<FactorReport>()
                .iter()
                .map(|f| f.name())
                .collect(),
        })?;
        return Ok(Printed {
            text: renderer.render(&report, style),
            regression: report.has_regression(),
        });
    }
    let formatter = format::by_name(name).ok_or_else(|| Error::UnknownFormat {
        format: name.to_string(),
    })?;
    let mut report = comparison::build(data, request)?;
    comparable(&report, request)?;
    formatter.fit(&mut report, request.metric_filter.as_deref())?;
    Ok(Printed {
        text: formatter.render(&report, style),
        regression: report.has_regression(),
    })
}

/// Refuses a comparison with nothing to compare: one identifier in the
/// set, identifiers named that leave the baseline alone, or a
/// `--metric` that matches no metric.
pub fn comparable(report: &ComparisonReport, request: &CompareRequest) -> Result<(), Error> {
    let (set, baseline) = (report.result_set.clone(), report.baseline.clone());
    if report.identifiers.len() < 2 && request.identifiers.is_empty() {
        return Err(Error::NothingToCompare {
            set,
            only: baseline,
        });
    }
    if report.identifiers.len() < 2 {
        return Err(Error::OnlyTheBaselineNamed { set, baseline });
    }
    if report.metrics.is_empty() {
        return Err(Error::NoMetricMatches {
            set,
            text: request.metric_filter.clone().unwrap_or_default(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use kbench_analysis::fixtures::{identifier, quiet, set};
    use kbench_analysis::thresholds::Thresholds;

    #[test]
    fn a_whole_comparison_prints_what_compare_would_refuse() {
        let one = set(vec![identifier("a", 2, &[quiet(1.0), quiet(1.0)])]);
        let request = CompareRequest {
            baseline: None,
            identifiers: vec![],
            threshold: Thresholds::uniform(0.01),
            metric_filter: None,
            calibrations: vec![],
        };
        // compare refuses one identifier; the whole comparison shows it.
        let refused = compare(&one, &request, None, "json", Style::default());
        assert!(matches!(refused, Err(Error::NothingToCompare { .. })));
        let json = whole(&one, None, vec![], vec![], "json").unwrap();
        let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(doc["baseline"], "a");
        assert_eq!(doc["threshold_pct"], 1.0);
        assert!(matches!(
            whole(&one, None, vec![], vec![], "no-such-format"),
            Err(Error::UnknownFormat { .. })
        ));
    }
}
