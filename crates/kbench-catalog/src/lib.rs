//! kbench's catalog: what a name means. One resolution turns what a user
//! typed (suite names, suite files, benchmark ids, test names with
//! options, external profiles and their tests) into the canonical tests to
//! run; the profiles' specs and their output parsers live here, and what a
//! lab job may ask a worker to run is checked against the same resolution.

mod error;
pub mod install;
pub mod job;
pub mod listing;
pub mod profile;
pub mod programs;
pub mod resolve;
pub mod suite;

pub use error::{CatalogError, FormatError, Result};
pub use resolve::{expand, expand_with, unknown_name_message};

/// The environment variable naming user profile directories (`:`-separated):
/// how `--profiles` reaches the agent.
pub const PROFILES_ENV: &str = "KBENCH_PROFILES";
