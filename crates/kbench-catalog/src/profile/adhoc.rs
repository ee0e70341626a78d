//! Ad-hoc commands (`kbench run --command CMD`), as hyperfine times them:
//! each command becomes a test of a generated profile, so the agent, the
//! sampler, the store and the reports treat it as any profile test. The
//! profile is written as a file into a directory of its own, which
//! `kbench run` puts first among the profile directories the agent reads.
//!
//! A test's main metric is the wall-clock time of the whole process
//! (`sh -c CMD`, in seconds, lower is better); `--metric NAME` adds the
//! number of the `NAME: VALUE` line the command prints (the last one
//! naming it, as bisect reads a `--run` command's). The command's
//! text is the test's description, which the run's snapshot records and
//! report titles show.

use crate::error::{CatalogError, Result, invalid};
use kbench_model::Direction;
use std::fmt::Write as _;
use std::path::PathBuf;

/// The generated profile's name.
pub const PROFILE: &str = "command";
/// The test id of a single unnamed command; several are `cmd-1`, `cmd-2`...
pub const DEFAULT_ID: &str = "cmd";
/// How long one run may take before it is killed: ad-hoc commands may be
/// builds, and hyperfine has no limit at all.
const TIMEOUT_SECONDS: u64 = 86_400;

/// What the user asked for on the command line.
#[derive(Debug, Clone, Default)]
pub struct AdHoc {
    /// Shell commands, each run with `sh -c`.
    pub commands: Vec<String>,
    /// Test ids, by position (default: `cmd`, or `cmd-N` for several).
    pub names: Vec<String>,
    /// Runs before the timed ones, not recorded.
    pub warmup: usize,
    /// Before each run (warm-ups too), untimed.
    pub prepare: Option<String>,
    /// After the runs of each command (once per round).
    pub cleanup: Option<String>,
    /// Metrics read from `NAME: VALUE` lines.
    pub metrics: Vec<AdHocMetric>,
    /// Where the commands run (the user's current directory).
    pub work_dir: PathBuf,
}

/// A `--metric NAME[=higher|lower]`.
#[derive(Debug, Clone, PartialEq)]
pub struct AdHocMetric {
    pub name: String,
    pub direction: Direction,
}

/// Parses `--metric NAME[=higher|lower]` (lower is better by default).
pub fn parse_metric(text: &str) -> std::result::Result<AdHocMetric, String> {
    let (name, direction) = match text.split_once('=') {
        None => (text, Direction::Lower),
        Some((name, "lower")) => (name, Direction::Lower),
        Some((name, "higher")) => (name, Direction::Higher),
        Some((_, other)) => {
            return Err(format!(
                "'{other}' is not a direction: write NAME, NAME=lower or NAME=higher"
            ));
        }
    };
    if !super::format::is_metric_name(name) || name == "time" {
        return Err(format!(
            "metric '{name}' must be lowercase letters, digits or '_' (and not 'time', the \
             wall-clock time's name)"
        ));
    }
    Ok(AdHocMetric {
        name: name.to_string(),
        direction,
    })
}

/// The generated profile, on disk for the agent; removed when dropped.
pub struct AdHocProfile {
    dir: tempfile::TempDir,
    /// The test ids, in the order of the commands.
    pub tests: Vec<String>,
}

impl AdHocProfile {
    /// Writes the profile of `adhoc` into a new temporary directory and
    /// checks it as any profile file is checked.
    pub fn write(adhoc: &AdHoc) -> Result<AdHocProfile> {
        let tests = test_ids(adhoc)?;
        let text = profile_text(adhoc, &tests)?;
        let dir = tempfile::Builder::new()
            .prefix("kbench-command-")
            .tempdir()
            .map_err(|e| {
                CatalogError::Invalid(format!("cannot make a temporary directory: {e}"))
            })?;
        let path = dir.path().join(format!("{PROFILE}.toml"));
        std::fs::write(&path, text)
            .map_err(|e| CatalogError::Invalid(format!("cannot write {}: {e}", path.display())))?;
        super::load_file(&path)?;
        Ok(AdHocProfile { dir, tests })
    }

    /// `dirs` with the generated profile's directory first.
    pub fn with_dirs(&self, dirs: &[PathBuf]) -> Vec<PathBuf> {
        let mut all = vec![self.dir.path().to_path_buf()];
        all.extend(dirs.iter().cloned());
        all
    }
}

/// The test id of each command: `--name`s by position, else `cmd` or
/// `cmd-N`.
fn test_ids(adhoc: &AdHoc) -> Result<Vec<String>> {
    if adhoc.commands.is_empty() {
        invalid!("no --command given");
    }
    if adhoc.names.len() > adhoc.commands.len() {
        invalid!(
            "{} --name for {} --command: give one name per command, in the same order",
            adhoc.names.len(),
            adhoc.commands.len()
        );
    }
    let mut ids = Vec::new();
    for (i, command) in adhoc.commands.iter().enumerate() {
        if command.trim().is_empty() {
            invalid!("--command number {} is empty", i + 1);
        }
        let id = match adhoc.names.get(i) {
            Some(name) => name.clone(),
            None if adhoc.commands.len() == 1 => DEFAULT_ID.to_string(),
            None => format!("{DEFAULT_ID}-{}", i + 1),
        };
        if ids.contains(&id) {
            invalid!("--name '{id}' is given to two commands");
        }
        ids.push(id);
    }
    Ok(ids)
}

