//! A profile as kbench uses it: read from its file, checked, with every
//! test-level default filled in (see [`super::format`] for the file).

use kbench_model::Direction;
use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

/// Where a profile comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// Shipped in `profiles/` and embedded in the binary.
    Builtin,
    /// A user's file (`--profiles DIR`, `KBENCH_PROFILES`).
    File(PathBuf),
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::Builtin => f.write_str("built-in"),
            Origin::File(path) => write!(f, "{}", path.display()),
        }
    }
}

/// One external benchmark: the programs it needs, an optional service, and
/// its tests.
#[derive(Debug, Clone)]
pub struct Profile {
    pub name: String,
    pub summary: String,
    /// The tool's name as report titles show it ("Redis"); default: the
    /// profile's name.
    pub tool: String,
    /// How to read the installed tool's version, if the profile says.
    pub version: Option<VersionSpec>,
    pub origin: Origin,
    /// Program -> the Debian package that provides it.
    pub requires: BTreeMap<String, String>,
    /// More Debian packages it needs that provide no program to look for
    /// (headers, libraries).
    pub extra_packages: Vec<String>,
    /// Directories searched for programs before PATH; `*` in the last
    /// component picks the highest-versioned match
    /// (`/usr/lib/postgresql/*/bin`).
    pub path: Vec<String>,
    /// Files written into the scratch directory before anything runs:
    /// relative path -> template.
    pub files: BTreeMap<String, String>,
    pub service: Option<ServiceSpec>,
    /// What it needs of a `kbench vm` guest (`[guest]`).
    pub guest: super::guest::GuestNeeds,
    pub tests: Vec<ProfileTest>,
}

impl Profile {
    /// The Debian packages of every required program, sorted, unique.
    pub fn packages(&self) -> Vec<String> {
        let mut packages: Vec<String> = self.requires.values().cloned().collect();
        packages.extend(self.extra_packages.iter().cloned());
        packages.sort();
        packages.dedup();
        packages
    }

    pub fn test(&self, id: &str) -> Option<&ProfileTest> {
        self.tests.iter().find(|t| t.id == id)
    }
}

/// How to read a tool's version: a command run once, untimed, and a regex
/// over its output (stdout, then stderr) whose group `value`, else group 1,
/// is the version ("7.0.15").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionSpec {
    /// Run with `sh -c` and the profile's `path` first in PATH.
    pub command: String,
    pub regex: String,
}

