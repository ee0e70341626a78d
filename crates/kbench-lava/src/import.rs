//! A finished LAVA job's results into a result set: each boot's block
//! ([`crate::blocks`]) replayed to kbench-measure's runner as a recorded
//! agent ([`kbench_measure::launcher::Recorded`]), so that it is stored as
//! a live guest's run is, one run per boot, each boot told by its guest's
//! boot id. A boot stored already (the same identifier and boot id: the
//! log imported twice, or its runs pushed before) is not stored again; a
//! boot that came up in another kernel is refused; a boot LAVA failed is
//! named with LAVA's error.

use crate::blocks::{self, BootBlock};
use crate::definition::namespace;
use crate::error::{Result, refuse};
use crate::log::LavaLog;
use kbench_model::AgentEvent;
use kbench_store::Recorder;
use kbench_store::outline::{OutlinePages, Window};
use kbench_vm::console_frames::{BEGIN, BlockHeader};
use serde::Serialize;

/// What became of one boot.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "outcome")]
pub enum Outcome {
    /// Stored: its run, and how many samples.
    Stored { samples: usize, failed_tests: usize },
    /// Stored before (its identifier and boot id).
    AlreadyStored,
    /// The guest came up in another kernel than its plan's, and measured
    /// nothing.
    Refused { reason: String },
    /// It did not end whole: why, and what of it was kept (the runner's
    /// words), or that it never ran.
    Failed { reason: String },
}

/// One boot, as imported.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ImportedBoot {
    /// Its place in the job, from 1 (its namespace `bootN`).
    pub boot: u32,
    /// `None` when its block could not tell.
    pub identifier: Option<String>,
    /// The release its guest reported.
    pub release: Option<String>,
    /// Its guest's boot id, which tells a boot stored before.
    pub boot_id: Option<String>,
    #[serde(flatten)]
    pub outcome: Outcome,
    /// Why its events stop short, when they do (what was before is
    /// stored).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cut: Option<String>,
}

impl std::fmt::Display for ImportedBoot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let who = match (&self.identifier, &self.release) {
            (Some(identifier), Some(release)) if identifier != release => {
                format!(" of '{identifier}' ({release})")
            }
            (Some(identifier), _) => format!(" of '{identifier}'"),
            _ => String::new(),
        };
        write!(f, "boot {}{who}: ", self.boot)?;
        match &self.outcome {
            Outcome::Stored {
                samples,
                failed_tests,
            } => {
                write!(f, "stored, {samples} samples")?;
                if *failed_tests > 0 {
                    write!(f, ", {failed_tests} test(s) FAILED")?;
                }
            }
            Outcome::AlreadyStored => write!(f, "stored before (the same boot id); not again")?,
            Outcome::Refused { reason } => write!(f, "refused: {reason}")?,
            Outcome::Failed { reason } => return write!(f, "failed: {reason}"),
        }
        match &self.cut {
            Some(cut) => write!(f, "; its results stop short: {cut}"),
            None => Ok(()),
        }
    }
}

impl Imported {
    /// What kept results back besides each boot's own line: results
    /// blocks that tell no boot, and LAVA's error of the job.
    pub fn problems(&self) -> Vec<String> {
        let lava = self.job_error.iter().map(|e| format!("LAVA: {e}"));
        self.unreadable.iter().cloned().chain(lava).collect()
    }

    /// Whether every boot was stored whole (now or before) and LAVA
    /// raised no error.
    pub fn complete(&self) -> bool {
        self.unreadable.is_empty()
            && self.job_error.is_none()
            && self.boots.iter().all(|boot| {
                boot.cut.is_none()
                    && matches!(
                        boot.outcome,
                        Outcome::Stored {
                            failed_tests: 0,
                            ..
                        } | Outcome::AlreadyStored
                    )
            })
    }
}

/// The import of one log.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Imported {
    pub boots: Vec<ImportedBoot>,
    /// Results blocks that could not be told to a boot.
    pub unreadable: Vec<String>,
    /// LAVA's error of the job, when it failed.
    pub job_error: Option<String>,
}

/// Checks, before any store is opened, that `set` is a name and that
/// `log` holds kbench's results or LAVA's word on why it has none.
pub fn check(log: &LavaLog, set: &str) -> Result<()> {
    kbench_model::validate_name("result set", set).map_err(crate::LavaError::Invalid)?;
    let has_block = log.console.iter().any(|line| line.trim_end() == BEGIN);
    if !has_block && log.results.is_empty() {
        refuse!(
            "the log holds no kbench results block and no LAVA results: give the log of a job \
             `kbench lava job` wrote (lava-run's output, or the server's job log)"
        );
    }
    Ok(())
}

