//! kbench's result store.
//!
//! Schema: result set -> identifier -> run (system snapshot, wrapper, tool
//! version, start/end) -> samples of tests (benchmark id + options, metric,
//! unit, direction). Every raw sample is kept and committed the moment it is
//! added, so killing a run loses at most the sample in flight. Beside the
//! results: host calibrations (hardware and unit -> each test's drift).
//!
//! Callers see the store through its role traits: [`RunSink`]
//! (what a run writes), [`Results`] (reads), [`Exchange`] (imports, pushes,
//! live uploads), [`JobQueue`], [`Tokens`], [`Bisects`],
//! [`Campaigns`] and [`Calibrations`] (a host's drift between units, per test); an opened
//! [`Database`] holds them all. [`SqliteStore`] is the embedded default and
//! [`PostgresStore`] the shared one, both with the same schema versions and
//! the same logic (`engine`), which implements every role over a small
//! `Sql` trait. [`Location`] reads `--db`: a path or a `postgres://` URL,
//! and opens the right one.

mod engine;
mod error;
pub mod exchange;
mod location;
pub mod outline;
mod postgres;
mod roles;
mod sqlite;
#[cfg(feature = "testing")]
pub mod testing;
pub mod validate;

pub use error::StoreError;
pub use kbench_model::lab::{
    Job, JobLease, JobSpec, JobState, LiveBatch, LiveOutcome, LiveSamples, Push, PushOutcome,
    SavedState, Scope, TokenInfo, WorkerInfo,
};
pub use kbench_model::results::{
    IdentifierData, ResultSetData, ResultSetSummary, RunContents, RunId, RunInfo, RunRecord,
    RunStatus, SetPart, TestId, TestOutcome, TestOutcomeKind,
};
pub use location::{Location, Opening, PostgresUrl, redact};
pub use postgres::PostgresStore;
pub use roles::{
    Bisects, Calibrations, Campaigns, Database, Editing, Exchange, JobQueue, Recorder, Removed,
    Results, RunSink, SetHead, SetWriter, Tokens,
};
pub use sqlite::SqliteStore;

pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// Leases a job may lose (its worker dying) before it is failed.
pub const MAX_JOB_ATTEMPTS: u32 = 3;
