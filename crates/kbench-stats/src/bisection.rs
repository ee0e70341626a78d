//! The decisions of an automatic bisection (docs/statistics.md, "How `kbench bisect`
//! decision"), for one metric, on blocked measurements. No I/O: the driver
//! (kbench-bisect) measures, these functions say what the blocks mean
//! and whether more are needed.
//!
//! The machine a bisection runs on drifts, and may run in a slow mode in
//! spells of 10-20 s (+9..16 % here). So commits are never compared across
//! time: the driver measures them in short *blocks*, each block one fresh
//! measurement of every commit involved (in a random order), and every
//! decision is the paired analysis of per-block log ratios
//! ([`crate::paired::hodges_lehmann`]: the Hodges-Lehmann shift with its
//! Wilcoxon signed-rank CI and p). Drift and spells that cover a block
//! cancel in its ratio; a block a spell only partly covers is an outlier,
//! which the robust shift barely feels. A block's value for a commit is
//! the log of the mean of that measurement's samples.
//!
//! 1. [`check_endpoints`]: blocks of (good, bad). The shift of ln(bad /
//!    good) must be a REGRESSION or an IMPROVEMENT: significant and its CI
//!    wholly beyond the threshold. INCONCLUSIVE asks for twice the blocks
//!    up to the cap; NO CHANGE (the CI within the threshold), or
//!    INCONCLUSIVE at the cap, stops the bisection.
//! 2. [`classify`]: blocks of (good, bad, commit). Per block
//!    d = ln(c / good) - ln(bad / good) / 2: its sign says which endpoint
//!    the commit is nearer in that block. LIKE-BAD when the CI of the shift
//!    of d lies wholly on bad's side of 0, LIKE-GOOD when wholly on good's,
//!    UNKNOWN otherwise (twice the blocks, up to the cap). At the cap the
//!    commit is still called, by the sign of the estimate, and the decision
//!    says so: the search must go on, the driver notes it, and the
//!    confirmation checks the result.
//! 3. [`confirm`]: fresh blocks of (parent, culprit) must show the
//!    endpoints' verdict again (the search chose this pair, so its own
//!    blocks are biased towards a difference). INCONCLUSIVE asks for more
//!    blocks, doubling up to the cap.
//!
//! Blocks are added in doubling batches, so each decision looks at the data
//! a handful of times (initial, 2x, 4x, ... up to the cap), not after every
//! block.
//!
//! Commits that fail to build or boot are skipped by the driver (git bisect
//! skip semantics): they are never called good or bad.

use kbench_model::Direction;
use serde::{Deserialize, Serialize};

use crate::Estimate;
use crate::compare::Verdict;
use crate::paired::hodges_lehmann;

/// What every [`BlockedChange`] says it used.
pub const ANALYSIS: &str = "blocked: Hodges-Lehmann shift of per-block log ratios, \
                            Wilcoxon signed-rank CI and p";

/// Knobs of the decisions.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BisectionOptions {
    /// Practical threshold of the endpoint and confirmation verdicts, as a
    /// fraction (0.01 = 1 %).
    pub threshold: f64,
    /// 1 - confidence level of every interval; significance of the verdicts.
    pub alpha: f64,
    /// Blocks per decision to start with (6 is the fewest for which the
    /// signed-rank CI can exclude 0 at 95 %).
    pub initial_blocks: usize,
    /// The cap of the doubling.
    pub max_blocks: usize,
}

impl Default for BisectionOptions {
    fn default() -> BisectionOptions {
        BisectionOptions {
            threshold: 0.01,
            alpha: 0.05,
            initial_blocks: 8,
            max_blocks: 128,
        }
    }
}

impl BisectionOptions {
    /// Twice `have`, at least the initial count, at most the cap; `None` at
    /// the cap.
    pub fn doubled(&self, have: usize) -> Option<usize> {
        let want = (have * 2).max(self.initial_blocks).min(self.max_blocks);
        (want > have).then_some(want)
    }
}

/// The paired change of `current` against `baseline` over blocks.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BlockedChange {
    /// Which analysis: [`ANALYSIS`].
    pub analysis: &'static str,
    pub better: Direction,
    /// Blocks used.
    pub blocks: usize,
    /// current / baseline: exp of the shift of the block log ratios.
    pub ratio: Estimate,
    /// The same in percent: 100 (ratio - 1).
    pub change_pct: Estimate,
    /// Two-sided signed-rank p of the shift.
    pub p_value: f64,
    /// As `compare`'s: REGRESSION or IMPROVEMENT when significant and the
    /// CI lies wholly beyond the threshold, NO CHANGE when wholly within.
    pub verdict: Verdict,
}

