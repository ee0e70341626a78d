//! `kbench run --server`: the local store stays the source of truth (every
//! sample is committed there first, as without an upload), and a [`Mirror`]
//! wrapped around it, a [`RunSink`] decorator, queues each change of a run
//! for the uploader thread ([`crate::upload`]), which sends them to the
//! server as live batches while the run goes on.
//!
//! The thread runs in the kbench process that stores, never in the
//! measuring agent, and the mirror only queues: a slow or unreachable
//! server never holds up a measurement. An upload that stopped (and said
//! why) takes no more changes; the local store keeps them.

use crate::batch::Change;
use crate::upload::{DRAIN_TIME, Upload, Uploaded, Uploader};
use kbench_model::{Sample, TestKey, TestSpec};
use kbench_store::outline::{OutlinePages, SetOutline, SetOverview};
use kbench_store::{
    Recorder, ResultSetData, ResultSetSummary, Results, RunContents, RunId, RunInfo, RunRecord,
    RunSink, RunStatus, SetPart, StoreError, TestId, TestOutcome,
};
use std::collections::{BTreeSet, HashMap};
use std::sync::mpsc::Sender;

/// Runs `body` on `store`, mirrored to `upload` when given, then waits
/// (at most [`DRAIN_TIME`]) for the upload to end and says how it went.
pub fn mirrored<T>(
    store: &mut dyn Recorder,
    upload: Option<&Upload>,
    body: impl FnOnce(&mut dyn Recorder) -> T,
) -> (T, Option<Uploaded>) {
    match upload {
        None => (body(store), None),
        Some(upload) => {
            let (queue, uploader) = Uploader::start(upload.clone());
            let mut mirror = Mirror::new(store, queue);
            let result = body(&mut mirror);
            let (queued, sets) = (mirror.queued, std::mem::take(&mut mirror.sets));
            drop(mirror);
            (result, Some(uploader.finish(queued, sets, DRAIN_TIME)))
        }
    }
}

/// A [`RunSink`] that keeps everything in `local` and queues the changes of
/// the runs it begins or resumes for the uploader; what it reads comes
/// from `local` unchanged.
pub struct Mirror<'a> {
    local: &'a mut dyn Recorder,
    queue: Sender<Change>,
    /// The specs of tests by local id (`add_sample` names a test by id).
    specs: HashMap<TestId, TestSpec>,
    /// Samples so far per run and test: the next sample's index.
    counts: HashMap<(RunId, TestKey), u64>,
    /// Samples queued (re-sent ones of a resumed run included).
    queued: u64,
    /// The result sets of the runs mirrored.
    sets: BTreeSet<String>,
}

