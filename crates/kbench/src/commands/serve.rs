//! `kbench serve`: the shared lab's API, dashboard and job queue
//! (crates/kbench-server).

use super::context::Db;
use crate::cli::ServeArgs;
use kbench_server::Limits;
use kbench_server::tls::TlsFiles;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

/// Jobs are checked against the suites, benchmarks and profiles (with
/// `--profiles`) of this binary, as the workers will resolve them.
pub fn serve(args: ServeArgs, db: &Db, profile_dirs: &[PathBuf]) -> anyhow::Result<ExitCode> {
    let profiles = kbench_catalog::profile::Profiles::load(profile_dirs)?;
    let config = kbench_server::Config {
        max_body: args.max_body,
        limits: Limits {
            header_timeout: Duration::from_secs_f64(args.header_timeout),
            body_timeout: Duration::from_secs_f64(args.body_timeout),
            max_connections: args.max_connections as usize,
            db_connections: args.db_connections as usize,
            drain: Duration::from_secs_f64(args.drain_timeout),
            ..Limits::DEFAULT
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