/// A long-running process the tests talk to (a server on loopback).
#[derive(Debug, Clone)]
pub struct ServiceSpec {
    /// Started with `exec` in a shell: one program, no pipes.
    pub command: String,
    /// Runs before the service starts (`initdb`), as `run_as`.
    pub setup: Option<String>,
    /// A command that exits 0 once the service is ready; default: the port
    /// accepts TCP connections.
    pub ready: Option<String>,
    /// The user that runs `setup` and `command` when kbench runs as root
    /// (PostgreSQL refuses to run as root).
    pub run_as: Option<String>,
    /// A fixed port; default: a free loopback port picked per start.
    pub port: Option<u16>,
    pub ready_timeout: Duration,
    /// The signal that stops it (TERM or INT); KILL follows after 5 s.
    pub stop_signal: StopSignal,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopSignal {
    Term,
    Int,
}

impl StopSignal {
    pub fn number(self) -> i32 {
        match self {
            StopSignal::Term => libc::SIGTERM,
            StopSignal::Int => libc::SIGINT,
        }
    }
}

/// One test id of a profile; each combination of its options is one test.
#[derive(Debug, Clone)]
pub struct ProfileTest {
    pub id: String,
    /// Template: `{option}` shows the option's label.
    pub description: String,
    pub vars: BTreeMap<String, String>,
    pub command: String,
    /// Once per test, after the service is up (load a database).
    pub setup: Option<String>,
    /// Before each run, untimed (drop a database file).
    pub before_run: Option<String>,
    /// Once per test, after its runs (the counterpart of `setup`).
    pub cleanup: Option<String>,
    /// Output that makes a run fail even with exit status 0 (regex).
    pub reject: Option<String>,
    /// A run still going after this long is killed and counted as failed.
    pub timeout: Duration,
    /// How long one run is expected to take (setup of the run included).
    pub expected_time: Duration,
    /// Runs before the timed ones whose results are not recorded (caches,
    /// page cache, lazy binding warm up).
    pub warmup: usize,
    /// The fewest runs per round when the user did not say (`--min-samples`).
    pub min_samples: Option<usize>,
    /// The time budget per round when the user did not say (`--max-time`).
    pub max_time: Option<Duration>,
    pub options: BTreeMap<String, OptionSpec>,
    /// The first is the main metric (stored as `value`).
    pub metrics: Vec<MetricSpec>,
}

impl ProfileTest {
    pub fn main_metric(&self) -> &MetricSpec {
        &self.metrics[0]
    }
}

/// The value of an option that stands for "every CPU this process may use".
pub const ALL_CPUS: &str = "cpus";

/// An option of a test.
#[derive(Debug, Clone, Default)]
pub struct OptionSpec {
    /// The values tested when the user does not set the option; `cpus` is
    /// the number of CPUs this process may use. Empty: the user must set it.
    pub values: Vec<String>,
    /// Other values the user may give (a regex matching the whole value).
    pub pattern: Option<String>,
    /// Other values the user may give: numbers from the first to the second,
    /// both included (with a `pattern`, a value must match it too).
    pub range: Option<(f64, f64)>,
    /// Value -> readable text for descriptions ("1" -> "Direct").
    pub labels: BTreeMap<String, String>,
    /// Value -> the text put into commands instead of the value ("pipe" -> "-p").
    pub args: BTreeMap<String, String>,
    pub help: String,
}

impl OptionSpec {
    /// Why `value` is outside the option's `range`; `None` when it is inside
    /// or the option has no range.
    pub fn out_of_range(&self, value: &str) -> Option<String> {
        let (low, high) = self.range?;
        match value.trim().parse::<f64>() {
            Ok(number) if number.is_finite() && (low..=high).contains(&number) => None,
            Ok(number) if number.is_finite() => Some("is out of range".to_string()),
            _ => Some("is not a number".to_string()),
        }
    }

    /// "one of a, b", "default 10; allowed: a number from 1 to 5000,
    /// matching [0-9]+" for messages and listings.
    pub fn allowed(&self) -> String {
        let mut others = Vec::new();
        if let Some((low, high)) = self.range {
            others.push(format!("a number from {low} to {high}"));
        }
        if let Some(pattern) = &self.pattern {
            others.push(format!("matching {pattern}"));
        }
        match (others.is_empty(), self.values.is_empty()) {
            (true, _) => format!("one of {}", self.values.join(", ")),
            (false, true) => format!("allowed: {}", others.join(", ")),
            (false, false) => format!(
                "default {}; allowed: {}",
                self.values.join(", "),
                others.join(", ")
            ),
        }
    }
}

/// A number read from a run's output.
#[derive(Debug, Clone)]
pub struct MetricSpec {
    pub name: String,
    pub unit: String,
    pub direction: Direction,
    /// Tried in order; the first that yields a number wins (tool versions).
    pub sources: Vec<SourceSpec>,
    /// A metric some versions of the tool do not print: missing is no error.
    pub optional: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SourceSpec {
    pub kind: SourceKind,
    /// Multiplies the number read (unit conversion).
    pub scale: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub enum SourceKind {
    /// A regex over the output (stdout, then stderr), multi-line mode; the
    /// group named `value`, else group 1, is the number. Template.
    Regex(String),
    /// A dotted path into the JSON document on stdout (`jobs.0.read.iops`).
    /// Template.
    Json(String),
    /// The name of a `NAME: VALUE` line of the output (stdout, then
    /// stderr; the last such line counts). Template.
    Line(String),
    /// The run's wall-clock time in seconds.
    Elapsed,
}
