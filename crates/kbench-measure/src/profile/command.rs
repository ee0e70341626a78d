//! Starting a profile's processes: `sh -c SCRIPT` in a process group of its
//! own (so it and everything it forks can be stopped as a whole, and the
//! terminal's Ctrl-C reaches the agent only), with `PR_SET_PDEATHSIG` so a
//! killed agent takes it along, `LC_ALL=C` so numbers print the same
//! everywhere, stdin from /dev/null and stdout/stderr into files (nothing
//! blocks on a full pipe, and nothing is lost when it is killed). As root, a
//! profile may run a service as another user (PostgreSQL refuses root).

use kbench_catalog::programs::effective_uid;
use std::ffi::OsString;
use std::fs::File;
use std::io;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How long a signalled process group gets before SIGKILL.
pub const GRACE: Duration = Duration::from_secs(5);
/// How often a wait looks at the clock and the interrupt flag.
const POLL: Duration = Duration::from_millis(20);
/// How often a wait on a dedicated machine reads the OOM kills.
const OOM_POLL: Duration = Duration::from_millis(200);

/// Set (to anything) where the machine is the tests' alone: a kbench
/// guest's PID 1 sets it. There an OOM kill while a script runs is the
/// script's doing, and ends it at once ([`Ended::OutOfMemory`]), rather
/// than leave the machine thrashing until a timeout.
pub const DEDICATED_ENV: &str = "KBENCH_DEDICATED_MACHINE";

/// What became of a script ended by an OOM kill.
pub const OUT_OF_MEMORY: &str = "was killed with its processes: the kernel's OOM killer killed one of this machine's while it ran";

/// A user a service runs as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct User {
    pub name: String,
    pub uid: u32,
    pub gid: u32,
    pub home: PathBuf,
}

impl User {
    /// Looks `name` up in /etc/passwd (system users live there).
    pub fn lookup(name: &str) -> Result<User, String> {
        let passwd = std::fs::read_to_string("/etc/passwd")
            .map_err(|e| format!("cannot read /etc/passwd to find user '{name}': {e}"))?;
        passwd
            .lines()
            .find_map(|line| {
                let fields: Vec<&str> = line.split(':').collect();
                if fields.len() < 7 || fields[0] != name {
                    return None;
                }
                Some(User {
                    name: name.to_string(),
                    uid: fields[2].parse().ok()?,
                    gid: fields[3].parse().ok()?,
                    home: PathBuf::from(fields[5]),
                })
            })
            .ok_or_else(|| format!("there is no user '{name}' (/etc/passwd)"))
    }
}

/// The name of the user this process runs as.
pub fn current_user() -> String {
    let uid = effective_uid();
    std::fs::read_to_string("/etc/passwd")
        .ok()
        .and_then(|passwd| {
            passwd.lines().find_map(|line| {
                let fields: Vec<&str> = line.split(':').collect();
                let matches = fields.len() >= 3 && fields[2].parse::<u32>().ok() == uid;
                matches.then(|| fields[0].to_string())
            })
        })
        .or_else(|| std::env::var("USER").ok())
        .unwrap_or_else(|| "root".to_string())
}

/// Where and how scripts run.
#[derive(Debug, Clone)]
pub struct Shell {
    /// The working directory (the scratch directory, `{dir}`).
    pub cwd: PathBuf,
    /// PATH for the scripts (a profile's program directories first).
    pub path: OsString,
    /// Where stdout and stderr files go.
    pub logs: PathBuf,
}

/// How a script that was waited for ended.
#[derive(Debug)]
pub enum Ended {
    Exited {
        status: ExitStatus,
        elapsed: Duration,
    },
    /// Still going at the timeout: its process group was killed.
    TimedOut,
    /// The agent was asked to stop (SIGINT): its process group was killed.
    Interrupted,
    /// On a dedicated machine, the OOM killer killed a process while it
    /// ran: its process group was killed.
    OutOfMemory,
}

/// The OOM kills since boot (`oom_kill` of /proc/vmstat, Linux 4.13+).
fn oom_kills() -> Option<u64> {
    let vmstat = std::fs::read_to_string("/proc/vmstat").ok()?;
    vmstat
        .lines()
        .find_map(|line| line.strip_prefix("oom_kill ")?.trim().parse().ok())
}

/// The OOM killer's adjustment of this process.
const OOM_SCORE_ADJ: &str = "/proc/self/oom_score_adj";