/// The shift of `diffs` at the options' level; with fewer than two blocks
/// (nothing to rank) an unbounded estimate with p = 1.
fn shift(diffs: &[f64], options: &BisectionOptions) -> (Estimate, f64) {
    match hodges_lehmann(diffs, 1.0 - options.alpha) {
        Some(s) => (s.shift, s.p_value),
        None => (
            Estimate {
                point: diffs.first().copied().unwrap_or(0.0),
                ci_low: f64::NEG_INFINITY,
                ci_high: f64::INFINITY,
                n: diffs.len(),
            },
            1.0,
        ),
    }
}

/// The blocked change of `[baseline, current]` log values per block.
pub fn blocked_change(
    blocks: &[[f64; 2]],
    better: Direction,
    options: &BisectionOptions,
) -> BlockedChange {
    let diffs: Vec<f64> = blocks.iter().map(|[base, cur]| cur - base).collect();
    let (log_shift, p_value) = shift(&diffs, options);
    let ratio = Estimate {
        point: log_shift.point.exp(),
        ci_low: log_shift.ci_low.exp(),
        ci_high: log_shift.ci_high.exp(),
        n: log_shift.n,
    };
    let change_pct = Estimate {
        point: 100.0 * (ratio.point - 1.0),
        ci_low: 100.0 * (ratio.ci_low - 1.0),
        ci_high: 100.0 * (ratio.ci_high - 1.0),
        n: ratio.n,
    };
    BlockedChange {
        analysis: ANALYSIS,
        better,
        blocks: blocks.len(),
        verdict: verdict(&diffs, &ratio, p_value, better, options),
        ratio,
        change_pct,
        p_value,
    }
}

/// `compare`'s verdict rule on a ratio's CI (docs/statistics.md, "A/B verdict
/// per metric"), with the signed-rank p in place of the q-value; CANNOT
/// DECIDE when the blocks have no spread (as `compare` for a side without).
fn verdict(
    diffs: &[f64],
    ratio: &Estimate,
    p_value: f64,
    better: Direction,
    options: &BisectionOptions,
) -> Verdict {
    if diffs.windows(2).all(|w| w[0] == w[1]) {
        return Verdict::CannotDecide;
    }
    crate::compare::decide(ratio, p_value, better, options.alpha, options.threshold)
}

/// What the endpoints say.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum EndpointCheck {
    /// They differ: `change` is bad against good, its verdict REGRESSION
    /// or IMPROVEMENT.
    Differ { change: BlockedChange },
    /// Not decided yet: measure up to `blocks` blocks.
    MoreBlocks {
        blocks: usize,
        change: BlockedChange,
    },
    /// They do not differ (NO CHANGE, or INCONCLUSIVE or CANNOT DECIDE at
    /// the cap).
    DoNotDiffer { change: BlockedChange },
}

/// Checks blocks of `[good, bad]` log values.
pub fn check_endpoints(
    blocks: &[[f64; 2]],
    better: Direction,
    options: &BisectionOptions,
) -> EndpointCheck {
    let change = blocked_change(blocks, better, options);
    match change.verdict {
        Verdict::Regression | Verdict::Improvement => EndpointCheck::Differ { change },
        Verdict::Inconclusive | Verdict::CannotDecide => match options.doubled(blocks.len()) {
            Some(blocks) => EndpointCheck::MoreBlocks { blocks, change },
            None => EndpointCheck::DoNotDiffer { change },
        },
        Verdict::NoChange => EndpointCheck::DoNotDiffer { change },
    }
}

/// Where a commit stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum State {
    LikeGood,
    LikeBad,
    Unknown,
}

impl std::fmt::Display for State {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            State::LikeGood => "like-good",
            State::LikeBad => "like-bad",
            State::Unknown => "unknown",
        })
    }
}

/// How a commit was called.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DecidedBy {
    /// The CI of its shift towards bad excluded 0.
    Tests,
    /// Could not tell at the block cap: called by the sign of the
    /// estimate, which may be wrong.
    Estimate,
}

/// A 95 % interval of a commit's position between good (0) and bad (1).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Position {
    pub point: f64,
    pub low: f64,
    pub high: f64,
}

