//! Starting agents. A [`Launcher`] turns an [`AgentJob`] into a stream of
//! events: [`ProcessLauncher`] runs `kbench agent` in a fresh process (under
//! the user's wrapper), a VM launcher boots a guest, and tests use fakes.

use crate::agent::AgentJob;
use crate::error::{MeasureError, Result, invalid};
use crate::process::{kill_unless_ended, last_output, push_bounded};
use crate::turns::Seat;
use kbench_catalog::PROFILES_ENV;
use kbench_catalog::programs::find_program;
use kbench_model::AgentEvent;
use std::collections::VecDeque;
use std::ffi::OsString;
use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// How many lines of a failed agent's output are kept to show.
pub const TAIL_LINES: usize = 40;

/// Starts agents.
pub trait Launcher {
    fn launch(&self, job: &AgentJob) -> Result<Box<dyn AgentStream>>;

    /// Whether a round should be one launch: the snapshot and all the
    /// round's tests in one job (a VM boot is too slow to pay per test).
    /// The runner then reads the tests' events one after another from the
    /// one stream; otherwise each test gets a fresh agent.
    fn batches_tests(&self) -> bool {
        false
    }

    /// Whether [`Launcher::launch_in_turn`] works: its agents run on this
    /// machine and can inherit a ring's pipes.
    fn takes_turns(&self) -> bool {
        false
    }

    /// Starts an agent at `seat` of a ring of turns ([`crate::turns`]),
    /// pinned to `cpu` when given; only when [`Launcher::takes_turns`].
    fn launch_in_turn(
        &self,
        _job: &AgentJob,
        _seat: &Seat,
        _cpu: Option<usize>,
    ) -> Result<Box<dyn AgentStream>> {
        Err(MeasureError::Agent(
            "this launcher's agents cannot take turns".to_string(),
        ))
    }
}

/// The events of one agent, in order, as they arrive.
pub trait AgentStream {
    /// The next event; `None` when the agent has closed its output.
    fn next_event(&mut self) -> Option<Result<AgentEvent>>;

    /// Waits for the agent to end; an error says how it ended (exit status,
    /// signal) with the last lines it wrote to stderr.
    fn finish(self: Box<Self>) -> Result<()>;

    /// Asks the agent to stop soon, keeping what it measured (the run was
    /// interrupted). By default nothing: the agent then ends on its own.
    fn interrupt(&mut self) {}

    /// Waits until an agent that waits for a start signal (a duet's VM
    /// guest, [`AgentStream::start`]) is ready to measure; at once for the
    /// others. An agent that ends before it is ready returns too: its end
    /// then reads as usual.
    fn wait_until_ready(&mut self) -> Result<()> {
        Ok(())
    }

    /// Lets an agent that waits for a start signal begin; nothing for the
    /// others, which began when they were launched.
    fn start(&mut self) {}
}

/// A launcher whose one launch hands out an agent already started: a duet
/// starts both agents of a block before it reads either (a short round's
/// events wait in the pipe meanwhile).
pub struct Started(std::cell::RefCell<Option<Box<dyn AgentStream>>>);

impl Started {
    pub fn new(stream: Box<dyn AgentStream>) -> Started {
        Started(std::cell::RefCell::new(Some(stream)))
    }
}

impl Launcher for Started {
    fn launch(&self, _job: &AgentJob) -> Result<Box<dyn AgentStream>> {
        self.0
            .borrow_mut()
            .take()
            .ok_or_else(|| MeasureError::Agent("a started agent is launched once".to_string()))
    }
}

/// This kbench binary, which every agent process runs (`kbench agent`).
pub fn own_exe() -> Result<PathBuf> {
    std::env::current_exe().map_err(MeasureError::os(
        "finding the kbench binary to run as the measuring process",
    ))
}

