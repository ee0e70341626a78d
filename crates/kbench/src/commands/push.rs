//! `kbench push`: sends a local result set to `kbench serve`, as one
//! kbench.samples/1 document with a push id; retried on connection errors
//! and 503 with the same id, so the server stores it once.

use kbench_fleet::api::Api;
use std::process::ExitCode;

/// Send a local result set's samples to a kbench server
#[derive(Debug, clap::Args)]
#[command(
    after_help = "The server stores a push once: a retry (after a lost connection or a server restart) \
sends the same push id and gets \"already stored\". The server's result set must not already hold \
the pushed identifiers.\n\nExample:\n  kbench push plu-test --to http://127.0.0.1:8080 --token $T"
)]
pub struct PushArgs {
    /// Local result set to push
    pub set: String,

    /// The server, http://HOST:PORT
    #[arg(long, value_name = "URL")]
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

pub fn push(args: PushArgs, db: &super::Db) -> anyhow::Result<ExitCode> {
    let api = Api::new(&args.to, Some(&args.token))?;
    let data = db.open_existing()?.load(&args.set)?;
    let target = args.into.clone().unwrap_or_else(|| args.set.clone());
    let push_id = match &args.push_id {
        Some(id) => id.clone(),
        None => kbench_model::random_id()?,
    };
    let answer = kbench_fleet::push::push(&api, &target, &data, &push_id, args.tries)?;
    eprintln!("kbench push: {answer} (push id {push_id})");
    Ok(ExitCode::SUCCESS)
}
