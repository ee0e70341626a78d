//! `kbench vm`: boot kernels in qemu with kbench as their init and measure
//! in them; `vm compare` boots them in turn (A B A B ...), or both at once
//! (`--duet`), and prints the comparison. The flags, and the glue to
//! kbench-vm's [`Lab`], which does the work: its events become the progress
//! bar and the lines on stderr.

use super::context::{Db, EXIT_INTERRUPTED, EXIT_TEST_FAILED, upload_target, with_upload};
use crate::cli::{SamplingArgs, VmCommand, VmCompareArgs, VmOptions};
use crate::progress::Progress;
use kbench_measure::runner::{RunRequest, RunSummary};
use kbench_store::Database;
use kbench_vm::{Guests, Lab, LabEvent};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

pub fn vm(command: VmCommand, db: &Db, profiles: &[PathBuf]) -> anyhow::Result<ExitCode> {
    match command {
        VmCommand::Run(args) => {
            let kernels = vec![(args.kernel.clone(), args.identifier.clone())];
            let upload = upload_target(&args.upload)?;
            let (lab, mut store) = prepare(
                kernels,
                &args.names,
                &args.into,
                &args.sampling,
                &args.vm,
                (db, profiles),
            )?;
            let (done, uploaded) =
                kbench_fleet::mirror::mirrored(store.as_mut(), upload.as_ref(), |store| {
                    lab.measure(store, args.rounds, &mut shown())
                });
            let ended = done.map_err(anyhow::Error::from).and_then(|mut done| {
                let (request, summary) = done.pop().expect("one kernel");
                super::run::report(store.as_mut(), &request, &summary, args.json)
            });
            with_upload(ended, uploaded.as_ref())
        }
        VmCommand::Compare(args) => compare(args, db, profiles),
    }
}

fn compare(mut args: VmCompareArgs, db: &Db, profiles: &[PathBuf]) -> anyhow::Result<ExitCode> {
    let kernels = args.compared.pairs()?;
    if args.duet {
        kbench_vm::lab::check_duet(kernels.len(), args.vm.cpus, &args.compared.names)?;
        args.vm.cpus = Some(1);
    }
    let (lab, mut store) = prepare(
        kernels,
        &args.compared.names,
        &args.into,
        &args.sampling,
        &args.vm,
        (db, profiles),
    )?;
    let done = match args.duet {
        true => lab.measure_duet(
            store.as_mut(),
            args.blocks
                .map_or(kbench_measure::interleave::BlockPlan::MIN_BLOCKS, |b| {
                    b as usize
                }),
            &mut shown(),
        )?,
        false => lab.measure(store.as_mut(), args.rounds, &mut shown())?,
    };
    drop((lab, store));
    if done.iter().any(|(_, summary)| summary.interrupted) {
        return Ok(ExitCode::from(EXIT_INTERRUPTED));
    }
    // Stopped at a FAILED test: nothing whole to compare.
    if done.iter().any(|(_, summary)| summary.stopped_at_failure) {
        return Ok(failed(&done).expect("a test FAILED"));
    }
    let identifiers: Vec<String> = done.iter().map(|(r, _)| r.identifier.clone()).collect();
    crate::logs::note(format_args!(
        "\nStored {} {} of {} in result set '{}'; `kbench compare {}` shows this again.\n",
        args.blocks.unwrap_or(args.rounds),
        if args.duet { "block(s)" } else { "round(s)" },
        identifiers.join(", "),
        args.into,
        args.into
    ));
    let code = super::compare::compare(args.comparison(&identifiers), db)?;
    Ok(failed(&done)
        .filter(|_| code == ExitCode::SUCCESS)
        .unwrap_or(code))
}

/// Says which tests FAILED on each kernel; the exit status when any did.
fn failed(done: &[(RunRequest, RunSummary)]) -> Option<ExitCode> {
    let lines = kbench_measure::runner::failed_lines(done);
    lines.iter().for_each(|line| eprintln!("{line}"));
    (!lines.is_empty()).then(|| ExitCode::from(EXIT_TEST_FAILED))
}

/// The lab for `kernels` with every input checked and the accelerator
/// chosen, and the store it measures into; Ctrl-C (SIGINT, SIGTERM) stops
/// it from the moment the store is open.
fn prepare(
    kernels: Vec<(String, Option<String>)>,
    names: &[String],
    set: &str,
    sampling: &SamplingArgs,
    vm: &VmOptions,
    (db, profile_dirs): (&Db, &[PathBuf]),
) -> anyhow::Result<(Lab, Box<dyn Database>)> {
    let request = vm.lab_request(kernels, (names, set), sampling, profile_dirs)?;
    let location = db.location()?;
    let stop = Arc::new(AtomicBool::new(false));
    let logs = location.data_dir().join("vm-logs");
    let guests = Guests::prepare(&request, &logs, stop.clone(), &mut shown())?;
    let store = location.open()?;
    kbench_measure::agent::stop_on_signals(&stop)?;
    Ok((guests.choose_accel(&mut shown())?, store))
}

/// Shows the lab's events on stderr: a progress bar per run, a line per
/// note (none with -q).
fn shown() -> impl FnMut(LabEvent) {
    let mut progress: Option<Progress> = None;
    let mut rootfs = crate::progress::RootfsProgress::default();
    move |event| match event {
        LabEvent::Rootfs(step) => rootfs.observe(&step),
        LabEvent::Note(note) => crate::logs::note(note),
        LabEvent::Started { tests } => progress = Some(Progress::new(tests)),
        LabEvent::Run(event) => progress.as_mut().expect("a run started").observe(event),
        LabEvent::Ended => progress.take().expect("a run started").finish(),
    }
}
