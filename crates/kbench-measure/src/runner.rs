//! The storing side of a run: starts an agent per test and round, commits
//! every sample the moment its event arrives, records how each test ended,
//! and resumes a run that was interrupted or killed.
//!
//! Rounds (docs/statistics.md, "Unit of replication"): each round is one fresh
//! agent invocation per test, the tests interleaved (round 0 of every test,
//! then round 1 ...), and one stored run per round. A round is one
//! invocation: a run left unfinished is never added to. The invocation that
//! resumes it ends it as interrupted (its partial rounds stay, rounds of
//! their own, each a fresh invocation cut short) and measures the tests it
//! had not ended in a new run and a new round, after every round stored.
//! The identifier is locked while it runs ([`RunSink::lock_identifier`]).
//!
//! A launcher that [batches tests](Launcher::batches_tests) (a VM: one boot
//! per round) gets one job per round instead: the snapshot, then every test
//! still to run, read from the one stream test after test. Samples are still
//! committed as they arrive and ended tests still mark what a resumed run
//! skips. If that stream ends before its tests do (the guest died), the test
//! in progress is failed, the run is ended as failed, and `execute` returns
//! the error; the samples before it are kept.

use crate::adaptive::{AdaptiveRounds, RoundsSoFar};
use crate::agent::AgentJob;
use crate::error::{MeasureError, Result};
use crate::events::{self, TestEvents, outcome};
use crate::launcher::{AgentStream, Launcher};
use crate::plan::{Recording, SamplingPlan};
use crate::round::RoundStart;
use crate::sampler::relative_ci;
use kbench_analysis::show::{self, RunDocument};
use kbench_model::results::ResultSetData;
use kbench_model::{AgentEvent, MAIN_METRIC, SystemSnapshot, TestKey, TestSpec};
use kbench_store::{
    RunId, RunInfo, RunRecord, RunSink, RunStatus, TestId, TestOutcome, TestOutcomeKind,
};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};

/// What to run and where to keep it.
#[derive(Debug, Clone)]
pub struct RunRequest {
    pub set: String,
    pub identifier: String,
    /// Canonical keys of the tests, in order.
    pub tests: Vec<TestKey>,
    pub plan: SamplingPlan,
    /// Fresh invocations per test (>= 1); with `adaptive`, the most.
    pub rounds: u32,
    /// Rounds until the round means are precise enough (not for a
    /// launcher that batches tests: a VM round has a fixed cost).
    pub adaptive: Option<AdaptiveRounds>,
    /// The wrapper as the user wrote it, recorded with the run.
    pub wrapper: Option<String>,
    /// Notes stored with every run (e.g. "emulated: TCG").
    pub notes: Vec<String>,
    /// The host's snapshot, stored as the run's `host`, when the measuring
    /// system (whose snapshot the launcher's agent sends) is a VM guest.
    pub host: Option<SystemSnapshot>,
    /// After a test FAILED, measure the others too (`--keep-going`, as
    /// make's -k); else the run stops at the first (a batched round, whose
    /// guest runs every test anyway, at the end of that round).
    pub keep_going: bool,
    /// A run recorded elsewhere and replayed here keeps its place: its uid
    /// and round. A run stored twice, from two places (a LAVA boot pushed
    /// by its guest and read back from the job's log), is then one run on
    /// a server. Default: a fresh uid, and the rounds after those stored.
    pub replayed: Option<ReplayedRun>,
}

/// Where a replayed run belongs ([`RunRequest::replayed`]).
#[derive(Debug, Clone, PartialEq)]
pub struct ReplayedRun {
    pub uid: String,
    /// Its first round; `None`: after those stored.
    pub round: Option<u32>,
}

impl RunRequest {
    /// The tests its first rounds run: all rounds, or an adaptive run's
    /// minimum (more rounds add to a progress bar's count as they start).
    pub fn first_tests(&self) -> usize {
        let rounds = self.adaptive.as_ref().map_or(self.rounds, |a| a.min_rounds);
        self.tests.len() * rounds as usize
    }
}

