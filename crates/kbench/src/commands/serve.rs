//! `kbench serve`: the shared lab's JSON HTTP API (crates/kbench-server).

use std::process::ExitCode;

/// Serve the JSON HTTP API for pushing samples and reading comparisons
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Reading is open; every write needs `Authorization: Bearer TOKEN` (kbench token create). \
Routes: GET /api/v1/result-sets, POST /api/v1/result-sets/SET/samples (kbench push), \
GET /api/v1/result-sets/SET/compare?format=json|html, GET /api/v1/result-sets/SET/history?format=json.\n\n\
Example:\n  kbench serve --db postgres://kbench@localhost/kbench --listen 127.0.0.1:8080"
)]
pub struct ServeArgs {
    /// Address to listen on (port 0: any free port, printed at start)
    #[arg(long, value_name = "ADDR:PORT", default_value = "127.0.0.1:8080")]
    pub listen: String,

    /// Largest request body in bytes; larger pushes get 413
    #[arg(long, value_name = "BYTES", default_value_t = kbench_server::DEFAULT_MAX_BODY)]
    pub max_body: usize,
}

pub fn serve(args: ServeArgs, db: &super::Db) -> anyhow::Result<ExitCode> {
    let config = kbench_server::Config {
        location: db.location()?,
        max_body: args.max_body,
    };
    kbench_server::run(&args.listen, config)?;
    Ok(ExitCode::SUCCESS)
}