/// The classification of one commit.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Classification {
    /// LIKE-GOOD or LIKE-BAD once decided; UNKNOWN while `more_blocks`
    /// asks for more.
    pub state: State,
    /// `None` while undecided.
    pub decided_by: Option<DecidedBy>,
    /// 1/2 + shift(d) / reference, with its CI.
    pub position: Position,
    /// The shift of d = ln(c / good) - ln(bad / good) / 2, in log units.
    pub toward_bad: Estimate,
    /// Its signed-rank p.
    pub p_value: f64,
    /// The commit against good in these blocks (percent), for the log.
    pub vs_good_pct: Estimate,
    /// Measure up to this many blocks, then classify again.
    pub more_blocks: Option<usize>,
}

/// Classifies a commit from blocks of `[good, bad, commit]` log values;
/// `reference` is the endpoints' log shift ln(bad / good) (its sign says
/// which side is bad, its size scales the position). A zero reference
/// leaves every commit UNKNOWN until the cap.
pub fn classify(blocks: &[[f64; 3]], reference: f64, options: &BisectionOptions) -> Classification {
    let d: Vec<f64> = blocks
        .iter()
        .map(|[g, b, c]| (c - g) - (b - g) / 2.0)
        .collect();
    let (toward_bad, p_value) = shift(&d, options);
    let place = |x: f64| 0.5 + x / reference;
    let (a, b) = (place(toward_bad.ci_low), place(toward_bad.ci_high));
    let position = Position {
        point: place(toward_bad.point),
        low: a.min(b),
        high: a.max(b),
    };
    let tested = if position.low > 0.5 {
        State::LikeBad
    } else if position.high < 0.5 {
        State::LikeGood
    } else {
        State::Unknown
    };
    let pairs: Vec<[f64; 2]> = blocks.iter().map(|[g, _, c]| [*g, *c]).collect();
    let vs_good_pct = blocked_change(&pairs, Direction::Lower, options).change_pct;
    let mut classification = Classification {
        state: tested,
        decided_by: (tested != State::Unknown).then_some(DecidedBy::Tests),
        position,
        toward_bad,
        p_value,
        vs_good_pct,
        more_blocks: None,
    };
    if tested == State::Unknown {
        match options.doubled(blocks.len()) {
            Some(more) => classification.more_blocks = Some(more),
            None => {
                classification.state = if position.point > 0.5 {
                    State::LikeBad
                } else {
                    State::LikeGood
                };
                classification.decided_by = Some(DecidedBy::Estimate);
            }
        }
    }
    classification
}

/// What the fresh blocks of the culprit and its parent say.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Confirmation {
    /// The culprit against its parent.
    pub change: BlockedChange,
    /// The endpoints' verdict again. `false` with `more_blocks` `None`:
    /// not confirmed at the cap.
    pub confirmed: bool,
    /// Measure up to this many blocks, then confirm again.
    pub more_blocks: Option<usize>,
}