/// What the runner tells its observer (the progress bar, or nothing).
#[derive(Debug, Clone, PartialEq)]
pub enum RunEvent {
    RoundStarted(RoundStart),
    TestStarted {
        index: usize,
        total: usize,
        test: TestKey,
    },
    Sampled {
        test: TestKey,
        samples: usize,
        relative_ci: f64,
    },
    TestEnded {
        outcome: TestOutcome,
    },
    /// Something the user should know once (a counter or monitor this
    /// system cannot record); it is also stored with the run.
    Note(String),
}

/// What a run did.
#[derive(Debug, Clone, Default)]
pub struct RunSummary {
    pub runs: Vec<RunId>,
    pub outcomes: Vec<TestOutcome>,
    pub samples: usize,
    /// Stopped by the caller's stop flag (SIGINT); samples so far are kept.
    pub interrupted: bool,
    /// Stopped at a FAILED test (no `--keep-going`); samples so far are kept.
    pub stopped_at_failure: bool,
}

impl RunSummary {
    /// Whether a test of the run failed (not skipped: failed).
    pub fn any_failed(&self) -> bool {
        self.outcomes
            .iter()
            .any(|o| o.kind == TestOutcomeKind::Failed)
    }

    /// "2 of 50 tests FAILED: ..." of this run of `tests` tests; `None`
    /// when none failed.
    pub fn failed_line(&self, tests: usize) -> Option<String> {
        show::failed_line(&self.outcomes, tests, self.stopped_at_failure)
    }

    /// Records how a test ended; true when the run stops there: the test
    /// FAILED and the run does not keep going.
    pub(crate) fn end_test(&mut self, outcome: TestOutcome, keep_going: bool) -> bool {
        let stops = outcome.kind == TestOutcomeKind::Failed && !keep_going;
        self.outcomes.push(outcome);
        self.stopped_at_failure |= stops;
        stops
    }

    /// This run of `request` as its `kbench.run/1` document, from the set
    /// as stored now (`data`): what it did, and its identifier's summary of
    /// the tests it ran.
    pub fn document(&self, request: &RunRequest, data: ResultSetData) -> RunDocument {
        let data = show::of_run(data, &request.identifier, &request.tests);
        RunDocument {
            schema: "kbench.run/1",
            result_set: request.set.clone(),
            identifier: request.identifier.clone(),
            interrupted: self.interrupted,
            stopped_at_failure: self.stopped_at_failure,
            tests: request.tests.len(),
            samples_stored: self.samples,
            outcomes: self.outcomes.clone(),
            show: show::document(&data),
        }
    }
}

/// The tests that FAILED in each of several runs (`vm compare`'s kernels),
/// one line per run with any, after its identifier.
pub fn failed_lines(runs: &[(RunRequest, RunSummary)]) -> Vec<String> {
    runs.iter()
        .filter_map(|(request, summary)| {
            let line = summary.failed_line(request.tests.len())?;
            Some(format!("{}: {line}", request.identifier))
        })
        .collect()
}

