//! The tools of a run's profile tests, read when the run begins (with its
//! system snapshot): each profile's version command runs once, untimed, in
//! a scratch directory, and every test keeps its tool, version and
//! description for report titles ("Redis 7.0.15 - Test: GET - Parallel
//! Connections: 50"). A command that fails or prints nothing its regex
//! matches leaves the version unknown and says why in one note per
//! profile; the run goes on.

use super::command::{self, Ended, Shell};
use super::run::search_path;
use super::scratch::Scratch;
use kbench_catalog::profile::Profiles;
use kbench_catalog::profile::matrix;
use kbench_catalog::profile::parse::{self, RunOutput};
use kbench_catalog::profile::spec::Profile;
use kbench_model::{TestKey, ToolRecord};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

/// A version command still running after this long is killed.
const TIMEOUT: Duration = Duration::from_secs(15);
/// Output lines a failed version command shows.
const TAIL: usize = 5;

/// What the tools of `tests` are (profile tests only, by test name), and
/// a note per profile whose version is unknown. `work_dir` holds the
/// scratch directory the commands run in.
pub fn tools(
    profiles: &Profiles,
    tests: &[TestKey],
    work_dir: &Path,
    interrupted: &dyn Fn() -> bool,
) -> (BTreeMap<String, ToolRecord>, Vec<String>) {
    let mut versions: BTreeMap<String, Option<String>> = BTreeMap::new();
    let mut notes = Vec::new();
    let mut tools = BTreeMap::new();
    for key in tests {
        let Some((profile, test)) = profiles.test(&key.benchmark) else {
            continue;
        };
        let version = versions
            .entry(profile.name.clone())
            .or_insert_with(|| match read(profile, work_dir, interrupted) {
                Ok(version) => version,
                Err(why) => {
                    notes.push(format!(
                        "{} ({}): version unknown: {why}",
                        profile.tool, profile.name
                    ));
                    None
                }
            })
            .clone();
        tools.insert(
            key.test_name(),
            ToolRecord {
                tool: profile.tool.clone(),
                version,
                description: matrix::describe(test, &key.options),
            },
        );
    }
    (tools, notes)
}

/// The version `profile`'s command prints; `Ok(None)` when the profile
/// names no version command.
fn read(
    profile: &Profile,
    work_dir: &Path,
    interrupted: &dyn Fn() -> bool,
) -> Result<Option<String>, String> {
    let Some(spec) = &profile.version else {
        return Ok(None);
    };
    let scratch = Scratch::create(work_dir, None).map_err(|e| {
        format!(
            "cannot make a scratch directory in {}: {e}",
            work_dir.display()
        )
    })?;
    let shell = Shell {
        cwd: scratch.dir.clone(),
        path: search_path(profile),
        logs: scratch.logs.clone(),
    };
    let what = format!("`{}`", spec.command);
    let (ended, output) = shell
        .run(&spec.command, "version", None, TIMEOUT, interrupted)
        .map_err(|e| format!("cannot run {what}: {e}"))?;
    match ended {
        Ended::Exited { status, .. } if status.success() => {}
        Ended::Exited { status, .. } => {
            return Err(format!(
                "{what} {}; its output:\n{}",
                command::describe(status),
                output.tail(TAIL)
            ));
        }
        Ended::TimedOut => return Err(format!("{what} was still running after {TIMEOUT:?}")),
        Ended::Interrupted => return Err(format!("{what} was interrupted")),
        Ended::OutOfMemory => return Err(format!("{what} {}", command::OUT_OF_MEMORY)),
    }
    let output = RunOutput {
        stdout: output.stdout,
        stderr: output.stderr,
        elapsed: Duration::ZERO,
    };
    parse::version(&spec.regex, &output)
        .map(Some)
        .map_err(|why| format!("{what}: {why}"))
}