impl<'a> Mirror<'a> {
    pub fn new(local: &'a mut dyn Recorder, queue: Sender<Change>) -> Mirror<'a> {
        Mirror {
            local,
            queue,
            specs: HashMap::new(),
            counts: HashMap::new(),
            queued: 0,
            sets: BTreeSet::new(),
        }
    }

    /// Queues a change. A stopped uploader (it failed, and said so) takes
    /// no more: the change stays in the local store only.
    fn send(&mut self, change: Change) {
        match &change {
            Change::Samples { samples, .. } => self.queued += samples.len() as u64,
            Change::Run { set, .. } => {
                self.sets.insert(set.clone());
            }
            _ => {}
        }
        let _ = self.queue.send(change);
    }

    fn spec(&self, test: TestId) -> Result<TestSpec, StoreError> {
        self.specs.get(&test).cloned().ok_or_else(|| {
            StoreError::NotFound(format!(
                "test id {} was not made through the upload mirror (call test_id first)",
                test.0
            ))
        })
    }

    /// Queues everything stored of a resumed run from its start: the
    /// server keeps what it has and adds the rest.
    fn resend(&mut self, contents: RunContents) {
        let spec_of = |key: &TestKey| contents.tests.iter().find(|t| &t.key == key).cloned();
        let run = contents.record.id;
        let info = with_uid(contents.record.info.clone());
        self.send(Change::Run {
            run,
            set: contents.set.clone(),
            identifier: contents.identifier.clone(),
            info: Box::new(info),
        });
        for (key, samples) in &contents.samples {
            self.counts.insert((run, key.clone()), samples.len() as u64);
            if let Some(spec) = spec_of(key) {
                self.send(Change::Samples {
                    run,
                    spec,
                    first: 0,
                    samples: samples.clone(),
                });
            }
        }
        for outcome in &contents.record.outcomes {
            if let Some(spec) = spec_of(&outcome.test) {
                self.send(Change::Outcome {
                    run,
                    spec,
                    outcome: outcome.clone(),
                });
            }
        }
    }
}

/// A run's info with a uid (the runner gives every run one; a run stored
/// by an older kbench gets one for this upload).
fn with_uid(mut info: RunInfo) -> RunInfo {
    if info.uid.is_none() {
        info.uid = kbench_model::random_id().ok();
    }
    info
}

impl RunSink for Mirror<'_> {
    fn begin_run(
        &mut self,
        set: &str,
        identifier: &str,
        info: &RunInfo,
    ) -> kbench_store::Result<RunId> {
        let info = with_uid(info.clone());
        let run = self.local.begin_run(set, identifier, &info)?;
        self.send(Change::Run {
            run,
            set: set.to_string(),
            identifier: identifier.to_string(),
            info: Box::new(info),
        });
        Ok(run)
    }

    fn lock_identifier(&mut self, set: &str, identifier: &str) -> kbench_store::Result<()> {
        self.local.lock_identifier(set, identifier)
    }

    fn unfinished_run(
        &mut self,
        set: &str,
        identifier: &str,
    ) -> kbench_store::Result<Option<RunRecord>> {
        self.local.unfinished_run(set, identifier)
    }

    fn resume_run(&mut self, run: RunId, pid: u32) -> kbench_store::Result<()> {
        self.local.resume_run(run, pid)?;
        let contents = self.local.run_contents(run)?;
        self.resend(contents);
        Ok(())
    }

    fn test_id(&mut self, set: &str, spec: &TestSpec) -> kbench_store::Result<TestId> {
        let id = self.local.test_id(set, spec)?;
        self.specs.insert(id, spec.clone());
        Ok(id)
    }

    fn add_sample(
        &mut self,
        run: RunId,
        test: TestId,
        sample: &Sample,
    ) -> kbench_store::Result<()> {
        self.local.add_sample(run, test, sample)?;
        let spec = self.spec(test)?;
        let count = self.counts.entry((run, spec.key.clone())).or_insert(0);
        let first = *count;
        *count += 1;
        self.send(Change::Samples {
            run,
            spec,
            first,
            samples: vec![*sample],
        });
        Ok(())
    }

    fn end_test(
        &mut self,
        run: RunId,
        test: TestId,
        outcome: &TestOutcome,
    ) -> kbench_store::Result<()> {
        self.local.end_test(run, test, outcome)?;
        let spec = self.spec(test)?;
        self.send(Change::Outcome {
            run,
            spec,
            outcome: outcome.clone(),
        });
        Ok(())
    }

    fn end_run(
        &mut self,
        run: RunId,
        status: RunStatus,
        steal_percent: Option<f64>,
    ) -> kbench_store::Result<()> {
        self.local.end_run(run, status, steal_percent)?;
        self.send(Change::Ended {
            run,
            status,
            ended_at_ms: kbench_model::now_ms(),
            steal_percent,
        });
        Ok(())
    }

    fn last_round(&mut self, set: &str, identifier: &str) -> kbench_store::Result<Option<u32>> {
        self.local.last_round(set, identifier)
    }

    fn ended_tests(&mut self, run: RunId) -> kbench_store::Result<Vec<TestKey>> {
        self.local.ended_tests(run)
    }
}

