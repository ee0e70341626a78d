//! The one error of this crate: a file that cannot be read, with where.

/// A result file refused whole: `at` names the element or key (with its
/// line when the format has lines), `what` says what is wrong and what to
/// do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{at}: {what}")]
pub struct FormatError {
    pub at: String,
    pub what: String,
}

impl FormatError {
    pub fn new(at: impl Into<String>, what: impl Into<String>) -> FormatError {
        FormatError {
            at: at.into(),
            what: what.into(),
        }
    }
}