/// The variables every agent of this kbench gets: the user's profile
/// directories (`--profiles`), which the agent reads from [`PROFILES_ENV`],
/// and [`crate::shown::SHOW_OUTPUT_ENV`] with `--show-output`.
pub fn agent_env(
    profile_dirs: &[PathBuf],
    show_output: bool,
) -> Result<Vec<(&'static str, OsString)>> {
    let mut env = Vec::new();
    if show_output {
        env.push((crate::shown::SHOW_OUTPUT_ENV, OsString::from("1")));
    }
    if profile_dirs.is_empty() {
        return Ok(env);
    }
    let joined = std::env::join_paths(profile_dirs)
        .map_err(|e| MeasureError::Invalid(format!("--profiles cannot reach the agent: {e}")))?;
    env.push((PROFILES_ENV, joined));
    Ok(env)
}

/// Runs `kbench agent --job JSON` as a child process, optionally under a
/// wrapper command (`taskset -c 1`, `systemd-run --scope`, ...).
pub struct ProcessLauncher {
    exe: PathBuf,
    wrapper: Vec<String>,
    /// Variables set for the agent (`KBENCH_PROFILES` from `--profiles`).
    env: Vec<(String, std::ffi::OsString)>,
}

impl ProcessLauncher {
    /// `wrapper` is split into words as a shell would (quotes and
    /// backslashes, no expansion); its program must exist on PATH.
    pub fn new(exe: PathBuf, wrapper: Option<&str>) -> Result<ProcessLauncher> {
        let wrapper: Vec<String> = match wrapper {
            None => Vec::new(),
            Some(text) => match shlex::split(text) {
                Some(words) => words,
                None => invalid!(
                    "the wrapper command `{text}` has an unclosed quote or a trailing \\; \
                     quote it as you would in a shell"
                ),
            },
        };
        if let Some(program) = wrapper.first()
            && find_program(program).is_none()
        {
            invalid!(
                "the wrapper program '{program}' was not found (looked in PATH); \
                 check the --wrap command or install it"
            );
        }
        Ok(ProcessLauncher {
            exe,
            wrapper,
            env: vec![],
        })
    }

    /// Sets an environment variable for every agent.
    pub fn with_env(mut self, key: &str, value: impl Into<std::ffi::OsString>) -> ProcessLauncher {
        self.env.push((key.to_string(), value.into()));
        self
    }

    /// Sets each of `env` ([`agent_env`]) for every agent.
    pub fn with_envs(self, env: &[(&str, OsString)]) -> ProcessLauncher {
        env.iter()
            .fold(self, |launcher, (key, value)| launcher.with_env(key, value))
    }

    fn command(&self) -> Command {
        let mut command = match self.wrapper.split_first() {
            Some((program, args)) => {
                let mut command = Command::new(program);
                command.args(args).arg(&self.exe);
                command
            }
            None => Command::new(&self.exe),
        };
        command.envs(self.env.iter().map(|(k, v)| (k, v)));
        command
    }
}

impl Launcher for ProcessLauncher {
    fn launch(&self, job: &AgentJob) -> Result<Box<dyn AgentStream>> {
        self.spawn(job, self.command())
    }

    fn takes_turns(&self) -> bool {
        true
    }

    fn launch_in_turn(
        &self,
        job: &AgentJob,
        seat: &Seat,
        cpu: Option<usize>,
    ) -> Result<Box<dyn AgentStream>> {
        let mut command = self.command();
        seat.hand_to(&mut command);
        if let Some(cpu) = cpu {
            command.env(crate::placement::CPUS_ENV, cpu.to_string());
        }
        self.spawn(job, command)
    }
}

impl ProcessLauncher {
    fn spawn(&self, job: &AgentJob, mut command: Command) -> Result<Box<dyn AgentStream>> {
        let job_json = serde_json::to_string(job)
            .map_err(|e| MeasureError::Agent(format!("cannot write the agent's job: {e}")))?;
        tracing::debug!("starting the measuring process: {command:?} agent --job ...");
        let mut child = command
            .args(["agent", "--job", &job_json])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| MeasureError::Agent(format!("cannot start the measuring process: {e}")))?;
        let stdout = BufReader::new(child.stdout.take().expect("stdout is piped"));
        let stderr = child.stderr.take().expect("stderr is piped");
        let tail = Arc::new(Mutex::new(VecDeque::new()));
        let collector = collect_tail(stderr, tail.clone());
        Ok(Box::new(ProcessStream {
            child,
            stdout,
            tail,
            collector: Some(collector),
        }))
    }
}

