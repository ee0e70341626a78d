//! Suites: named lists of tests. A suite is a TOML file (the built-in ones
//! are in `suites/` and embedded):
//!
//! ```toml
//! name = "mine"
//! summary = "what it is for"
//! suites = ["quick"]                      # other suites to include (optional)
//! tests = ["pipe-lat[placement=same]", "ctxsw[procs=8,size=16]"]
//! [sweep]                                 # optional: every combination is a test
//! tasks = ["1", "cpus"]                   # "cpus" = the CPUs this process may use
//! mode = ["process", "thread"]
//! ```
//!
//! A sweep applies to the tests whose benchmark takes the option and that do
//! not set it themselves. Scaling benchmarks (those taking `tasks`) sweep
//! `tasks` = 1 and all CPUs unless the test or the suite says otherwise.
//!
//! [`crate::resolve`] expands a suite into its tests.

use crate::error::{CatalogError, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// The built-in suites, as shipped in `suites/`: each file's name
/// (without `.toml`) and text, by name (build.rs lists them).
const BUILTIN: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/suites.rs"));

/// A suite as written in its file.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Suite {
    pub name: String,
    #[serde(default)]
    pub summary: String,
    #[serde(default)]
    pub suites: Vec<String>,
    #[serde(default)]
    pub tests: Vec<String>,
    #[serde(default)]
    pub sweep: BTreeMap<String, Vec<String>>,
}

/// The suite the measuring commands run when named nothing.
pub const DEFAULT_SUITE: &str = "quick";

/// The built-in suites, in listing order (by name).
pub fn builtin_suites() -> Vec<Suite> {
    BUILTIN
        .iter()
        .map(|(name, text)| {
            toml::from_str(text).unwrap_or_else(|e| {
                panic!("built-in suites parse (tested): suites/{name}.toml: {e}")
            })
        })
        .collect()
}

/// Reads a user's suite file; errors name the file, line and key.
pub fn load_suite_file(path: &Path) -> Result<Suite> {
    let text = std::fs::read_to_string(path).map_err(|cause| CatalogError::Read {
        what: "suite file",
        path: path.to_path_buf(),
        cause,
    })?;
    toml::from_str(&text)
        .map_err(|e| CatalogError::Invalid(format!("suite file {}: {e}", path.display())))
}