/// Runs `request`, storing into `store`. `stop` is checked between events:
/// once set, the run is ended as interrupted.
pub fn execute(
    store: &mut dyn RunSink,
    launcher: &dyn Launcher,
    request: &RunRequest,
    observer: &mut dyn FnMut(RunEvent),
    stop: &AtomicBool,
) -> Result<RunSummary> {
    let mut summary = RunSummary::default();
    // One invocation at a time per identifier: a second waits for nothing
    // and is refused, rather than interleaving its rounds with this one's.
    store.lock_identifier(&request.set, &request.identifier)?;
    let mut resumable = store.unfinished_run(&request.set, &request.identifier)?;
    // Every invocation measures rounds of its own, after every round
    // stored (a partial one included), never more samples into an old one.
    let first_round = match request.replayed.as_ref().and_then(|r| r.round) {
        Some(round) => round,
        None => store
            .last_round(&request.set, &request.identifier)?
            .map_or(0, |last| last + 1),
    };
    let batched = launcher.batches_tests();
    let adaptive = request.adaptive.as_ref().filter(|_| !batched);
    let mut so_far = RoundsSoFar::default();
    for offset in 0..request.rounds.max(1) {
        let round = first_round + offset;
        // A run left unfinished (killed, interrupted) is ended as
        // interrupted with what it stored, its partial rounds its own; this
        // invocation goes on in a run of its own (its own snapshot), with
        // the tests the unfinished run had not ended.
        let resumed = resumable.is_some();
        let done = match resumable.take() {
            Some(unfinished) => close_unfinished(store, &unfinished, &request.tests)?,
            None => vec![],
        };
        let todo: Vec<&TestKey> = request
            .tests
            .iter()
            .filter(|test| !done.iter().any(|d| d.same_test(test)))
            .filter(|test| adaptive.is_none_or(|plan| !so_far.settled(test, plan)))
            .collect();
        if todo.is_empty() {
            if adaptive.is_some() && !resumed {
                break;
            }
            // The unfinished run had ended every test: it was this round.
            continue;
        }
        // Batched: the round's one stream, started here (its first event
        // is the snapshot the run is stored with).
        let mut batch: Option<Box<dyn AgentStream>> = None;
        let info = if batched {
            let tests = todo.iter().map(|&test| test.clone()).collect();
            let (stream, info) = start_batch(launcher, request, tests, stop)?;
            batch = Some(stream);
            info
        } else {
            run_info(launcher, request, stop)?
        };
        let run = store.begin_run(&request.set, &request.identifier, &info)?;
        observer(RunEvent::RoundStarted(RoundStart {
            round: offset,
            rounds: request.rounds.max(1),
            min_rounds: adaptive.map(|plan| plan.min_rounds),
            tests: todo.len(),
            resumed,
        }));
        if offset == 0 {
            let recording = recording_notes(&info.snapshot, &request.plan.record);
            recording
                .into_iter()
                .for_each(|note| observer(RunEvent::Note(note)));
        }
        summary.runs.push(run);
        let cpu_before = kbench_sysinfo::cpu_times();
        let mut round_run = RoundRun {
            store: &mut *store,
            request,
            run,
            round,
            test_ids: HashMap::new(),
        };
        // Why a batched round could not go on (its stream ended early).
        let mut failure: Option<MeasureError> = None;
        for (index, test) in request.tests.iter().enumerate() {
            if !todo.contains(&test) {
                continue;
            }
            if stop.load(Ordering::SeqCst) {
                break;
            }
            observer(RunEvent::TestStarted {
                index,
                total: request.tests.len(),
                test: test.clone(),
            });
            let outcome = match batch.as_deref_mut() {
                None => {
                    let started = std::time::Instant::now();
                    let measured =
                        round_run.run_test(launcher, test, observer, stop, &mut summary)?;
                    measured.map(|(outcome, values)| {
                        so_far.record(&outcome, &values, started.elapsed());
                        outcome
                    })
                }
                Some(stream) => {
                    let (events, _) =
                        round_run.read_test(stream, test, observer, stop, &mut summary)?;
                    if events.ended.is_some() {
                        Some(round_run.record_end(test, events)?)
                    } else {
                        let finished = batch.take().expect("batched").finish();
                        if stop.load(Ordering::SeqCst) {
                            None
                        } else {
                            let error = finished.err().unwrap_or_else(|| {
                                MeasureError::Agent(format!(
                                    "the measuring system ended without finishing {test}"
                                ))
                            });
                            let reason = format!("{error}");
                            failure = Some(error);
                            let events = TestEvents {
                                ended: Some(outcome(test, TestOutcomeKind::Failed, reason)),
                                ..events
                            };
                            Some(round_run.record_end(test, events)?)
                        }
                    }
                }
            };
            if let Some(outcome) = outcome {
                observer(RunEvent::TestEnded {
                    outcome: outcome.clone(),
                });
                // A batched round's guest runs every test anyway: its
                // round is read to the end, and no other round starts.
                if summary.end_test(outcome, request.keep_going) && batch.is_none() {
                    break;
                }
            }
            if failure.is_some() {
                break;
            }
        }
        if let Some(stream) = batch.take() {
            let finished = stream.finish();
            if failure.is_none() && !stop.load(Ordering::SeqCst) {
                failure = finished.err();
            }
        }
        let steal = cpu_before
            .zip(kbench_sysinfo::cpu_times())
            .and_then(|(before, after)| kbench_sysinfo::steal_percent(&before, &after));
        if let Some(error) = failure {
            store.end_run(run, RunStatus::Failed, steal)?;
            return Err(error.at(format!(
                "the run of '{}' failed and is marked failed; the {} sample(s) it stored are kept",
                request.identifier, summary.samples
            )));
        }
        if stop.load(Ordering::SeqCst) {
            store.end_run(run, RunStatus::Interrupted, steal)?;
            summary.interrupted = true;
            return Ok(summary);
        }
        if summary.stopped_at_failure {
            // Cut short by the failure, unless the round was a batch.
            let status = match batched {
                true => RunStatus::Complete,
                false => RunStatus::Failed,
            };
            store.end_run(run, status, steal)?;
            return Ok(summary);
        }
        store.end_run(run, RunStatus::Complete, steal)?;
    }
    Ok(summary)
}

