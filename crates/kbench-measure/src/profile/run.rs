//! Running one profile test in the agent, with the same events as a
//! built-in: `TestStart`, a `Sample` per metric per run, then `TestEnd`
//! (or `Skip` / `Failed`). A run is one invocation of the tool; the
//! sampler's stop rule ([`should_stop`]) decides how many, fed the time the
//! next run is expected to end at, so a slow tool does not overrun the
//! budget. A run that fails (non-zero exit, output the parser cannot read,
//! killed at the timeout) is counted and reported, and sampling goes on;
//! three failures in a row, or a service that died, fail the test.
//!
//! The profile's own `min_samples` and `max_time` replace the plan's when
//! the user did not choose them (`--min-samples`, `--max-time`): a default
//! made for microbenchmarks (five samples in one second) means little for a
//! tool that runs for seconds.

use super::command::{self, Ended, Shell, User};
use super::scratch::Scratch;
use super::service::{self, Service, StartError};
use super::starved::Starvation;
use crate::plan::{SamplingPlan, StopReason};
use crate::sampler::should_stop;
use kbench_catalog::profile::Profiles;
use kbench_catalog::profile::matrix::{self, Unresolved};
use kbench_catalog::profile::parse::{Parser, RunOutput};
use kbench_catalog::profile::spec::{Profile, ProfileTest};
use kbench_catalog::profile::template::{self, Fill, Quote};
use kbench_model::{AgentEvent, MAIN_METRIC, TestKey};
use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Failed runs in a row that end a test.
pub const MAX_FAILURES_IN_A_ROW: usize = 3;
/// Output lines shown when a command fails.
const TAIL: usize = 12;

/// The plan for `test`: the user's, with the profile's minimum and time
/// budget where the user left the defaults.
pub fn plan_for(test: &ProfileTest, plan: &SamplingPlan) -> SamplingPlan {
    let mut adapted = plan.clone();
    if !plan.min_samples_chosen
        && let Some(min) = test.min_samples
    {
        adapted.min_samples = min;
    }
    if !plan.max_time_chosen
        && let Some(max_time) = test.max_time
    {
        adapted.max_time = max_time;
    }
    adapted.max_samples = adapted.max_samples.max(adapted.min_samples);
    adapted
}

/// Runs the profile test `key` with its scratch directory in `work_dir`,
/// sending its events to `emit`. Fails only when `emit` fails. When the
/// agent is asked to stop (SIGINT), the test's processes and files are
/// removed and no ending event is sent: the test stays unfinished, so a
/// resumed run measures it again.
pub fn run_test(
    profiles: &Profiles,
    key: &TestKey,
    plan: &SamplingPlan,
    work_dir: &Path,
    stop: &AtomicBool,
    emit: &mut dyn FnMut(AgentEvent) -> io::Result<()>,
) -> io::Result<()> {
    let Some((profile, test)) = profiles.test(&key.benchmark) else {
        emit(AgentEvent::Failed {
            test: key.clone(),
            reason: format!(
                "no built-in benchmark or profile test is called '{}'",
                key.benchmark
            ),
        })?;
        return Ok(());
    };
    let key = key.with_metric(MAIN_METRIC);
    let values = match matrix::resolve(test, &key) {
        Ok(values) => values,
        Err(Unresolved::Invalid(reason)) => {
            emit(AgentEvent::Failed { test: key, reason })?;
            return Ok(());
        }
        Err(Unresolved::Missing(reason)) => {
            start_events(test, &key, emit)?;
            emit(AgentEvent::Skip { test: key, reason })?;
            return Ok(());
        }
    };
    start_events(test, &key, emit)?;
    let missing = profiles.missing_programs(profile);
    if !missing.is_empty() {
        let reason = kbench_catalog::profile::missing_message(profile, &missing);
        emit(AgentEvent::Skip { test: key, reason })?;
        return Ok(());
    }
    let plan = plan_for(test, plan);
    let end = {
        let mut session = Session::new(profile, test, values, work_dir, stop);
        session.run(&plan, emit)
    };
    let event = match end? {
        End::Interrupted => return Ok(()),
        End::Failed(reason) => AgentEvent::Failed { test: key, reason },
        End::Finished {
            stop,
            runs,
            failures,
        } => {
            let mut text = stop.describe(&plan);
            if let Some(last) = failures.last() {
                text.push_str(&format!(
                    "; {} of {runs} runs failed, the last: {last}",
                    failures.len()
                ));
            }
            AgentEvent::TestEnd {
                target_met: stop == StopReason::TargetMet,
                stop: text,
            }
        }
    };
    emit(event)
}

