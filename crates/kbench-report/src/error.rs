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
