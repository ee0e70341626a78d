//! The decisions of an automatic bisection (statistics.md, "Bisection
//! decision"), for one metric with samples per commit. No I/O: the driver
//! (kbench-lab `bisect`) measures, these functions say what the samples
//! mean and whether more are needed.
//!
//! 1. [`check_endpoints`]: the good and the bad commit must differ, by the
//!    A/B verdict of `compare` (REGRESSION or IMPROVEMENT of bad against
//!    good). INCONCLUSIVE asks for twice the samples up to the cap; NO
//!    CHANGE, or INCONCLUSIVE at the cap, stops the bisection. The measured
//!    shift is the reference effect d = ln(bad / good) (geometric means).
//! 2. [`classify`]: a commit between them is compared with *both*
//!    endpoints (Welch on logs, as `compare`). Its position on the way from
//!    good (0) to bad (1) is ln(c / good) / d, with a 95 % interval from
//!    each comparison: from the comparison with good, [ln(c/good) CI] / d;
//!    from the one with bad, 1 + [ln(c/bad) CI] / d. LIKE-GOOD when both
//!    intervals lie below 1/2, LIKE-BAD when both lie above, UNKNOWN
//!    otherwise (too noisy, or a commit half-way, e.g. between two steps).
//!    UNKNOWN asks for twice the samples up to the cap; at the cap the
//!    commit is called by which endpoint's distribution (normal on logs,
//!    mean and SD of the endpoint) makes its samples more likely, and the
//!    decision says so (log-likelihood ratio).
//! 3. [`confirm`]: the culprit and its parent, measured afresh at the end,
//!    must show the endpoints' verdict again (the search chose this pair, so
//!    its own samples are biased towards a difference). INCONCLUSIVE asks
//!    for more samples, doubling up to the cap.
//!
//! Commits that fail to build or boot are skipped by the driver (git bisect
//! skip semantics): they are never called good or bad.

use serde::{Deserialize, Serialize};

use crate::compare::{Better, CompareOptions, Comparison, Side, Verdict, compare_metric};

/// Knobs of the decisions.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BisectionOptions {
    /// Practical threshold of the endpoint and confirmation verdicts, as a
    /// fraction (0.01 = 1 %).
    pub threshold: f64,
    /// 1 - confidence level of every interval; significance of the verdicts.
    pub alpha: f64,
    /// Samples per commit to start with.
    pub initial_samples: usize,
    /// The cap of the doubling.
    pub max_samples: usize,
}

impl Default for BisectionOptions {
    fn default() -> BisectionOptions {
        BisectionOptions {
            threshold: 0.01,
            alpha: 0.05,
            initial_samples: 5,
            max_samples: 40,
        }
    }
}

impl BisectionOptions {
    fn compare(&self) -> CompareOptions {
        CompareOptions {
            threshold: self.threshold,
            alpha: self.alpha,
            ..CompareOptions::default()
        }
    }

    /// Twice `have`, at least the initial count, at most the cap; `None` at
    /// the cap.
    pub fn doubled(&self, have: usize) -> Option<usize> {
        let want = (have * 2).max(self.initial_samples).min(self.max_samples);
        (want > have).then_some(want)
    }
}

/// What the endpoints say.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum EndpointCheck {
    /// They differ: `comparison` is bad against good, its verdict
    /// REGRESSION or IMPROVEMENT.
    Differ { comparison: Comparison },
    /// Not decided yet: measure each endpoint up to `samples`.
    MoreSamples {
        samples: usize,
        comparison: Comparison,
    },
    /// They do not differ (NO CHANGE, or INCONCLUSIVE or CANNOT DECIDE at
    /// the cap).
    DoNotDiffer { comparison: Comparison },
}

