//! The errors of this crate: a file that cannot be read, with where, and
//! an export that stopped.

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

/// Why `kbench export` stopped: the request is wrong, the set or an
/// identifier is not stored, the store failed, or the output could not be
/// written (what was written before stays written).
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error(transparent)]
    Format(#[from] FormatError),
    #[error("--identifier {name:?}: result set '{set}' has no such identifier; it has: {known}")]
    NoIdentifier {
        set: String,
        name: String,
        known: String,
    },
    #[error(transparent)]
    Store(#[from] kbench_store::StoreError),
    #[error("cannot write the export: {0}")]
    Write(#[from] std::io::Error),
}
