//! What `kbench compare` prints, built and laid out in one call: the
//! comparison of a request, or with a factor the comparison by factor
//! ([`crate::factors`]), in a format of the registry; and whether it holds
//! a regression (the `--fail-on-regression` gate).

use crate::Error;
use crate::comparison::{self, CompareRequest};
use crate::factors::{self, FactorRequest};
use crate::format::{self, Style};
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
/// `name`. Besides the builders' errors: a set with one identifier has
/// nothing to compare, and a `--metric` that matches nothing is refused.
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
                threshold: request.threshold,
                metric_filter: request.metric_filter.clone(),
            },
        )?;
        return Ok(Printed {
            text: factors::render(&report, name, style)?,
            regression: report.has_regression(),
        });
    }
    let formatter = format::by_name(name).ok_or_else(|| Error::UnknownFormat {
        format: name.to_string(),
    })?;
    let mut report = comparison::build(data, request)?;
    if report.identifiers.len() < 2 {
        return Err(Error::NothingToCompare {
            set: report.result_set,
            only: report.baseline,
        });
    }
    if report.metrics.is_empty() {
        return Err(Error::NoMetricMatches {
            set: report.result_set,
        });
    }
    formatter.fit(&mut report, request.metric_filter.as_deref())?;
    Ok(Printed {
        text: formatter.render(&report, style),
        regression: report.has_regression(),
    })
}
