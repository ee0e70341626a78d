//! `kbench serve`: the shared lab's API, dashboard and job queue
//! (crates/kbench-server).

use kbench_server::Limits;
use kbench_server::tls::TlsFiles;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

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

    /// A request's head must arrive within this; also closes connections
    /// that stay silent or idle this long
    #[arg(long, value_name = "SECONDS", value_parser = seconds,
          default_value_t = DEFAULT.header_timeout.as_secs_f64())]
    pub header_timeout: f64,

    /// A request's body must arrive within this (408 after)
    #[arg(long, value_name = "SECONDS", value_parser = seconds,
          default_value_t = DEFAULT.body_timeout.as_secs_f64())]
    pub body_timeout: f64,

    /// Connections served at once; more wait to be accepted
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..),
          default_value_t = DEFAULT.max_connections as u32)]
    pub max_connections: u32,

    /// Database connections open at once (keep it under PostgreSQL's
    /// max_connections); requests beyond wait for one, 503 after 30 s
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..),
          default_value_t = DEFAULT.db_connections as u32)]
    pub db_connections: u32,

    /// On SIGTERM or Ctrl-C, how long requests in flight may take to
    /// finish before their connections are cut
    #[arg(long, value_name = "SECONDS", value_parser = seconds,
          default_value_t = DEFAULT.drain.as_secs_f64())]
    pub drain_timeout: f64,

    /// Serve HTTPS with this certificate (chain), a PEM file; needs --tls-key
    #[arg(long, value_name = "PEM", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,

    /// The private key of --tls-cert, a PEM file
    #[arg(long, value_name = "PEM", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
}

const DEFAULT: Limits = Limits::DEFAULT;

/// A positive, finite number of seconds.
fn seconds(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(value) if value.is_finite() && value > 0.0 && value <= 86_400.0 => Ok(value),
        _ => Err(format!(
            "'{text}' is not a number of seconds from above 0 to 86400 (e.g. 10 or 0.5)"
        )),
    }
}

/// Jobs are checked against the suites, benchmarks and profiles (with
/// `--profiles`) of this binary, as the workers will resolve them.
pub fn serve(
    args: ServeArgs,
    db: &super::Db,
    profile_dirs: &[PathBuf],
) -> anyhow::Result<ExitCode> {
    let profiles = kbench_catalog::profile::Profiles::load(profile_dirs)?;
    let config = kbench_server::Config {
        max_body: args.max_body,
        limits: Limits {
            header_timeout: Duration::from_secs_f64(args.header_timeout),
            body_timeout: Duration::from_secs_f64(args.body_timeout),
            max_connections: args.max_connections as usize,
            db_connections: args.db_connections as usize,
            drain: Duration::from_secs_f64(args.drain_timeout),
            ..DEFAULT
        },
        tls: args
            .tls_cert
            .zip(args.tls_key)
            .map(|(cert, key)| TlsFiles { cert, key }),
        private: args.private,
        ..kbench_server::Config::new(
            db.location()?,
            Arc::new(kbench_catalog::job::checker(profiles)),
        )
    };
    kbench_server::run(&args.listen, config)?;
    Ok(ExitCode::SUCCESS)
}
