//! What callers see of a store: one trait per role, so that each takes the
//! narrowest it needs. The runner writes through [`RunSink`], the reading
//! commands read through [`Results`] (and authors arrange a set through
//! [`Editing`]), the lab server receives through
//! [`Exchange`] and runs its queue through [`JobQueue`] and [`Tokens`],
//! bisection keeps its state through [`Bisects`], and a host's
//! calibrations are kept through [`Calibrations`]. An opened database
//! ([`Database`], what `Location::open` returns) holds them all; the one
//! engine implements each for both backends (`engine/`).
//!
//! Every write is durable when the call returns.

use crate::outline::{OutlinePages, SetOutline, SetOverview};
use crate::{
    IdentifierData, Job, JobSpec, LiveBatch, LiveOutcome, Push, PushOutcome, Result, ResultSetData,
    ResultSetSummary, RunContents, RunId, RunInfo, RunRecord, RunStatus, SavedState, Scope,
    SetPart, TestId, TestOutcome, TokenInfo, WorkerInfo,
};
use kbench_model::{Calibration, Sample, TestKey, TestSpec};
use std::collections::BTreeMap;

/// What a run writes as it goes, and what it reads back of its own
/// identifier to resume or to number its rounds.
pub trait RunSink {
    /// Starts a new run of `identifier` in result set `set`, creating both
    /// when new. Names are checked with `kbench_model::validate_name`; a
    /// `info.uid` another run has is a `Conflict`.
    fn begin_run(&mut self, set: &str, identifier: &str, info: &RunInfo) -> Result<RunId>;

    /// Takes the lock on measuring `identifier` of `set`, held until this
    /// store is dropped (or its process dies): a run is one invocation, and
    /// two at once on one identifier would interleave their rounds. Held by
    /// another store (another `kbench run`, here or on another machine
    /// sharing the database) it is a `Conflict` saying so; taken again by
    /// the store holding it, it is kept.
    fn lock_identifier(&mut self, set: &str, identifier: &str) -> Result<()>;

    /// The newest run of this identifier that never ended (killed) or was
    /// interrupted, to be resumed; `None` when the last run completed.
    fn unfinished_run(&mut self, set: &str, identifier: &str) -> Result<Option<RunRecord>>;

    /// Marks a run as resumed by a new process (new pid, status running).
    fn resume_run(&mut self, run: RunId, pid: u32) -> Result<()>;

    /// The id of a test in a result set, created on first use. A test that
    /// exists with another unit or direction is an error (`Conflict`).
    fn test_id(&mut self, set: &str, spec: &TestSpec) -> Result<TestId>;

    /// Stores one raw sample; committed before returning.
    fn add_sample(&mut self, run: RunId, test: TestId, sample: &Sample) -> Result<()>;

    /// Records how a test ended in a run (target met, skipped, failed); a
    /// second call for the same pair replaces the first. `outcome.test` is
    /// not checked against `test`.
    fn end_test(&mut self, run: RunId, test: TestId, outcome: &TestOutcome) -> Result<()>;

    /// Ends a run with its status, end time and the steal time measured
    /// while it went on (percent of CPU time, when known).
    fn end_run(&mut self, run: RunId, status: RunStatus, steal_percent: Option<f64>) -> Result<()>;

    /// The largest round number stored for this identifier, if any sample.
    fn last_round(&mut self, set: &str, identifier: &str) -> Result<Option<u32>>;

    /// Tests already ended in a run, for resuming it.
    fn ended_tests(&mut self, run: RunId) -> Result<Vec<TestKey>>;
}

/// What was stored, read back: for the reports, exports and the server's
/// pages.
pub trait Results {
    /// All result sets, oldest first.
    fn result_sets(&mut self) -> Result<Vec<ResultSetSummary>>;

    /// Everything in one result set: identifiers in the order they were
    /// first stored, their runs, tests and raw samples. `NotFound` names the
    /// sets that exist.
    fn load(&mut self, set: &str) -> Result<ResultSetData> {
        self.load_part(set, &SetPart::all())
    }

