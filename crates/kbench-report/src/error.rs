//! What can go wrong laying out a report: the analysis's own errors, a
//! format that does not exist, or one that cannot draw what was chosen.

/// Names of metrics listed in an error at most.
const LISTED: usize = 10;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The request does not fit the result set.
    #[error(transparent)]
    Analysis(#[from] kbench_analysis::Error),

    /// A format name the registry does not know for a comparison.
    #[error("there is no comparison format '{format}'")]
    UnknownFormat { format: String },

    /// A set with one identifier, compared.
    #[error(
        "result set '{set}' has only '{only}'; run under a second identifier (--as) to compare"
    )]
    NothingToCompare { set: String, only: String },

    /// Identifiers named on the command line that leave one to compare:
    /// the baseline alone.
    #[error(
        "nothing to compare with '{baseline}', the baseline of result set '{set}': name the identifiers to compare with it, or none to compare them all (`kbench show {set}` lists them)"
    )]
    OnlyTheBaselineNamed { set: String, baseline: String },

    /// A `--metric` that matches no metric of the set.
    #[error(
        "no metric of result set '{set}' matches --metric '{text}' (a part of a test's name, e.g. 'pipe'); `kbench show {set}` lists its tests"
    )]
    NoMetricMatches { set: String, text: String },

    /// A format that `compare --by` does not lay out.
    #[error(
        "--format {format} does not lay out a comparison by factor yet; use one of {}",
        .known.join(", ")
    )]
    FormatWithBy {
        format: String,
        known: Vec<&'static str>,
    },

    /// A format that draws one metric, without `--metric`.
    #[error(
        "--format {format} draws one metric: choose it with --metric TEXT (result set '{set}' has {metrics} metrics)"
    )]
    NoMetricChosen {
        format: &'static str,
        set: String,
        metrics: usize,
    },

    /// A format that draws one metric, with a `--metric` that matches several.
    #[error(
        "--format {format} draws one metric, but --metric '{text}' matches {}: {}; give more of the name",
        .matches.len(),
        listed(.matches)
    )]
    SeveralMetrics {
        format: &'static str,
        text: String,
        matches: Vec<String>,
    },
}

/// The first [`LISTED`] names, and how many more there are.
fn listed(names: &[String]) -> String {
    let shown = &names[..names.len().min(LISTED)];
    let more = names.len() - shown.len();
    let mut text = shown.join(", ");
    if more > 0 {
        text.push_str(&format!(" and {more} more"));
    }
    text
}