impl Shell {
    /// Starts `script` (as `user` when given) without waiting; `label`
    /// names its output files.
    pub fn spawn(&self, script: &str, label: &str, user: Option<&User>) -> io::Result<Group> {
        let out = self.logs.join(format!("{label}.out"));
        let err = self.logs.join(format!("{label}.err"));
        tracing::info!("running {label}: sh -c {script:?}");
        let mut command = Command::new("/bin/sh");
        command
            .arg("-c")
            .arg(script)
            .current_dir(&self.cwd)
            .env("PATH", &self.path)
            .env("LC_ALL", "C")
            .stdin(Stdio::null())
            .stdout(File::create(&out)?)
            .stderr(File::create(&err)?)
            .process_group(0);
        if let Some(user) = user {
            command
                .uid(user.uid)
                .gid(user.gid)
                .env("HOME", &user.home)
                .env("USER", &user.name)
                .env("LOGNAME", &user.name);
        }
        let parent = std::process::id() as libc::pid_t;
        // A `kbench vm` guest's agent is kept from the OOM killer; what it
        // starts is killable as usual.
        let reset_oom = std::fs::read_to_string(OOM_SCORE_ADJ).is_ok_and(|s| s.trim() == "-1000");
        // SAFETY: between fork and exec only async-signal-safe calls
        // (prctl, getppid, kill, open, write, close); nothing allocates.
        unsafe {
            command.pre_exec(move || {
                if reset_oom {
                    let fd = libc::open(c"/proc/self/oom_score_adj".as_ptr(), libc::O_WRONLY);
                    if fd >= 0 {
                        libc::write(fd, c"0".as_ptr().cast(), 1);
                        libc::close(fd);
                    }
                }
                // Dies with the agent; set after the uid change, which clears it.
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong) != 0 {
                    return Err(io::Error::last_os_error());
                }
                if libc::getppid() != parent {
                    // The agent is already gone.
                    libc::kill(libc::getpid(), libc::SIGKILL);
                }
                Ok(())
            });
        }
        let child = command.spawn()?;
        Ok(Group {
            pgid: child.id() as libc::pid_t,
            child: Some(child),
            out,
            err,
        })
    }

    /// Runs `script` to its end, killing its process group at `timeout` or
    /// when `interrupted()` turns true.
    pub fn run(
        &self,
        script: &str,
        label: &str,
        user: Option<&User>,
        timeout: Duration,
        interrupted: &dyn Fn() -> bool,
    ) -> io::Result<(Ended, Output)> {
        let mut group = self.spawn(script, label, user)?;
        let started = Instant::now();
        let mut child = group.child.take().expect("just spawned");
        // A thread waits so the end is timed exactly, not to the next poll.
        let (sender, receiver) = mpsc::channel();
        std::thread::spawn(move || {
            let status = child.wait();
            let _ = sender.send((status, Instant::now()));
        });
        // On a dedicated machine: the OOM kills before, and when to look.
        let mut oom_watch = std::env::var_os(DEDICATED_ENV)
            .and_then(|_| oom_kills())
            .map(|before| (before, started + OOM_POLL));
        let ended = loop {
            match receiver.recv_timeout(POLL) {
                Ok((status, at)) => {
                    let status = status?;
                    // The OOM killer's victim is often the script's own:
                    // it then ends at once, killed.
                    let killed = oom_watch.as_ref().is_some_and(|(before, _)| {
                        !status.success() && oom_kills().is_some_and(|now| now > *before)
                    });
                    break match killed {
                        true => Ended::OutOfMemory,
                        false => Ended::Exited {
                            status,
                            elapsed: at - started,
                        },
                    };
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    return Err(io::Error::other("lost the process's waiter"));
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
            }
            if let Some((before, next)) = &mut oom_watch
                && Instant::now() >= *next
            {
                *next += OOM_POLL;
                if oom_kills().is_some_and(|now| now > *before) {
                    // The machine is short of memory: no grace period.
                    group.signal(libc::SIGKILL);
                    let _ = receiver.recv();
                    break Ended::OutOfMemory;
                }
            }
            let why = if interrupted() {
                Ended::Interrupted
            } else if started.elapsed() >= timeout {
                Ended::TimedOut
            } else {
                continue;
            };
            group.signal(libc::SIGTERM);
            if receiver.recv_timeout(GRACE).is_err() {
                group.signal(libc::SIGKILL);
                let _ = receiver.recv();
            }
            break why;
        };
        // Whatever the script left running in its group goes too.
        group.signal(libc::SIGKILL);
        let output = group.output();
        Ok((ended, output))
    }
}

/// A started script's process group. Dropping it kills the group.
#[derive(Debug)]
pub struct Group {
    child: Option<Child>,
    pgid: libc::pid_t,
    out: PathBuf,
    err: PathBuf,
}

/// What a script wrote.
#[derive(Debug, Clone, Default)]
pub struct Output {
    pub stdout: String,
    pub stderr: String,
}

