//! A result set as its dashboard page shows it: its counts, one page of its
//! identifiers with their runs and one page of its tests, and no sample
//! value. Reading it costs the same for a set of ten samples as for one of
//! ten million (every query is indexed and bounded by the pages), so the
//! page of a lab-sized set answers at once ([`crate::Results::outline`]).

use kbench_model::TestSpec;
use kbench_model::results::RunRecord;

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

/// One identifier with its runs (and their outcomes) and how many samples
/// each run holds.
#[derive(Debug, Clone, PartialEq)]
pub struct IdentifierOutline {
    pub name: String,
    pub runs: Vec<RunRecord>,
    /// The samples of each run, by position in `runs`.
    pub run_samples: Vec<u64>,
}

impl IdentifierOutline {
    /// Its samples, over every run.
    pub fn sample_count(&self) -> u64 {
        self.run_samples.iter().sum()
    }
}