/// `TestStart` with the main metric's unit, then the other metrics' own.
fn start_events(
    test: &ProfileTest,
    key: &TestKey,
    emit: &mut dyn FnMut(AgentEvent) -> io::Result<()>,
) -> io::Result<()> {
    let main = test.main_metric();
    emit(AgentEvent::TestStart {
        test: key.clone(),
        unit: main.unit.clone(),
        direction: main.direction,
        iterations: 1,
    })?;
    for metric in &test.metrics[1..] {
        emit(AgentEvent::Metric {
            metric: metric.name.clone(),
            unit: metric.unit.clone(),
            direction: metric.direction,
        })?;
    }
    Ok(())
}

/// How a test's session ended.
enum End {
    Finished {
        stop: StopReason,
        runs: usize,
        /// Why each failed run failed, in order.
        failures: Vec<String>,
    },
    Failed(String),
    Interrupted,
}

/// Why a step did not go on.
enum Halt {
    Failed(String),
    Interrupted,
}

impl Halt {
    /// A failure's reason with `what` before it.
    fn within(self, what: &str) -> Halt {
        match self {
            Halt::Failed(reason) => Halt::Failed(format!("{what}: {reason}")),
            other => other,
        }
    }
}

impl From<StartError> for Halt {
    fn from(error: StartError) -> Halt {
        match error {
            StartError::Interrupted => Halt::Interrupted,
            StartError::Failed(message) => Halt::Failed(message),
        }
    }
}

/// One test being run: what it needs, in the order it is torn down (the
/// service stops before its scratch directory goes).
struct Session<'a> {
    profile: &'a Profile,
    test: &'a ProfileTest,
    values: BTreeMap<String, String>,
    /// `{dir}`, `{cpus}`, `{user}`, `{port}`.
    builtins: BTreeMap<&'static str, String>,
    work_dir: &'a Path,
    /// Raised when the agent is asked to stop (SIGINT, SIGTERM).
    stop: &'a AtomicBool,
    service: Option<Service>,
    scratch: Option<Scratch>,
}

impl<'a> Session<'a> {
    fn new(
        profile: &'a Profile,
        test: &'a ProfileTest,
        values: BTreeMap<String, String>,
        work_dir: &'a Path,
        stop: &'a AtomicBool,
    ) -> Self {
        let mut builtins = BTreeMap::new();
        builtins.insert("cpus", matrix::cpus().to_string());
        builtins.insert("user", command::current_user());
        Session {
            profile,
            test,
            values,
            builtins,
            work_dir,
            stop,
            service: None,
            scratch: None,
        }
    }

    /// Whether the agent was asked to stop.
    fn interrupted(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }

    /// A placeholder's value: built-ins, then options, then vars.
    fn lookup(&self, name: &str) -> Option<String> {
        self.builtins
            .get(name)
            .or_else(|| self.values.get(name))
            .or_else(|| self.test.vars.get(name))
            .cloned()
    }

    /// As [`Self::lookup`] for commands: an option value with `args` is
    /// replaced by its argument text, verbatim.
    fn command_fill(&self, name: &str) -> Option<Fill> {
        let arg = self
            .values
            .get(name)
            .and_then(|value| self.test.options.get(name)?.args.get(value));
        match arg {
            Some(arg) if !self.builtins.contains_key(name) => Some(Fill::Verbatim(arg.clone())),
            _ => self.lookup(name).map(Fill::Value),
        }
    }

    fn shell_text(&self, text: &str) -> Result<String, String> {
        template::render_filled(text, Quote::Shell, &|name| self.command_fill(name))
    }

