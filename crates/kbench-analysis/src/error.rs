//! What can go wrong building an analysis: a request that does not fit
//! the result set.

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
}
