//! `kbench serve`: the shared lab's API, dashboard and job queue
//! (crates/kbench-server).

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

/// Serve the shared lab: the JSON HTTP API, the dashboard and the job queue
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Dashboard (HTML, no external requests): / (result sets, jobs, workers), /sets/SET, \
/sets/SET/compare (the live comparison report), /sets/SET/history (change points), /jobs, /workers, /bisects.\n\n\
API under /api/v1 (described in /api/v1/openapi.json and docs/api.md): result sets, compare, history, \
export; pushes (kbench push) and live uploads (kbench run --upload); jobs and leases (kbench job, \
kbench worker); workers; bisections. Reading is open (with --private it needs a token with the \
read scope); every write needs `Authorization: Bearer TOKEN` with a token whose scopes allow it \
(kbench token create --scope: push, submit, work, admin).\n\n\
Example:\n  kbench serve --db postgres://kbench@localhost/kbench --listen 127.0.0.1:8080"
)]
pub struct ServeArgs {
    /// Address to listen on (port 0: any free port, printed at start)
    #[arg(long, value_name = "ADDR:PORT", default_value = "127.0.0.1:8080")]
    pub listen: String,

    /// Largest request body in bytes; larger pushes get 413
    #[arg(long, value_name = "BYTES", default_value_t = kbench_server::DEFAULT_MAX_BODY)]
    pub max_body: usize,

    /// Reading needs a token too: every GET (API and dashboard) needs a token with the `read`
    /// scope (by default reading is open and only writes need tokens)
    #[arg(long)]
    pub private: bool,
}

/// Jobs are checked against the suites, benchmarks and profiles (with
/// `--profiles`) of this binary, as the workers will resolve them.
pub fn serve(
    args: ServeArgs,
    db: &super::Db,
    profile_dirs: &[PathBuf],
) -> anyhow::Result<ExitCode> {
    let profiles = kbench_lab::profile::Profiles::load(profile_dirs)?;
    let config = kbench_server::Config {
        location: db.location()?,
        max_body: args.max_body,
        check_job: Arc::new(kbench_lab::job::checker(profiles)),
        private: args.private,
    };
    kbench_server::run(&args.listen, config)?;
    Ok(ExitCode::SUCCESS)
}