impl Output {
    /// The last `n` lines of stdout and stderr together, indented, for
    /// error messages.
    pub fn tail(&self, n: usize) -> String {
        let mut lines: Vec<&str> = self.stdout.lines().collect();
        lines.extend(self.stderr.lines());
        lines.retain(|l| !l.trim().is_empty());
        if lines.is_empty() {
            return "    (no output)".to_string();
        }
        lines[lines.len().saturating_sub(n)..]
            .iter()
            .map(|l| format!("    {l}"))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

impl Group {
    #[cfg(test)]
    pub fn pid(&self) -> libc::pid_t {
        self.pgid
    }

    /// The leader's exit status once it has ended.
    pub fn try_status(&mut self) -> Option<ExitStatus> {
        self.child.as_mut()?.try_wait().ok().flatten()
    }

    /// Sends `signal` to every process of the group.
    pub fn signal(&self, signal: libc::c_int) {
        // SAFETY: kill(2) on our own process group; ESRCH when it is empty.
        unsafe {
            libc::kill(-self.pgid, signal);
        }
    }

    /// Stops the group: `signal`, up to [`GRACE`] for the leader to end,
    /// then SIGKILL to all, and reaps the leader.
    pub fn stop(&mut self, signal: libc::c_int) {
        self.signal(signal);
        if let Some(child) = self.child.as_mut() {
            let deadline = Instant::now() + GRACE;
            while Instant::now() < deadline {
                if let Ok(Some(_)) = child.try_wait() {
                    break;
                }
                std::thread::sleep(POLL);
            }
        }
        self.signal(libc::SIGKILL);
        if let Some(mut child) = self.child.take() {
            let _ = child.wait();
        }
    }

    /// What it wrote so far.
    pub fn output(&self) -> Output {
        let read = |path: &Path| {
            std::fs::read(path)
                .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
                .unwrap_or_default()
        };
        Output {
            stdout: read(&self.out),
            stderr: read(&self.err),
        }
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        if self.child.is_some() {
            self.stop(libc::SIGTERM);
        }
    }
}

/// "exited with status 2" / "was killed by signal 9".
pub fn describe(status: ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exited with status {code}"),
        (None, Some(signal)) => format!("was killed by signal {signal}"),
        _ => format!("ended with {status}"),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Scripts run in `dir`, their logs there too.
    pub(crate) fn shell(dir: &Path) -> Shell {
        Shell {
            cwd: dir.to_path_buf(),
            path: std::env::var_os("PATH").unwrap_or_default(),
            logs: dir.to_path_buf(),
        }
    }

    #[test]
    fn the_oom_kills_are_read_from_vmstat() {
        // Linux 4.13 and later count them; this machine's kernel is newer.
        assert!(oom_kills().is_some(), "/proc/vmstat has oom_kill");
    }

    #[test]
    fn runs_and_times_a_script() {
        let dir = tempfile::tempdir().unwrap();
        let (ended, output) = shell(dir.path())
            .run(
                "echo out; echo err >&2; sleep 0.2; exit 3",
                "t",
                None,
                Duration::from_secs(10),
                &|| false,
            )
            .unwrap();
        match ended {
            Ended::Exited { status, elapsed } => {
                assert_eq!(describe(status), "exited with status 3");
                assert!(elapsed >= Duration::from_millis(200), "{elapsed:?}");
                assert!(elapsed < Duration::from_secs(2), "{elapsed:?}");
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(output.stdout, "out\n");
        assert_eq!(output.tail(5), "    out\n    err");
    }

    #[test]
    fn kills_the_whole_group_at_the_timeout() {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("pid");
        let script = format!("sleep 300 & echo $! > {}; wait", marker.display());
        let started = Instant::now();
        let (ended, _) = shell(dir.path())
            .run(&script, "t", None, Duration::from_secs(2), &|| false)
            .unwrap();
        assert!(matches!(ended, Ended::TimedOut), "{ended:?}");
        assert!(started.elapsed() < Duration::from_secs(30));
        let pid: i32 = std::fs::read_to_string(&marker)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        // The background sleep is gone (or a zombie awaiting its reaper).
        // SIGKILL takes effect when the process next runs, which on a
        // loaded machine can be a moment after the group was signalled.
        let gone = |state: &str| state.is_empty() || state.contains(") Z");
        let mut state = String::new();
        for _ in 0..500 {
            state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            if gone(&state) {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(gone(&state), "still running 5 s after the kill: {state}");
    }

    #[test]
    fn finds_users() {
        let root = User::lookup("root").unwrap();
        assert_eq!((root.uid, root.gid), (0, 0));
        let error = User::lookup("kbench-no-such-user").unwrap_err();
        assert!(error.contains("kbench-no-such-user"), "{error}");
        assert!(effective_uid().is_some());
    }
}
