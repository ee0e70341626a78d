//! [`VmLauncher`]: a [`Launcher`] that boots qemu with the kernel under test
//! and an initramfs holding kbench as /init plus the job, and turns the
//! guest's results channel (its second serial port, qemu's stdout) into
//! [`AgentEvent`]s as they arrive, so the runner commits each sample at once.
//!
//! A guest that panics, never reaches the agent or hangs is killed once it
//! has sent nothing for the timeout; its serial log (the guest's console) is
//! then kept and its last lines are part of the error. A guest whose kernel
//! dies before the agent starts is booted once more, and the run says so
//! with the first boot's serial log: a boot can die transiently (seen on CI
//! under multi-threaded TCG, which kbench no longer uses: a Debian 6.12
//! kernel executing half-patched text in `__schedule`).

use super::guest::{EXIT_MARKER, READY_MARKER};
use super::image::GuestImage;
use super::kernel_image::ImageArch;
use super::kernel_image::KernelImage;
use super::qemu::{self, Accel, Machine, kvm_failure};
use kbench_measure::MeasureError;
use kbench_measure::agent::AgentJob;
use kbench_measure::launcher::{AgentStream, Launcher, TAIL_LINES};
use kbench_measure::plan::SamplingPlan;
use kbench_measure::process::kill_unless_ended;
use kbench_model::AgentEvent;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long the KVM probe boot may take to reach the agent (a KVM boot
/// takes about a second).
const PROBE_TIMEOUT: Duration = Duration::from_secs(30);

/// How often a waiting stream looks at the stop flag.
const POLL: Duration = Duration::from_millis(100);

/// Everything about the VM but the job.
#[derive(Debug, Clone)]
pub struct VmSpec {
    pub qemu: PathBuf,
    pub kernel: KernelImage,
    pub machine: Machine,
    /// The longest the guest may send nothing (boot included) before it is
    /// killed as hung.
    pub timeout: Duration,
    /// Where serial logs of failed boots are kept.
    pub log_dir: PathBuf,
}

/// Times of one boot, from starting qemu.
#[derive(Debug, Clone, PartialEq)]
pub struct BootTimes {
    /// The first event (the agent is running).
    pub agent: Option<Duration>,
    /// The first sample.
    pub first_sample: Option<Duration>,
    /// qemu's exit.
    pub total: Duration,
    /// The kept serial log of the boot before this one, which died before
    /// its agent started and so was booted once more.
    pub died_first: Option<PathBuf>,
}

/// Boots one VM per job.
pub struct VmLauncher {
    spec: VmSpec,
    image: Arc<GuestImage>,
    stop: Option<Arc<AtomicBool>>,
    boots: Arc<Mutex<Vec<BootTimes>>>,
    /// With `vm compare --duet`: the host CPU qemu runs on; the guest then
    /// also waits for the start signal ([`AgentStream::start`]).
    duet_cpu: Option<usize>,
}

impl VmLauncher {
    pub fn new(spec: VmSpec, image: Arc<GuestImage>) -> VmLauncher {
        VmLauncher {
            spec,
            image,
            stop: None,
            boots: Arc::default(),
            duet_cpu: None,
        }
    }

    /// The same guest as one of a duet: qemu pinned to host CPU `cpu`, and
    /// the guest's agent waiting for the start signal, so that both guests
    /// of a block start measuring together however long each took to boot.
    /// Its boots are counted with this launcher's.
    pub fn for_duet(&self, cpu: usize) -> VmLauncher {
        VmLauncher {
            spec: self.spec.clone(),
            image: self.image.clone(),
            stop: self.stop.clone(),
            boots: self.boots.clone(),
            duet_cpu: Some(cpu),
        }
    }

    /// Once `stop` is set, a running guest is killed and its stream ends.
    pub fn with_stop(mut self, stop: Arc<AtomicBool>) -> VmLauncher {
        self.stop = Some(stop);
        self
    }

    pub fn spec(&self) -> &VmSpec {
        &self.spec
    }

    pub fn set_accel(&mut self, accel: Accel) {
        self.spec.machine.accel = accel;
    }

    /// The times of every boot so far, in order.
    pub fn boots(&self) -> Vec<BootTimes> {
        self.boots.lock().expect("boots lock").clone()
    }

    /// Boots the kernel under KVM with an empty job: `Ok` when the agent
    /// sent its snapshot and the guest ended cleanly, else why not (qemu's
    /// KVM error when it printed one).
    pub fn probe_kvm(&self) -> Result<(), String> {
        let spec = VmSpec {
            machine: Machine {
                accel: Accel::Kvm,
                ..self.spec.machine.clone()
            },
            timeout: PROBE_TIMEOUT.min(self.spec.timeout.max(Duration::from_secs(5))),
            ..self.spec.clone()
        };
        let job = AgentJob {
            snapshot: true,
            tests: vec![],
            plan: SamplingPlan::default(),
            tools: vec![],
        };
        let probe = Boot {
            spec,
            image: self.image.clone(),
            job,
            stop: self.stop.clone(),
            boots: None,
            keep_log: false,
            duet_cpu: None,
        };
        let mut stream = probe.start(false).map_err(|e| format!("{e:#}"))?;
        let mut reached = false;
        while let Some(event) = stream.next_event() {
            reached |= matches!(event, Ok(AgentEvent::Snapshot { .. }));
        }
        let end = stream.end();
        if let Some(sign) = kvm_failure(&end.stderr).or_else(|| kvm_failure(&end.serial)) {
            return Err(sign);
        }
        match (reached, end.failure) {
            (true, None) => Ok(()),
            (_, Some(failure)) => Err(format!("the probe boot failed: {failure}")),
            (false, None) => Err("the probe boot never reached the agent".into()),
        }
    }
}

impl Launcher for VmLauncher {
    fn launch(&self, job: &AgentJob) -> Result<Box<dyn AgentStream>, MeasureError> {
        let boot = Boot {
            spec: self.spec.clone(),
            image: self.image.clone(),
            job: job.clone(),
            stop: self.stop.clone(),
            boots: Some(self.boots.clone()),
            keep_log: true,
            duet_cpu: self.duet_cpu,
        };
        Ok(Box::new(boot.start(true)?))
    }

    fn batches_tests(&self) -> bool {
        true
    }
}

/// Makes `command`'s process run on host CPU `cpu` only, from before its
/// first instruction (sched_setaffinity between fork and exec).
fn pin_to(command: &mut Command, cpu: usize) {
    use std::os::unix::process::CommandExt;
    // The set is built before the fork.
    let set = kbench_measure::placement::cpu_set(&[cpu]);
    // SAFETY: the closure runs in the child between fork and exec and only
    // calls `placement::pin_to`, which is async-signal-safe.
    unsafe {
        command.pre_exec(move || kbench_measure::placement::pin_to(&set));
    }
}

/// What the reader thread saw on the results channel.
enum Line {
    Event(AgentEvent),
    /// A gated guest is ready to start ([`READY_MARKER`]).
    Ready,
    Exit(i32),
    Other(String),
}

/// Why a stream stopped waiting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cut {
    TimedOut,
    Stopped,
}

