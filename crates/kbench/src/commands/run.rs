//! `kbench run`: measure, storing every sample as it arrives, then print
//! the summary of what was run.

use super::context::{Db, print_json, ran, upload_target, with_upload};
use crate::cli::RunArgs;
use crate::progress::Progress;
use kbench_analysis::interference::redone_text;
use kbench_analysis::show::ShowDocument;
use kbench_catalog::profile::Profiles;
use kbench_catalog::profile::adhoc::AdHocProfile;
use kbench_fleet::mirror::mirrored;
use kbench_measure::adaptive::AdaptiveRounds;
use kbench_measure::launcher::{ProcessLauncher, agent_env, own_exe};
use kbench_measure::redo;
use kbench_measure::runner::{self, RunRequest, RunSummary};
use kbench_report::format::{Style, text_or_json};
use kbench_store::Results;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

pub fn run(args: RunArgs, profile_dirs: &[PathBuf], db: &Db) -> anyhow::Result<ExitCode> {
    if !args.variant.is_empty() || !args.variants.is_empty() {
        return super::variants::run(args, profile_dirs, db);
    }
    let mut plan = args.sampling.plan()?;
    let adaptive = match args.rounds {
        Some(_) => None,
        None => Some(AdaptiveRounds::for_plan(&mut plan, args.budget)?),
    };
    // An ad-hoc --command is a test of a profile generated for this run.
    let adhoc = match args.command.adhoc(std::env::current_dir()?) {
        Some(adhoc) => Some(AdHocProfile::write(&adhoc)?),
        None => None,
    };
    let profile_dirs = &adhoc
        .as_ref()
        .map_or_else(|| profile_dirs.to_vec(), |a| a.with_dirs(profile_dirs));
    let names = adhoc.as_ref().map_or(&args.names, |a| &a.tests);
    let profiles = Profiles::load(profile_dirs)?;
    let tests = kbench_catalog::expand_with(names, &profiles)?;
    // Missing tools are reported before anything is stored.
    profiles.check_installed(&tests)?;
    let request = args
        .request(tests, plan, adaptive)
        .map_err(anyhow::Error::msg)?;
    let launcher = ProcessLauncher::new(own_exe()?, args.wrap.as_deref())?
        .with_envs(&agent_env(profile_dirs, args.show_output)?);
    let stop = Arc::new(AtomicBool::new(false));
    kbench_measure::agent::stop_on_signals(&stop)?;
    let upload = upload_target(&args.upload)?;
    let mut store = db.open()?; // once all is checked: a refused run creates no database
    let store = store.as_mut();
    let mut progress = Progress::new(request.first_tests());
    let mut redone = vec![];
    // Factors go to the identifier once a run has made it.
    let mut measured = false;
    let (summary, uploaded) = mirrored(store, upload.as_ref(), |store| {
        let mut observe = |e| progress.observe(e);
        let mut summary = runner::execute(store, &launcher, &request, &mut observe, &stop)?;
        measured = true;
        if args.redo_disturbed && !summary.interrupted && !summary.stopped_at_failure {
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
    if !crate::logs::quiet() {
        eprint!("{}", redone_text(&redone));
    }
    let ended = summary.and_then(|summary| report(store, &request, &summary, args.json));
    with_upload(ended, uploaded.as_ref())
}

/// Prints what a run stored (its identifier's summary, or the
/// `kbench.run/1` document) and the tests that FAILED on stderr, even with
/// -q or --json; picks the exit status.
pub(crate) fn report(
    store: &mut dyn Results,
    request: &RunRequest,
    summary: &RunSummary,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let document = summary.document(request, store.load(&request.set)?);
    if json {
        print_json(&document)?;
        document
            .failed()
            .iter()
            .for_each(|line| eprintln!("{line}"));
    } else {
        let renderer = text_or_json::<ShowDocument>(false);
        print!("{}", renderer.render(&document.show, Style::default()));
        let loud = summary.interrupted || summary.any_failed();
        crate::logs::closing(&document.ending(), loud);
    }
    Ok(ran(summary))
}
