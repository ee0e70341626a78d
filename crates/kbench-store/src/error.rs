//! Store errors: each says which database (file path, or URL without its
//! password) or name, and what to do.

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database cannot be opened: a file that cannot be created
    /// (permissions, a missing directory that cannot be made), a
    /// PostgreSQL server that cannot be reached or refuses the connection.
    #[error("cannot open the result database {db}: {reason}")]
    Open { db: String, reason: String },

    /// The database exists but is not a kbench database or is damaged. It
    /// is never overwritten.
    #[error(
        "the result database {db} is not usable: {reason}. It was left untouched; \
         move it away or pass another database with --db"
    )]
    Corrupt { db: String, reason: String },

    /// The database was written by a newer kbench.
    #[error(
        "the result database {db} has schema version {found}, newer than this kbench ({supported}); \
         upgrade kbench"
    )]
    TooNew {
        db: String,
        found: i64,
        supported: i64,
    },

    /// What was to be written is not valid (a name, a sample, a time, a
    /// test, a job): nothing was written. The message says what and where.
    #[error("{0}")]
    Invalid(String),

    #[error("{0}")]
    NotFound(String),

    /// The caller may not do this (another token's lease or worker name):
    /// nothing was written.
    #[error("{0}")]
    Forbidden(String),

    #[error("{0}")]
    Conflict(String),

    #[error("database error: {0}")]
    Database(String),

    /// The connection to the database broke during the operation (a server
    /// restart or shutdown): nothing of it was committed, and the same call
    /// may be retried (the PostgreSQL store reconnects on its next call).
    #[error("database unavailable: {0}")]
    Unavailable(String),
}
