//! Flags of the shared lab's commands: serve, token, push, job, worker.

use clap::{Args, Subcommand};
use kbench_catalog::suite::DEFAULT_SUITE;
use kbench_server::Limits;
use kbench_store::Scope;
use std::path::PathBuf;

/// Serve the shared lab: the JSON HTTP API, the dashboard and the job queue
#[derive(Debug, Args)]
#[command(
    after_help = "Dashboard (HTML, no external requests): / (result sets, jobs, workers), /sets/SET, \
/sets/SET/compare (the live comparison report), /sets/SET/history (change points), /jobs, /workers, /bisects.\n\n\
API under /api/v1 (described in /api/v1/openapi.json and docs/api.md): result sets, compare, history, \
export; pushes (kbench push) and live uploads (kbench run --server); jobs and leases (kbench job, \
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

/// Create, list and revoke the API tokens that writes to `kbench serve` need
#[derive(Debug, Subcommand)]
pub enum TokenCommand {
    /// Create a token; its secret is printed once on stdout and only its SHA-256 is stored
    #[command(
        after_help = "Scopes: read (GET on a --private server), push (kbench push, \
run --server), submit (kbench job submit), work (kbench worker: lease, renew and finish its own \
jobs and upload their runs), admin (all of them).\n\n\
Examples:\n  kbench token create --name runner-1 --scope work\n  \
kbench token create --name alice --scope read,push,submit"
    )]
    Create {
        /// A name for who uses it, e.g. runner-1
        #[arg(long)]
        name: String,
        /// What it may do, comma-separated: read, push, submit, work, admin
        #[arg(long = "scope", value_name = "SCOPE,...", default_value = "read,push",
              value_parser = parse_scopes)]
        scopes: Scopes,
    },
    /// Revoke a token: writes with it get 401 from then on
    Revoke {
        /// The token's name
        name: String,
    },
    /// List tokens (names and times; secrets are never stored)
    List {
        /// Print JSON on stdout
        #[arg(long)]
        json: bool,
    },
}

/// The scopes of `--scope`, at least one.
#[derive(Debug, Clone)]
pub struct Scopes(pub Vec<Scope>);

fn parse_scopes(text: &str) -> Result<Scopes, String> {
    let scopes = Scope::parse_list(text)?;
    if scopes.is_empty() {
        return Err(format!(
            "give at least one scope: {}",
            Scope::list_text(&Scope::ALL)
        ));
    }
    Ok(Scopes(scopes))
}

/// Send a local result set's samples to a kbench server
#[derive(Debug, Args)]
#[command(
    after_help = "The server stores a push once: a retry (after a lost connection or a server restart) \
sends the same push id and gets \"already stored\". The server's result set must not already hold \
the pushed identifiers.\n\nExample:\n  kbench push plu-test --server http://127.0.0.1:8080 --token $T"
)]
pub struct PushArgs {
    /// Local result set to push
    pub set: String,

    /// The server, http://HOST:PORT (its old name --to still works, for one release)
    #[arg(
        long = "server",
        alias = "to",
        env = "KBENCH_SERVER",
        value_name = "URL"
    )]
    pub to: String,

    /// API token (kbench token create on the server's database)
    #[arg(long, env = "KBENCH_TOKEN", hide_env_values = true)]
    pub token: String,

    /// Result set on the server (default: the same name)
    #[arg(long, value_name = "SET")]
    pub into: Option<String>,

    /// Push id (default: a random one); give the same to retry a push by hand
    #[arg(long, value_name = "ID")]
    pub push_id: Option<String>,

    /// Attempts when the connection fails (or the server answers 503)
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub tries: u32,
}

/// Submit jobs to a lab server for its workers, and list them
#[derive(Debug, Subcommand)]
pub enum JobCommand {
    /// Queue a run for the lab's workers: prints its job id
    #[command(
        after_help = "A worker (`kbench worker`) whose tags include all of the job's runs \
`kbench run NAMES --as ID --into SET` (or, with --kernel, `kbench vm run` on that kernel) and \
uploads its samples to the server as they come. A job whose worker dies is leased again and \
resumes the unfinished run.\n\n\
Examples:\n  kbench job submit --server http://lab:8080 --token $T quick --as 6.18 --into lab\n  \
kbench job submit --server http://lab:8080 --suite quick --kernel debian:6.12 --as deb-6.12 --into lab --tags tcg"
    )]
    Submit(SubmitArgs),
    /// List the server's jobs, newest first
    #[command(after_help = "Example:\n  kbench job list --server http://lab:8080")]
    List(ListArgs),
}

#[derive(Debug, Args)]
pub struct SubmitArgs {
    /// The lab's server, http://HOST:PORT
    #[arg(long, env = "KBENCH_SERVER", value_name = "URL")]
    pub server: String,

    /// API token (`kbench token create` on the server's database)
    #[arg(long, env = "KBENCH_TOKEN", hide_env_values = true)]
    pub token: String,

    #[arg(value_name = "NAME", help = format!(
        "Suites, benchmark ids or tests with options, as for `kbench run` [default: {DEFAULT_SUITE}]"
    ))]
    pub names: Vec<String>,

    /// A suite to run (the same as naming it)
    #[arg(long = "suite", value_name = "SUITE")]
    pub suites: Vec<String>,

    /// Boot this kernel in a VM: debian:VERSION (fetched by the worker) or a release in the
    /// worker's kernel cache
    #[arg(long, value_name = "KERNEL")]
    pub kernel: Option<String>,

    /// Identifier to store the run under
    #[arg(long = "as", value_name = "IDENTIFIER")]
    pub identifier: String,

    /// Result set on the server
    #[arg(long, value_name = "SET")]
    pub into: String,

    /// Only workers with every one of these tags take the job (comma-separated)
    #[arg(long, value_name = "TAG,...", value_delimiter = ',')]
    pub tags: Vec<String>,

    /// Rounds, as for `kbench run`
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub rounds: u32,

    /// Time budget per test and round in seconds, as for `kbench run`
    #[arg(long, value_name = "SECONDS")]
    pub max_time: Option<f64>,

    /// Print the submitted job as JSON on stdout instead of its id
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    /// The lab's server, http://HOST:PORT
    #[arg(long, env = "KBENCH_SERVER", value_name = "URL")]
    pub server: String,

    /// Print the server's kbench.jobs/1 document on stdout
    #[arg(long)]
    pub json: bool,
}

/// Run the lab server's jobs: lease one, measure it, upload its samples, repeat
#[derive(Debug, Args)]
#[command(
    after_help = "Each job runs as a child `kbench run NAMES --as ID --into SET --server URL` \
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
    #[arg(long, env = "KBENCH_SERVER", value_name = "URL")]
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