/// Ends a run left unfinished (killed: still "running"; or interrupted)
/// with its samples kept: complete when it had ended every one of `tests`,
/// else interrupted. Returns the tests it ended, which the invocation
/// resuming it does not measure again. (Taken over first, so that an
/// upload sends its end too.)
pub(crate) fn close_unfinished(
    store: &mut dyn RunSink,
    unfinished: &RunRecord,
    tests: &[TestKey],
) -> Result<Vec<TestKey>> {
    let ended = store.ended_tests(unfinished.id)?;
    let all = tests
        .iter()
        .all(|test| ended.iter().any(|e| e.same_test(test)));
    let status = if all {
        RunStatus::Complete
    } else {
        RunStatus::Interrupted
    };
    store.resume_run(unfinished.id, std::process::id())?;
    store.end_run(unfinished.id, status, None)?;
    Ok(ended)
}

/// The run's facts: the measuring side's snapshot (taken by an agent, so
/// under the wrapper, with its cgroup) and what the runner knows.
pub(crate) fn run_info(
    launcher: &dyn Launcher,
    request: &RunRequest,
    stop: &AtomicBool,
) -> Result<RunInfo> {
    let job = AgentJob {
        snapshot: true,
        tests: vec![],
        plan: request.plan.clone(),
        tools: request.tests.clone(),
    };
    let mut stream = launcher.launch(&job)?;
    let mut snapshot: Option<SystemSnapshot> = None;
    while let Some(event) = stream.next_event() {
        if let AgentEvent::Snapshot { snapshot: s } = event? {
            snapshot = Some(*s);
        }
    }
    let finished = stream.finish();
    if stop.load(Ordering::SeqCst) {
        return Err(MeasureError::Interrupted);
    }
    finished.map_err(|e| e.at("taking the system snapshot"))?;
    let snapshot = snapshot.ok_or_else(|| {
        MeasureError::Agent("the measuring process sent no system snapshot".to_string())
    })?;
    new_run_info(snapshot, request)
}

/// Starts a batched round: one job with the snapshot and every test, and
/// the run's facts from the snapshot, its first event. A stream that ends
/// before the snapshot (a guest that never reached the agent) stores nothing.
fn start_batch(
    launcher: &dyn Launcher,
    request: &RunRequest,
    tests: Vec<TestKey>,
    stop: &AtomicBool,
) -> Result<(Box<dyn AgentStream>, RunInfo)> {
    let job = AgentJob {
        snapshot: true,
        tools: tests.clone(),
        tests,
        plan: request.plan.clone(),
    };
    let mut stream = launcher.launch(&job)?;
    match stream.next_event() {
        Some(Ok(AgentEvent::Snapshot { snapshot })) => {
            Ok((stream, new_run_info(*snapshot, request)?))
        }
        Some(Ok(other)) => Err(MeasureError::Agent(format!(
            "the measuring system sent {other:?} before its snapshot"
        ))),
        Some(Err(error)) => Err(error),
        None => {
            let finished = stream.finish();
            if stop.load(Ordering::SeqCst) {
                return Err(MeasureError::Interrupted);
            }
            let error = finished.err().unwrap_or_else(|| {
                MeasureError::Agent(
                    "the measuring system ended without sending its snapshot".to_string(),
                )
            });
            Err(error.at(format!(
                "no run of '{}' was stored: nothing was measured",
                request.identifier
            )))
        }
    }
}

