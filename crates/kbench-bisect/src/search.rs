//! The search and its confirmation (steps 2 and 3 of a bisection), and
//! the rechecks that mend a search noise misled.
//!
//! A binary search trusts every step: one wrong call (a culprit called
//! like-good through a slow spell) ends it a commit or more off, and the
//! confirmation then fails. So a failed confirmation is not the end. The
//! bracket's ends are measured again in fresh blocks with both endpoints:
//! a parent that now reads like-bad moves the bracket back to the last
//! commit called like-good before it; a culprit that now reads like-good
//! moves it on to the next commit called like-bad. The search goes on in
//! the new bracket and confirms again, up to [`MAX_RECHECKS`] times. When
//! both ends stand, the change is spread over commits (or too small for
//! the blocks), and the report says it was not confirmed.

use super::Session;
use super::bench::Workbench;
use super::error::{Result, invalid};
use super::git::Commit;
use super::progress::Progress;
use kbench_analysis::bisect::{CommitRef, Phase, change_text};
use kbench_stats::bisection::{BlockedChange, Confirmation, DecidedBy, State, classify, confirm};
use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;

/// Failed confirmations a bisection recovers from before it reports one.
pub(super) const MAX_RECHECKS: usize = 2;

/// What the search found: the culprit bracket and how it got there.
pub(super) struct Found {
    /// Indexes into the plan's commits: the last like-good and the first
    /// like-bad commit.
    pub lo: usize,
    pub hi: usize,
    pub confirmation: Confirmation,
    /// Commits called by the estimate at the block cap.
    pub undecided: Vec<CommitRef>,
    /// The rechecks done, as "commit: state" for the report's notes.
    pub rechecks: Vec<String>,
}