    fn run(
        &mut self,
        plan: &SamplingPlan,
        emit: &mut dyn FnMut(AgentEvent) -> io::Result<()>,
    ) -> io::Result<End> {
        let shell = match self.prepare() {
            Ok(shell) => shell,
            Err(Halt::Failed(reason)) => return Ok(End::Failed(reason)),
            Err(Halt::Interrupted) => return Ok(End::Interrupted),
        };
        let end = self.sample(&shell, plan, emit)?;
        if matches!(end, End::Interrupted) {
            return Ok(end);
        }
        Ok(match self.cleanup(&shell) {
            Ok(()) => end,
            Err(Halt::Interrupted) => End::Interrupted,
            Err(Halt::Failed(reason)) => match end {
                End::Failed(first) => End::Failed(format!("{first}; then {reason}")),
                _ => End::Failed(reason),
            },
        })
    }

    /// The test's `cleanup`, once after its runs (even failed ones, as
    /// `setup` ran).
    fn cleanup(&self, shell: &Shell) -> Result<(), Halt> {
        let Some(cleanup) = &self.test.cleanup else {
            return Ok(());
        };
        let script = self.shell_text(cleanup).map_err(Halt::Failed)?;
        self.run_script(shell, &script, "cleanup")
            .map(drop)
            .map_err(|halt| halt.within("the test's cleanup"))
    }

    /// Scratch directory, files, service, setup: everything before the runs.
    fn prepare(&mut self) -> Result<Shell, Halt> {
        let service_user = self.service_user()?;
        let parent = match &service_user {
            Some(_) => std::env::temp_dir(),
            None => self.work_dir.to_path_buf(),
        };
        let scratch = Scratch::create(&parent, service_user.as_ref()).map_err(|e| {
            Halt::Failed(format!(
                "cannot make a scratch directory in {}: {e}",
                parent.display()
            ))
        })?;
        let shell = Shell {
            cwd: scratch.dir.clone(),
            path: search_path(self.profile),
            logs: scratch.logs.clone(),
        };
        self.builtins
            .insert("dir", scratch.dir.display().to_string());
        let dir = scratch.dir.clone();
        self.scratch = Some(scratch);
        match &self.profile.service {
            Some(spec) => {
                let render = |text: &str, port: u16| -> Result<String, String> {
                    template::render_filled(text, Quote::Shell, &|name| {
                        if name == "port" {
                            Some(Fill::Value(port.to_string()))
                        } else {
                            self.command_fill(name)
                        }
                    })
                };
                let write_files =
                    |port: u16| self.write_files(&dir, Some(port), service_user.as_ref());
                let started = service::start(&service::Start {
                    spec,
                    shell: &shell,
                    user: service_user.as_ref(),
                    render: &render,
                    write_files: &write_files,
                    setup_timeout: self.test.timeout,
                    interrupted: &|| self.interrupted(),
                })?;
                self.builtins.insert("port", started.port.to_string());
                self.service = Some(started);
            }
            None => self.write_files(&dir, None, None).map_err(Halt::Failed)?,
        }
        if let Some(setup) = &self.test.setup {
            let script = self.shell_text(setup).map_err(Halt::Failed)?;
            self.run_script(&shell, &script, "setup")
                .map_err(|halt| halt.within("the test's setup"))?;
        }
        Ok(shell)
    }

    /// The user the service runs as: its `run_as` when kbench runs as root.
    fn service_user(&self) -> Result<Option<User>, Halt> {
        let Some(name) = self
            .profile
            .service
            .as_ref()
            .and_then(|s| s.run_as.as_ref())
        else {
            return Ok(None);
        };
        if kbench_catalog::programs::effective_uid() != Some(0) {
            return Ok(None);
        }
        User::lookup(name).map(Some).map_err(|e| {
            Halt::Failed(format!(
                "{e}; the service runs as '{name}' when kbench runs as root (kbench install {} creates it)",
                self.profile.name
            ))
        })
    }