struct VmStream {
    child: Child,
    /// qemu's stdin, the gated guest's start signal; `None` when not gated
    /// or once sent.
    start_signal: Option<ChildStdin>,
    lines: Receiver<Line>,
    stderr: Arc<Mutex<String>>,
    stderr_reader: Option<JoinHandle<()>>,
    serial_log: PathBuf,
    /// The guest's architecture, for what its console needs.
    arch: ImageArch,
    /// Holds the initramfs; removed on drop.
    _work: WorkDir,
    keep_log: bool,
    timeout: Duration,
    stop: Option<Arc<AtomicBool>>,
    started: Instant,
    last_heard: Instant,
    cut: Option<Cut>,
    guest_exit: Option<i32>,
    /// Lines on the results channel that were not events.
    chatter: Vec<String>,
    times: BootTimes,
    boots: Option<Arc<Mutex<Vec<BootTimes>>>>,
    /// The agent sent an event or its ready line.
    heard_agent: bool,
    /// The boot to start once more if this one dies before its agent.
    again: Option<Boot>,
}

/// How a boot ended.
struct BootEnd {
    /// `None` when the guest's agent ended with status 0 and qemu exited.
    failure: Option<String>,
    stderr: String,
    /// The whole serial log.
    serial: String,
}

/// Everything one boot needs, kept by its stream to boot once more.
#[derive(Clone)]
struct Boot {
    spec: VmSpec,
    image: Arc<GuestImage>,
    job: AgentJob,
    stop: Option<Arc<AtomicBool>>,
    boots: Option<Arc<Mutex<Vec<BootTimes>>>>,
    keep_log: bool,
    duet_cpu: Option<usize>,
}

