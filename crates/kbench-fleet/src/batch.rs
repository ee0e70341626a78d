//! What the live upload sends: the changes of local runs, gathered per run
//! into [`LiveBatch`]es (docs/api.md). No I/O here: the uploader thread
//! feeds a [`Batcher`] and sends what it takes.
//!
//! Each test's samples carry their index among the run's samples of that
//! test (`first`), so a batch sent twice (a retry after a lost answer) or
//! a run sent again from its start (a resumed run) stores nothing twice.
//! Under a worker, every batch also carries the worker's job lease, so
//! the server refuses it once the job (and its run) went to another.

use kbench_model::{Sample, TestKey, TestSpec};
use kbench_store::{JobLease, LiveBatch, LiveSamples, RunId, RunInfo, RunStatus, TestOutcome};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// One change of a local run, as the mirror saw it.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// A run begun or resumed (`info.uid` set): where it goes, what it is.
    /// Its status is running from here.
    Run {
        run: RunId,
        set: String,
        identifier: String,
        info: Box<RunInfo>,
    },
    /// Samples of one test, the first being the run's `first`-th of it.
    Samples {
        run: RunId,
        spec: TestSpec,
        first: u64,
        samples: Vec<Sample>,
    },
    /// How a test ended (replacing what was said before).
    Outcome {
        run: RunId,
        spec: TestSpec,
        outcome: TestOutcome,
    },
    /// How the run ended.
    Ended {
        run: RunId,
        status: RunStatus,
        ended_at_ms: i64,
        steal_percent: Option<f64>,
    },
}

/// A run's changes not sent yet.
#[derive(Debug)]
struct Pending {
    set: String,
    identifier: String,
    uid: String,
    info: RunInfo,
    status: RunStatus,
    ended_at_ms: Option<i64>,
    steal_percent: Option<f64>,
    specs: BTreeMap<TestKey, TestSpec>,
    /// Consecutive samples per test, in arrival order.
    samples: Vec<LiveSamples>,
    outcomes: Vec<TestOutcome>,
    /// Something (if only the status) is not sent yet.
    changed: bool,
}

/// The changes not sent yet, per run.
#[derive(Debug, Default)]
pub struct Batcher {
    /// What every batch carries as its `lease`.
    lease: Option<JobLease>,
    runs: BTreeMap<RunId, Pending>,
    /// Samples not sent yet, all runs together.
    samples: usize,
    /// When the oldest change not sent yet came.
    oldest: Option<Instant>,
}

impl Batcher {
    /// A batcher whose batches carry `lease` (the job this process measures
    /// for a worker, if it does).
    pub fn new(lease: Option<JobLease>) -> Batcher {
        Batcher {
            lease,
            ..Batcher::default()
        }
    }

    /// Adds a change that came at `now`. Changes of a run not begun (or
    /// already ended and sent) are a bug of the caller and are dropped.
    pub fn apply(&mut self, change: Change, now: Instant) {
        let run = match &change {
            Change::Run { run, .. }
            | Change::Samples { run, .. }
            | Change::Outcome { run, .. }
            | Change::Ended { run, .. } => *run,
        };
        if let Change::Run {
            set,
            identifier,
            info,
            ..
        } = change
        {
            let head = Pending {
                set,
                identifier,
                uid: info.uid.clone().unwrap_or_default(),
                info: *info,
                status: RunStatus::Running,
                ended_at_ms: None,
                steal_percent: None,
                specs: BTreeMap::new(),
                samples: vec![],
                outcomes: vec![],
                changed: true,
            };
            // Resumed while changes of it wait: they are kept.
            let pending = match self.runs.remove(&run) {
                Some(old) => Pending {
                    specs: old.specs,
                    samples: old.samples,
                    outcomes: old.outcomes,
                    ..head
                },
                None => head,
            };
            self.runs.insert(run, pending);
            self.oldest.get_or_insert(now);
            return;
        }
        let Some(pending) = self.runs.get_mut(&run) else {
            debug_assert!(false, "a change of run {run:?} before its start");
            return;
        };
        match change {
            Change::Run { .. } => unreachable!("handled above"),
            Change::Samples {
                spec,
                first,
                samples,
                ..
            } => {
                self.samples += samples.len();
                let follows = pending
                    .samples
                    .iter_mut()
                    .rev()
                    .find(|s| s.test == spec.key)
                    .filter(|s| s.first + s.samples.len() as u64 == first);
                match follows {
                    Some(segment) => segment.samples.extend(samples),
                    None => pending.samples.push(LiveSamples {
                        test: spec.key.clone(),
                        first,
                        samples,
                    }),
                }
                pending.specs.insert(spec.key.clone(), spec);
            }
            Change::Outcome { spec, outcome, .. } => {
                pending.outcomes.retain(|o| o.test != outcome.test);
                pending.outcomes.push(outcome);
                pending.specs.insert(spec.key.clone(), spec);
            }
            Change::Ended {
                status,
                ended_at_ms,
                steal_percent,
                ..
            } => {
                (pending.status, pending.ended_at_ms, pending.steal_percent) =
                    (status, Some(ended_at_ms), steal_percent);
            }
        }
        pending.changed = true;
        self.oldest.get_or_insert(now);
    }