/// The profile file: one test per command; every text the user gave is a
/// TOML string with its braces doubled, so that the template leaves it as
/// written.
fn profile_text(adhoc: &AdHoc, ids: &[String]) -> Result<String> {
    let work_dir = adhoc.work_dir.to_str().ok_or_else(|| {
        CatalogError::Invalid(format!(
            "the current directory {} is not UTF-8",
            adhoc.work_dir.display()
        ))
    })?;
    let in_work_dir = |command: &str| format!("cd {{workdir}} && {}", literal(command));
    let mut text = String::new();
    let _ = writeln!(text, "name = \"{PROFILE}\"");
    let _ = writeln!(
        text,
        "summary = \"ad-hoc commands of kbench run --command\""
    );
    let _ = writeln!(text, "vars = {{ workdir = {} }}", string(work_dir));
    let _ = writeln!(text, "timeout = {TIMEOUT_SECONDS}");
    let _ = writeln!(text, "warmup = {}", adhoc.warmup);
    if let Some(prepare) = &adhoc.prepare {
        let _ = writeln!(text, "before_run = {}", string(&in_work_dir(prepare)));
    }
    if let Some(cleanup) = &adhoc.cleanup {
        let _ = writeln!(text, "cleanup = {}", string(&in_work_dir(cleanup)));
    }
    text.push_str(
        "[[metrics]]\nname = \"time\"\nunit = \"s\"\ndirection = \"lower\"\nelapsed = true\n",
    );
    for metric in &adhoc.metrics {
        let direction = match metric.direction {
            Direction::Lower => "lower",
            Direction::Higher => "higher",
        };
        let _ = writeln!(
            text,
            "[[metrics]]\nname = \"{name}\"\nunit = \"value\"\ndirection = \"{direction}\"\nline = \"{name}\"",
            name = metric.name,
        );
    }
    for (id, command) in ids.iter().zip(&adhoc.commands) {
        let _ = writeln!(
            text,
            "[[tests]]\nid = {}\ncommand = {}\ndescription = {}",
            string(id),
            string(&in_work_dir(command)),
            string(&literal(command))
        );
    }
    Ok(text)
}

/// `text` as a template that renders to itself.
fn literal(text: &str) -> String {
    text.replace('{', "{{")
}

/// A TOML basic string: JSON's string escapes are a subset of TOML's.
fn string(text: &str) -> String {
    serde_json::to_string(text).expect("a string serializes")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::Profiles;

    fn adhoc(commands: &[&str]) -> AdHoc {
        AdHoc {
            commands: commands.iter().map(|c| c.to_string()).collect(),
            work_dir: PathBuf::from("/tmp/a dir/{x}"),
            ..AdHoc::default()
        }
    }

    #[test]
    fn shell_text_survives_the_template_and_toml() {
        let mut spec = adhoc(&[r#"echo "${HOME}" '{a}' \"q\" {{"#, "true"]);
        spec.names = vec!["first".into()];
        spec.prepare = Some("rm -f {x}".into());
        spec.warmup = 2;
        spec.metrics = vec![parse_metric("ops=higher").unwrap()];
        let generated = AdHocProfile::write(&spec).unwrap();
        assert_eq!(generated.tests, ["first", "cmd-2"]);
        let profiles = Profiles::load(&generated.with_dirs(&[])).unwrap();
        let (_, test) = profiles.test("first").unwrap();
        let description = crate::profile::matrix::describe(test, &Default::default());
        assert_eq!(description, spec.commands[0]);
        assert_eq!(test.warmup, 2);
        assert_eq!(test.metrics[1].name, "ops");
        assert_eq!(test.metrics[1].direction, Direction::Higher);
        assert_eq!(
            test.metrics[1].sources[0].kind,
            crate::profile::spec::SourceKind::Line("ops".into())
        );
        let rendered = super::super::template::render(
            &test.command,
            super::super::template::Quote::Shell,
            &|name| (name == "workdir").then(|| "/w".to_string()),
        )
        .unwrap();
        assert_eq!(rendered, format!("cd /w && {}", spec.commands[0]));
    }

    #[test]
    fn bad_names_and_metrics_are_refused() {
        let mut spec = adhoc(&["true"]);
        spec.names = vec!["Big Name".into()];
        let err = AdHocProfile::write(&spec).err().unwrap().to_string();
        assert!(err.contains("Big Name"), "{err}");
        spec.names = vec!["a".into(), "b".into()];
        assert!(AdHocProfile::write(&spec).is_err());
        assert!(
            parse_metric("ops=sideways")
                .unwrap_err()
                .contains("direction")
        );
        assert!(parse_metric("Ops").is_err());
        assert!(parse_metric("time").is_err());
        assert_eq!(parse_metric("lat").unwrap().direction, Direction::Lower);
    }
}