impl Session<'_> {
    /// Searches the commits between good and bad, confirms, and rechecks
    /// a failed confirmation (module doc). `reference` is the endpoints'
    /// change.
    pub(super) fn search_and_confirm(
        &mut self,
        bench: &mut dyn Workbench,
        reference: &BlockedChange,
        observer: &mut dyn FnMut(Progress<'_>),
        stop: &AtomicBool,
    ) -> Result<Found> {
        let last = self.plan.commits.len() - 1;
        let mut decided: BTreeMap<usize, State> = BTreeMap::from([(0, State::LikeGood)]);
        decided.insert(last, State::LikeBad);
        let mut undecided = Vec::new();
        let mut rechecks = Vec::new();
        // Failed confirmations so far.
        let mut failed = 0;
        let (mut lo, mut hi) = (0, last);
        loop {
            (lo, hi) = self.search(
                bench,
                reference,
                (lo, hi),
                &mut decided,
                &mut undecided,
                observer,
                stop,
            )?;
            let confirmation = self.confirm_bracket(bench, reference, lo, hi, observer, stop)?;
            // Which end of the bracket was called wrong, if either: the
            // bracket around it.
            let mut turned = None;
            if !confirmation.confirmed && failed < MAX_RECHECKS {
                failed += 1;
                for (end, wrong) in [(lo, State::LikeBad), (hi, State::LikeGood)] {
                    if end == 0 || end == last {
                        continue;
                    }
                    let commit = self.plan.commits[end].clone();
                    let Some(state) = self.classify_commit(
                        bench,
                        &commit,
                        Phase::Recheck,
                        reference,
                        &mut undecided,
                        observer,
                        stop,
                    )?
                    else {
                        continue;
                    };
                    rechecks.push(format!("{}: {state}", commit.short()));
                    decided.insert(end, state);
                    if state == wrong {
                        turned = Some(bracket(&decided, end));
                        break;
                    }
                }
            }
            match turned {
                Some(bracket) => (lo, hi) = bracket,
                None => {
                    return Ok(Found {
                        lo,
                        hi,
                        confirmation,
                        undecided,
                        rechecks,
                    });
                }
            }
        }
    }

    /// Binary search with three states in `(lo, hi)`, in blocks of (good,
    /// bad, commit); commits that fail are skipped. The final bracket.
    #[allow(clippy::too_many_arguments)]
    fn search(
        &mut self,
        bench: &mut dyn Workbench,
        reference: &BlockedChange,
        (mut lo, mut hi): (usize, usize),
        decided: &mut BTreeMap<usize, State>,
        undecided: &mut Vec<CommitRef>,
        observer: &mut dyn FnMut(Progress<'_>),
        stop: &AtomicBool,
    ) -> Result<(usize, usize)> {
        loop {
            let open: Vec<usize> = (lo + 1..hi)
                .filter(|i| !self.state.skipped.contains_key(&self.plan.commits[*i].hash))
                .collect();
            let Some(&mid) = open.iter().min_by_key(|&&i| (2 * i).abs_diff(lo + hi)) else {
                return Ok((lo, hi));
            };
            let commit = self.plan.commits[mid].clone();
            observer(Progress::Testing {
                commit: &commit.identifier(),
                tested: decided.len(),
                left: (open.len() + 1).next_power_of_two().trailing_zeros() as usize,
            });
            let phase = Phase::Search;
            let Some(state) =
                self.classify_commit(bench, &commit, phase, reference, undecided, observer, stop)?
            else {
                continue;
            };
            decided.insert(mid, state);
            match state {
                State::LikeBad => hi = mid,
                _ => lo = mid,
            }
        }
    }

    /// Classifies `commit` in blocks with good and bad, doubling the blocks
    /// until decided; `None` when it fails to build or run (it is then
    /// skipped).
    #[allow(clippy::too_many_arguments)]
    fn classify_commit(
        &mut self,
        bench: &mut dyn Workbench,
        commit: &Commit,
        phase: Phase,
        reference: &BlockedChange,
        undecided: &mut Vec<CommitRef>,
        observer: &mut dyn FnMut(Progress<'_>),
        stop: &AtomicBool,
    ) -> Result<Option<State>> {
        let (good, bad) = (self.good().clone(), self.bad().clone());
        let options = self.request.options;
        let reference_shift = reference.ratio.point.ln();
        let mut blocks: Vec<[f64; 3]> = Vec::new();
        let mut target = options.initial_blocks;
        loop {
            observer(Progress::Step(&format!(
                "measuring {}: blocks {} to {target} with good and bad",
                commit.identifier(),
                blocks.len() + 1
            )));
            while blocks.len() < target {
                match self.block(bench, &[&good, &bad, commit], observer, stop)? {
                    Ok(logs) => blocks.push([logs[0], logs[1], logs[2]]),
                    Err((2, failure)) => {
                        self.end_runs(kbench_store::RunStatus::Complete)?;
                        let reason = failure.describe(&self.request.metric);
                        self.state
                            .skipped
                            .insert(commit.hash.clone(), reason.clone());
                        let entry = self.entry(phase, commit, None, "skipped", reason);
                        self.log(entry, observer)?;
                        return Ok(None);
                    }
                    Err((i, failure)) => invalid!(
                        "re-measuring the {} commit {} with {}: it {}",
                        if i == 0 { "good" } else { "bad" },
                        if i == 0 { &good } else { &bad }.identifier(),
                        commit.short(),
                        failure.describe(&self.request.metric)
                    ),
                }
            }
            self.end_runs(kbench_store::RunStatus::Complete)?;
            let class = classify(&blocks, reference_shift, &options);
            let pct = |x: f64| 100.0 * x.exp_m1();
            let detail = format!(
                "position {:.2} [{:.2}, {:.2}] (0 = good, 1 = bad); per block {:+.2} % \
                 [{:+.2}, {:+.2}] from half-way, p = {:.2e}; {:+.2} % against good",
                class.position.point,
                class.position.low,
                class.position.high,
                pct(class.toward_bad.point),
                pct(class.toward_bad.ci_low),
                pct(class.toward_bad.ci_high),
                class.p_value,
                class.vs_good_pct.point
            );
            let mut entry = self.entry(phase, commit, Some(blocks.len()), "", String::new());
            entry.position = Some(class.position);
            entry.change_pct = Some(class.vs_good_pct);
            if let Some(more) = class.more_blocks {
                entry.event = "unknown: more blocks".to_string();
                entry.state = Some(State::Unknown);
                entry.detail = format!("{detail}; measuring up to {more} blocks");
                self.log(entry, observer)?;
                target = more;
                continue;
            }
            entry.state = Some(class.state);
            entry.decided_by = class.decided_by;
            entry.event = match class.decided_by {
                Some(DecidedBy::Estimate) => {
                    undecided.push(CommitRef::from(commit));
                    format!(
                        "could not tell at the cap of {} blocks: called {} by the estimate",
                        blocks.len(),
                        class.state
                    )
                }
                _ => class.state.to_string(),
            };
            entry.detail = detail;
            self.log(entry, observer)?;
            return Ok(Some(class.state));
        }
    }

    /// Confirms in fresh blocks of the culprit (`hi`) and its last good
    /// ancestor (`lo`).
    fn confirm_bracket(
        &mut self,
        bench: &mut dyn Workbench,
        reference: &BlockedChange,
        lo: usize,
        hi: usize,
        observer: &mut dyn FnMut(Progress<'_>),
        stop: &AtomicBool,
    ) -> Result<Confirmation> {
        let (parent, culprit) = (self.plan.commits[lo].clone(), self.plan.commits[hi].clone());
        let options = self.request.options;
        let mut pairs: Vec<[f64; 2]> = Vec::new();
        let mut target = options.initial_blocks;
        loop {
            observer(Progress::Step(&format!(
                "confirming: blocks {} to {target} of {} and {}",
                pairs.len() + 1,
                parent.short(),
                culprit.short()
            )));
            while pairs.len() < target {
                match self.block(bench, &[&parent, &culprit], observer, stop)? {
                    Ok(logs) => pairs.push([logs[0], logs[1]]),
                    Err((i, failure)) => invalid!(
                        "re-measuring {} to confirm: it {}",
                        if i == 0 { &parent } else { &culprit }.identifier(),
                        failure.describe(&self.request.metric)
                    ),
                }
            }
            self.end_runs(kbench_store::RunStatus::Complete)?;
            let result = confirm(&pairs, self.request.better, reference.verdict, &options);
            let event = match (result.confirmed, result.more_blocks) {
                (true, _) => format!("confirmed: {}", result.change.verdict),
                (false, Some(_)) => "unclear: more blocks".to_string(),
                (false, None) => format!("NOT confirmed: {}", result.change.verdict),
            };
            let mut entry = self.entry(
                Phase::Confirm,
                &culprit,
                Some(pairs.len()),
                &event,
                change_text(&result.change, &format!("against {}", parent.short())),
            );
            entry.change_pct = Some(result.change.change_pct);
            self.log(entry, observer)?;
            match result.more_blocks {
                Some(more) => target = more,
                None => return Ok(result),
            }
        }
    }
}

/// The bracket around `end` after a recheck turned it: the last commit
/// called like-good before the first one called like-bad, from `decided`
/// (which always holds good, like-good, and bad, like-bad).
fn bracket(decided: &BTreeMap<usize, State>, end: usize) -> (usize, usize) {
    let is = |state: State| move |(i, s): (&usize, &State)| (*s == state).then_some(*i);
    let hi = if decided[&end] == State::LikeBad {
        end
    } else {
        decided
            .range(end..)
            .find_map(is(State::LikeBad))
            .unwrap_or(end)
    };
    let lo = decided
        .range(..hi)
        .rev()
        .find_map(is(State::LikeGood))
        .unwrap_or(0);
    (lo, hi)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_parent_turned_like_bad_reopens_the_bracket_below_it() {
        // Searched 0 good, 16 good, 24 bad, 20 good, 22 bad, 21 good: the
        // bracket (21, 22). The recheck finds 21 like-bad.
        let mut decided = BTreeMap::from([
            (0, State::LikeGood),
            (16, State::LikeGood),
            (20, State::LikeGood),
            (21, State::LikeBad),
            (22, State::LikeBad),
            (24, State::LikeBad),
            (32, State::LikeBad),
        ]);
        assert_eq!(bracket(&decided, 21), (20, 21));
        // 20 turned too: back to 16.
        decided.insert(20, State::LikeBad);
        assert_eq!(bracket(&decided, 20), (16, 20));
    }

    #[test]
    fn a_culprit_turned_like_good_reopens_the_bracket_above_it() {
        let decided = BTreeMap::from([
            (0, State::LikeGood),
            (16, State::LikeGood),
            (20, State::LikeGood),
            (22, State::LikeGood),
            (24, State::LikeBad),
            (32, State::LikeBad),
        ]);
        assert_eq!(bracket(&decided, 22), (22, 24));
    }
}