    /// Nothing to send.
    pub fn is_empty(&self) -> bool {
        !self.runs.values().any(|p| p.changed)
    }

    /// Whether to send now: a change waited `interval`, `max_samples`
    /// wait, or a run ended (its end is sent at once).
    pub fn due(&self, now: Instant, interval: Duration, max_samples: usize) -> bool {
        self.oldest
            .is_some_and(|oldest| now.duration_since(oldest) >= interval)
            || self.samples >= max_samples
            || self
                .runs
                .values()
                .any(|p| p.changed && p.status != RunStatus::Running)
    }

    /// How long until [`Batcher::due`] by time alone (`interval` when empty).
    pub fn until_due(&self, now: Instant, interval: Duration) -> Duration {
        self.oldest.map_or(interval, |oldest| {
            interval.saturating_sub(now.duration_since(oldest))
        })
    }

    /// The next batch to send, into the result set it names: the oldest
    /// run's changes, at most `max_samples` samples (a larger backlog is
    /// sent in order over several batches; the run's end goes with the
    /// last). `None` when there is nothing to send.
    pub fn take(&mut self, max_samples: usize) -> Option<(String, LiveBatch)> {
        let (&run, pending) = self.runs.iter_mut().find(|(_, p)| p.changed)?;
        let mut samples = vec![];
        let mut count = 0;
        while count < max_samples && !pending.samples.is_empty() {
            let room = max_samples - count;
            let segment = if pending.samples[0].samples.len() <= room {
                pending.samples.remove(0)
            } else {
                let rest = pending.samples[0].samples.split_off(room);
                let head = std::mem::replace(&mut pending.samples[0].samples, rest);
                let first = pending.samples[0].first;
                pending.samples[0].first += room as u64;
                LiveSamples {
                    test: pending.samples[0].test.clone(),
                    first,
                    samples: head,
                }
            };
            count += segment.samples.len();
            samples.push(segment);
        }
        self.samples -= count;
        let outcomes = std::mem::take(&mut pending.outcomes);
        let mut tests: Vec<TestSpec> = vec![];
        for key in samples
            .iter()
            .map(|s| &s.test)
            .chain(outcomes.iter().map(|o| &o.test))
        {
            if !tests.iter().any(|t| &t.key == key)
                && let Some(spec) = pending.specs.get(key)
            {
                tests.push(spec.clone());
            }
        }
        let all_taken = pending.samples.is_empty();
        let (status, ended_at_ms, steal_percent) = if all_taken {
            (pending.status, pending.ended_at_ms, pending.steal_percent)
        } else {
            (RunStatus::Running, None, None)
        };
        let batch = LiveBatch {
            identifier: pending.identifier.clone(),
            run_uid: pending.uid.clone(),
            info: pending.info.clone(),
            status,
            ended_at_ms,
            steal_percent,
            tests,
            samples,
            outcomes,
            lease: self.lease.clone(),
        };
        let set = pending.set.clone();
        if all_taken {
            pending.changed = false;
            if pending.status != RunStatus::Running {
                self.runs.remove(&run);
            }
        }
        if self.is_empty() {
            self.oldest = None;
        }
        Some((set, batch))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kbench_model::Direction;
    use kbench_store::TestOutcomeKind;

    fn spec(name: &str) -> TestSpec {
        TestSpec {
            key: TestKey::parse(name).unwrap(),
            unit: "ns".into(),
            direction: Direction::Lower,
        }
    }

    fn samples(values: std::ops::Range<u32>) -> Vec<Sample> {
        values
            .map(|v| Sample {
                value: f64::from(v) + 1.0,
                iterations: 1,
                at_ms: i64::from(v),
                round: 0,
            })
            .collect()
    }

    fn begun(batcher: &mut Batcher, run: i64, now: Instant) {
        let info = RunInfo {
            uid: Some(format!("uid-{run}")),
            ..RunInfo::default()
        };
        batcher.apply(
            Change::Run {
                run: RunId(run),
                set: "s".into(),
                identifier: format!("id-{run}"),
                info: Box::new(info),
            },
            now,
        );
    }

    fn add(batcher: &mut Batcher, run: i64, test: &str, first: u64, values: std::ops::Range<u32>) {
        batcher.apply(
            Change::Samples {
                run: RunId(run),
                spec: spec(test),
                first,
                samples: samples(values),
            },
            Instant::now(),
        );
    }

    fn shape(batch: &LiveBatch) -> Vec<(String, u64, usize)> {
        batch
            .samples
            .iter()
            .map(|s| (s.test.to_string(), s.first, s.samples.len()))
            .collect()
    }

    #[test]
    fn consecutive_samples_of_a_test_merge_and_keep_their_first_index() {
        let now = Instant::now();
        let mut batcher = Batcher::default();
        begun(&mut batcher, 1, now);
        add(&mut batcher, 1, "a", 0, 0..3);
        add(&mut batcher, 1, "b", 0, 0..2);
        add(&mut batcher, 1, "a", 3, 3..5);
        // A re-sent start (resumed run) that overlaps is its own segment.
        add(&mut batcher, 1, "b", 0, 0..4);
        assert_eq!(batcher.samples, 11);
        let (set, batch) = batcher.take(100).unwrap();
        assert_eq!(set, "s");
        assert_eq!(
            (batch.identifier.as_str(), batch.run_uid.as_str()),
            ("id-1", "uid-1")
        );
        assert_eq!(
            shape(&batch),
            [("a".into(), 0, 5), ("b".into(), 0, 2), ("b".into(), 0, 4)]
        );
        assert_eq!(batch.samples[0].samples[3].at_ms, 3);
        let tests: Vec<String> = batch.tests.iter().map(|t| t.key.to_string()).collect();
        assert_eq!(tests, ["a", "b"]);
        assert_eq!(batch.status, RunStatus::Running);
        assert!(batcher.is_empty() && batcher.take(100).is_none());
        assert_eq!(batcher.samples, 0);
    }

    #[test]
    fn batches_are_per_run_capped_and_the_end_goes_with_the_last() {
        let now = Instant::now();
        let lease = JobLease {
            job: 7,
            worker: "w1".into(),
        };
        let mut batcher = Batcher::new(Some(lease.clone()));
        begun(&mut batcher, 1, now);
        add(&mut batcher, 1, "a", 10, 10..17);
        batcher.apply(
            Change::Outcome {
                run: RunId(1),
                spec: spec("a"),
                outcome: TestOutcome {
                    test: TestKey::parse("a").unwrap(),
                    kind: TestOutcomeKind::BudgetHit,
                    detail: "time".into(),
                },
            },
            now,
        );
        batcher.apply(
            Change::Ended {
                run: RunId(1),
                status: RunStatus::Complete,
                ended_at_ms: 99,
                steal_percent: Some(0.5),
            },
            now,
        );
        begun(&mut batcher, 2, now);
        add(&mut batcher, 2, "a", 0, 0..2);
        assert!(
            batcher.due(now, Duration::from_secs(60), 1000),
            "an ended run is sent at once"
        );

        let (_, first) = batcher.take(4).unwrap();
        assert_eq!(shape(&first), [("a".into(), 10, 4)]);
        assert_eq!(first.outcomes.len(), 1);
        assert_eq!(
            (first.status, first.ended_at_ms),
            (RunStatus::Running, None)
        );
        let (_, second) = batcher.take(4).unwrap();
        assert_eq!(shape(&second), [("a".into(), 14, 3)]);
        assert_eq!(second.samples[0].samples[0].at_ms, 14);
        assert!(second.outcomes.is_empty());
        assert_eq!(
            (second.status, second.ended_at_ms, second.steal_percent),
            (RunStatus::Complete, Some(99), Some(0.5))
        );
        let (_, other) = batcher.take(4).unwrap();
        assert_eq!(other.run_uid, "uid-2");
        assert_eq!(shape(&other), [("a".into(), 0, 2)]);
        assert!(batcher.take(4).is_none());
        for batch in [first, second, other] {
            assert_eq!(batch.lease.as_ref(), Some(&lease), "{}", batch.run_uid);
        }
    }

    #[test]
    fn due_by_age_or_by_size() {
        let start = Instant::now();
        let second = Duration::from_secs(1);
        let mut batcher = Batcher::default();
        assert!(!batcher.due(start, second, 3));
        assert_eq!(batcher.until_due(start, second), second);
        begun(&mut batcher, 1, start);
        assert!(!batcher.due(start, second, 3));
        assert!(batcher.due(start + second, second, 3));
        add(&mut batcher, 1, "a", 0, 0..3);
        assert!(batcher.due(start, second, 3));
    }
}
