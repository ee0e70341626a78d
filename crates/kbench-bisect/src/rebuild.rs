//! The A/A rebuild: builds vary too. A commit that changes nothing a
//! benchmark runs can still move it by a few percent, by shifting where
//! functions fall against cache lines. So before the search, good is
//! built a second time from scratch (where the workbench builds kernels
//! itself) and measured in blocks against its first build. The report
//! gives that change with its CI, and whether the two images are
//! byte-identical (then the A/A shows what boots alone move).
//!
//! The rebuild's samples are stored like any commit's, under good's hash
//! and "A/A rebuild of: <subject>", so a rerun reads them back.

use super::Session;
use super::bench::Workbench;
use super::error::{Result, invalid};
use super::git::Commit;
use super::progress::Progress;
use kbench_analysis::bisect::{Phase, RebuildCheck, change_text};
use kbench_stats::bisection::blocked_change;
use kbench_store::RunStatus;
use std::sync::atomic::AtomicBool;

/// The rebuild of `commit` as a commit of its own.
pub(super) fn twin(commit: &Commit) -> Commit {
    Commit {
        hash: format!("{}-rebuild", commit.hash),
        subject: format!("A/A rebuild of: {}", commit.subject),
        parents: vec![],
    }
}

impl Session<'_> {
    /// Rebuilds good and measures it against its first build in the
    /// starting count of blocks; `None` when not asked for or the
    /// workbench cannot rebuild.
    pub(super) fn rebuild_check(
        &mut self,
        bench: &mut dyn Workbench,
        observer: &mut dyn FnMut(Progress<'_>),
        stop: &AtomicBool,
    ) -> Result<Option<RebuildCheck>> {
        if !self.request.rebuild {
            return Ok(None);
        }
        let good = self.good().clone();
        let twin = twin(&good);
        let blocks = self.request.options.initial_blocks;
        let identical = match self.state.rebuild_identical {
            Some(identical) if self.count(&twin) >= blocks => identical,
            _ => {
                observer(Progress::Step(&format!(
                    "A/A: building good ({}) again, from scratch, to measure what a rebuild \
                     alone moves",
                    good.short()
                )));
                let started = std::time::Instant::now();
                let rebuilt = bench.rebuild(&good, &twin, observer)?;
                self.costs.builds_s.push(started.elapsed().as_secs_f64());
                match rebuilt {
                    None => return Ok(None),
                    Some(Err(reason)) => invalid!(
                        "the A/A rebuild of good {} failed, though its first build did: \
                         {reason}",
                        good.identifier()
                    ),
                    Some(Ok(identical)) => {
                        self.builds_now += 1;
                        self.state.rebuild_identical = Some(identical);
                        identical
                    }
                }
            }
        };
        self.built = None;
        let mut pairs: Vec<[f64; 2]> = Vec::new();
        while pairs.len() < blocks {
            match self.block(bench, &[&good, &twin], observer, stop)? {
                Ok(logs) => pairs.push([logs[0], logs[1]]),
                Err((_, failure)) => invalid!(
                    "measuring the A/A rebuild of good {}: it {}",
                    good.identifier(),
                    failure.describe(&self.request.metric)
                ),
            }
        }
        self.end_runs(RunStatus::Complete)?;
        let change = blocked_change(&pairs, self.request.better, &self.request.options);
        let images = if identical {
            "byte-identical images"
        } else {
            "the images differ"
        };
        let mut entry = self.entry(
            Phase::Rebuild,
            &twin,
            Some(pairs.len()),
            &format!("A/A, {images}: {}", change.verdict),
            change_text(&change, "against the first build"),
        );
        entry.change_pct = Some(change.change_pct);
        self.log(entry, observer)?;
        Ok(Some(RebuildCheck { identical, change }))
    }
}
