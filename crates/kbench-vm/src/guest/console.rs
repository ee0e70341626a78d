//! A console guest ([`CONSOLE_PLAN_PATH`] in its initramfs): a LAVA job's
//! boot, with one serial line for everything. It quiets the kernel's
//! messages, checks that it booted the kernel its plan names, and writes
//! its agent's events framed on the console ([`crate::console_frames`]),
//! then a summary line per test for LAVA's monitors.

use crate::console_frames::{
    self, BEGIN, BlockHeader, CASE, ConsoleBoot, END, FAILURES_BEGIN, FAILURES_END, GuestPush,
};
use crate::error::{Result, VmError};
use crate::image::{CONSOLE_PLAN_PATH, PUSH_PLAN_PATH};
use kbench_measure::agent::{AgentJob, run_job};
use kbench_model::{AgentEvent, MAIN_METRIC};
use std::fs::File;
use std::io::Write;

/// The plan of a console guest; `None` for a guest of `kbench vm`.
pub(super) fn plan() -> Result<Option<ConsoleBoot>> {
    read_json(CONSOLE_PLAN_PATH)
}

/// A console guest's push to a kbench server, if it has one.
pub(super) fn push_plan() -> Result<Option<GuestPush>> {
    read_json(PUSH_PLAN_PATH)
}

/// The JSON file at `path` of the initramfs, if it is there.
fn read_json<T: serde::de::DeserializeOwned>(path: &str) -> Result<Option<T>> {
    let text = match std::fs::read(path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(VmError::os(format!("reading {path}"))(error)),
    };
    serde_json::from_slice(&text)
        .map(Some)
        .map_err(|e| VmError::Invalid(format!("reading {path}: {e}")))
}

/// The console, opened for writing (PID 1's own stdout may be buffered).
pub(super) fn open() -> Result<File> {
    std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/console")
        .map_err(VmError::os("opening /dev/console"))
}

/// Only emergencies reach the console from now on: a kernel message in
/// the middle of a frame would damage it.
pub(super) fn quiet_kernel() {
    let _ = std::fs::write("/proc/sys/kernel/printk", "1");
}

/// Opens the boot's block with its header, which it returns; `None` when
/// the guest booted the wrong kernel (the block is then closed, saying
/// so).
pub(super) fn begin(
    console: &mut File,
    plan: ConsoleBoot,
    job: &AgentJob,
) -> Result<Option<BlockHeader>> {
    let header = BlockHeader::new(plan, kbench_sysinfo::kernel_release(), job.clone());
    let json = serde_json::to_string(&header).expect("a header serializes");
    let write = |console: &mut File, text: String| {
        console
            .write_all(text.as_bytes())
            .map_err(VmError::os("writing to the console"))
    };
    write(
        console,
        format!("{BEGIN}\n{}\n", console_frames::frame(0, &json)),
    )?;
    match &header.refused {
        None => Ok(Some(header)),
        Some(why) => {
            eprintln!("kbench guest: {why}");
            write(console, close(Some(1), &[case("kernel-release", "fail")]))?;
            Ok(None)
        }
    }
}

/// Runs the job of `header` writing framed events to `console` (after the
/// header, frame 0); pushes them as `push` says, if it does; then writes
/// the summary and the block's end (LAVA ends the boot's test there, so
/// the push comes before). In the agent's process.
pub(super) fn measure(
    header: &BlockHeader,
    push: Option<&GuestPush>,
    console: File,
) -> std::io::Result<()> {
    let mut framed = Framed {
        console,
        line: Vec::new(),
        next: 1,
        cases: Cases::default(),
        held: String::new(),
        events: push.map(|_| Vec::new()),
    };
    let never = std::sync::atomic::AtomicBool::new(false);
    run_job(&header.job, &mut framed, None, &never)?;
    framed.flush()?;
    let Framed {
        mut console,
        next,
        cases,
        events,
        ..
    } = framed;
    if let (Some(push), Some(events)) = (push, events) {
        super::push::push(push, header, events);
    }
    let summary: String = cases
        .passed
        .iter()
        .map(|line| format!("{line}\n"))
        .collect();
    console.write_all(format!("{summary}{}", close(Some(next), &cases.failed)).as_bytes())
}

/// The end of a block of `frames` frames (`None`: cut short, the agent
/// died), and the failures' block (empty or not: LAVA's second monitor
/// waits for it).
pub(super) fn close(frames: Option<u64>, failed: &[String]) -> String {
    let failed: String = failed.iter().map(|line| format!("{line}\n")).collect();
    let frames = frames.map_or("cut".to_string(), |n| n.to_string());
    format!("{END} {frames}\n{FAILURES_BEGIN}\n{failed}{FAILURES_END}\n")
}