impl Boot {
    /// Starts qemu; with `retry`, the stream boots once more should the
    /// guest die before its agent starts.
    fn start(&self, retry: bool) -> Result<VmStream, MeasureError> {
        let Boot {
            spec,
            image,
            job,
            stop,
            boots,
            keep_log,
            duet_cpu,
        } = self.clone();
        let work = WorkDir::new().map_err(MeasureError::os(format!(
            "cannot build the guest's initramfs: no work directory in {}",
            std::env::temp_dir().display()
        )))?;
        let initrd = work.path.join("initramfs.cpio");
        std::fs::write(&initrd, image.initramfs(&job, duet_cpu.is_some())).map_err(
            MeasureError::os(format!(
                "cannot build the guest's initramfs: writing {}",
                initrd.display()
            )),
        )?;
        let serial_log = serial_log_path(&spec.log_dir, &work);
        let mut command = Command::new(&spec.qemu);
        if let Some(cpu) = duet_cpu {
            pin_to(&mut command, cpu);
        }
        // A gated guest's start byte goes in through qemu's stdin.
        let stdin = match duet_cpu {
            Some(_) => Stdio::piped(),
            None => Stdio::null(),
        };
        command.args(spec.machine.args(&spec.kernel.path, &initrd, &serial_log));
        tracing::info!("running {command:?}");
        let mut child = command
            .stdin(stdin)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(MeasureError::os(format!(
                "cannot start {}",
                spec.qemu.display()
            )))?;
        let started = Instant::now();
        let start_signal = child.stdin.take();
        let (sender, lines) = channel();
        let stdout = child.stdout.take().expect("stdout is piped");
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            let mut raw = Vec::new();
            loop {
                raw.clear();
                match reader.read_until(b'\n', &mut raw) {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {
                        let text = String::from_utf8_lossy(&raw);
                        let line = stamped_on_arrival(parse_line(text.trim()));
                        if sender.send(line).is_err() {
                            return;
                        }
                    }
                }
            }
        });
        let stderr = Arc::new(Mutex::new(String::new()));
        let stderr_reader = {
            let mut pipe = child.stderr.take().expect("stderr is piped");
            let stderr = stderr.clone();
            std::thread::spawn(move || {
                let mut buffer = [0u8; 4096];
                while let Ok(n @ 1..) = pipe.read(&mut buffer) {
                    let mut text = stderr.lock().expect("stderr lock");
                    // qemu's own messages are few; bound them anyway.
                    if text.len() < 1 << 20 {
                        text.push_str(&String::from_utf8_lossy(&buffer[..n]));
                    }
                }
            })
        };
        Ok(VmStream {
            child,
            start_signal,
            lines,
            stderr,
            stderr_reader: Some(stderr_reader),
            serial_log,
            arch: spec.machine.arch,
            _work: work,
            keep_log,
            timeout: spec.timeout,
            stop,
            started,
            last_heard: started,
            cut: None,
            guest_exit: None,
            chatter: Vec::new(),
            times: BootTimes {
                agent: None,
                first_sample: None,
                total: Duration::ZERO,
                died_first: None,
            },
            boots,
            heard_agent: false,
            again: retry.then(|| self.clone()),
        })
    }
}

fn parse_line(text: &str) -> Line {
    if let Some(status) = text.strip_prefix(EXIT_MARKER)
        && let Ok(status) = status.trim().parse()
    {
        return Line::Exit(status);
    }
    if text == READY_MARKER {
        return Line::Ready;
    }
    if text.starts_with('{')
        && let Ok(event) = serde_json::from_str(text)
    {
        return Line::Event(event);
    }
    Line::Other(text.to_string())
}

/// A sample's time by the host's clock, when its line arrived: a guest's
/// clock starts from the emulated RTC's whole second, so two guests' (and
/// the host's) clocks disagree by up to a second.
fn stamped_on_arrival(mut line: Line) -> Line {
    if let Line::Event(AgentEvent::Sample { at_ms, .. }) = &mut line {
        *at_ms = kbench_model::now_ms();
    }
    line
}

/// A unique log file name in `dir` (created if need be; the work dir when
/// that fails).
fn serial_log_path(dir: &Path, work: &WorkDir) -> PathBuf {
    static COUNT: AtomicU64 = AtomicU64::new(0);
    let name = format!(
        "serial-{}-{}-{}.log",
        kbench_model::now_ms(),
        std::process::id(),
        COUNT.fetch_add(1, Ordering::Relaxed)
    );
    match std::fs::create_dir_all(dir) {
        Ok(()) => dir.join(name),
        Err(_) => work.path.join(name),
    }
}

