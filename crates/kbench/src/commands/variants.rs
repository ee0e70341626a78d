//! `kbench run --variant ...`: several identifiers measured on this kernel
//! in randomized interleaved blocks (kbench_measure::interleave), then their
//! comparison against the first, paired block by block.

use super::context::{Db, ran, upload_target, with_upload};
use crate::cli::RunArgs;
use crate::progress::Progress;
use kbench_catalog::profile::Profiles;
use kbench_fleet::mirror::mirrored;
use kbench_measure::agent::stop_on_signals;
use kbench_measure::interleave;
use kbench_measure::launcher::{agent_env, own_exe};
use kbench_measure::variant;
use kbench_measure::variant_run::{VariantChoice, VariantRun};
use kbench_report::printed;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

pub fn run(args: RunArgs, profile_dirs: &[PathBuf], db: &Db) -> anyhow::Result<ExitCode> {
    // Every setting is checked before anything runs or is stored.
    let variants = variant::gather(&args.variant, &args.variants)?;
    let budget = kbench_measure::adaptive::budget(args.budget)?;
    let plan = args.sampling.plan()?;
    let profiles = Profiles::load(profile_dirs)?;
    let tests = kbench_catalog::expand_with(&args.names, &profiles)?;
    profiles.check_installed(&tests)?;
    kbench_model::validate_name("result set", &args.into).map_err(anyhow::Error::msg)?;
    let choice = VariantChoice {
        set: &args.into,
        tests: &tests,
        plan,
        budget,
        duet: args.duet,
        seed: args.seed,
        keep_going: args.sampling.keep_going,
        exe: &own_exe()?,
        env: &agent_env(profile_dirs, args.show_output)?,
    };
    let prepared = VariantRun::prepare(variants, choice)?;
    let stop = Arc::new(AtomicBool::new(false));
    stop_on_signals(&stop)?;
    let request = prepared.request();
    crate::logs::note(prepared.opening());
    let upload = upload_target(&args.upload)?;
    let mut store = db.open()?; // once all is checked: a refused run creates no database
    let mut progress = Progress::new(tests.len());
    let (summary, uploaded) = mirrored(store.as_mut(), upload.as_ref(), |store| {
        interleave::execute(store, &request, &mut |e| progress.observe(e), &stop)
            .map_err(anyhow::Error::from)
    });
    progress.finish();
    let outcome = summary.and_then(|summary| {
        // The variants' comparison against the first (text, or the
        // `kbench.compare/1` document with --json).
        let names = prepared.names();
        let format = if args.json { "json" } else { "bars" };
        let data = store.load(&args.into)?;
        // Measured together: no calibration of drift between runs applies.
        let (baseline, others) = (Some(names[0].clone()), names[1..].to_vec());
        print!(
            "{}",
            printed::whole(&data, baseline, others, vec![], format)?
        );
        let loud = summary.interrupted || summary.any_failed();
        crate::logs::closing(&prepared.ending(&summary, &args.into), loud);
        Ok(ran(&summary))
    });
    with_upload(outcome, uploaded.as_ref())
}