    fn write_files(
        &self,
        dir: &std::path::Path,
        port: Option<u16>,
        owner: Option<&User>,
    ) -> Result<(), String> {
        for (relative, content) in &self.profile.files {
            let text = template::render(content, Quote::Raw, &|name| {
                if name == "port" {
                    port.map(|p| p.to_string())
                } else {
                    self.lookup(name)
                }
            })?;
            let path = dir.join(relative);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)
                    .map_err(|e| format!("cannot make {}: {e}", parent.display()))?;
            }
            std::fs::write(&path, text)
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
            if let Some(user) = owner {
                std::os::unix::fs::chown(&path, Some(user.uid), Some(user.gid))
                    .map_err(|e| format!("cannot hand {} to {}: {e}", path.display(), user.name))?;
            }
        }
        Ok(())
    }

    /// Runs `script` (setup, before_run, the tool) to its end within the
    /// test's timeout: its output and run time when it succeeded.
    fn run_script(
        &self,
        shell: &Shell,
        script: &str,
        label: &str,
    ) -> Result<(command::Output, Duration), Halt> {
        let (ended, output) = shell
            .run(script, label, None, self.test.timeout, &|| {
                self.interrupted()
            })
            .map_err(|e| Halt::Failed(format!("cannot run `{script}`: {e}")))?;
        match ended {
            Ended::Exited { status, elapsed } if status.success() => Ok((output, elapsed)),
            Ended::Exited { status, .. } => Err(Halt::Failed(format!(
                "`{script}` {}; its last output:\n{}",
                command::describe(status),
                output.tail(TAIL)
            ))),
            Ended::TimedOut => Err(Halt::Failed(format!(
                "`{script}` was still running after the {:?} timeout and was killed; its last output:\n{}",
                self.test.timeout,
                output.tail(TAIL)
            ))),
            Ended::Interrupted => Err(Halt::Interrupted),
            Ended::OutOfMemory => Err(Halt::Failed(format!(
                "`{script}` {}; its last output:\n{}",
                command::OUT_OF_MEMORY,
                output.tail(TAIL)
            ))),
        }
    }

    fn sample(
        &mut self,
        shell: &Shell,
        plan: &SamplingPlan,
        emit: &mut dyn FnMut(AgentEvent) -> io::Result<()>,
    ) -> io::Result<End> {
        let parser = match Parser::new(&self.test.metrics, self.test.reject.as_deref(), &|name| {
            self.lookup(name)
        }) {
            Ok(parser) => parser,
            Err(reason) => return Ok(End::Failed(format!("cannot prepare the parser: {reason}"))),
        };
        let command = match self.shell_text(&self.test.command) {
            Ok(command) => command,
            Err(reason) => return Ok(End::Failed(reason)),
        };
        let before_run = match self
            .test
            .before_run
            .as_ref()
            .map(|b| self.shell_text(b))
            .transpose()
        {
            Ok(before) => before,
            Err(reason) => return Ok(End::Failed(reason)),
        };
        // Warm-up runs are not recorded, and not counted in the budget; one
        // that fails fails the test (a command that cannot run once will
        // not be measured).
        for warmup in 1..=self.test.warmup {
            match self.timed_run(shell, before_run.as_deref(), &command, &parser) {
                Ok(_) => {}
                Err(Halt::Interrupted) => return Ok(End::Interrupted),
                Err(Halt::Failed(reason)) => {
                    return Ok(End::Failed(format!("warm-up run {warmup}: {reason}")));
                }
            }
        }
        let scratch = self.scratch.as_ref().map(|s| s.dir.clone());
        let starvation = Starvation::watch(&scratch.unwrap_or_default());
        let started = Instant::now();
        let mut main_values: Vec<f64> = Vec::new();
        let mut run_times: Vec<Duration> = Vec::new();
        let mut failures: Vec<String> = Vec::new();
        let mut in_a_row = 0;
        let mut runs = 0;
        loop {
            let run_started = Instant::now();
            runs += 1;
            let result = self.timed_run(shell, before_run.as_deref(), &command, &parser);
            run_times.push(run_started.elapsed());
            match result {
                Ok(values) => {
                    in_a_row = 0;
                    let at_ms = kbench_model::now_ms();
                    for (index, (name, value)) in values.into_iter().enumerate() {
                        let metric = if index == 0 {
                            main_values.push(value);
                            MAIN_METRIC.to_string()
                        } else {
                            name
                        };
                        emit(AgentEvent::Sample {
                            metric,
                            value,
                            iterations: 1,
                            at_ms,
                        })?;
                    }
                }
                Err(Halt::Interrupted) => return Ok(End::Interrupted),
                Err(Halt::Failed(reason)) => {
                    let reason = starvation.explain(reason);
                    in_a_row += 1;
                    if let Some(died) = self.service_died() {
                        return Ok(End::Failed(format!("{died} (run {runs}: {reason})")));
                    }
                    if in_a_row >= MAX_FAILURES_IN_A_ROW {
                        return Ok(End::Failed(format!(
                            "{in_a_row} runs in a row failed; the last: {reason}"
                        )));
                    }
                    failures.push(format!("run {runs}: {reason}"));
                }
            }
            if self.interrupted() {
                return Ok(End::Interrupted);
            }
            // Stop before a run that would end past the budget: the next
            // one is expected to take as long as those so far.
            let next = if run_times.is_empty() {
                self.test.expected_time
            } else {
                mean(&run_times)
            };
            if let Some(stop) = should_stop(&main_values, plan, started.elapsed() + next) {
                return Ok(End::Finished {
                    stop,
                    runs,
                    failures,
                });
            }
        }
    }

    /// `before_run` (untimed), then one timed run of the tool and its
    /// metrics.
    fn timed_run(
        &self,
        shell: &Shell,
        before_run: Option<&str>,
        command: &str,
        parser: &Parser,
    ) -> Result<Vec<(String, f64)>, Halt> {
        if let Some(script) = before_run {
            self.run_script(shell, script, "before-run")
                .map_err(|halt| halt.within("before_run"))?;
        }
        self.one_run(shell, command, parser)
    }

    /// One timed run of the tool and its metrics.
    fn one_run(
        &self,
        shell: &Shell,
        command: &str,
        parser: &Parser,
    ) -> Result<Vec<(String, f64)>, Halt> {
        let (output, elapsed) = self.run_script(shell, command, "run")?;
        crate::shown::show_output(&output.stdout, &output.stderr);
        parser
            .read(&RunOutput {
                stdout: output.stdout,
                stderr: output.stderr,
                elapsed,
            })
            .map_err(Halt::Failed)
    }

    /// Why the service is gone, when it ended while the test ran.
    fn service_died(&mut self) -> Option<String> {
        let service = self.service.as_mut()?;
        let status = service.try_status()?;
        let output = service.output();
        Some(format!(
            "the service {} during the test; its last output:\n{}",
            command::describe(status),
            output.tail(TAIL)
        ))
    }
}

