//! `kbench worker`: runs the lab server's jobs (kbench-fleet's `worker`).

use super::context::EXIT_INTERRUPTED;
use crate::cli::WorkerArgs;
use anyhow::Context;
use kbench_catalog::profile::Profiles;
use kbench_fleet::api::Api;
use kbench_fleet::worker::Worker;
use kbench_store::Scope;
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

pub fn worker(args: WorkerArgs, profile_dirs: &[PathBuf]) -> anyhow::Result<ExitCode> {
    if !(args.poll.is_finite() && args.poll >= 0.1) {
        anyhow::bail!("--poll {} must be at least 0.1 seconds", args.poll);
    }
    let api = Api::new(&args.server, Some(&args.token))?.with_short_timeouts();
    let token_name = api.check_token(Scope::Work, "running the lab's jobs (kbench worker)")?;
    let name = args.name.clone().unwrap_or_else(default_name);
    let stop = Arc::new(AtomicBool::new(false));
    kbench_measure::agent::stop_on_signals(&stop)?;
    let (work_dir, temporary) = match &args.work_dir {
        Some(dir) => (dir.clone(), false),
        None => (
            std::env::temp_dir().join(format!("kbench-worker-{}", std::process::id())),
            true,
        ),
    };
    std::fs::create_dir_all(&work_dir)
        .with_context(|| format!("cannot make the work directory {}", work_dir.display()))?;
    let mut child_options: Vec<OsString> = vec![];
    for dir in profile_dirs {
        child_options.extend(["--profiles".into(), dir.clone().into_os_string()]);
    }
    eprintln!(
        "kbench worker {name}: token '{token_name}', work directory {}",
        work_dir.display()
    );
    let worker = Worker {
        api,
        name,
        tags: args.tags.clone(),
        lease: Duration::from_secs(args.lease),
        exit_when_idle: args.exit_when_idle,
        poll: Duration::from_secs_f64(args.poll),
        work_dir: work_dir.clone(),
        keep_failed: !temporary,
        exe: std::env::current_exe().context("finding the kbench binary to run jobs with")?,
        child_options,
        check_job: Box::new(kbench_catalog::job::checker(Profiles::load(profile_dirs)?)),
        stop: stop.clone(),
    };
    let worked = worker.work();
    if temporary {
        let _ = std::fs::remove_dir_all(&work_dir);
    }
    worked?;
    if stop.load(Ordering::SeqCst) {
        eprintln!("kbench worker {}: stopped", worker.name);
        return Ok(ExitCode::from(EXIT_INTERRUPTED));
    }
    Ok(ExitCode::SUCCESS)
}

/// HOSTNAME-PID: unique among the workers of one machine.
fn default_name() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_default();
    let host = if host.is_empty() {
        "worker".to_string()
    } else {
        host
    };
    format!("{host}-{}", std::process::id())
}
