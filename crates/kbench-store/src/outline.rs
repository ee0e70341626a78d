//! A result set as its dashboard page shows it: its counts, one page of its
//! identifiers with their runs and one page of its tests, and no sample.
//! Reading it costs the same for a set of ten samples as for one of ten
//! million (every query is indexed and bounded by the pages), so the page
//! of a lab-sized set answers at once ([`crate::Results::outline`]).

use kbench_model::TestSpec;
use kbench_model::results::{RunRecord, RunStatus};

/// A window of a list: the items from `offset`, at most `limit` of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    pub offset: usize,
    pub limit: usize,
}

/// The pages of a set's outline to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutlinePages {
    pub identifiers: Window,
    pub tests: Window,
}

/// A set's counts and the pages of it asked for.
#[derive(Debug, Clone, PartialEq)]
pub struct SetOutline {
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    /// Every identifier of the set, not only the page's.
    pub identifier_count: usize,
    /// Every test of the set, not only the page's.
    pub test_count: usize,
    /// The identifiers of the page, in stored order.
    pub identifiers: Vec<IdentifierOutline>,
    /// The tests of the page, in stored order.
    pub tests: Vec<TestSpec>,
}

/// One identifier with its runs (and their outcomes). Its samples are not
/// counted: even through an index, counting 100,000 samples of a run takes
/// about 30 ms on PostgreSQL, so a page of 20 such identifiers would take
/// most of a second.
#[derive(Debug, Clone, PartialEq)]
pub struct IdentifierOutline {
    pub name: String,
    pub runs: Vec<RunRecord>,
}

/// A line of the dashboard's list of result sets: its counts and its
/// newest run, each read through an index ([`crate::Results::set_overviews`]).
/// Unlike [`crate::ResultSetSummary`], no sample is counted: counting ten
/// million samples takes seconds, these counts take milliseconds.
#[derive(Debug, Clone, PartialEq)]
pub struct SetOverview {
    pub name: String,
    pub title: Option<String>,
    pub created_at_ms: i64,
    pub identifiers: usize,
    pub tests: usize,
    pub runs: usize,
    /// The run stored last, if any.
    pub latest: Option<LatestRun>,
}

/// The run a set stored last: whose it is and when it ran.
#[derive(Debug, Clone, PartialEq)]
pub struct LatestRun {
    pub identifier: String,
    pub status: RunStatus,
    /// 0 for an imported run (its start is unknown).
    pub started_at_ms: i64,
    pub ended_at_ms: Option<i64>,
}
