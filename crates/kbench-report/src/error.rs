//! What can go wrong building a report: a request that does not fit the
//! result set, or a format that cannot draw what was chosen.

/// Names of metrics listed in an error at most.
const LISTED: usize = 10;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    #[error("result set '{set}' has no identifiers")]
    NoIdentifiers { set: String },

    /// A baseline or compared identifier the set does not hold.
    #[error("result set '{set}' has no identifier '{name}'; it has: {}", .known.join(", "))]
    UnknownIdentifier {
        set: String,
        name: String,
        known: Vec<String>,
    },

    /// A version of history's `--order` the set does not hold.
    #[error("result set '{set}' has no identifier '{name}' (--order); it has: {}", .known.join(", "))]
    UnknownVersion {
        set: String,
        name: String,
        known: Vec<String>,
    },

    #[error("--order names '{name}' twice; give each version once")]
    RepeatedVersion { name: String },

    /// `compare --by` a factor no identifier has.
    #[error(
        "no identifier of result set '{set}' has factor '{factor}'; {}",
        if .known.is_empty() {
            "it has no factors: give them with `kbench set edit SET --identifier ID --factor NAME=LEVEL` \
             (or `kbench run --factor`)".to_string()
        } else {
            format!("its factors: {}", .known.join(", "))
        }
    )]
    UnknownFactor {
        set: String,
        factor: String,
        known: Vec<String>,
    },

    /// `--baseline-level` that no identifier has.
    #[error("no identifier has {factor}={level}; the levels of {factor}: {}", .known.join(", "))]
    UnknownLevel {
        factor: String,
        level: String,
        known: Vec<String>,
    },

    /// `compare --by` with a `--baseline` that lacks the factor.
    #[error(
        "--baseline '{name}' has no factor '{factor}' (or is not in the set); give an identifier \
         that has it, or --baseline-level"
    )]
    BaselineWithoutFactor { name: String, factor: String },

    /// Two identifiers of one group at the baseline level.
    #[error(
        "{place}: {} all have {factor}={level}, so none is the baseline of that group; give \
         them another factor (kbench set edit) or remove all but one",
        .names.iter().map(|n| format!("'{n}'")).collect::<Vec<_>>().join(", ")
    )]
    SeveralAtBaseline {
        place: String,
        factor: String,
        level: String,
        names: Vec<String>,
    },

    /// A format name the registry does not know for a comparison.
    #[error("there is no comparison format '{format}'")]
    UnknownFormat { format: String },

    /// A set with one identifier, compared.
    #[error(
        "result set '{set}' has only '{only}'; run under a second identifier (--as) to compare"
    )]
    NothingToCompare { set: String, only: String },

    /// A `--metric` that matches no metric of the set.
    #[error("no metric of result set '{set}' matches --metric")]
    NoMetricMatches { set: String },

    /// A format that `compare --by` does not lay out.
    #[error(
        "--format {format} does not lay out a comparison by factor yet; use one of {}",
        crate::factors::FORMATS.join(", ")
    )]
    FormatWithBy { format: String },

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
