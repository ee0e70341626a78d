//! The profile file: TOML, one profile per file. Keys are checked strictly
//! (an unknown key is an error) and every error names the file, the line and
//! the key. docs/profiles.md describes each key; in short:
//!
//! ```toml
//! name = "redis"
//! summary = "..."
//! requires = { redis-server = "redis-server", redis-benchmark = "redis-tools" }
//! path = []                      # extra program directories, `*` allowed last
//! [files]                        # written into {dir} first (templates)
//! [service]                      # command, setup, ready, run_as, port, ready_timeout, stop_signal
//! # test defaults, each [[tests]] may override: description, command, setup,
//! # before_run, reject, timeout, expected_time, min_samples, max_time,
//! # vars, [options.NAME], [[metrics]]
//! [[tests]]
//! id = "redis"
//! ```

use super::spec::{
    MetricSpec, OptionSpec, Origin, Profile, ProfileTest, ServiceSpec, SourceKind, SourceSpec,
    StopSignal,
};
use super::template::{self, Quote};
use kbench_model::Direction;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::ops::Range;
use std::time::Duration;
use toml::Spanned;

/// A profile file that cannot be used: which file, which line, why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("profile {file}{}: {message}", line.map(|l| format!(", line {l}")).unwrap_or_default())]
pub struct FormatError {
    pub file: String,
    pub line: Option<usize>,
    pub message: String,
}

/// Placeholders every template may use.
pub const BUILTIN_PLACEHOLDERS: &[&str] = &["dir", "cpus", "user"];
/// The placeholder of a profile with a service: the port it listens on.
pub const PORT: &str = "port";

/// Reads one profile from `text`; `file` names it in errors.
pub fn parse(text: &str, file: &str, origin: Origin) -> Result<Profile, FormatError> {
    let ctx = Ctx { text, file };
    let raw: ProfileFile = toml::from_str(text).map_err(|e| FormatError {
        file: file.to_string(),
        line: e.span().map(|span| line_of(text, span.start)),
        message: e.message().trim().to_string(),
    })?;
    build(raw, &ctx, origin)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ProfileFile {
    name: Spanned<String>,
    #[serde(default)]
    summary: String,
    #[serde(default)]
    requires: BTreeMap<String, String>,
    #[serde(default)]
    path: Vec<String>,
    #[serde(default)]
    files: BTreeMap<String, Spanned<String>>,
    service: Option<ServiceFile>,
    #[serde(flatten_free_defaults, default)]
    #[serde(skip)]
    _unused: (),
    description: Option<Spanned<String>>,
    command: Option<Spanned<String>>,
    setup: Option<Spanned<String>>,
    before_run: Option<Spanned<String>>,
    reject: Option<Spanned<String>>,
    timeout: Option<Spanned<f64>>,
    expected_time: Option<Spanned<f64>>,
    min_samples: Option<Spanned<usize>>,
    max_time: Option<Spanned<f64>>,
    #[serde(default)]
    vars: BTreeMap<String, String>,
    #[serde(default)]
    options: BTreeMap<String, Spanned<OptionFile>>,
    #[serde(default)]
    metrics: Vec<Spanned<MetricFile>>,
    #[serde(default)]
    tests: Vec<Spanned<TestFile>>,
}