/// Stores the boots of `log` into `set`; `source` (the log's path, or the
/// job's URL) goes into each run's notes; `observe` hears each boot as
/// it is done.
pub fn import(
    store: &mut dyn Recorder,
    set: &str,
    log: &LavaLog,
    source: &str,
    observe: &mut dyn FnMut(&ImportedBoot),
) -> Result<Imported> {
    check(log, set)?;
    let read = blocks::read(&log.console);
    let mut stored = stored_boot_ids(store, set)?;
    let planned = read
        .blocks
        .iter()
        .map(|b| b.header.plan.boots)
        .max()
        .unwrap_or(0);
    let mut imported = Imported {
        unreadable: read.unreadable,
        job_error: log.job_error(),
        ..Imported::default()
    };
    for block in read.blocks {
        let boot = store_boot(store, set, block, source, &stored)?;
        if let (Some(identifier), Some(boot_id), Outcome::Stored { .. }) =
            (&boot.identifier, &boot.boot_id, &boot.outcome)
        {
            stored.push((identifier.clone(), boot_id.clone()));
        }
        observe(&boot);
        imported.boots.push(boot);
    }
    // Boots LAVA failed before their guest said anything.
    let seen: Vec<u32> = imported.boots.iter().map(|b| b.boot).collect();
    let mut namespaces: Vec<u32> = log
        .results
        .iter()
        .filter_map(|r| r.namespace.as_deref()?.strip_prefix("boot")?.parse().ok())
        .filter(|boot| !seen.contains(boot))
        .collect();
    namespaces.sort_unstable();
    namespaces.dedup();
    let mut failed: Vec<(u32, String)> = namespaces
        .into_iter()
        .filter_map(|boot| Some((boot, log.failed_action(&namespace(boot))?)))
        .collect();
    // Boots of the plan that left no trace: the job stopped before them.
    let heard: Vec<u32> = seen
        .iter()
        .copied()
        .chain(failed.iter().map(|(b, _)| *b))
        .collect();
    for boot in (1..=planned).filter(|boot| !heard.contains(boot)) {
        let reason = "it never ran: the job stopped before it".to_string();
        failed.push((boot, reason));
    }
    for (boot, reason) in failed {
        let boot = ImportedBoot {
            boot,
            identifier: None,
            release: None,
            boot_id: None,
            outcome: Outcome::Failed { reason },
            cut: None,
        };
        observe(&boot);
        imported.boots.push(boot);
    }
    imported.boots.sort_by_key(|b| b.boot);
    Ok(imported)
}

/// One block into the store, unless it is refused or stored already.
fn store_boot(
    store: &mut dyn Recorder,
    set: &str,
    block: BootBlock,
    source: &str,
    stored: &[(String, String)],
) -> Result<ImportedBoot> {
    let BootBlock {
        header,
        events,
        cut,
    } = block;
    let boot_id = kbench_vm::console_replay::boot_id(&events).map(str::to_string);
    let outcome = match (&header.refused, &boot_id) {
        (Some(reason), _) => Outcome::Refused {
            reason: reason.clone(),
        },
        (None, None) => Outcome::Failed {
            reason: format!(
                "its guest sent no snapshot{}",
                cut.as_deref().map_or(String::new(), |c| format!(": {c}"))
            ),
        },
        (None, Some(id)) if stored.contains(&(header.plan.identifier.clone(), id.clone())) => {
            Outcome::AlreadyStored
        }
        (None, Some(_)) => replay(store, set, &header, (events, cut.clone()), source)?,
    };
    Ok(ImportedBoot {
        boot: header.plan.boot,
        identifier: Some(header.plan.identifier.clone()),
        release: Some(header.release.clone()),
        boot_id,
        outcome,
        cut,
    })
}

/// A boot's events (and why they stop short, if they do) stored through
/// the runner, as a live guest's run.
fn replay(
    store: &mut dyn Recorder,
    set: &str,
    header: &BlockHeader,
    events: (Vec<AgentEvent>, Option<String>),
    source: &str,
) -> Result<Outcome> {
    // One text for every boot of the job, so that reports say it once.
    let note = format!(
        "booted by LAVA, one run per boot ({} of them): {source}",
        header.plan.boots
    );
    Ok(
        match kbench_vm::console_replay::store(store, set, header, events, note) {
            Ok(summary) => Outcome::Stored {
                samples: summary.samples,
                failed_tests: summary
                    .outcomes
                    .iter()
                    .filter(|o| o.kind == kbench_store::TestOutcomeKind::Failed)
                    .count(),
            },
            Err(error) => Outcome::Failed {
                reason: error.to_string(),
            },
        },
    )
}

