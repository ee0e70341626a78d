//! `kbench push`: sends a local result set to `kbench serve`, as one
//! kbench.samples/1 document with a push id; retried on connection errors
//! with the same id, so the server stores it once.

use anyhow::{Context, bail};
use kbench_server::{auth, client};
use kbench_store::exchange;
use std::process::ExitCode;
use std::time::Duration;

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

    /// Attempts when the connection fails
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub tries: u32,
}

pub fn push(args: PushArgs, db: &super::Db) -> anyhow::Result<ExitCode> {
    let (addr, base) = client::parse_base(&args.to).map_err(anyhow::Error::msg)?;
    let data = db.open()?.load(&args.set)?;
    let target = args.into.clone().unwrap_or_else(|| args.set.clone());
    let body = serde_json::to_vec(&exchange::export(&data))?;
    let push_id = match &args.push_id {
        Some(id) => id.clone(),
        None => auth::random_id()?,
    };
    let path = format!(
        "{base}/api/v1/result-sets/{}/samples",
        client::encode_segment(&target)
    );
    let authorization = format!("Bearer {}", args.token);
    let headers = [
        ("Authorization", authorization.as_str()),
        ("Idempotency-Key", push_id.as_str()),
        ("Content-Type", "application/json"),
    ];
    let mut wait = Duration::from_millis(200);
    let mut attempt = 1;
    let response = loop {
        match client::request(&addr, "POST", &path, &headers, &body) {
            Ok(response) => break response,
            Err(err) if attempt < args.tries => {
                eprintln!(
                    "kbench push: {addr}: {err}; retrying in {} ms with the same push id ({attempt}/{})",
                    wait.as_millis(),
                    args.tries
                );
                std::thread::sleep(wait);
                wait = (wait * 2).min(Duration::from_secs(5));
                attempt += 1;
            }
            Err(err) => {
                return Err(err).with_context(|| {
                    format!("cannot reach {} after {attempt} attempt(s)", args.to)
                });
            }
        }
    };
    let answer: serde_json::Value = serde_json::from_str(&response.body).unwrap_or_default();
    let message = answer
        .get("message")
        .or_else(|| answer.get("error"))
        .and_then(|m| m.as_str())
        .unwrap_or(response.body.as_str());
    match response.status {
        200 | 201 => {
            eprintln!("kbench push: {message} (push id {push_id})");
            Ok(ExitCode::SUCCESS)
        }
        status => bail!("the server answered {status}: {message}"),
    }
}
