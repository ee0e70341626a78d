//! `kbench worker`: runs the lab server's jobs (kbench-fleet's `worker`).

use super::context::EXIT_INTERRUPTED;
use crate::cli::WorkerArgs;
use anyhow::Context;
use kbench_catalog::profile::Profiles;
use kbench_fleet::api::Api;
use kbench_fleet::worker::Worker;
use kbench_fleet::workplace::{WorkDir, child_options, default_name, poll};
use kbench_store::Scope;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

pub fn worker(args: WorkerArgs, profile_dirs: &[PathBuf]) -> anyhow::Result<ExitCode> {
    let poll = poll(args.poll)?;
    let api = Api::new(&args.server, Some(&args.token))?.with_short_timeouts();
    let token_name = api.check_token(Scope::Work, "running the lab's jobs (kbench worker)")?;
    let name = args.name.clone().unwrap_or_else(default_name);
    let stop = Arc::new(AtomicBool::new(false));
    kbench_measure::agent::stop_on_signals(&stop)?;
    let work_dir = WorkDir::make(args.work_dir.clone())?;
    eprintln!(
        "kbench worker {name}: token '{token_name}', work directory {}",
        work_dir.path.display()
    );
    let worker = Worker {
        api,
        name,
        tags: args.tags.clone(),
        lease: Duration::from_secs(args.lease),
        exit_when_idle: args.exit_when_idle,
        poll,
        work_dir: work_dir.path.clone(),
        keep_failed: !work_dir.temporary,
        exe: std::env::current_exe().context("finding the kbench binary to run jobs with")?,
        child_options: child_options(profile_dirs),
        run_args: crate::cli::job_run_args,
        check_job: Box::new(kbench_catalog::job::checker(Profiles::load(profile_dirs)?)),
        stop: stop.clone(),
    };
    let worked = worker.work();
    drop(work_dir);
    worked?;
    if stop.load(Ordering::SeqCst) {
        eprintln!("kbench worker {}: stopped", worker.name);
        return Ok(ExitCode::from(EXIT_INTERRUPTED));
    }
    Ok(ExitCode::SUCCESS)
}