impl VmStream {
    fn stopped(&self) -> bool {
        self.stop.as_ref().is_some_and(|s| s.load(Ordering::SeqCst))
    }

    fn kill(&mut self, cut: Cut) {
        self.cut.get_or_insert(cut);
        let _ = self.child.kill();
    }

    /// The next line, or `None` at the end (qemu closed the channel, or the
    /// stream was cut: timeout or stop).
    fn next_line(&mut self) -> Option<Line> {
        loop {
            if self.cut.is_some() {
                return None;
            }
            if self.stopped() {
                self.kill(Cut::Stopped);
                return None;
            }
            match self.lines.recv_timeout(POLL) {
                Ok(line) => {
                    self.last_heard = Instant::now();
                    self.heard_agent |= matches!(line, Line::Event(_) | Line::Ready);
                    return Some(line);
                }
                Err(RecvTimeoutError::Timeout) => {
                    if self.last_heard.elapsed() >= self.timeout {
                        self.kill(Cut::TimedOut);
                        return None;
                    }
                }
                Err(RecvTimeoutError::Disconnected) => {
                    if self.heard_agent || !self.boot_again() {
                        return None;
                    }
                }
            }
        }
    }

    /// When qemu ended before the agent said anything: ends this boot
    /// (keeping its serial log) and continues with a new one, once. False
    /// when there is no second chance, or the new qemu did not start.
    fn boot_again(&mut self) -> bool {
        let Some(boot) = self.again.take() else {
            return false;
        };
        if self.stopped() {
            return false;
        }
        let Ok(next) = boot.start(false) else {
            return false;
        };
        let died = std::mem::replace(self, next);
        let log = died.serial_log.clone();
        let kept = died.end().failure.is_some() && boot.keep_log;
        self.times.died_first = kept.then_some(log);
        true
    }

    /// Waits for qemu and says how the boot went; keeps the serial log of a
    /// failed boot when asked to, removes it otherwise.
    fn end(mut self) -> BootEnd {
        self.again = None;
        // What is left on the channel: the exit marker, or nothing.
        while let Some(line) = self.next_line() {
            self.note(line);
        }
        let status = self.child.wait();
        if let Some(reader) = self.stderr_reader.take() {
            let _ = reader.join();
        }
        self.times.total = self.started.elapsed();
        if let Some(boots) = &self.boots {
            boots.lock().expect("boots lock").push(self.times.clone());
        }
        let stderr = self.stderr.lock().expect("stderr lock").clone();
        let serial = std::fs::read(&self.serial_log)
            .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
            .unwrap_or_default();
        let failure = self.failure(status.as_ref().ok(), &stderr, &serial);
        if failure.is_none() || !self.keep_log {
            let _ = std::fs::remove_file(&self.serial_log);
        }
        BootEnd {
            failure,
            stderr,
            serial,
        }
    }

    fn note(&mut self, line: Line) {
        match line {
            Line::Exit(status) => self.guest_exit = Some(status),
            Line::Other(text) if !text.is_empty() && self.chatter.len() < TAIL_LINES => {
                self.chatter.push(text);
            }
            _ => {}
        }
    }

    fn failure(&self, status: Option<&ExitStatus>, stderr: &str, serial: &str) -> Option<String> {
        let kvm = kvm_failure(stderr).or_else(|| kvm_failure(serial));
        let kvm = kvm.map(|k| format!(" (KVM: {k})")).unwrap_or_default();
        let seconds = self.timeout.as_secs_f64();
        Some(match (self.cut, self.guest_exit) {
            (Some(Cut::TimedOut), _) => format!(
                "the guest sent nothing for {seconds:.0} s (hung, or never reached the agent); qemu was killed{kvm}"
            ),
            (Some(Cut::Stopped), _) => "interrupted; qemu was stopped".to_string(),
            (None, Some(0)) if status.is_some_and(ExitStatus::success) => return None,
            (None, Some(0)) => format!(
                "qemu ended with {} after the agent finished",
                describe_status(status)
            ),
            (None, Some(code)) => format!("the agent in the guest ended with status {code}"),
            (None, None) if status.is_some_and(ExitStatus::success) => format!(
                "the guest stopped before its agent finished (a kernel panic, or init died){kvm}"
            ),
            (None, None) => format!("qemu ended with {}{kvm}", describe_status(status)),
        })
    }
}