fn new_run_info(snapshot: SystemSnapshot, request: &RunRequest) -> Result<RunInfo> {
    let mut notes = request.notes.clone();
    notes.extend(recording_notes(&snapshot, &request.plan.record));
    notes.extend(snapshot.tools_notes.iter().cloned());
    Ok(RunInfo {
        tool_version: snapshot.kbench_version.clone(),
        snapshot,
        host: request.host.clone(),
        wrapper: request.wrapper.clone(),
        notes,
        started_at_ms: kbench_model::now_ms(),
        pid: std::process::id(),
        uid: match &request.replayed {
            Some(replayed) => Some(replayed.uid.clone()),
            None => {
                Some(kbench_model::random_id().map_err(MeasureError::os("making the run's uid"))?)
            }
        },
    })
}

/// What the measuring system could not record of what `record` asks: the
/// counters that did not open, the monitors whose files it lacks.
fn recording_notes(snapshot: &SystemSnapshot, record: &Recording) -> Vec<String> {
    let counters = snapshot.counters_note.clone().filter(|_| record.counters);
    let monitors = record
        .monitors
        .iter()
        .filter(|m| snapshot.monitors_missing.iter().any(|n| n == m.name()))
        .map(|m| format!("monitor {m} skipped: this kernel has no {}", m.source()));
    counters.into_iter().chain(monitors).collect()
}

/// One round's run: where its samples go.
pub(crate) struct RoundRun<'a> {
    pub(crate) store: &'a mut dyn RunSink,
    pub(crate) request: &'a RunRequest,
    pub(crate) run: RunId,
    pub(crate) round: u32,
    pub(crate) test_ids: HashMap<TestKey, TestId>,
}

impl RoundRun<'_> {
    /// Runs one test in a fresh agent: how it ended and its main metric's
    /// values; `None` when interrupted mid-test (the test stays unended so a
    /// resumed run measures it again).
    pub(crate) fn run_test(
        &mut self,
        launcher: &dyn Launcher,
        test: &TestKey,
        observer: &mut dyn FnMut(RunEvent),
        stop: &AtomicBool,
        summary: &mut RunSummary,
    ) -> Result<Option<(TestOutcome, Vec<f64>)>> {
        let job = AgentJob {
            snapshot: false,
            tests: vec![test.clone()],
            plan: self.request.plan.clone(),
            tools: vec![],
        };
        let mut stream = launcher.launch(&job)?;
        let (events, values) = self.read_test(stream.as_mut(), test, observer, stop, summary)?;
        // Nothing follows a test's end; whatever might is not this test's.
        while stream.next_event().is_some() {}
        // The agent's exit status matters only when no event said why it ended.
        let finished = stream.finish();
        if stop.load(Ordering::SeqCst) && events.ended.is_none() {
            return Ok(None);
        }
        let ended = match (events.ended, finished) {
            (Some(outcome), _) => outcome,
            (None, Err(error)) => outcome(test, TestOutcomeKind::Failed, format!("{error:#}")),
            (None, Ok(())) => outcome(
                test,
                TestOutcomeKind::Failed,
                "the measuring process ended without finishing the test".to_string(),
            ),
        };
        let events = TestEvents {
            ended: Some(ended),
            ..events
        };
        Ok(Some((self.record_end(test, events)?, values)))
    }

    /// Reads `test`'s events from `stream`, committing each sample, until
    /// the event that ends the test or the end of the stream; with the
    /// values of its main metric.
    fn read_test(
        &mut self,
        stream: &mut dyn AgentStream,
        test: &TestKey,
        observer: &mut dyn FnMut(RunEvent),
        stop: &AtomicBool,
        summary: &mut RunSummary,
    ) -> Result<(TestEvents, Vec<f64>)> {
        let mut values = Vec::new();
        let events = events::read_test(stream, test, self.round, stop, &mut |arrived| {
            let id = self.test_id(&arrived.metric)?;
            self.store.add_sample(self.run, id, &arrived.sample)?;
            summary.samples += 1;
            if arrived.metric.key.metric == MAIN_METRIC {
                values.push(arrived.sample.value);
                observer(RunEvent::Sampled {
                    test: arrived.test.key.clone(),
                    samples: values.len(),
                    relative_ci: relative_ci(&values),
                });
            }
            Ok(())
        })?;
        Ok((events, values))
    }

    /// Stores how a test ended (`events.ended` is set).
    fn record_end(&mut self, test: &TestKey, events: TestEvents) -> Result<TestOutcome> {
        let ended = events.ended.expect("the test has ended");
        let id = match events.started {
            Some(spec) => self.test_id(&spec)?,
            None => {
                // Skipped or failed before starting: the test still needs a
                // row so its outcome is kept. Unit and direction are known
                // only for built-ins.
                match builtin_spec(test) {
                    Some(spec) => self.test_id(&spec)?,
                    None => return Ok(ended),
                }
            }
        };
        self.store.end_test(self.run, id, &ended)?;
        Ok(ended)
    }

    fn test_id(&mut self, spec: &TestSpec) -> Result<TestId> {
        if let Some(id) = self.test_ids.get(&spec.key) {
            return Ok(*id);
        }
        let id = self.store.test_id(&self.request.set, spec)?;
        self.test_ids.insert(spec.key.clone(), id);
        Ok(id)
    }
}