    /// What [`Results::load`] returns, but only the `part` a report needs:
    /// the runs and samples of the identifiers it names (the others listed
    /// without them) and the tests its filter matches, read through
    /// indexes. Of what it reads, the same as `load`.
    fn load_part(&mut self, set: &str, part: &SetPart) -> Result<ResultSetData>;

    /// Every result set's counts and newest run, oldest set first: the
    /// dashboard's list, read through indexes, without counting samples.
    fn set_overviews(&mut self) -> Result<Vec<SetOverview>>;

    /// A set's counts and the `pages` of its identifiers (with their runs
    /// and sample counts) and tests, without any sample: what a page about
    /// the set shows, at the same cost whatever its size. `NotFound` names
    /// the sets that exist.
    fn outline(&mut self, set: &str, pages: OutlinePages) -> Result<SetOutline>;

    /// One run with its set, identifier, tests and samples; `NotFound`
    /// when there is no such run.
    fn run_contents(&mut self, run: RunId) -> Result<RunContents>;
}

/// A result set's name and tests, what [`SetWriter::start`] writes.
#[derive(Debug, Clone, Copy)]
pub struct SetHead<'a> {
    pub name: &'a str,
    pub tests: &'a [TestSpec],
}

/// Writes the parts of a result set being imported
/// ([`Exchange::import_each`]): `start` first, once, then the others.
pub trait SetWriter {
    /// Finds or makes the set and its tests.
    fn start(&mut self, head: &SetHead) -> Result<()>;

    /// The set's title and description, kept where it has its own already.
    fn describe(&mut self, title: Option<&str>, description: Option<&str>) -> Result<()>;

    /// One identifier with its runs and samples, which must all be of the
    /// head's tests.
    fn identifier(&mut self, identifier: &IdentifierData) -> Result<()>;
}

/// Results that come whole from elsewhere: an imported document, a push,
/// a part of a run uploaded live.
pub trait Exchange {
    /// Writes a whole result set (import) in one transaction: all or nothing.
    /// Identifiers that already exist in `data.name`, and runs whose uid a
    /// stored run has (imported or uploaded before), are a `Conflict`.
    fn import(&mut self, data: &ResultSetData) -> Result<()>;

    /// Imports a result set handed over piece by piece, for documents too
    /// large to hold whole: `feed` reads its document and writes the set
    /// as it goes ([`SetWriter`]), all in one transaction with the checks
    /// of [`Exchange::import`]. Nothing is stored when `feed` or a write
    /// fails.
    fn import_each(&mut self, feed: &mut dyn FnMut(&mut dyn SetWriter) -> Result<()>)
    -> Result<()>;

    /// Imports a pushed document (as [`Exchange::import`]) and records its
    /// push id in the same transaction: a push id already recorded stores
    /// nothing and returns `AlreadyStored` (the same id with another
    /// digest is a `Conflict`). Two pushes of one id at once store it once.
    fn push(&mut self, push: &Push, data: &ResultSetData) -> Result<PushOutcome>;

    /// Stores a part of a live-uploaded run into `set` in one transaction
    /// (creating the set, identifier, run and tests as needed): samples
    /// past those stored for the run and test, the outcomes (replacing),
    /// and the run's status, end time, steal and pid. Samples that would
    /// leave a gap, a uid already used by a run of another set or
    /// identifier, or a test with another unit are a `Conflict`, and so
    /// is a `batch.lease` whose worker no longer holds the job (checked
    /// first, the job's row then locked until the batch is stored), and
    /// such a lease taken with a token other than `token` is `Forbidden`; a
    /// test neither in `batch.tests` nor stored in the set, a bad name,
    /// uid, sample or time ([`crate::validate`]) are `Invalid`; nothing is
    /// written then.
    fn append_live(&mut self, set: &str, batch: &LiveBatch, token: &str) -> Result<LiveOutcome>;
}