/// Compares the bad endpoint against the good one.
pub fn check_endpoints(
    good: &Side,
    bad: &Side,
    better: Better,
    options: &BisectionOptions,
) -> EndpointCheck {
    let comparison = compare_metric(good, bad, better, &options.compare());
    match comparison.verdict {
        Verdict::Regression | Verdict::Improvement => EndpointCheck::Differ { comparison },
        Verdict::Inconclusive | Verdict::CannotDecide => {
            let have = good.logs().len().min(bad.logs().len());
            match options.doubled(have) {
                Some(samples) => EndpointCheck::MoreSamples {
                    samples,
                    comparison,
                },
                None => EndpointCheck::DoNotDiffer { comparison },
            }
        }
        Verdict::NoChange => EndpointCheck::DoNotDiffer { comparison },
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
    /// Both comparisons put it on one side of half-way.
    Tests,
    /// Still unknown at the sample cap: the more likely endpoint.
    Likelihood,
}

/// A 95 % interval of a commit's position between good (0) and bad (1).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Position {
    pub point: f64,
    pub low: f64,
    pub high: f64,
}

/// The classification of one commit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Classification {
    /// LIKE-GOOD or LIKE-BAD once decided; UNKNOWN while `more_samples`
    /// asks for more.
    pub state: State,
    /// `None` while undecided.
    pub decided_by: Option<DecidedBy>,
    /// The position seen from the good endpoint.
    pub from_good: Position,
    /// The position seen from the bad endpoint.
    pub from_bad: Position,
    /// The commit against good.
    pub vs_good: Comparison,
    /// The commit against bad.
    pub vs_bad: Comparison,
    /// ln L(bad) - ln L(good) of the commit's samples, when decided by
    /// likelihood (> 0: more like bad).
    pub log_likelihood_ratio: Option<f64>,
    /// Measure the commit up to this many samples, then classify again.
    pub more_samples: Option<usize>,
}

/// Classifies `candidate` between the endpoints. `good` and `bad` must
/// differ (see [`check_endpoints`]); if their geometric means are equal
/// every commit is UNKNOWN until the likelihood decides.
pub fn classify(
    candidate: &Side,
    good: &Side,
    bad: &Side,
    better: Better,
    options: &BisectionOptions,
) -> Classification {
    let compare = options.compare();
    let vs_good = compare_metric(good, candidate, better, &compare);
    let vs_bad = compare_metric(bad, candidate, better, &compare);
    let effect = bad.logs().mean() - good.logs().mean();
    let scale = |log_ratio: f64, offset: f64| {
        if effect == 0.0 {
            f64::NAN
        } else {
            offset + log_ratio / effect
        }
    };
    let position = |c: &Comparison, offset: f64| {
        let (a, b) = (
            scale(c.ratio.ci_low.ln(), offset),
            scale(c.ratio.ci_high.ln(), offset),
        );
        Position {
            point: scale(c.ratio.point.ln(), offset),
            low: a.min(b),
            high: a.max(b),
        }
    };
    let from_good = position(&vs_good, 0.0);
    let from_bad = position(&vs_bad, 1.0);
    let tested = if from_good.high < 0.5 && from_bad.high < 0.5 {
        State::LikeGood
    } else if from_good.low > 0.5 && from_bad.low > 0.5 {
        State::LikeBad
    } else {
        State::Unknown
    };
    let mut classification = Classification {
        state: tested,
        decided_by: (tested != State::Unknown).then_some(DecidedBy::Tests),
        from_good,
        from_bad,
        vs_good,
        vs_bad,
        log_likelihood_ratio: None,
        more_samples: None,
    };
    if tested == State::Unknown {
        match options.doubled(candidate.logs().len()) {
            Some(samples) => classification.more_samples = Some(samples),
            None => {
                let ratio = log_likelihood(candidate, bad) - log_likelihood(candidate, good);
                classification.log_likelihood_ratio = Some(ratio);
                classification.state = if ratio > 0.0 {
                    State::LikeBad
                } else {
                    State::LikeGood
                };
                classification.decided_by = Some(DecidedBy::Likelihood);
            }
        }
    }
    classification
}

/// Log-likelihood of the candidate's log observations under a normal
/// distribution with the endpoint's mean and SD of logs. An SD that is
/// zero or unknown is floored, so constant data still compares by distance.
fn log_likelihood(candidate: &Side, endpoint: &Side) -> f64 {
    let logs = endpoint.logs();
    let mean = logs.mean();
    let sd = logs.sd().unwrap_or(0.0).max(1e-9);
    candidate
        .logs()
        .as_slice()
        .iter()
        .map(|x| {
            let z = (x - mean) / sd;
            -0.5 * z * z - sd.ln()
        })
        .sum()
}