/// Unit and direction of a built-in test, from the benchmark table.
fn builtin_spec(test: &TestKey) -> Option<TestSpec> {
    let info = kbench_bench::find(&test.benchmark)?;
    Some(TestSpec {
        key: test.clone(),
        unit: info.unit.label().to_string(),
        direction: info.direction,
    })
}

#[cfg(test)]
mod failures;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sysmon::SystemMonitor;

    #[test]
    fn a_run_document_ends_with_what_was_stored_or_how_to_resume() {
        let request = RunRequest {
            set: "s".into(),
            identifier: "6.18".into(),
            tests: vec![],
            plan: SamplingPlan::default(),
            rounds: 1,
            adaptive: None,
            wrapper: None,
            notes: vec![],
            host: None,
            keep_going: false,
            replayed: None,
        };
        let data = ResultSetData {
            name: "s".into(),
            title: None,
            description: None,
            tests: vec![],
            identifiers: vec![],
        };
        let mut summary = RunSummary {
            samples: 12,
            ..RunSummary::default()
        };
        let document = summary.document(&request, data.clone());
        assert_eq!(
            (
                document.schema,
                document.samples_stored,
                document.interrupted
            ),
            ("kbench.run/1", 12, false)
        );
        assert_eq!(
            document.ending(),
            "\nStored 12 sample(s) under '6.18' in result set 's'."
        );
        summary.interrupted = true;
        assert_eq!(
            summary.document(&request, data.clone()).ending(),
            "\nInterrupted: 12 sample(s) stored. Run the same command again to resume."
        );
        // The tests that FAILED follow, each once, of the tests asked for.
        let ended = |test: &str, kind| TestOutcome {
            test: TestKey::new(test),
            kind,
            detail: String::new(),
        };
        summary.interrupted = false;
        summary.outcomes = vec![
            ended("a", TestOutcomeKind::Failed),
            ended("b", TestOutcomeKind::TargetMet),
            ended("c", TestOutcomeKind::Failed),
            ended("a", TestOutcomeKind::Failed),
        ];
        let request = RunRequest {
            tests: ["a", "b", "c", "d"].map(TestKey::new).to_vec(),
            ..request
        };
        assert!(
            summary
                .document(&request, data.clone())
                .ending()
                .ends_with("in result set 's'.\n2 of 4 tests FAILED: a, c")
        );
        summary.stopped_at_failure = true;
        assert!(summary.document(&request, data).ending().ends_with(
            "2 of 4 tests FAILED: a, c; the run stopped there (--keep-going measures the other \
             tests too)"
        ));
    }

    /// What cannot be recorded is noted only when it was asked for.
    #[test]
    fn recording_notes_name_what_was_asked_and_is_missing() {
        let snapshot = SystemSnapshot {
            counters: vec!["task_clock".into()],
            counters_note: Some("no PMU: ...".into()),
            monitors_missing: vec!["sched".into(), "psi".into()],
            ..SystemSnapshot::default()
        };
        let all = Recording::default();
        assert_eq!(
            recording_notes(&snapshot, &all),
            [
                "no PMU: ...",
                "monitor sched skipped: this kernel has no /proc/schedstat",
                "monitor psi skipped: this kernel has no /proc/pressure",
            ]
        );
        let some = Recording {
            counters: false,
            monitors: vec![SystemMonitor::Vmstat, SystemMonitor::Psi],
        };
        assert_eq!(
            recording_notes(&snapshot, &some),
            ["monitor psi skipped: this kernel has no /proc/pressure"]
        );
    }
}