/// What a result set's author changes after measuring, as PTS edits a
/// result file: the set's title and description, its identifiers' names,
/// order and factors, and removing one identifier with its runs and
/// samples. Each call is one transaction, checked first: unknown sets and
/// identifiers are `NotFound` (an identifier's with the closest name), a
/// bad name or text `Invalid`, a name taken or an identifier being
/// measured a `Conflict`; nothing is changed then. No call touches another
/// identifier's runs or samples.
pub trait Editing {
    /// Sets the set's title and description: `None` keeps one as it is, an
    /// empty text clears it. A title is one line; both are checked with
    /// `kbench_model::validate_text`.
    fn describe_set(
        &mut self,
        set: &str,
        title: Option<&str>,
        description: Option<&str>,
    ) -> Result<()>;

    /// Renames identifier `old` of `set` to `new` (checked with
    /// `kbench_model::validate_name`; one the set has is a `Conflict`).
    fn rename_identifier(&mut self, set: &str, old: &str, new: &str) -> Result<()>;

    /// Puts the identifiers named in `first` first, in that order; the
    /// others keep their relative order after them. Returns the new order.
    /// A name given twice is `Invalid`.
    fn order_identifiers(&mut self, set: &str, first: &[String]) -> Result<Vec<String>>;

    /// Removes the identifier with its runs, their outcomes and samples;
    /// what was removed. The set's tests stay.
    fn remove_identifier(&mut self, set: &str, identifier: &str) -> Result<Removed>;

    /// Marks run `run` aborted: the machine went down while it measured
    /// (`kbench campaign` finds it so after the next boot). `reason` joins
    /// its notes and it is ended if it was not. Its samples stay stored;
    /// result sets as reports read them leave it out.
    fn abort_run(&mut self, run: RunId, reason: &str) -> Result<()>;

    /// Sets factors of the identifier (`levels`, replacing the level of a
    /// factor it has) and removes those of `unset` (each one it must
    /// have); returns all its factors now. Names and levels are checked
    /// with `kbench_model::parse_factor`.
    fn set_factors(
        &mut self,
        set: &str,
        identifier: &str,
        levels: &BTreeMap<String, String>,
        unset: &[String],
    ) -> Result<BTreeMap<String, String>>;
}

/// What [`Editing::remove_identifier`] removed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Removed {
    pub runs: u64,
    pub samples: u64,
}

/// The lab's job queue and the workers that lease its jobs.
pub trait JobQueue {
    /// Queues a job; its id. A spec without names to run, with rounds
    /// outside 1..=100, a max_time that is not a positive number, or a tag
    /// not of letters, digits, '-', '_' and '.' is `Invalid`.
    fn submit_job(&mut self, spec: &JobSpec) -> Result<i64>;

    /// Leases the oldest job `worker` can take (every job tag among
    /// `tags`) for `lease_ms`: a queued one, or a running one whose lease
    /// expired (its worker is presumed dead; `attempts` grows). A job whose
    /// lease expired [`crate::MAX_JOB_ATTEMPTS`] times is failed instead of
    /// leased again. Two workers never hold one job (PostgreSQL: `FOR
    /// UPDATE SKIP LOCKED`; SQLite: one writer). Records the worker as
    /// seen, its name then `token`'s: a name another token leased with is
    /// `Forbidden`. The lease belongs to `worker` and `token`. A `lease_ms`
    /// that is not positive is `Invalid`.
    fn lease_job(
        &mut self,
        worker: &str,
        token: &str,
        tags: &[String],
        lease_ms: i64,
    ) -> Result<Option<Job>>;

    /// Extends `worker`'s lease on `job`; false when it no longer holds it
    /// (expired and taken by another, or finished); `Forbidden` when the
    /// lease was taken with another token than `token`. Records the worker
    /// as seen.
    fn renew_lease(&mut self, job: i64, worker: &str, token: &str, lease_ms: i64) -> Result<bool>;

    /// Ends `worker`'s job as done or failed with its message; false when
    /// it no longer holds the lease (nothing changed); `Forbidden` when the
    /// lease was taken with another token than `token`.
    fn finish_job(
        &mut self,
        job: i64,
        worker: &str,
        token: &str,
        ok: bool,
        message: &str,
    ) -> Result<bool>;

