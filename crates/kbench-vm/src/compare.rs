//! The boot loops of `kbench vm run` and `vm compare`: every kernel in
//! turn for each round (A B A B ...), so that drift of the machine cancels
//! out, or a duet's two kernels booted at once, each on a host CPU of its
//! own, once per test and block. Samples are stored as they stream in.

use super::error::{Result, VmError};
use super::event::{LabEvent, Note};
use super::kernel_image::KernelImage;
use super::lab::Lab;
use super::launcher::VmLauncher;
use kbench_measure::MeasureError;
use kbench_measure::duet;
use kbench_measure::interleave::{self, BlockPlan, InterleavedRequest};
use kbench_measure::launcher::Launcher;
use kbench_measure::runner::{self, RunRequest, RunSummary};
use kbench_measure::variant::Variant;
use kbench_store::{Recorder, Results};
use std::sync::atomic::Ordering;
use std::time::Duration;

impl Lab {
    /// Boots every kernel once per round, in order, storing as it goes.
    /// Returns each kernel's request and what its runs did; stops at an
    /// interruption (the summaries say so) or a failed boot (the error).
    pub fn measure(
        &self,
        store: &mut dyn Recorder,
        rounds: u32,
        observer: &mut dyn FnMut(LabEvent),
    ) -> Result<Vec<(RunRequest, RunSummary)>> {
        let mut done: Vec<(RunRequest, RunSummary)> = self
            .guests
            .iter()
            .map(|guest| {
                let request = RunRequest {
                    identifier: guest.identifier.clone(),
                    ..self.request.clone()
                };
                (request, RunSummary::default())
            })
            .collect();
        for round in 1..=rounds {
            for (guest, (request, total)) in self.guests.iter().zip(done.iter_mut()) {
                observer(LabEvent::Note(Note::Booting {
                    round,
                    rounds,
                    kernel: guest.kernel.path.clone(),
                    identifier: guest.identifier.clone(),
                    accel: self.accel,
                    tests: request.tests.len(),
                }));
                observer(LabEvent::Started {
                    tests: request.tests.len(),
                });
                let summary = runner::execute(
                    store,
                    &guest.launcher,
                    request,
                    &mut |e| observer(LabEvent::Run(e)),
                    &self.stop,
                );
                observer(LabEvent::Ended);
                if let Some(boot) = guest.launcher.boots().last() {
                    observer(LabEvent::Note(Note::Booted(boot.clone())));
                }
                let summary = self.interrupted_if_stopped(summary)?;
                total.runs.extend(summary.runs);
                total.outcomes.extend(summary.outcomes);
                total.samples += summary.samples;
                if summary.interrupted || self.stop.load(Ordering::SeqCst) {
                    total.interrupted = true;
                    observer(LabEvent::Note(Note::Interrupted { duet: false }));
                    return Ok(done);
                }
                // No more boots after the one a test FAILED in (unless
                // the request keeps going).
                if summary.stopped_at_failure {
                    total.stopped_at_failure = true;
                    return Ok(done);
                }
                warn_if_release_differs(store, request, &guest.kernel, observer)?;
            }
        }
        Ok(done)
    }

    /// Boots the two kernels at once for every test and block, each qemu
    /// pinned to a host CPU of its own (which one drawn per block), one test
    /// per boot: `blocks` blocks per test. What each kernel's run did.
    pub fn measure_duet(
        &self,
        store: &mut dyn Recorder,
        blocks: usize,
        observer: &mut dyn FnMut(LabEvent),
    ) -> Result<Vec<(RunRequest, RunSummary)>> {
        let variants: Vec<Variant> = self
            .guests
            .iter()
            .map(|g| Variant {
                name: g.identifier.clone(),
                ..Variant::default()
            })
            .collect();
        let pinned: Vec<[VmLauncher; 2]> = self
            .guests
            .iter()
            .map(|g| [g.launcher.for_duet(0), g.launcher.for_duet(1)])
            .collect();
        let requests: Vec<RunRequest> = variants
            .iter()
            .map(|v| {
                let mut request = RunRequest {
                    identifier: v.name.clone(),
                    ..self.request.clone()
                };
                request.notes.extend(duet::note(&variants, v, true));
                request
            })
            .collect();
        let seed = duet::random_seed()?;
        let request = InterleavedRequest {
            requests: requests.clone(),
            launchers: self
                .guests
                .iter()
                .map(|g| &g.launcher as &dyn Launcher)
                .collect(),
            variants,
            blocks: BlockPlan {
                min_blocks: blocks,
                max_blocks: blocks,
                // No precision target and no time limit: the block count
                // decides, as boots have a fixed cost.
                target_ci: 0.0,
                budget: Duration::from_secs(365 * 86_400),
            },
            seed,
            duet: Some([
                [&pinned[0][0], &pinned[0][1]],
                [&pinned[1][0], &pinned[1][1]],
            ]),
        };
        let tests = self.request.tests.len();
        observer(LabEvent::Note(Note::BootingDuet {
            identifiers: [
                self.guests[0].identifier.clone(),
                self.guests[1].identifier.clone(),
            ],
            accel: self.accel,
            blocks,
            tests,
            seed,
        }));
        observer(LabEvent::Started { tests });
        let summary = interleave::execute(
            store,
            &request,
            &mut |e| observer(LabEvent::Run(e)),
            &self.stop,
        );
        observer(LabEvent::Ended);
        let summary = self.interrupted_if_stopped(summary)?;
        if summary.interrupted {
            observer(LabEvent::Note(Note::Interrupted { duet: true }));
        }
        for (guest, request) in self.guests.iter().zip(&requests) {
            warn_if_release_differs(store, request, &guest.kernel, observer)?;
        }
        Ok(requests
            .into_iter()
            .map(|request| (request, summary.clone()))
            .collect())
    }

    /// A measurement that failed because Ctrl-C stopped it (a guest killed
    /// while it booted stored nothing of its round) is an interrupted one.
    fn interrupted_if_stopped(
        &self,
        summary: Result<RunSummary, MeasureError>,
    ) -> Result<RunSummary> {
        match summary {
            Err(_) if self.stop.load(Ordering::SeqCst) => Ok(RunSummary {
                interrupted: true,
                ..RunSummary::default()
            }),
            other => Ok(other?),
        }
    }
}

/// The guest reports its own release; say so when it is not the image's.
fn warn_if_release_differs(
    store: &mut dyn Results,
    request: &RunRequest,
    kernel: &KernelImage,
    observer: &mut dyn FnMut(LabEvent),
) -> Result<(), VmError> {
    let data = store.load(&request.set)?;
    let guest_release = data
        .identifiers
        .iter()
        .find(|i| i.name == request.identifier)
        .and_then(|i| i.runs.last())
        .map(|run| run.info.snapshot.kernel_release.clone());
    if let (Some(guest), Some(image)) = (guest_release, kernel.release.as_deref())
        && guest != image
    {
        observer(LabEvent::Note(Note::Warning(format!(
            "{} says it is {image}, but the guest reported {guest}",
            kernel.path.display()
        ))));
    }
    Ok(())
}