/// Reads pass through: a run measured with `--redo-disturbed` (or in a
/// VM) reads its result set back between its runs.
impl Results for Mirror<'_> {
    fn result_sets(&mut self) -> kbench_store::Result<Vec<ResultSetSummary>> {
        self.local.result_sets()
    }

    fn load_part(&mut self, set: &str, part: &SetPart) -> kbench_store::Result<ResultSetData> {
        self.local.load_part(set, part)
    }

    fn set_overviews(&mut self) -> kbench_store::Result<Vec<SetOverview>> {
        self.local.set_overviews()
    }

    fn outline(&mut self, set: &str, pages: OutlinePages) -> kbench_store::Result<SetOutline> {
        self.local.outline(set, pages)
    }

    fn run_contents(&mut self, run: RunId) -> kbench_store::Result<RunContents> {
        self.local.run_contents(run)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::Batcher;
    use kbench_model::Direction;
    use kbench_store::{LiveBatch, SqliteStore, TestOutcomeKind};
    use std::sync::mpsc::{Receiver, channel};
    use std::time::Instant;

    fn spec() -> TestSpec {
        TestSpec {
            key: TestKey::parse("syscall-null").unwrap(),
            unit: "ns".into(),
            direction: Direction::Lower,
        }
    }

    fn sample(value: f64) -> Sample {
        Sample {
            value,
            iterations: 1,
            at_ms: kbench_model::now_ms(),
            round: 0,
        }
    }

    /// Everything queued, gathered into one batch.
    fn batch_of(changes: &Receiver<Change>) -> LiveBatch {
        let mut batcher = Batcher::default();
        for change in changes.try_iter() {
            batcher.apply(change, Instant::now());
        }
        let (_, batch) = batcher.take(usize::MAX).unwrap();
        assert!(batcher.take(usize::MAX).is_none());
        batch
    }

    #[test]
    fn a_mirrored_run_is_stored_locally_and_queued_with_sample_indexes() {
        let dir = tempfile::tempdir().unwrap();
        let mut local = SqliteStore::open(&dir.path().join("r.db")).unwrap();
        let (queue, changes) = channel();
        let info = RunInfo {
            started_at_ms: kbench_model::now_ms() - 10,
            ..RunInfo::default()
        };
        let run = {
            let mut mirror = Mirror::new(&mut local, queue.clone());
            let run = mirror.begin_run("s", "6.18", &info).unwrap();
            let test = mirror.test_id("s", &spec()).unwrap();
            for value in [1.0, 2.0] {
                mirror.add_sample(run, test, &sample(value)).unwrap();
            }
            run
        };
        let first = batch_of(&changes);
        assert!(first.run_uid.len() >= 16, "the mirror gives a run a uid");
        assert_eq!(
            (first.samples[0].first, first.samples[0].samples.len()),
            (0, 2)
        );
        assert_eq!(first.status, RunStatus::Running);
        assert_eq!(local.load("s").unwrap().identifiers[0].samples.len(), 1);

        // The run was killed; a new process resumes it and sends it again
        // from its start, then its new samples after those stored.
        let mut mirror = Mirror::new(&mut local, queue);
        mirror.resume_run(run, 42).unwrap();
        let test = mirror.test_id("s", &spec()).unwrap();
        mirror.add_sample(run, test, &sample(3.0)).unwrap();
        let outcome = TestOutcome {
            test: spec().key,
            kind: TestOutcomeKind::BudgetHit,
            detail: "time".into(),
        };
        mirror.end_test(run, test, &outcome).unwrap();
        mirror.end_run(run, RunStatus::Complete, None).unwrap();
        assert_eq!(mirror.queued, 3);
        let again = batch_of(&changes);
        assert_eq!(again.run_uid, first.run_uid);
        assert_eq!(
            (again.samples[0].first, again.samples[0].samples.len()),
            (0, 3)
        );
        assert_eq!(again.samples[0].samples[2].value, 3.0);
        assert_eq!(again.outcomes, [outcome]);
        assert_eq!(again.status, RunStatus::Complete);
        assert_eq!(again.tests, [spec()]);
    }
}
