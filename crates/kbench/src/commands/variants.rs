//! `kbench run --variant ...`: several identifiers measured on this kernel
//! in randomized interleaved blocks (kbench_measure::interleave), then their
//! comparison against the first, paired block by block.

use super::context::{
    EXIT_INTERRUPTED, budget, print_json, sampling_plan, upload_target, with_upload,
};
use crate::cli::RunArgs;
use crate::progress::Progress;
use anyhow::Context;
use kbench_catalog::PROFILES_ENV;
use kbench_catalog::profile::Profiles;
use kbench_fleet::mirror::mirrored;
use kbench_measure::agent::stop_on_signals;
use kbench_measure::duet::{
    check_variants as check_duet, launchers as duet_launchers, note as duet_note, random_seed,
};
use kbench_measure::interleave::{self, BlockPlan, InterleavedRequest};
use kbench_measure::launcher::Launcher;
use kbench_measure::variant;
use kbench_report::comparison::{self, CompareRequest};
use kbench_report::format::{self, Style};
use kbench_store::{Recorder, Results};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

pub fn run(
    args: RunArgs,
    profile_dirs: &[PathBuf],
    store: &mut dyn Recorder,
) -> anyhow::Result<ExitCode> {
    let variants = variant::gather(&args.variant, &args.variants)?;
    // Every setting is checked before anything runs or is stored.
    for v in &variants {
        v.check()?;
    }
    let budget = budget(args.budget)?;
    let mut plan = sampling_plan(&args.sampling)?;
    let blocks = BlockPlan::for_variants(&mut plan, budget);
    let profiles = Profiles::load(profile_dirs)?;
    let tests = kbench_catalog::expand_with(&args.names, &profiles)?;
    profiles.check_installed(&tests)?;
    kbench_model::validate_name("result set", &args.into).map_err(anyhow::Error::msg)?;
    let exe = std::env::current_exe()
        .context("finding the kbench binary to run as the measuring process")?;
    let mut env = vec![];
    if !profile_dirs.is_empty() {
        // The agent reads the user's profiles from the environment.
        env.push((PROFILES_ENV, std::env::join_paths(profile_dirs)?));
    }
    let launchers = variants
        .iter()
        .map(|v| v.launcher(&exe, &env))
        .collect::<Result<Vec<_>, _>>()?;
    let duet = if args.duet {
        check_duet(&variants, &tests)?;
        Some(duet_launchers(&variants, &exe, &env)?)
    } else {
        None
    };
    let stop = Arc::new(AtomicBool::new(false));
    stop_on_signals(&stop)?;
    let seed = match args.seed {
        Some(seed) => seed,
        None => random_seed()?,
    };
    let request = InterleavedRequest {
        requests: variants
            .iter()
            .map(|v| {
                v.request(
                    &args.into,
                    &tests,
                    &plan,
                    duet_note(&variants, v, args.duet),
                )
            })
            .collect(),
        launchers: launchers.iter().map(|l| l as &dyn Launcher).collect(),
        variants,
        blocks,
        seed,
        duet: duet.as_ref().map(|[a, b]| {
            [
                [&a[0] as &dyn Launcher, &a[1]],
                [&b[0] as &dyn Launcher, &b[1]],
            ]
        }),
    };
    eprintln!(
        "Measuring {} variants in interleaved blocks (seed {seed}; the first, '{}', is the baseline).",
        request.variants.len(),
        request.variants[0].name
    );
    let upload = upload_target(&args.upload)?;
    let mut progress = Progress::new(tests.len());
    let (summary, uploaded) = mirrored(store, upload.as_ref(), |store| {
        interleave::execute(store, &request, &mut |e| progress.observe(e), &stop)
            .map_err(anyhow::Error::from)
    });
    progress.finish();
    let names: Vec<String> = request.variants.iter().map(|v| v.name.clone()).collect();
    let ended = summary.and_then(|summary| {
        report(store, &args.into, &names, args.json)?;
        eprintln!(
            "\nStored {} sample(s) of {} variants in result set '{}'{}.",
            summary.samples,
            names.len(),
            args.into,
            if summary.interrupted {
                " (interrupted: run the same command again to measure a new session)"
            } else {
                ""
            }
        );
        Ok(if summary.interrupted {
            ExitCode::from(EXIT_INTERRUPTED)
        } else {
            ExitCode::SUCCESS
        })
    });
    with_upload(ended, uploaded.as_ref())
}

/// Prints the variants' comparison against the first (text, or the
/// `kbench.compare/1` document with --json).
fn report(store: &mut dyn Results, set: &str, names: &[String], json: bool) -> anyhow::Result<()> {
    let data = store.load(set)?;
    let request = CompareRequest {
        baseline: Some(names[0].clone()),
        identifiers: names[1..].to_vec(),
        threshold: 0.01,
        metric_filter: None,
    };
    let report = comparison::build(&data, &request)?;
    if json {
        print_json(&report)
    } else {
        let text = format::by_name("bars")
            .expect("the text format exists")
            .render(&report, Style::default());
        print!("{text}");
        Ok(())
    }
}