/// What the fresh measurement of the culprit and its parent says.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Confirmation {
    /// The culprit against its parent.
    pub comparison: Comparison,
    /// The endpoints' verdict again. `false` with `more_samples` `None`:
    /// not confirmed at the cap.
    pub confirmed: bool,
    /// Measure both up to this many samples, then confirm again.
    pub more_samples: Option<usize>,
}

/// Compares the culprit's fresh samples with its parent's; `expected` is
/// the endpoints' verdict.
pub fn confirm(
    parent: &Side,
    culprit: &Side,
    better: Better,
    expected: Verdict,
    options: &BisectionOptions,
) -> Confirmation {
    let comparison = compare_metric(parent, culprit, better, &options.compare());
    let confirmed = comparison.verdict == expected;
    let undecided = matches!(
        comparison.verdict,
        Verdict::Inconclusive | Verdict::CannotDecide
    );
    let more_samples = if !confirmed && undecided {
        options.doubled(parent.logs().len().min(culprit.logs().len()))
    } else {
        None
    };
    Confirmation {
        comparison,
        confirmed,
        more_samples,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Samples;

    /// `n` values around `level` with a fixed +-1 % pattern.
    fn side(level: f64, n: usize) -> Side {
        let pattern = [0.0, 1.0, -1.0, 0.5, -0.5, 0.8, -0.8, 0.3, -0.3, 0.0];
        let values = (0..n)
            .map(|i| level * (1.0 + pattern[i % pattern.len()] / 100.0))
            .collect();
        Side::new(Samples::new(values).unwrap()).unwrap()
    }

    fn options() -> BisectionOptions {
        BisectionOptions::default()
    }

    #[test]
    fn doubling_stops_at_the_cap() {
        let o = BisectionOptions {
            initial_samples: 5,
            max_samples: 24,
            ..options()
        };
        assert_eq!(o.doubled(0), Some(5));
        assert_eq!(o.doubled(5), Some(10));
        assert_eq!(o.doubled(20), Some(24));
        assert_eq!(o.doubled(24), None);
    }

    #[test]
    fn endpoints_that_differ_give_the_reference() {
        let check = check_endpoints(
            &side(100.0, 10),
            &side(105.0, 10),
            Better::Lower,
            &options(),
        );
        let EndpointCheck::Differ { comparison } = check else {
            panic!("{check:?}")
        };
        assert_eq!(comparison.verdict, Verdict::Regression);
        // An improvement can be bisected too.
        let check = check_endpoints(&side(100.0, 10), &side(95.0, 10), Better::Lower, &options());
        assert!(
            matches!(check, EndpointCheck::Differ { comparison } if comparison.verdict == Verdict::Improvement)
        );
    }

    #[test]
    fn equal_endpoints_do_not_differ() {
        let check = check_endpoints(
            &side(100.0, 10),
            &side(100.0, 10),
            Better::Lower,
            &options(),
        );
        assert!(
            matches!(check, EndpointCheck::DoNotDiffer { .. }),
            "{check:?}"
        );
    }

    #[test]
    fn unclear_endpoints_ask_for_more_then_give_up() {
        // 1.5 % apart at 1 % noise, 3 samples: inconclusive.
        let (good, bad) = (side(100.0, 3), side(101.5, 3));
        let check = check_endpoints(&good, &bad, Better::Lower, &options());
        assert!(
            matches!(check, EndpointCheck::MoreSamples { samples: 6, .. }),
            "{check:?}"
        );
        let capped = BisectionOptions {
            max_samples: 3,
            ..options()
        };
        let check = check_endpoints(&good, &bad, Better::Lower, &capped);
        assert!(
            matches!(check, EndpointCheck::DoNotDiffer { .. }),
            "{check:?}"
        );
    }

    #[test]
    fn commits_at_either_end_are_called_by_the_tests() {
        let (good, bad) = (side(100.0, 10), side(110.0, 10));
        for (level, state) in [
            (100.0, State::LikeGood),
            (101.0, State::LikeGood),
            (110.0, State::LikeBad),
            (109.0, State::LikeBad),
        ] {
            let c = classify(&side(level, 5), &good, &bad, Better::Lower, &options());
            assert_eq!(c.state, state, "{level}: {c:?}");
            assert_eq!(c.decided_by, Some(DecidedBy::Tests));
            assert_eq!(c.more_samples, None);
        }
        // The direction of the metric does not matter for the side.
        let c = classify(&side(100.0, 5), &good, &bad, Better::Higher, &options());
        assert_eq!(c.state, State::LikeGood);
        // Nor which endpoint is larger.
        let c = classify(&side(110.0, 5), &bad, &good, Better::Lower, &options());
        assert_eq!(c.state, State::LikeGood);
    }

    #[test]
    fn half_way_is_unknown_then_decided_by_likelihood() {
        let (good, bad) = (side(100.0, 10), side(110.0, 10));
        let c = classify(&side(104.0, 5), &good, &bad, Better::Lower, &options());
        assert_eq!(c.state, State::Unknown);
        assert_eq!(c.decided_by, None);
        assert_eq!(c.more_samples, Some(10));
        let capped = BisectionOptions {
            max_samples: 5,
            ..options()
        };
        let c = classify(&side(104.0, 5), &good, &bad, Better::Lower, &capped);
        assert_eq!(c.state, State::LikeGood);
        assert_eq!(c.decided_by, Some(DecidedBy::Likelihood));
        assert!(c.log_likelihood_ratio.unwrap() < 0.0);
        let c = classify(&side(106.0, 5), &good, &bad, Better::Lower, &capped);
        assert_eq!(c.state, State::LikeBad);
    }

    #[test]
    fn noisy_commits_ask_for_more_samples() {
        let (good, bad) = (side(100.0, 10), side(103.0, 10));
        let noisy = Side::new(Samples::new(vec![95.0, 106.0]).unwrap()).unwrap();
        let c = classify(&noisy, &good, &bad, Better::Lower, &options());
        assert_eq!(c.state, State::Unknown);
        assert_eq!(c.more_samples, Some(5));
    }

    /// Constant data has no spread, so the tests cannot decide (issue 19):
    /// the commit is measured up to the cap, then the likelihood decides by
    /// distance.
    #[test]
    fn constant_data_still_decides() {
        let constant = |v: f64, n: usize| Side::new(Samples::new(vec![v; n]).unwrap()).unwrap();
        let (good, bad) = (constant(10.0, 5), constant(12.0, 5));
        let c = classify(&constant(12.0, 5), &good, &bad, Better::Lower, &options());
        assert_eq!(c.state, State::Unknown);
        assert_eq!(c.vs_good.verdict, Verdict::CannotDecide);
        assert!(c.more_samples.is_some());
        let capped = BisectionOptions {
            max_samples: 5,
            ..options()
        };
        let c = classify(&constant(12.0, 5), &good, &bad, Better::Lower, &capped);
        assert_eq!(c.state, State::LikeBad);
        // 0.52 of the way (on the log scale) is like-bad.
        let c = classify(&constant(11.0, 5), &good, &bad, Better::Lower, &capped);
        assert_eq!(c.state, State::LikeBad);
        assert_eq!(c.decided_by, Some(DecidedBy::Likelihood));
        assert!((c.from_good.point - 0.5228).abs() < 1e-3, "{c:?}");
        // Equal endpoints (no reference effect): only the likelihood can call it.
        let c = classify(&constant(11.0, 5), &good, &good, Better::Lower, &capped);
        assert_eq!(c.decided_by, Some(DecidedBy::Likelihood));
    }

    #[test]
    fn confirmation_repeats_the_verdict() {
        let c = confirm(
            &side(100.0, 10),
            &side(105.0, 10),
            Better::Lower,
            Verdict::Regression,
            &options(),
        );
        assert!(c.confirmed);
        let c = confirm(
            &side(100.0, 10),
            &side(100.0, 10),
            Better::Lower,
            Verdict::Regression,
            &options(),
        );
        assert!(!c.confirmed);
        assert_eq!(c.more_samples, None);
        let c = confirm(
            &side(100.0, 3),
            &side(101.5, 3),
            Better::Lower,
            Verdict::Regression,
            &options(),
        );
        assert_eq!(c.more_samples, Some(6));
    }
}
