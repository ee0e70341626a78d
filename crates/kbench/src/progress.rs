//! The run's progress on stderr: an indicatif bar on a terminal (test k of
//! n, the current test, samples so far and the CI reached), and one line per
//! finished test, which also reaches logs when stderr is not a terminal;
//! nothing with `-q`.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use kbench_measure::runner::RunEvent;
use kbench_store::TestOutcomeKind;
use std::io::IsTerminal;

pub struct Progress {
    bar: ProgressBar,
    done: u64,
    total: u64,
}

impl Progress {
    pub fn new(total: usize) -> Progress {
        let target = if std::io::stderr().is_terminal() && !crate::logs::quiet() {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        };
        let bar = ProgressBar::with_draw_target(Some(total as u64), target);
        bar.set_style(
            ProgressStyle::with_template("[{pos}/{len}] {bar:24} {elapsed_precise} {msg}")
                .expect("valid template"),
        );
        Progress {
            bar,
            done: 0,
            total: total as u64,
        }
    }

    pub fn observe(&mut self, event: RunEvent) {
        match event {
            RunEvent::RoundStarted {
                round,
                rounds,
                resumed,
            } => {
                if rounds > 1 || resumed {
                    let resumed = if resumed {
                        " (resuming an unfinished run)"
                    } else {
                        ""
                    };
                    self.line(format!("round {} of {rounds}{resumed}", round + 1));
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
                let how = match outcome.kind {
                    TestOutcomeKind::TargetMet => format!("done ({})", outcome.detail),
                    TestOutcomeKind::BudgetHit => {
                        format!("done, CI target missed ({})", outcome.detail)
                    }
                    TestOutcomeKind::Skipped => format!("SKIPPED: {}", outcome.detail),
                    TestOutcomeKind::Failed => format!("FAILED: {}", outcome.detail),
                };
                self.line(format!(
                    "[{}/{}] {}: {how}",
                    self.done, self.total, outcome.test
                ));
            }
        }
    }

    fn line(&self, text: String) {
        if crate::logs::quiet() {
            return;
        }
        if self.bar.is_hidden() {
            eprintln!("{text}");
        } else {
            self.bar.println(text);
        }
    }

    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
