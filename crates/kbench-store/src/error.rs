//! Store errors: each says which file or name and what to do.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database file cannot be opened or created (permissions, a missing
    /// directory that cannot be made).
    #[error("cannot open the result database {path}: {reason}")]
    Open { path: PathBuf, reason: String },

    /// The file exists but is not a kbench database or is damaged. It is
    /// never overwritten.
    #[error(
        "the result database {path} is not usable: {reason}. It was left untouched; \
         move it away or pass another file with --db"
    )]
    Corrupt { path: PathBuf, reason: String },

    /// The file was written by a newer kbench.
    #[error(
        "the result database {path} has schema version {found}, newer than this kbench ({supported}); \
         upgrade kbench"
    )]
    TooNew {
        path: PathBuf,
        found: i64,
        supported: i64,
    },

    #[error("{0}")]
    InvalidName(String),

    #[error("{0}")]
    NotFound(String),

    #[error("{0}")]
    Conflict(String),

    #[error("database error: {0}")]
    Database(String),
}