fn describe_status(status: Option<&ExitStatus>) -> String {
    status.map_or_else(|| "an unknown status".to_string(), ExitStatus::to_string)
}

/// The last `TAIL_LINES` lines of `text`, indented.
fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(TAIL_LINES)..]
        .iter()
        .map(|line| format!("  {}", line.trim_end_matches('\r')))
        .collect::<Vec<_>>()
        .join("\n")
}

impl AgentStream for VmStream {
    fn wait_until_ready(&mut self) -> Result<(), MeasureError> {
        if self.start_signal.is_none() {
            return Ok(());
        }
        // Before its start signal a gated guest sends nothing but chatter
        // and the ready line. A guest that ends or hangs first is "ready":
        // its end reads as any failed boot's.
        while let Some(line) = self.next_line() {
            match line {
                Line::Ready => return Ok(()),
                Line::Event(_) => {
                    return Err(MeasureError::Agent(
                        "a gated guest sent an event before it was ready (a guest of another \
                         kbench version?)"
                            .to_string(),
                    ));
                }
                other => self.note(other),
            }
        }
        Ok(())
    }

    fn start(&mut self) {
        if let Some(mut signal) = self.start_signal.take() {
            // A qemu that is gone cannot take it; its end says why.
            let _ = signal.write_all(b"\n").and_then(|()| signal.flush());
        }
    }

    fn next_event(&mut self) -> Option<Result<AgentEvent, MeasureError>> {
        loop {
            match self.next_line()? {
                Line::Event(event) => {
                    let at = self.started.elapsed();
                    self.times.agent.get_or_insert(at);
                    if matches!(event, AgentEvent::Sample { .. }) {
                        self.times.first_sample.get_or_insert(at);
                    }
                    return Some(Ok(event));
                }
                other => self.note(other),
            }
        }
    }

    fn finish(self: Box<Self>) -> Result<(), MeasureError> {
        let serial_log = self.serial_log.clone();
        let keep_log = self.keep_log;
        let chatter = self.chatter.clone();
        let died_first = self.times.died_first.clone();
        let arch = self.arch;
        let end = self.end();
        let Some(failure) = end.failure else {
            return Ok(());
        };
        let mut details = String::new();
        if let Some(killed) = kbench_sysinfo::oom_kills(&end.serial).last() {
            details.push_str(&format!(
                "the guest ran out of memory (give it more with --memory); its kernel said: {killed}\n"
            ));
        }
        if !end.serial.trim().is_empty() {
            details.push_str(&format!(
                "the serial log's last lines:\n{}\n",
                tail(&end.serial)
            ));
        } else {
            details.push_str(&format!(
                "the serial log is empty: the kernel printed nothing on {} (a kernel of \
                 your own needs {})\n",
                qemu::console(arch),
                qemu::console_config(arch)
            ));
        }
        if !chatter.is_empty() {
            details.push_str(&format!(
                "the results channel also said:\n{}\n",
                tail(&chatter.join("\n"))
            ));
        }
        if !end.stderr.trim().is_empty() {
            details.push_str(&format!("qemu's stderr:\n{}\n", tail(&end.stderr)));
        }
        if let Some(first) = &died_first {
            details.push_str(&format!(
                "the boot before this one died before its agent started too; its serial log is \
                 at {}\n",
                first.display()
            ));
        }
        let log = if keep_log {
            format!("; serial log kept at {}", serial_log.display())
        } else {
            String::new()
        };
        Err(MeasureError::Agent(format!(
            "{failure}{log}: {}",
            details.trim_end()
        )))
    }
}

impl Drop for VmStream {
    fn drop(&mut self) {
        // A stream dropped early must not leave qemu running or unreaped.
        kill_unless_ended(&mut self.child);
    }
}

/// A private temporary directory, removed with its contents on drop.
struct WorkDir {
    path: PathBuf,
}

impl WorkDir {
    fn new() -> std::io::Result<WorkDir> {
        use std::os::unix::fs::DirBuilderExt;
        static COUNT: AtomicU64 = AtomicU64::new(0);
        let path = std::env::temp_dir().join(format!(
            "kbench-vm-{}-{}-{}",
            std::process::id(),
            kbench_model::now_ms(),
            COUNT.fetch_add(1, Ordering::Relaxed)
        ));
        // `create` fails when the path exists: never someone else's.
        std::fs::DirBuilder::new().mode(0o700).create(&path)?;
        Ok(WorkDir { path })
    }
}

impl Drop for WorkDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

#[cfg(test)]
mod tests;
