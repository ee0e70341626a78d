//! `kbench lava`: a comparison as a LAVA job, a finished job's log back
//! into a result set, and jobs submitted and followed through LAVA's REST
//! API (kbench-lava does the work).

use super::context::{Db, EXIT_TEST_FAILED, print_json, upload_target, with_upload};
use crate::cli::{LavaCommand, UploadArgs};
use crate::progress::Steps;
use anyhow::Context;
use kbench_lava::log::LavaLog;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

pub fn lava(command: LavaCommand, db: &Db, profiles: &[PathBuf]) -> anyhow::Result<ExitCode> {
    match command {
        LavaCommand::Job(args) => {
            let request = args.request(profiles).map_err(anyhow::Error::msg)?;
            let mut rootfs = crate::progress::RootfsProgress::default();
            let written = kbench_lava::job::write(&request, &mut |s| rootfs.observe(s))?;
            drop(rootfs);
            for note in &written.notes {
                crate::logs::note(note);
            }
            match args.json {
                true => print_json(&written)?,
                false => println!("{}", written.definition.display()),
            }
            Ok(ExitCode::SUCCESS)
        }
        LavaCommand::Import(args) => {
            let log = kbench_lava::log::read_path(&args.log)?;
            let source = args.log.display().to_string();
            import(&log, &source, (&args.into, &args.upload, args.json), db)
        }
        LavaCommand::Submit(args) => {
            let lava = kbench_lava::rest::Lava::new(&args.url, args.lava_token.as_deref())?;
            let definition = std::fs::read_to_string(&args.definition)
                .with_context(|| format!("reading {}", args.definition.display()))?;
            let ids = lava.submit(&definition)?;
            ids.iter()
                .for_each(|id| println!("{id} {}", lava.job_url(*id)));
            let Some(set) = args.into.as_deref() else {
                return Ok(ExitCode::SUCCESS);
            };
            let mut code = ExitCode::SUCCESS;
            for id in ids {
                let (steps, every) = (Steps::new(1), Duration::from_secs(args.poll));
                // A line when the job's state changes; the bar ticks between.
                let mut state = String::new();
                let end = lava.finished(id, every, &mut |job, waited| {
                    if job.state != state {
                        state.clone_from(&job.state);
                        steps.line(kbench_lava::rest::progress_line(job, waited))
                    }
                });
                steps.finish();
                let (end, log) = end?;
                let ending = end.ending();
                ending.iter().for_each(|line| eprintln!("{line}"));
                let stored = import(&log, &lava.job_url(id), (set, &args.upload, false), db)?;
                if stored != ExitCode::SUCCESS || ending.is_some() {
                    code = ExitCode::from(EXIT_TEST_FAILED);
                }
            }
            Ok(code)
        }
    }
}

/// Stores `log`'s boots into `set` (and sends them with --server), each
/// said as it is done; a boot short of whole fails the status.
fn import(
    log: &LavaLog,
    source: &str,
    (set, upload, json): (&str, &UploadArgs, bool),
    db: &Db,
) -> anyhow::Result<ExitCode> {
    kbench_lava::import::check(log, set)?;
    let upload = upload_target(upload)?;
    let mut store = db.open()?; // once all is checked: a refused import creates no database
    let (imported, uploaded) =
        kbench_fleet::mirror::mirrored(store.as_mut(), upload.as_ref(), |store| {
            kbench_lava::import::import(store, set, log, source, &mut |b| crate::logs::note(b))
        });
    let imported = imported?;
    imported
        .problems()
        .iter()
        .for_each(|line| eprintln!("{line}"));
    if json {
        print_json(&imported)?;
    }
    let code = match imported.complete() {
        true => ExitCode::SUCCESS,
        false => ExitCode::from(EXIT_TEST_FAILED),
    };
    with_upload(Ok(code), uploaded.as_ref())
}