    /// All jobs, newest first.
    fn jobs(&mut self) -> Result<Vec<Job>>;

    /// One job; `NotFound` when there is none.
    fn job(&mut self, id: i64) -> Result<Job>;

    /// Every worker seen, most recently seen first.
    fn workers(&mut self) -> Result<Vec<WorkerInfo>>;
}

/// The lab server's API tokens, kept as hashes of their secrets.
pub trait Tokens {
    /// Adds an API token by the SHA-256 (hex) of its secret, allowed
    /// `scopes` (at least one); a name in use, even revoked, is a `Conflict`.
    fn create_token(&mut self, name: &str, secret_sha256: &str, scopes: &[Scope]) -> Result<()>;

    /// Revokes the token `name`; `NotFound` when there is none. Revoking
    /// a revoked token keeps its first revocation time.
    fn revoke_token(&mut self, name: &str) -> Result<()>;

    /// All API tokens, oldest first.
    fn tokens(&mut self) -> Result<Vec<TokenInfo>>;

    /// The unrevoked token whose secret hashes to this.
    fn token_by_hash(&mut self, secret_sha256: &str) -> Result<Option<TokenInfo>>;
}

/// The resumable state of bisections, one JSON document per name.
pub trait Bisects {
    /// Saves (replacing) the state of the bisection `name` as a JSON
    /// document; committed before returning.
    fn save_bisect(&mut self, name: &str, state_json: &str) -> Result<()>;

    /// The saved state of the bisection `name`, if any.
    fn load_bisect(&mut self, name: &str) -> Result<Option<String>>;

    /// Forgets the bisection `name` (its samples stay); no error when absent.
    fn delete_bisect(&mut self, name: &str) -> Result<()>;

    /// Every saved bisection, by name.
    fn bisects(&mut self) -> Result<Vec<SavedState>>;
}

/// The state of campaigns (`kbench campaign`): one JSON document per
/// name, replaced after every boot's step.
pub trait Campaigns {
    /// Saves (replacing) the state of the campaign `name`; committed
    /// before returning, so that a machine going down right after keeps it.
    fn save_campaign(&mut self, name: &str, state_json: &str) -> Result<()>;

    /// The saved state of the campaign `name`, if any.
    fn load_campaign(&mut self, name: &str) -> Result<Option<String>>;

    /// Forgets the campaign `name` (its samples stay); no error when absent.
    fn delete_campaign(&mut self, name: &str) -> Result<()>;

    /// Every saved campaign, by name.
    fn campaigns(&mut self) -> Result<Vec<SavedState>>;
}

/// Host calibrations (`kbench calibrate`): how far identical units differ
/// on a hardware, per test, for comparisons with one unit on a side. Every
/// calibration is kept; a host calibrating again adds a newer one.
pub trait Calibrations {
    /// Stores a calibration whole, its tests in order, in one transaction;
    /// its id. One without a CPU model, with fewer than 2 pairs, without a
    /// test, with a test given twice or named as no test can be, or with an
    /// SD that is not a finite number >= 0 or degrees of freedom not above
    /// 0 is `Invalid` ([`crate::validate::calibration`]); nothing is stored
    /// then.
    fn record_calibration(&mut self, calibration: &Calibration) -> Result<i64>;

    /// Every calibration, newest first (by `at_ms`, then by the order they
    /// were stored), each with its tests in the order stored.
    fn calibrations(&mut self) -> Result<Vec<Calibration>>;
}

/// A run's sink that also reads back what is stored: what `kbench run`
/// and `vm run` measure through, as they read their result set between
/// runs (`--redo-disturbed`, the guest's kernel release). The upload
/// mirror is one.
pub trait Recorder: RunSink + Results {}

impl<T: RunSink + Results + ?Sized> Recorder for T {}

/// An opened result database: every role at once.
pub trait Database:
    Recorder + Exchange + Editing + JobQueue + Tokens + Bisects + Campaigns + Calibrations
{
}

impl<
    T: Recorder + Exchange + Editing + JobQueue + Tokens + Bisects + Campaigns + Calibrations + ?Sized,
> Database for T
{
}
