//! The one reader of an agent's events (kbench-model's [`AgentEvent`]):
//! one test's events from a launcher's stream, each sample handed on as
//! the [`Sample`] the agent measured (its iteration count and time kept)
//! with its metric's spec, and how the test ended. The runner stores what
//! it reads; kbench-bisect takes a guest's samples of one metric.

use crate::error::{MeasureError, Result};
use crate::launcher::AgentStream;
use kbench_model::{AgentEvent, Direction, Sample, TestKey, TestSpec};
use kbench_store::{TestOutcome, TestOutcomeKind};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};

/// One sample as it arrives.
pub struct MetricSample<'a> {
    /// The test as the agent started it.
    pub test: &'a TestSpec,
    /// The sample's metric: the test's unit and direction, or those its
    /// `Metric` event declared.
    pub metric: TestSpec,
    pub sample: Sample,
}

/// What the events of one test said.
#[derive(Debug, Clone, PartialEq)]
pub struct TestEvents {
    /// The test as the agent started it.
    pub started: Option<TestSpec>,
    /// How it ended; `None` when the stream ended first.
    pub ended: Option<TestOutcome>,
}

/// Reads `test`'s events from `stream` until the event that ends the test
/// or the end of the stream, handing each sample (of round `round`) to
/// `on_sample` as it arrives. Once `stop` is set the agent is asked to stop,
/// and what it still sends is read. A secondary metric whose name would
/// make the test's name too long (a monitor's name comes from /proc) is
/// dropped, not the test.
pub fn read_test(
    stream: &mut dyn AgentStream,
    test: &TestKey,
    round: u32,
    stop: &AtomicBool,
    on_sample: &mut dyn FnMut(MetricSample<'_>) -> Result<()>,
) -> Result<TestEvents> {
    let mut started: Option<TestSpec> = None;
    // Metrics declared with their own unit and direction.
    let mut declared: HashMap<String, (String, Direction)> = HashMap::new();
    let mut interrupted = false;
    while let Some(event) = stream.next_event() {
        if !interrupted && stop.load(Ordering::SeqCst) {
            // Stopped (e.g. SIGTERM to kbench alone): pass it on, and keep
            // reading what the agent still sends.
            stream.interrupt();
            interrupted = true;
        }
        let ended = match event? {
            AgentEvent::TestStart {
                test: key,
                unit,
                direction,
                ..
            } => {
                started = Some(TestSpec {
                    key,
                    unit,
                    direction,
                });
                continue;
            }
            AgentEvent::Sample {
                metric,
                value,
                iterations,
                at_ms,
            } => {
                let spec = started.as_ref().ok_or_else(|| {
                    MeasureError::Agent(
                        "the measuring process sent a sample before its test started".to_string(),
                    )
                })?;
                let metric_spec = match declared.get(&metric) {
                    Some((unit, direction)) => TestSpec {
                        key: spec.key.with_metric(&metric),
                        unit: unit.clone(),
                        direction: *direction,
                    },
                    None => TestSpec {
                        key: spec.key.with_metric(&metric),
                        ..spec.clone()
                    },
                };
                if kbench_model::is_secondary_metric(&metric)
                    && kbench_model::check_test_spec(&metric_spec).is_err()
                {
                    continue;
                }
                on_sample(MetricSample {
                    test: spec,
                    metric: metric_spec,
                    sample: Sample {
                        value,
                        iterations,
                        at_ms,
                        round,
                    },
                })?;
                continue;
            }
            AgentEvent::TestEnd {
                target_met,
                stop: reason,
            } => {
                let kind = if target_met {
                    TestOutcomeKind::TargetMet
                } else {
                    TestOutcomeKind::BudgetHit
                };
                let key = started.as_ref().map_or(test, |spec| &spec.key);
                outcome(key, kind, reason)
            }
            AgentEvent::Skip { reason, .. } => outcome(test, TestOutcomeKind::Skipped, reason),
            AgentEvent::Failed { reason, .. } => outcome(test, TestOutcomeKind::Failed, reason),
            AgentEvent::Metric {
                metric,
                unit,
                direction,
            } => {
                declared.insert(metric, (unit, direction));
                continue;
            }
            AgentEvent::Snapshot { .. } => continue,
        };
        return Ok(TestEvents {
            started,
            ended: Some(ended),
        });
    }
    Ok(TestEvents {
        started,
        ended: None,
    })
}

/// `test` ended as `kind`, for `detail`'s reason.
pub(crate) fn outcome(test: &TestKey, kind: TestOutcomeKind, detail: String) -> TestOutcome {
    TestOutcome {
        test: test.clone(),
        kind,
        detail,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::launcher::Replay;
    use kbench_model::MAIN_METRIC;

    fn start(key: &TestKey) -> AgentEvent {
        AgentEvent::TestStart {
            test: key.clone(),
            unit: "ns".into(),
            direction: Direction::Lower,
            iterations: 1000,
        }
    }

    fn sample(metric: &str, value: f64, at_ms: i64) -> AgentEvent {
        AgentEvent::Sample {
            metric: metric.into(),
            value,
            iterations: 1000,
            at_ms,
        }
    }

    /// Reads `events` as test `key`'s, in round 3: what ended it and every
    /// sample with its metric's spec.
    fn read(key: &TestKey, events: Vec<AgentEvent>) -> (TestEvents, Vec<(TestSpec, Sample)>) {
        let mut stream = Replay::new(events);
        let mut samples = Vec::new();
        let events = read_test(&mut stream, key, 3, &AtomicBool::new(false), &mut |s| {
            samples.push((s.metric, s.sample));
            Ok(())
        })
        .unwrap();
        (events, samples)
    }

    #[test]
    fn samples_keep_what_the_agent_measured_and_their_metrics_spec() {
        let key = TestKey::new("syscall-null");
        let events = vec![
            start(&key),
            sample(MAIN_METRIC, 80.0, 1_700_000_000_001),
            AgentEvent::Metric {
                metric: "lat".into(),
                unit: "ms".into(),
                direction: Direction::Higher,
            },
            sample("lat", 2.0, 1_700_000_000_002),
            AgentEvent::TestEnd {
                target_met: true,
                stop: "target".into(),
            },
            sample(MAIN_METRIC, 99.0, 1_700_000_000_003),
        ];
        let (events, samples) = read(&key, events);
        assert_eq!(
            samples[0].1,
            Sample {
                value: 80.0,
                iterations: 1000,
                at_ms: 1_700_000_000_001,
                round: 3
            }
        );
        assert_eq!(samples[0].0.key, key.with_metric(MAIN_METRIC));
        assert_eq!(samples[1].0.unit, "ms");
        assert_eq!(samples[1].0.direction, Direction::Higher);
        assert_eq!(samples.len(), 2, "nothing after the test's end is read");
        assert_eq!(events.started.unwrap().unit, "ns");
        assert_eq!(events.ended.unwrap().kind, TestOutcomeKind::TargetMet);
    }

    #[test]
    fn a_skip_ends_the_test_and_a_sample_before_its_start_is_an_error() {
        let key = TestKey::new("pipe-lat");
        let skipped = vec![AgentEvent::Skip {
            test: key.clone(),
            reason: "one CPU".into(),
        }];
        let (events, _) = read(&key, skipped);
        let ended = events.ended.unwrap();
        assert_eq!(
            (ended.kind, ended.detail.as_str()),
            (TestOutcomeKind::Skipped, "one CPU")
        );
        let (events, _) = read(&key, vec![start(&key)]);
        assert_eq!(events.ended, None, "the stream ended first");
        let mut early = Replay::new(vec![sample(MAIN_METRIC, 1.0, 0)]);
        let error = read_test(
            &mut early,
            &key,
            0,
            &AtomicBool::new(false),
            &mut |_| Ok(()),
        )
        .unwrap_err();
        assert!(
            error.to_string().contains("before its test started"),
            "{error}"
        );
    }
}
