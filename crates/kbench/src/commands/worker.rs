//! `kbench worker`: runs the lab server's jobs (kbench-fleet's `worker`).

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

/// Run the lab server's jobs: lease one, measure it, upload its samples, repeat
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Each job runs as a child `kbench run NAMES --as ID --into SET --upload URL` \
(with a kernel: `kbench kernel fetch` and `kbench vm run`) on a fresh local database in the work \
directory, seeded with what the server has of the identifier: a job leased again after its worker \
died resumes that worker's unfinished run. The lease is renewed every third of --lease while the \
job runs; a lost lease kills the job's child. The child dies with the worker. Ctrl-C or SIGTERM \
stops the job (its samples so far are uploaded), reports it failed (\"worker stopped\") and exits \
with status 130.\n\n\
Examples:\n  kbench worker --server http://lab:8080 --token $T --tags tcg\n  \
kbench worker --server http://lab:8080 --exit-when-idle   # drain the queue, then exit"
)]
pub struct WorkerArgs {
    /// The lab's server, http://HOST:PORT
    #[arg(long, value_name = "URL")]
    pub server: String,

    /// API token (`kbench token create` on the server's database)
    #[arg(long, env = "KBENCH_TOKEN", hide_env_values = true)]
    pub token: String,

    /// This worker's tags (comma-separated): it takes the jobs whose tags it all has
    #[arg(long, value_name = "TAG,...", value_delimiter = ',')]
    pub tags: Vec<String>,

    /// Name shown in the server's job and worker lists [default: HOSTNAME-PID]
    #[arg(long)]
    pub name: Option<String>,

    /// Lease length in seconds: a job whose worker stops renewing is leased again after it
    #[arg(long, value_name = "SECONDS", default_value_t = 60,
          value_parser = clap::value_parser!(u64).range(3..=86_400))]
    pub lease: u64,

    /// Exit (status 0) when no job is waiting, instead of asking again every few seconds
    #[arg(long)]
    pub exit_when_idle: bool,

    /// Seconds between asking for a job while none is waiting
    #[arg(long, value_name = "SECONDS", default_value_t = 5.0)]
    pub poll: f64,

    /// Where the per-job databases go; those of failed jobs are kept there [default: a temporary
    /// directory, removed at exit]
    #[arg(long, value_name = "DIR")]
    pub work_dir: Option<PathBuf>,
}

pub fn worker(args: WorkerArgs, profile_dirs: &[PathBuf]) -> anyhow::Result<ExitCode> {
    if !(args.poll.is_finite() && args.poll >= 0.1) {
        anyhow::bail!("--poll {} must be at least 0.1 seconds", args.poll);
    }
    let api = Api::new(&args.server, Some(&args.token))?.with_short_timeouts();
    let token_name = api.check_token(Scope::Work, "running the lab's jobs (kbench worker)")?;
    let name = args.name.clone().unwrap_or_else(default_name);
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(signal, stop.clone())?;
    }
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
        return Ok(ExitCode::from(super::run::EXIT_INTERRUPTED));
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
