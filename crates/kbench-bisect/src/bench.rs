//! What a bisection does at a commit: build it, then measure it. The
//! [`Workbench`] trait is the seam: [`CommandBench`] runs the user's
//! `--build` and `--run` commands in worktrees of its own; tests use a fake
//! with a known answer.
//!
//! A bisection measures in blocks (the commit under test between fresh
//! measurements of both endpoints), so a workbench keeps the builds of the
//! last few commits: [`CommandBench`] one worktree for each of the last
//! [`KEPT_WORKTREES`] commits built (good, bad, the commit under test and
//! the one before it), re-using the least recently used one, with its
//! build output, for the next commit.
//!
//! A `--run` command prints `NAME: VALUE` lines (a unit may follow the
//! value) or one JSON object (`{"NAME": VALUE, ...}`, nested objects as
//! `outer.inner`); one run of it is one sample.

use super::error::{BisectError, Result};
use super::git::{Commit, Repo, Worktree};
use super::progress::Progress;
use kbench_analysis::bisect::BuildRecord;
use kbench_catalog::profile::name_value;
use kbench_measure::process::{last_output, push_bounded};
use kbench_model::Sample;
use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// How many lines of a failed command's output are kept.
const TAIL: usize = 20;

/// Worktrees a [`CommandBench`] keeps built: a block's three commits and
/// the one measured before (the confirmation's parent, usually).
pub const KEPT_WORKTREES: usize = 4;

/// Why a commit could not be measured (the commit is skipped; not to be
/// confused with kbench-measure's error, which stops the bisection).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MeasureError {
    /// The command ended with an error.
    #[error("{0}")]
    Failed(String),
    /// It ran, but its output did not hold the metric.
    #[error(
        "the output has no metric '{metric}'{}",
        if found.is_empty() {
            "; it printed no `NAME: VALUE` line and no JSON object".to_string()
        } else {
            format!("; it printed: {}", found.join(", "))
        }
    )]
    MissingMetric { metric: String, found: Vec<String> },
    /// The metric's value is not a positive finite number.
    #[error("the metric '{metric}' is {value:?}: a sample must be a positive number")]
    BadValue { metric: String, value: String },
}

