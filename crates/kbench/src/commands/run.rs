//! `kbench run`: measure, storing every sample as it arrives, then print
//! the summary of what was run.

use super::context::{EXIT_INTERRUPTED, print_json, sampling_plan, upload_target, with_upload};
use crate::cli::RunArgs;
use crate::progress::Progress;
use anyhow::Context;
use kbench_catalog::PROFILES_ENV;
use kbench_catalog::profile::Profiles;
use kbench_fleet::mirror::mirrored;
use kbench_measure::adaptive::AdaptiveRounds;
use kbench_measure::launcher::ProcessLauncher;
use kbench_measure::redo;
use kbench_measure::runner::{self, RunRequest, RunSummary};
use kbench_report::format::{Render, Style, Text};
use kbench_report::interference::DisturbedRound;
use kbench_report::show;
use kbench_store::{Database, Results};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

pub fn run(
    args: RunArgs,
    profile_dirs: &[PathBuf],
    store: &mut dyn Database,
) -> anyhow::Result<ExitCode> {
    if !args.variant.is_empty() || !args.variants.is_empty() {
        return super::variants::run(args, profile_dirs, store);
    }
    let mut plan = sampling_plan(&args.sampling)?;
    let adaptive = match args.rounds {
        Some(_) => None,
        None => Some(AdaptiveRounds::for_plan(&mut plan, args.budget)?),
    };
    let profiles = Profiles::load(profile_dirs)?;
    let tests = kbench_catalog::expand_with(&args.names, &profiles)?;
    // Missing tools are reported before anything is stored.
    profiles.check_installed(&tests)?;
    let identifier = args.identifier.clone().unwrap_or_else(kernel_release);
    kbench_model::validate_name("identifier", &identifier).map_err(anyhow::Error::msg)?;
    kbench_model::validate_name("result set", &args.into).map_err(anyhow::Error::msg)?;
    let exe = std::env::current_exe()
        .context("finding the kbench binary to run as the measuring process")?;
    let mut launcher = ProcessLauncher::new(exe, args.wrap.as_deref())?;
    if !profile_dirs.is_empty() {
        // The agent reads the user's profiles from the environment.
        launcher = launcher.with_env(PROFILES_ENV, std::env::join_paths(profile_dirs)?);
    }
    let stop = Arc::new(AtomicBool::new(false));
    kbench_measure::agent::stop_on_signals(&stop)?;
    let request = RunRequest {
        set: args.into.clone(),
        identifier: identifier.clone(),
        tests,
        plan,
        rounds: args.rounds.unwrap_or(kbench_measure::adaptive::MAX_ROUNDS),
        adaptive,
        wrapper: args.wrap.clone(),
        notes: vec![],
        host: None,
    };
    let upload = upload_target(&args.upload)?;
    let rounds = request
        .adaptive
        .as_ref()
        .map_or(request.rounds, |a| a.min_rounds);
    let mut progress = Progress::new(request.tests.len() * rounds as usize);
    let mut redone = vec![];
    // Factors go to the identifier once a run has made it.
    let mut measured = false;
    let (summary, uploaded) = mirrored(store, upload.as_ref(), |store| {
        let mut observe = |e| progress.observe(e);
        let mut summary = runner::execute(store, &launcher, &request, &mut observe, &stop)?;
        measured = true;
        if args.redo_disturbed && !summary.interrupted {
            let stored = store.load(&request.set)?;
            redone = redo::redo_disturbed(
                store,
                &launcher,
                &request,
                &stored,
                &mut observe,
                &stop,
                &mut summary,
            )?;
        }
        Ok(summary)
    });
    progress.finish();
    if measured && !args.factors.is_empty() {
        let levels = args.factors.into_iter().collect();
        store.set_factors(&request.set, &request.identifier, &levels, &[])?;
    }
    print_redone(&redone);
    let ended = summary.and_then(|summary| report(store, &request, &summary, args.json));
    with_upload(ended, uploaded.as_ref())
}

/// Prints what a run stored (its identifier's summary, or the
/// `kbench.run/1` document) and picks the exit status.
pub(crate) fn report(
    store: &mut dyn Results,
    request: &RunRequest,
    summary: &RunSummary,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let data = show::of_run(
        store.load(&request.set)?,
        &request.identifier,
        &request.tests,
    );
    if json {
        print_json(&show::RunDocument {
            schema: "kbench.run/1",
            result_set: request.set.clone(),
            identifier: request.identifier.clone(),
            interrupted: summary.interrupted,
            samples_stored: summary.samples,
            outcomes: summary.outcomes.clone(),
            show: show::document(&data),
        })?;
    } else {
        print!("{}", Text.render(&show::document(&data), Style::default()));
        print_ending(summary, request);
    }
    Ok(if summary.interrupted {
        ExitCode::from(EXIT_INTERRUPTED)
    } else {
        ExitCode::SUCCESS
    })
}

/// The running kernel's release, the default identifier.
fn kernel_release() -> String {
    std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown-kernel".to_string())
}

/// Says which disturbed rounds `--redo-disturbed` ran again, and why.
fn print_redone(redone: &[DisturbedRound]) {
    if redone.is_empty() {
        return;
    }
    eprintln!("Ran {} disturbed round(s) again:", redone.len());
    for round in redone {
        let why: Vec<String> = round.reasons.iter().map(ToString::to_string).collect();
        eprintln!(
            "  {}, stored round {}: {}",
            round.test,
            round.round,
            why.join(", ")
        );
    }
}

fn print_ending(summary: &RunSummary, request: &RunRequest) {
    if summary.interrupted {
        eprintln!(
            "\nInterrupted: {} sample(s) stored. Run the same command again to resume.",
            summary.samples
        );
    } else {
        eprintln!(
            "\nStored {} sample(s) under '{}' in result set '{}'.",
            summary.samples, request.identifier, request.set
        );
    }
}