struct ProcessStream {
    child: Child,
    stdout: BufReader<ChildStdout>,
    tail: Arc<Mutex<VecDeque<String>>>,
    collector: Option<JoinHandle<()>>,
}

impl AgentStream for ProcessStream {
    fn next_event(&mut self) -> Option<Result<AgentEvent>> {
        next_line_event(&mut self.stdout, &self.tail)
    }

    fn interrupt(&mut self) {
        // SIGTERM: the agent stops before its next sample and cleans up.
        if let Ok(pid) = i32::try_from(self.child.id()) {
            // SAFETY: signals our own child, which we have not reaped yet.
            unsafe { libc::kill(pid, libc::SIGTERM) };
        }
    }

    fn finish(mut self: Box<Self>) -> Result<()> {
        let status = self
            .child
            .wait()
            .map_err(MeasureError::os("waiting for the measuring process"))?;
        if let Some(collector) = self.collector.take() {
            let _ = collector.join();
        }
        if status.success() {
            return Ok(());
        }
        let tail: Vec<String> = self
            .tail
            .lock()
            .expect("tail lock")
            .iter()
            .cloned()
            .collect();
        Err(MeasureError::Agent(format!(
            "the measuring process ended with {status}{}",
            last_output(&tail)
        )))
    }
}

impl Drop for ProcessStream {
    fn drop(&mut self) {
        // A stream dropped early (error in the parent) must not leave the
        // agent running or unreaped.
        kill_unless_ended(&mut self.child);
    }
}

/// Reads lines until one is an event. Lines that are not JSON events (a
/// wrapper's chatter) go to the tail shown on failure.
pub fn next_line_event(
    reader: &mut dyn BufRead,
    tail: &Mutex<VecDeque<String>>,
) -> Option<Result<AgentEvent>> {
    let mut line = String::new();
    loop {
        line.clear();
        match reader.read_line(&mut line) {
            Ok(0) => return None,
            Ok(_) => {
                let text = line.trim_end();
                if text.starts_with('{')
                    && let Ok(event) = serde_json::from_str::<AgentEvent>(text)
                {
                    return Some(Ok(event));
                }
                push_tail(tail, text);
            }
            Err(e) => {
                return Some(Err(MeasureError::Agent(format!(
                    "reading the measuring process's output: {e}"
                ))));
            }
        }
    }
}

fn push_tail(tail: &Mutex<VecDeque<String>>, line: &str) {
    push_bounded(
        &mut tail.lock().expect("tail lock"),
        line.to_string(),
        TAIL_LINES,
    );
}

fn collect_tail(
    stderr: impl Read + Send + 'static,
    tail: Arc<Mutex<VecDeque<String>>>,
) -> JoinHandle<()> {
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if let Some(shown) = crate::shown::unmark(&line) {
                eprintln!("{shown}");
            } else if !relay_log(&line) {
                push_tail(&tail, &line);
            }
        }
    })
}

/// Logs again here, at its level, a log line of the agent (`[TIME] LEVEL
/// target: message`, written under the `KBENCH_LOG` it inherits), so that
/// what the agent runs (a profile's commands) shows with `-v`; `false`
/// for any other line of its stderr, which is kept for error messages.
fn relay_log(line: &str) -> bool {
    let line = line.trim_start();
    let line = match line.split_once(' ') {
        Some((time, rest)) if time.contains('T') && time.ends_with('Z') => rest.trim_start(),
        _ => line,
    };
    let Some((level, message)) = line.split_once(' ') else {
        return false;
    };
    let message = message.trim_start();
    match level {
        "ERROR" => tracing::error!("agent: {message}"),
        "WARN" => tracing::warn!("agent: {message}"),
        "INFO" => tracing::info!("agent: {message}"),
        "DEBUG" => tracing::debug!("agent: {message}"),
        "TRACE" => tracing::trace!("agent: {message}"),
        _ => return false,
    }
    true
}

