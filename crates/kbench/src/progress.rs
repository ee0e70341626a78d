//! The run's progress on stderr: an indicatif bar on a terminal (test k of
//! n, the current test, samples so far and the CI reached), and one line per
//! finished test, which also reaches logs when stderr is not a terminal;
//! nothing with `-q`. [`Steps`]: the same for commands that go through
//! numbered steps (`kernel fetch`, `install`, bisect's search).

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use kbench_measure::runner::RunEvent;
use kbench_vm::rootfs::RootfsStep;
use std::io::IsTerminal;

pub struct Progress {
    bar: ProgressBar,
    done: u64,
    total: u64,
}

impl Progress {
    pub fn new(total: usize) -> Progress {
        let bar = bar(total as u64);
        Progress {
            bar,
            done: 0,
            total: total as u64,
        }
    }

    pub fn observe(&mut self, event: RunEvent) {
        match event {
            RunEvent::RoundStarted(start) => {
                // Adaptive rounds beyond their minimum add to the count.
                self.total = self.total.max(self.done + start.tests as u64);
                self.bar.set_length(self.total);
                if start.worth_saying() {
                    self.line(start.to_string());
                }
            }
            RunEvent::TestStarted { test, .. } => {
                self.bar.set_message(format!("{test}: calibrating"));
            }
            RunEvent::Sampled {
                test,
                samples,
                relative_ci,
            } => {
                let ci = if relative_ci.is_finite() {
                    format!("CI ±{:.2}%", relative_ci * 100.0)
                } else {
                    "CI n/a".to_string()
                };
                self.bar
                    .set_message(format!("{test}: {samples} samples, {ci}"));
            }
            RunEvent::Note(note) => self.line(format!("note: {note}")),
            RunEvent::TestEnded { outcome } => {
                self.done += 1;
                self.bar.set_position(self.done);
                let how = outcome.ended();
                self.line(format!(
                    "[{}/{}] {}: {how}",
                    self.done, self.total, outcome.test
                ));
            }
        }
    }

    fn line(&self, text: String) {
        line(&self.bar, text);
    }

    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

/// A bar of `total` numbered steps, each step's line printed as it starts.
pub struct Steps {
    bar: ProgressBar,
}

impl Steps {
    /// The bar ticks on its own: a step may take minutes (mmdebstrap).
    pub fn new(total: u64) -> Steps {
        let bar = bar(total);
        bar.enable_steady_tick(std::time::Duration::from_millis(500));
        Steps { bar }
    }

    /// Step `position` (of the total) starts: `text` says what it does.
    pub fn step(&self, position: u64, text: String) {
        self.bar.set_position(position);
        self.bar.set_message(text.clone());
        line(&self.bar, text);
    }

    /// Step `position` of a total known only as it goes (bisect's search).
    pub fn step_of(&self, position: u64, total: u64, text: String) {
        self.bar.set_length(total);
        self.step(position, text);
    }

    /// A line of its own, above the bar.
    pub fn line(&self, text: String) {
        line(&self.bar, text);
    }

    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

/// A rootfs build's [`Steps`], from its first step heard to its last (or
/// its drop, when the build failed).
#[derive(Default)]
pub struct RootfsProgress(Option<Steps>);

impl RootfsProgress {
    pub fn observe(&mut self, step: &RootfsStep) {
        let steps = self.0.get_or_insert_with(|| Steps::new(RootfsStep::TOTAL));
        steps.step(step.number(), step.to_string());
        if step.number() == RootfsStep::TOTAL {
            self.0.take().inspect(Steps::finish);
        }
    }
}

impl Drop for RootfsProgress {
    fn drop(&mut self) {
        self.0.take().inspect(Steps::finish);
    }
}

/// A bar of `total` on stderr when it is a terminal and not `-q`, else
/// hidden.
fn bar(total: u64) -> ProgressBar {
    let target = if std::io::stderr().is_terminal() && !crate::logs::quiet() {
        ProgressDrawTarget::stderr()
    } else {
        ProgressDrawTarget::hidden()
    };
    let bar = ProgressBar::with_draw_target(Some(total), target);
    bar.set_style(
        ProgressStyle::with_template("[{pos}/{len}] {bar:24} {elapsed_precise} {msg}")
            .expect("valid template"),
    );
    bar
}

/// A line on stderr, above `bar` when it is drawn; nothing with `-q`.
fn line(bar: &ProgressBar, text: String) {
    if crate::logs::quiet() {
        return;
    }
    if bar.is_hidden() {
        eprintln!("{text}");
    } else {
        bar.println(text);
    }
}