impl Drop for Session<'_> {
    fn drop(&mut self) {
        // The service first: it may keep files in the scratch directory.
        self.service.take();
        self.scratch.take();
    }
}

fn mean(durations: &[Duration]) -> Duration {
    if durations.is_empty() {
        return Duration::ZERO;
    }
    durations.iter().sum::<Duration>() / durations.len() as u32
}

/// PATH for a profile's scripts: its program directories, then PATH.
pub fn search_path(profile: &Profile) -> std::ffi::OsString {
    let mut dirs: Vec<PathBuf> = kbench_catalog::profile::program_dirs(profile);
    if let Some(path) = std::env::var_os("PATH") {
        dirs.extend(std::env::split_paths(&path));
    }
    std::env::join_paths(dirs).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use kbench_catalog::profile::format;
    use kbench_catalog::profile::spec::Origin;

    fn slow_tool() -> ProfileTest {
        let text = "name = \"slow\"\ncommand = \"true\"\nmin_samples = 2\nmax_time = 30\n\
                    [[metrics]]\nname = \"t\"\nunit = \"s\"\ndirection = \"lower\"\nelapsed = true\n\
                    [[tests]]\nid = \"slow\"\n";
        format::parse(text, "slow.toml", Origin::Builtin)
            .unwrap()
            .tests
            .remove(0)
    }

    #[test]
    fn the_profile_s_hints_replace_what_the_user_did_not_choose() {
        let test = slow_tool();
        let defaults = SamplingPlan::default();
        let adapted = plan_for(&test, &defaults);
        assert_eq!(adapted.min_samples, 2);
        assert_eq!(adapted.max_time, Duration::from_secs(30));
        let chosen = SamplingPlan {
            min_samples: 7,
            max_time: Duration::from_secs(1),
            min_samples_chosen: true,
            max_time_chosen: true,
            ..SamplingPlan::default()
        };
        let kept = plan_for(&test, &chosen);
        assert_eq!(kept.min_samples, 7);
        assert_eq!(kept.max_time, Duration::from_secs(1));
    }
}