/// The (identifier, boot id) of every run stored in `set`, if it exists:
/// from its outline, which reads runs without their samples.
fn stored_boot_ids(store: &mut dyn Recorder, set: &str) -> Result<Vec<(String, String)>> {
    if !store.result_sets()?.iter().any(|s| s.name == set) {
        return Ok(Vec::new());
    }
    let every = Window {
        offset: 0,
        limit: usize::MAX,
    };
    let none = Window {
        offset: 0,
        limit: 0,
    };
    let outline = store.outline(
        set,
        OutlinePages {
            identifiers: every,
            tests: none,
        },
    )?;
    Ok(outline
        .identifiers
        .into_iter()
        .flat_map(|i| {
            i.runs
                .into_iter()
                .map(move |run| (i.name.clone(), run.info.snapshot.boot_id))
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::{LavaResult, read};
    use kbench_measure::agent::AgentJob;
    use kbench_model::{Direction, SystemSnapshot, TestKey};
    use kbench_store::Results;
    use kbench_vm::console_frames::{BlockHeader, ConsoleBoot, END, frame};

    fn job() -> AgentJob {
        let tests = vec![TestKey::new("syscall-null")];
        AgentJob {
            snapshot: true,
            tools: tests.clone(),
            tests,
            plan: Default::default(),
        }
    }

    /// A boot's block as a guest of `release` writes it, its plan naming
    /// `planned`; with `samples` of syscall-null.
    fn block(
        boot: u32,
        identifier: &str,
        planned: &str,
        release: &str,
        samples: &[f64],
    ) -> Vec<String> {
        let plan = ConsoleBoot {
            identifier: identifier.into(),
            boot,
            boots: 4,
            release: Some(planned.into()),
            // Boot 1 is its identifier's first: round 0; a later boot of
            // the job, round 3 (the stored runs do not decide).
            round: Some(if boot == 1 { 0 } else { 3 }),
        };
        let header = BlockHeader::new(plan, release.into(), job());
        let snapshot = SystemSnapshot {
            kernel_release: release.into(),
            boot_id: format!("boot-id-{boot}"),
            ..SystemSnapshot::default()
        };
        let mut events = vec![
            AgentEvent::Snapshot {
                snapshot: Box::new(snapshot),
            },
            AgentEvent::TestStart {
                test: TestKey::new("syscall-null"),
                unit: "ns".into(),
                direction: Direction::Lower,
                iterations: 100,
            },
        ];
        events.extend(samples.iter().map(|&value| AgentEvent::Sample {
            metric: kbench_model::MAIN_METRIC.into(),
            value,
            iterations: 100,
            at_ms: 1,
        }));
        events.push(AgentEvent::TestEnd {
            target_met: true,
            stop: "target met".into(),
        });
        let mut lines = vec![
            BEGIN.to_string(),
            frame(0, &serde_json::to_string(&header).unwrap()),
        ];
        if header.refused.is_some() {
            lines.push(format!("{END} 1"));
            return lines;
        }
        for (seq, event) in events.iter().enumerate() {
            lines.push(frame(
                seq as u64 + 1,
                &serde_json::to_string(event).unwrap(),
            ));
        }
        lines.push(format!("{END} {}", events.len() + 1));
        lines
    }

    #[test]
    fn boots_stored_once_refused_failed_and_never_run_are_each_said() {
        let (_dir, mut store) = kbench_store::testing::temp_store();
        let mut console = block(1, "old", "6.1", "6.1", &[10.0, 11.0, 12.0]);
        console.extend(block(2, "new", "6.12", "6.1", &[]));
        let log = LavaLog {
            console,
            results: vec![LavaResult {
                definition: "lava".into(),
                case: "lava-test-monitor".into(),
                result: "fail".into(),
                namespace: Some("boot3".into()),
                error_msg: Some("lava-test-monitor timed out after 60 seconds".into()),
                error_type: Some("Test".into()),
            }],
            unreadable: 0,
        };
        let imported = import(&mut store, "lab", &log, "job.log", &mut |_| {}).unwrap();
        let said: Vec<String> = imported.boots.iter().map(|b| b.to_string()).collect();
        assert_eq!(
            said,
            [
                "boot 1 of 'old' (6.1): stored, 3 samples",
                "boot 2 of 'new' (6.1): refused: boot 2 of 'new' came up in kernel 6.1, not 6.12: \
                 nothing was measured",
                "boot 3: failed: lava-test-monitor failed: Test error: lava-test-monitor timed \
                 out after 60 seconds",
                "boot 4: failed: it never ran: the job stopped before it",
            ]
        );
        assert!(!imported.complete());
        let data = store.load("lab").unwrap();
        assert_eq!(data.identifiers.len(), 1, "the refused boot stored nothing");
        let run = &data.identifiers[0].runs[0];
        assert_eq!(run.info.snapshot.kernel_release, "6.1");
        let uid = kbench_vm::console_replay::run_uid("lab", "old", "boot-id-1");
        assert_eq!(
            run.info.uid.as_deref(),
            Some(uid.as_str()),
            "the boot's uid"
        );
        assert_ne!(
            uid,
            kbench_vm::console_replay::run_uid("other", "old", "boot-id-1"),
            "another set, another uid"
        );
        assert!(
            data.identifiers[0]
                .samples
                .values()
                .flatten()
                .all(|s| s.round == 0),
            "the plan's round"
        );

        // Read back again (a second import of the log): stored once.
        let again = import(&mut store, "lab", &log, "job.log", &mut |_| {}).unwrap();
        assert_eq!(again.boots[0].outcome, Outcome::AlreadyStored);
        assert_eq!(store.load("lab").unwrap(), data);
    }

    #[test]
    fn a_log_without_results_is_refused_before_anything_is_stored() {
        let error = check(&read("[ 0.1] Linux version 6.1\n"), "lab").unwrap_err();
        assert!(
            error.to_string().contains("no kbench results block"),
            "{error}"
        );
        assert!(check(&read(""), "bad/name").is_err());
    }
}
