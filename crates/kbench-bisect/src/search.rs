//! The search and its confirmation (steps 2 and 3 of a bisection), and
//! the rechecks that mend a search noise misled.
//!
//! A binary search trusts every step: one wrong call (a culprit called
//! like-good through a slow spell) ends it a commit or more off, and the
//! confirmation then fails. So a failed confirmation is not the end. The
//! culprit and the parent it was confirmed against are measured again in
//! fresh blocks with both endpoints: a parent that now reads like-bad
//! becomes the bad commit to search below; a culprit that now reads
//! like-good hands over to the nearest commit above it called like-bad. The search goes on in
//! the new bracket and confirms again, up to [`MAX_RECHECKS`] times. When
//! both ends stand, the change is spread over commits (or too small for
//! the blocks), and the report says it was not confirmed.

use super::Session;
use super::bench::Workbench;
use super::error::{Result, invalid};
use super::git::Commit;
use super::progress::Progress;
use kbench_analysis::bisect::{Phase, change_text};
use kbench_stats::bisection::{BlockedChange, Confirmation, DecidedBy, State, classify, confirm};
use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;

/// Failed confirmations a bisection recovers from before it reports one.
pub(super) const MAX_RECHECKS: usize = 2;

/// What the search found: the culprit and how it got there.
pub(super) struct Found {
    /// Indexes into the plan's commits: the good commit the culprit was
    /// confirmed against, and the first like-bad commit.
    pub lo: usize,
    pub hi: usize,
    /// The commits the change may be in: the culprit, and those skipped
    /// that the search could not rule out.
    pub candidates: Vec<usize>,
    pub confirmation: Confirmation,
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
        let mut rechecks = Vec::new();
        // Failed confirmations so far.
        let mut failed = 0;
        let mut hi = last;
        loop {
            let candidates;
            (hi, candidates) = self.search(bench, reference, hi, &mut decided, observer, stop)?;
            let lo = self.plan.graph.parent(hi, &decided, |c| self.is_skipped(c));
            let confirmation = self.confirm_bracket(bench, reference, lo, hi, observer, stop)?;
            // Which end was called wrong, if either: the bad commit to
            // search below again.
            let mut turned = None;
            if !confirmation.confirmed && failed < MAX_RECHECKS {
                failed += 1;
                // Both ends in doubt: the range between the decisions
                // around them.
                let mut without = decided.clone();
                without.remove(&lo);
                without.remove(&hi);
                let above = self.plan.graph.bad_after_recheck(&without, hi);
                self.range_left = self.describe_range(&self.plan.graph.candidates(above, &without));
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
                        observer,
                        stop,
                    )?
                    else {
                        continue;
                    };
                    rechecks.push(format!("{}: {state}", commit.short()));
                    decided.insert(end, state);
                    if state == wrong {
                        turned = Some(self.plan.graph.bad_after_recheck(&decided, end));
                        break;
                    }
                }
            }
            match turned {
                Some(bad) => hi = bad,
                None => {
                    return Ok(Found {
                        lo,
                        hi,
                        candidates,
                        confirmation,
                        rechecks,
                    });
                }
            }
        }
    }

    fn is_skipped(&self, commit: usize) -> bool {
        self.state
            .skipped
            .contains_key(&self.plan.commits[commit].hash)
    }

    /// Bisects the ancestors of the bad commit `hi` (module doc of
    /// [`super::graph`]) with three states, in blocks of (good, bad,
    /// commit); commits that fail are skipped. The first bad commit found,
    /// with the candidates left.
    #[allow(clippy::too_many_arguments)]
    fn search(
        &mut self,
        bench: &mut dyn Workbench,
        reference: &BlockedChange,
        mut hi: usize,
        decided: &mut BTreeMap<usize, State>,
        observer: &mut dyn FnMut(Progress<'_>),
        stop: &AtomicBool,
    ) -> Result<(usize, Vec<usize>)> {
        loop {
            let candidates = self.plan.graph.candidates(hi, decided);
            let open = |c: usize| !self.is_skipped(c) && !decided.contains_key(&c);
            let Some(mid) = self.plan.graph.midpoint(&candidates, hi, open) else {
                return Ok((hi, candidates));
            };
            let untested = candidates.iter().filter(|&&c| open(c)).count();
            self.range_left = self.describe_range(&candidates);
            let commit = self.plan.commits[mid].clone();
            observer(Progress::Testing {
                commit: &commit.identifier(),
                tested: decided.len(),
                left: (untested + 1).next_power_of_two().trailing_zeros() as usize,
            });
            let phase = Phase::Search;
            let Some(state) =
                self.classify_commit(bench, &commit, phase, reference, observer, stop)?
            else {
                continue;
            };
            decided.insert(mid, state);
            if state == State::LikeBad {
                hi = mid;
            }
        }
    }

    /// "the 5 commits from 0123456789ab (after 89abcdef0123) to
    /// 456789abcdef": where the first bad commit is, for a bisection that
    /// stops undecided.
    fn describe_range(&self, candidates: &[usize]) -> String {
        let (Some(&first), Some(&last)) = (candidates.first(), candidates.last()) else {
            return "no commit".to_string();
        };
        let short = |i: usize| self.plan.commits[i].short().to_string();
        let below = self.plan.commits[first]
            .parents
            .first()
            .map(|p| format!(" (git log {}..{})", &p[..12.min(p.len())], short(last)))
            .unwrap_or_default();
        format!(
            "the {} commits from {} to {}{below}",
            candidates.len(),
            short(first),
            short(last)
        )
    }

    /// Classifies `commit` in blocks with good and bad, doubling the blocks
    /// until decided; `None` when it fails to build or run (it is then
    /// skipped). Undecided at `--max-blocks`, the bisection stops and
    /// names the range left: it does not guess.
    fn classify_commit(
        &mut self,
        bench: &mut dyn Workbench,
        commit: &Commit,
        phase: Phase,
        reference: &BlockedChange,
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
            if class.decided_by == Some(DecidedBy::Estimate) {
                entry.event = format!("undecided at the cap of {} blocks", blocks.len());
                entry.detail = detail.clone();
                self.log(entry, observer)?;
                invalid!(
                    "could not tell whether {} is like good or like bad within --max-blocks {} \
                     ({detail}); kbench does not guess, so the bisection stops here. The first \
                     bad commit is among {}. Run the same command with a larger --max-blocks to \
                     go on from here, or measure with less noise",
                    commit.identifier(),
                    options.max_blocks,
                    self.range_left
                );
            }
            entry.event = class.state.to_string();
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
