//! SQLite store: to be written.
pub struct SqliteStore;