/// Builds and measures commits.
pub trait Workbench {
    /// Selects `commit`, building it unless [`Workbench::has_build`], and
    /// says what else it does on the way (a probe boot).
    /// `Ok(Err(why))` when the build failed (the commit is skipped); `Err`
    /// when nothing can go on.
    fn build(
        &mut self,
        commit: &Commit,
        progress: &mut dyn FnMut(Progress<'_>),
    ) -> Result<Result<(), String>>;

    /// One fresh run at the commit selected, the measurement `round` of its
    /// commit: its samples of the metric (one for a `--run` command).
    fn measure(&mut self, round: u32) -> Result<Result<Vec<Sample>, MeasureError>>;

    /// Whether a build of `commit` is kept, so that selecting it is free.
    fn has_build(&self, commit: &Commit) -> bool;

    /// What one measurement is, for the report: the level its decisions
    /// compare.
    fn measurement(&self) -> String;

    /// How commits are built, when kbench builds them itself.
    fn build_method(&self) -> Option<String> {
        None
    }

    /// The builds kbench did so far, with their costs.
    fn build_records(&self) -> Vec<BuildRecord> {
        Vec::new()
    }

    /// Builds `commit` again from scratch and keeps it as `twin`, an A/A
    /// rebuild: `None` when this workbench cannot; else whether the two
    /// builds are byte-identical, or why the rebuild failed.
    fn rebuild(
        &mut self,
        _commit: &Commit,
        _twin: &Commit,
        _progress: &mut dyn FnMut(Progress<'_>),
    ) -> Result<Option<Result<bool, String>>> {
        Ok(None)
    }
}

/// A worktree and the commit built in it.
struct Slot {
    worktree: Worktree,
    built: Option<String>,
    /// When it was last selected (a counter).
    used: u64,
}

/// The user's commands, run with `sh -c` in a worktree per kept commit
/// (directories `w0`, `w1`, ... under `root`).
pub struct CommandBench {
    pub repo: Repo,
    pub root: PathBuf,
    pub build: String,
    pub run: String,
    pub metric: String,
    /// Set by SIGINT; a command that fails with it set is an interruption,
    /// not a failed build.
    pub stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    slots: Vec<Slot>,
    /// The slot selected.
    current: Option<usize>,
    clock: u64,
}

impl CommandBench {
    /// A workbench with no worktree yet (they are added as commits are).
    pub fn new(
        repo: Repo,
        root: PathBuf,
        build: String,
        run: String,
        metric: String,
        stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    ) -> CommandBench {
        CommandBench {
            repo,
            root,
            build,
            run,
            metric,
            stop,
            slots: Vec::new(),
            current: None,
            clock: 0,
        }
    }

    fn interrupted(&self) -> Result<()> {
        if self.stop.load(std::sync::atomic::Ordering::SeqCst) {
            return Err(BisectError::Interrupted);
        }
        Ok(())
    }

    /// The slot for `commit`: its own, a new one, or the least recently
    /// used (checked out afresh).
    fn slot_for(&mut self, commit: &Commit) -> Result<(usize, bool)> {
        if let Some(i) = self
            .slots
            .iter()
            .position(|s| s.built.as_deref() == Some(&commit.hash))
        {
            return Ok((i, true));
        }
        if self.slots.len() < KEPT_WORKTREES {
            let path = self.root.join(format!("w{}", self.slots.len()));
            let worktree = Worktree::add(&self.repo, &path, &commit.hash)?;
            self.slots.push(Slot {
                worktree,
                built: None,
                used: 0,
            });
            return Ok((self.slots.len() - 1, false));
        }
        let i = (0..self.slots.len())
            .min_by_key(|&i| self.slots[i].used)
            .expect("slots");
        self.slots[i].built = None;
        self.slots[i].worktree.checkout(&commit.hash)?;
        Ok((i, false))
    }
}

impl Workbench for CommandBench {
    fn build(
        &mut self,
        commit: &Commit,
        _progress: &mut dyn FnMut(Progress<'_>),
    ) -> Result<Result<(), String>> {
        self.current = None;
        let (i, kept) = self.slot_for(commit)?;
        self.clock += 1;
        self.slots[i].used = self.clock;
        if !kept {
            let result = shell(&self.build, self.slots[i].worktree.path(), &commit.hash)?;
            self.interrupted()?;
            if let Err(tail) = result {
                return Ok(Err(tail));
            }
            self.slots[i].built = Some(commit.hash.clone());
        }
        self.current = Some(i);
        Ok(Ok(()))
    }

    fn measure(&mut self, round: u32) -> Result<Result<Vec<Sample>, MeasureError>> {
        let slot = &self.slots[self.current.expect("a commit built before measuring")];
        let commit = slot.built.clone().unwrap_or_default();
        let result = shell(&self.run, slot.worktree.path(), &commit)?;
        self.interrupted()?;
        Ok(match result {
            // One run of the command is one iteration, measured now.
            Ok(stdout) => parse_metric(&stdout, &self.metric).map(|value| {
                vec![Sample {
                    value,
                    iterations: 1,
                    at_ms: kbench_model::now_ms(),
                    round,
                }]
            }),
            Err(tail) => Err(MeasureError::Failed(tail)),
        })
    }

    fn has_build(&self, commit: &Commit) -> bool {
        self.slots
            .iter()
            .any(|s| s.built.as_deref() == Some(&commit.hash))
    }

    fn measurement(&self) -> String {
        "one run of the --run command: one sample".to_string()
    }
}

/// Runs `sh -c command` in `dir`: `Ok(stdout)` on success, `Err(what
/// happened with the last lines of output)` otherwise.
pub(super) fn shell(command: &str, dir: &Path, commit: &str) -> Result<Result<String, String>> {
    tracing::info!("running sh -c {command:?} in {} at {commit}", dir.display());
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(command)
        .current_dir(dir)
        .env("KBENCH_BISECT_COMMIT", commit)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(BisectError::os(format!(
            "cannot start sh to run '{command}'"
        )))?;
    let stderr = child.stderr.take().expect("piped");
    let collector = std::thread::spawn(move || {
        let mut tail = VecDeque::new();
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            push_bounded(&mut tail, line, TAIL);
        }
        tail
    });
    let mut stdout = String::new();
    child
        .stdout
        .take()
        .expect("piped")
        .read_to_string(&mut stdout)
        .map_err(BisectError::os(format!(
            "reading the output of '{command}'"
        )))?;
    let status = child
        .wait()
        .map_err(BisectError::os(format!("waiting for '{command}'")))?;
    let mut tail: Vec<String> = collector.join().unwrap_or_default().into();
    if status.success() {
        return Ok(Ok(stdout));
    }
    let out_tail: Vec<&str> = stdout.lines().rev().take(TAIL).collect();
    tail.extend(out_tail.into_iter().rev().map(str::to_string));
    let missing = missing_tool(&tail.join("\n"))
        .map(|tool| format!(" (it needs {tool})"))
        .unwrap_or_default();
    Ok(Err(format!(
        "'{command}' ended with {status}{missing}{}",
        last_output(&tail)
    )))
}

/// The program or header a failed build's output says is missing, with
/// the Debian package to install where it is a known one: "`bc`, which
/// is not installed" or "gelf.h (apt-get install libelf-dev)".
pub fn missing_tool(output: &str) -> Option<String> {
    const HEADERS: [(&str, &str); 3] = [
        ("gelf.h", "libelf-dev"),
        ("libelf.h", "libelf-dev"),
        ("openssl/", "libssl-dev"),
    ];
    for line in output.lines() {
        let line = line.trim();
        if let Some(rest) = line
            .strip_suffix(": not found")
            .or(line.strip_suffix(": command not found"))
        {
            let tool = rest.rsplit(": ").next().unwrap_or(rest).trim();
            if !tool.is_empty() && !tool.contains(' ') {
                return Some(format!("`{tool}`, which is not installed"));
            }
        }
        if let Some(at) = line.find("fatal error: ")
            && line.ends_with("No such file or directory")
        {
            let header = line[at + "fatal error: ".len()..]
                .split(':')
                .next()
                .unwrap_or("")
                .trim();
            let package = HEADERS
                .iter()
                .find(|(prefix, _)| header.starts_with(prefix))
                .map_or_else(
                    || "its development package is not installed".to_string(),
                    |(_, package)| format!("apt-get install {package}"),
                );
            return Some(format!("{header} ({package})"));
        }
    }
    None
}

/// The value of `metric` in a run's output: one JSON object, or
/// `NAME: VALUE [unit]` lines ([`name_value`]: the last line naming it
/// counts).
pub fn parse_metric(output: &str, metric: &str) -> Result<f64, MeasureError> {
    let mut found: Vec<(String, String)> = Vec::new();
    let trimmed = output.trim();
    if let Ok(serde_json::Value::Object(map)) = serde_json::from_str(trimmed) {
        flatten("", &serde_json::Value::Object(map), &mut found);
    } else {
        found.extend(
            name_value::lines(output).map(|(name, value)| (name.to_string(), value.to_string())),
        );
    }
    let Some((_, text)) = found.iter().rev().find(|(name, _)| name == metric) else {
        let mut names: Vec<String> = Vec::new();
        for (name, _) in found {
            if !names.contains(&name) {
                names.push(name);
            }
        }
        return Err(MeasureError::MissingMetric {
            metric: metric.to_string(),
            found: names,
        });
    };
    match text.parse::<f64>() {
        Ok(value) if value.is_finite() && value > 0.0 => Ok(value),
        _ => Err(MeasureError::BadValue {
            metric: metric.to_string(),
            value: text.clone(),
        }),
    }
}

/// Numbers of a JSON object as `a.b` paths.
fn flatten(prefix: &str, value: &serde_json::Value, out: &mut Vec<(String, String)>) {
    match value {
        serde_json::Value::Object(map) => {
            for (key, inner) in map {
                let path = if prefix.is_empty() {
                    key.clone()
                } else {
                    format!("{prefix}.{key}")
                };
                flatten(&path, inner, out);
            }
        }
        serde_json::Value::Number(n) => out.push((prefix.to_string(), n.to_string())),
        serde_json::Value::String(s) if s.trim().parse::<f64>().is_ok() => {
            out.push((prefix.to_string(), s.trim().to_string()))
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_metric_names_those_printed() {
        let out = "warming up\nops_per_sec: 1234.5 ops/s\nlatency: 3.5\nops_per_sec: 1300\n";
        assert_eq!(parse_metric(out, "ops_per_sec"), Ok(1300.0));
        let missing = parse_metric(out, "throughput").unwrap_err();
        assert_eq!(
            missing.to_string(),
            "the output has no metric 'throughput'; it printed: ops_per_sec, latency"
        );
    }

    #[test]
    fn one_json_object() {
        let out = r#"{"ops": 10, "lat": {"p50": 2.5, "p99": "7"}, "name": "x"}"#;
        assert_eq!(parse_metric(out, "ops"), Ok(10.0));
        assert_eq!(parse_metric(out, "lat.p50"), Ok(2.5));
        assert_eq!(parse_metric(out, "lat.p99"), Ok(7.0));
        assert!(matches!(
            parse_metric(out, "name"),
            Err(MeasureError::MissingMetric { .. })
        ));
    }

    #[test]
    fn values_must_be_positive() {
        assert!(matches!(
            parse_metric("t: 0\n", "t"),
            Err(MeasureError::BadValue { .. })
        ));
        assert!(matches!(
            parse_metric("t: -1\n", "t"),
            Err(MeasureError::BadValue { .. })
        ));
        assert_eq!(
            parse_metric("nothing here", "t").unwrap_err().to_string(),
            "the output has no metric 't'; it printed no `NAME: VALUE` line and no JSON object"
        );
    }

    #[test]
    fn a_missing_program_or_header_is_named() {
        let bc =
            "  CC      kernel/time/timeconst.h\n/bin/sh: 1: bc: not found\nmake[2]: *** Error 127";
        assert_eq!(missing_tool(bc).unwrap(), "`bc`, which is not installed");
        assert_eq!(
            missing_tool("bash: line 1: mytool: command not found").unwrap(),
            "`mytool`, which is not installed"
        );
        let elf = "tools/objtool/include/objtool/elf.h:10:10: fatal error: gelf.h: No such file or directory";
        assert_eq!(
            missing_tool(elf).unwrap(),
            "gelf.h (apt-get install libelf-dev)"
        );
        assert_eq!(missing_tool("error: expected ';'"), None);
        let failed = shell("kbench-no-such-tool --build", &std::env::temp_dir(), "c")
            .unwrap()
            .unwrap_err();
        assert!(
            failed.contains("it needs `kbench-no-such-tool`, which is not installed"),
            "{failed}"
        );
    }

    #[test]
    fn shell_reports_failures_with_output() {
        let dir = std::env::temp_dir();
        assert_eq!(shell("echo hi", &dir, "c").unwrap(), Ok("hi\n".to_string()));
        let failed = shell("echo out; echo err >&2; exit 3", &dir, "c")
            .unwrap()
            .unwrap_err();
        assert!(failed.contains("exit status: 3"), "{failed}");
        assert!(failed.contains("err") && failed.contains("out"), "{failed}");
    }
}