/// A summary line without a number: `kbench-case TEST fail`.
pub(super) fn case(test: &str, result: &str) -> String {
    format!("{CASE} {test} {result}")
}

/// A writer that frames each line written to it onto the console. A
/// test's frames are held until the test has ended, then written and
/// drained: the serial line (and its interrupts) is quiet while a test
/// samples. A test whose agent dies loses its frames, which were of a test
/// that did not end.
struct Framed {
    console: File,
    line: Vec<u8>,
    next: u64,
    cases: Cases,
    /// Frames not yet on the console.
    held: String,
    /// Every event so far, kept only for a push.
    events: Option<Vec<AgentEvent>>,
}

impl Write for Framed {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        for &byte in bytes {
            if byte != b'\n' {
                self.line.push(byte);
                continue;
            }
            let line = String::from_utf8_lossy(&self.line).into_owned();
            self.line.clear();
            let event = serde_json::from_str::<AgentEvent>(&line).ok();
            if let Some(event) = &event {
                self.cases.observe(event);
                if let Some(events) = &mut self.events {
                    events.push(event.clone());
                }
            }
            self.held.push_str(&console_frames::frame(self.next, &line));
            self.held.push('\n');
            self.next += 1;
            let test_over = !matches!(
                event,
                Some(AgentEvent::TestStart { .. })
                    | Some(AgentEvent::Metric { .. })
                    | Some(AgentEvent::Sample { .. })
            );
            if test_over {
                self.flush()?;
            }
        }
        Ok(bytes.len())
    }

    /// Writes the held frames and waits until the serial line has sent
    /// them.
    fn flush(&mut self) -> std::io::Result<()> {
        self.console.write_all(self.held.as_bytes())?;
        self.held.clear();
        // SAFETY: the descriptor is open; tcdrain waits until the line is
        // idle (an error, on a console that is no tty, changes nothing).
        unsafe { libc::tcdrain(std::os::fd::AsRawFd::as_raw_fd(&self.console)) };
        Ok(())
    }
}

/// What LAVA's dashboard is told of each test: the median of its samples
/// in its unit (a number only, as LAVA wants), or that it failed or was
/// skipped.
#[derive(Default)]
struct Cases {
    /// The test running: its name, unit and samples so far.
    current: Option<(String, String, Vec<f64>)>,
    passed: Vec<String>,
    failed: Vec<String>,
}

impl Cases {
    fn observe(&mut self, event: &AgentEvent) {
        match event {
            AgentEvent::TestStart { test, unit, .. } => {
                self.current = Some((test.to_string(), unit.replace(' ', "_"), Vec::new()));
            }
            AgentEvent::Sample { metric, value, .. } if metric == MAIN_METRIC => {
                if let Some((_, _, values)) = &mut self.current {
                    values.push(*value);
                }
            }
            AgentEvent::TestEnd { .. } => {
                if let Some((test, unit, values)) = self.current.take()
                    && let Ok(samples) = kbench_stats::Samples::new(values)
                {
                    let median = samples.median();
                    self.passed
                        .push(format!("{} {median} {unit}", case(&test, "pass")));
                }
            }
            AgentEvent::Skip { test, .. } => self.failed.push(case(&test.to_string(), "skip")),
            AgentEvent::Failed { test, .. } => {
                self.current = None;
                self.failed.push(case(&test.to_string(), "fail"));
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kbench_model::{Direction, TestKey};

    #[test]
    fn each_test_gets_its_median_or_its_failure() {
        let mut cases = Cases::default();
        let key = TestKey::new("syscall-null");
        cases.observe(&AgentEvent::TestStart {
            test: key.clone(),
            unit: "ns".into(),
            direction: Direction::Lower,
            iterations: 10,
        });
        for value in [3.0, 1.0, 2.0] {
            cases.observe(&AgentEvent::Sample {
                metric: MAIN_METRIC.into(),
                value,
                iterations: 10,
                at_ms: 0,
            });
        }
        cases.observe(&AgentEvent::Sample {
            metric: "cpu-clock".into(),
            value: 100.0,
            iterations: 10,
            at_ms: 0,
        });
        cases.observe(&AgentEvent::TestEnd {
            target_met: true,
            stop: "x".into(),
        });
        cases.observe(&AgentEvent::Failed {
            test: TestKey::new("pipe-lat"),
            reason: "y".into(),
        });
        assert_eq!(cases.passed, ["kbench-case syscall-null pass 2 ns"]);
        assert_eq!(cases.failed, ["kbench-case pipe-lat fail"]);
        assert_eq!(
            close(Some(5), &cases.failed),
            "kbench-results-end 5\nkbench-failures-begin\nkbench-case pipe-lat fail\n\
             kbench-failures-end\n"
        );
    }
}