/// A stream that replays events already at hand: an agent that ran
/// elsewhere ([`Recorded`]), or a test's.
pub struct Replay {
    events: VecDeque<AgentEvent>,
    /// Why the events stop short of the agent's end, if they do: what
    /// [`AgentStream::finish`] says.
    cut: Option<String>,
}

impl Replay {
    pub fn new(events: impl Into<VecDeque<AgentEvent>>) -> Replay {
        Replay {
            events: events.into(),
            cut: None,
        }
    }
}

impl AgentStream for Replay {
    fn next_event(&mut self) -> Option<Result<AgentEvent>> {
        self.events.pop_front().map(Ok)
    }

    fn finish(self: Box<Self>) -> Result<()> {
        self.cut.map_or(Ok(()), |why| Err(MeasureError::Agent(why)))
    }
}

/// The launcher of an agent that already ran (a LAVA boot's, read back
/// from its console log): the runner gets its recorded events, and stores
/// them as it stores a live agent's. It launches once, and only the job
/// that ran.
pub struct Recorded {
    job: AgentJob,
    replay: std::cell::RefCell<Option<Replay>>,
}

impl Recorded {
    /// `cut` says why `events` end before the agent did, if they do.
    pub fn new(job: AgentJob, events: Vec<AgentEvent>, cut: Option<String>) -> Recorded {
        let replay = Replay {
            events: events.into(),
            cut,
        };
        Recorded {
            job,
            replay: std::cell::RefCell::new(Some(replay)),
        }
    }
}

impl Launcher for Recorded {
    fn launch(&self, job: &AgentJob) -> Result<Box<dyn AgentStream>> {
        if *job != self.job {
            return Err(MeasureError::Agent(
                "the recorded agent ran another job than the one asked for".to_string(),
            ));
        }
        let replay = self.replay.borrow_mut().take();
        replay
            .map(|replay| Box::new(replay) as Box<dyn AgentStream>)
            .ok_or_else(|| MeasureError::Agent("a recorded agent is launched once".to_string()))
    }

    fn batches_tests(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_agents_log_lines_are_relayed_and_the_rest_kept() {
        assert!(relay_log(
            "2026-12-03T07:40:00.123456Z  INFO kbench_measure::profile::command: running toy"
        ));
        assert!(relay_log("DEBUG kbench_measure::launcher: x"));
        assert!(!relay_log("thread 'main' panicked at src/x.rs:1:1"));
        assert!(!relay_log("INFO"));
        assert!(!relay_log(""));
    }

    #[test]
    fn skips_non_event_lines_into_the_tail() {
        let text = "wrapper says hi\n{\"event\":\"test_end\",\"target_met\":true,\"stop\":\"x\"}\n";
        let tail = Mutex::new(VecDeque::new());
        let mut reader = std::io::Cursor::new(text.as_bytes());
        let event = next_line_event(&mut reader, &tail).unwrap().unwrap();
        assert_eq!(
            event,
            AgentEvent::TestEnd {
                target_met: true,
                stop: "x".into()
            }
        );
        assert_eq!(tail.lock().unwrap().front().unwrap(), "wrapper says hi");
        assert!(next_line_event(&mut reader, &tail).is_none());
    }

    #[test]
    fn a_wrapper_is_split_as_a_shell_would() {
        let launcher = ProcessLauncher::new(
            "/bin/true".into(),
            Some(r#"sh -c 'taskset -c 1 "$0" "$@"'"#),
        )
        .unwrap();
        assert_eq!(launcher.wrapper, ["sh", "-c", r#"taskset -c 1 "$0" "$@""#]);
        let error = ProcessLauncher::new("/bin/true".into(), Some("sh -c 'unclosed"))
            .err()
            .unwrap();
        assert!(error.to_string().contains("unclosed quote"), "{error}");
    }

    #[test]
    fn a_wrapper_not_on_path_is_refused() {
        let error = ProcessLauncher::new("/bin/true".into(), Some("kbench-no-such-wrapper -x"))
            .err()
            .unwrap();
        assert!(
            error.to_string().contains("kbench-no-such-wrapper"),
            "{error}"
        );
    }
}