/// Confirms from blocks of `[parent, culprit]` log values; `expected` is
/// the endpoints' verdict.
pub fn confirm(
    blocks: &[[f64; 2]],
    better: Direction,
    expected: Verdict,
    options: &BisectionOptions,
) -> Confirmation {
    let change = blocked_change(blocks, better, options);
    let confirmed = change.verdict == expected;
    let undecided = matches!(
        change.verdict,
        Verdict::Inconclusive | Verdict::CannotDecide
    );
    let more_blocks = if !confirmed && undecided {
        options.doubled(blocks.len())
    } else {
        None
    };
    Confirmation {
        change,
        confirmed,
        more_blocks,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SplitMix64 normals (Box-Muller), seeded: synthetic block data.
    struct Noise(u64);

    impl Noise {
        fn uniform(&mut self) -> f64 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            (((z ^ (z >> 31)) >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        }

        fn normal(&mut self) -> f64 {
            let (u, v) = (self.uniform(), self.uniform());
            (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
        }
    }

    /// `n` blocks of (good, bad, commit) log values: levels 100, `bad` and
    /// `commit`, each measurement with `sd` relative noise, every block
    /// drifting by a common +-5 %.
    fn blocks(n: usize, bad: f64, commit: f64, sd: f64, seed: u64) -> Vec<[f64; 3]> {
        let mut noise = Noise(seed);
        (0..n)
            .map(|_| {
                let drift = 0.05 * noise.normal();
                let mut one = |level: f64| level.ln() + drift + sd * noise.normal();
                [one(100.0), one(bad), one(commit)]
            })
            .collect()
    }

    fn endpoints(blocks: &[[f64; 3]]) -> Vec<[f64; 2]> {
        blocks.iter().map(|[g, b, _]| [*g, *b]).collect()
    }

    fn options() -> BisectionOptions {
        BisectionOptions::default()
    }

    #[test]
    fn doubling_stops_at_the_cap() {
        let o = BisectionOptions {
            initial_blocks: 5,
            max_blocks: 24,
            ..options()
        };
        assert_eq!(o.doubled(0), Some(5));
        assert_eq!(o.doubled(5), Some(10));
        assert_eq!(o.doubled(20), Some(24));
        assert_eq!(o.doubled(24), None);
    }

    #[test]
    fn endpoints_3_pct_apart_differ_despite_drift_between_blocks() {
        // 5 % drift between blocks, 1 % within: unpaired, the drift would
        // swamp a 3 % step; paired, it cancels.
        let b = blocks(16, 103.0, 100.0, 0.01, 1);
        let check = check_endpoints(&endpoints(&b), Direction::Lower, &options());
        let EndpointCheck::Differ { change } = check else {
            panic!("{check:?}")
        };
        assert_eq!(change.verdict, Verdict::Regression);
        assert_eq!(change.analysis, ANALYSIS);
        assert_eq!(change.blocks, 16);
        assert!(
            change.change_pct.ci_low > 1.0 && change.change_pct.ci_high < 5.0,
            "{change:?}"
        );
        // Larger is better: bad above good is an improvement.
        let check = check_endpoints(&endpoints(&b), Direction::Higher, &options());
        assert!(
            matches!(check, EndpointCheck::Differ { change } if change.verdict == Verdict::Improvement)
        );
    }

    #[test]
    fn equal_endpoints_do_not_differ_and_unclear_ones_ask_for_more() {
        let same = blocks(32, 100.0, 100.0, 0.002, 2);
        let check = check_endpoints(&endpoints(&same), Direction::Lower, &options());
        assert!(
            matches!(&check, EndpointCheck::DoNotDiffer { change } if change.verdict == Verdict::NoChange),
            "{check:?}"
        );
        // Identical values: no spread, no test (more blocks, then give up).
        let flat = vec![[1.0, 1.0]; 8];
        let check = check_endpoints(&flat, Direction::Lower, &options());
        assert!(
            matches!(&check, EndpointCheck::MoreBlocks { change, .. } if change.verdict == Verdict::CannotDecide),
            "{check:?}"
        );
        let capped = BisectionOptions {
            max_blocks: 8,
            ..options()
        };
        let check = check_endpoints(&flat, Direction::Lower, &capped);
        assert!(
            matches!(&check, EndpointCheck::DoNotDiffer { change } if change.verdict == Verdict::CannotDecide),
            "{check:?}"
        );
        // 1.5 % apart at 3 % noise, 8 blocks: inconclusive, twice the blocks.
        let unclear = blocks(8, 101.5, 100.0, 0.03, 3);
        let check = check_endpoints(&endpoints(&unclear), Direction::Lower, &options());
        assert!(
            matches!(check, EndpointCheck::MoreBlocks { blocks: 16, .. }),
            "{check:?}"
        );
        let capped = BisectionOptions {
            max_blocks: 8,
            ..options()
        };
        let check = check_endpoints(&endpoints(&unclear), Direction::Lower, &capped);
        assert!(
            matches!(&check, EndpointCheck::DoNotDiffer { change } if change.verdict == Verdict::Inconclusive),
            "{check:?}"
        );
        // Five blocks or fewer cannot reach 95 %: never a verdict.
        let few = blocks(5, 110.0, 100.0, 0.001, 4);
        let check = check_endpoints(&endpoints(&few), Direction::Lower, &options());
        assert!(
            matches!(check, EndpointCheck::MoreBlocks { blocks: 10, .. }),
            "{check:?}"
        );
    }

    #[test]
    fn commits_at_either_end_of_a_3_pct_step_are_called() {
        let reference = 1.03f64.ln();
        for (seed, level, state) in [
            (10, 100.0, State::LikeGood),
            (11, 103.0, State::LikeBad),
            (12, 100.2, State::LikeGood),
            (13, 102.8, State::LikeBad),
        ] {
            let c = classify(&blocks(24, 103.0, level, 0.01, seed), reference, &options());
            assert_eq!(c.state, state, "{level}: {c:?}");
            assert_eq!(c.decided_by, Some(DecidedBy::Tests));
            assert_eq!(c.more_blocks, None);
        }
        // An improvement (bad lower than good) flips the sides.
        let c = classify(&blocks(24, 97.0, 97.0, 0.01, 14), 0.97f64.ln(), &options());
        assert_eq!(c.state, State::LikeBad, "{c:?}");
        assert!(c.position.low > 0.5, "{c:?}");
    }

    #[test]
    fn a_slow_spell_in_some_blocks_does_not_flip_the_decision() {
        // A like-good commit of a 3 % step. Blocks 4-8 run wholly in the
        // slow mode (+14 % for all three: cancels); in blocks 11 and 15 the
        // spell began mid-block, after good and bad: only the commit is
        // slow, which puts it 12.5 % "towards bad" in those blocks.
        let slow = 1.14f64.ln();
        let spell = |n: usize, partial: &[usize], seed: u64| {
            let mut b = blocks(n, 103.0, 100.0, 0.01, seed);
            for block in &mut b[4..=8] {
                block.iter_mut().for_each(|v| *v += slow);
            }
            for &i in partial {
                b[i][2] += slow;
            }
            b
        };
        let b = spell(16, &[11, 15], 21);
        let d: Vec<f64> = b.iter().map(|[g, x, c]| (c - g) - (x - g) / 2.0).collect();
        let mean = d.iter().sum::<f64>() / d.len() as f64;
        assert!(mean > 0.0, "the mean of d is pulled to bad's side: {mean}");
        // 16 blocks: not flipped, only not sure yet (2 outliers of 16
        // reach into the CI's upper 30 Walsh averages).
        let c = classify(&b, 1.03f64.ln(), &options());
        assert!(c.position.point < 0.5, "{c:?}");
        assert_eq!(c.state, State::Unknown, "{c:?}");
        assert_eq!(c.more_blocks, Some(32));
        // Twice the blocks, a third partial spell among them: decided.
        let c = classify(&spell(32, &[11, 15, 27], 21), 1.03f64.ln(), &options());
        assert_eq!(c.state, State::LikeGood, "{c:?}");
        assert_eq!(c.decided_by, Some(DecidedBy::Tests));
        // The same for a like-bad commit whose good was slow in two blocks.
        let mut b = blocks(32, 103.0, 103.0, 0.01, 22);
        for i in [2, 9, 20] {
            b[i][0] += slow;
        }
        let c = classify(&b, 1.03f64.ln(), &options());
        assert_eq!(c.state, State::LikeBad, "{c:?}");
    }

    #[test]
    fn half_way_is_unknown_then_called_by_the_estimate_at_the_cap() {
        let reference = 1.03f64.ln();
        let b = blocks(8, 103.0, 101.5, 0.01, 30);
        let c = classify(&b, reference, &options());
        assert_eq!(c.state, State::Unknown, "{c:?}");
        assert_eq!(c.decided_by, None);
        assert_eq!(c.more_blocks, Some(16));
        let capped = BisectionOptions {
            max_blocks: 8,
            ..options()
        };
        let c = classify(&b, reference, &capped);
        assert_eq!(c.decided_by, Some(DecidedBy::Estimate));
        let nearer_bad = c.position.point > 0.5;
        assert_eq!(c.state == State::LikeBad, nearer_bad, "{c:?}");
        // Zero reference: no side is bad; unknown until the cap.
        let c = classify(&blocks(16, 100.0, 100.0, 0.01, 31), 0.0, &options());
        assert_eq!(c.state, State::Unknown);
        assert_eq!(c.more_blocks, Some(32));
    }

    #[test]
    fn confirmation_repeats_the_verdict() {
        let step = endpoints(&blocks(16, 103.0, 100.0, 0.01, 40));
        let c = confirm(&step, Direction::Lower, Verdict::Regression, &options());
        assert!(c.confirmed, "{c:?}");
        let flat = endpoints(&blocks(64, 100.0, 100.0, 0.005, 41));
        let c = confirm(&flat, Direction::Lower, Verdict::Regression, &options());
        assert!(!c.confirmed);
        assert_eq!(c.change.verdict, Verdict::NoChange, "{c:?}");
        assert_eq!(c.more_blocks, None);
        let few = endpoints(&blocks(4, 103.0, 100.0, 0.01, 42));
        let c = confirm(&few, Direction::Lower, Verdict::Regression, &options());
        assert_eq!(c.more_blocks, Some(8));
    }
}
