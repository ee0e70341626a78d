//! `kbench token`: API tokens for `kbench serve` (stored hashed in --db).

use kbench_server::auth;
use std::process::ExitCode;

/// Create, list and revoke the API tokens that writes to `kbench serve` need
#[derive(Debug, clap::Subcommand)]
pub enum TokenCommand {
    /// Create a token; its secret is printed once on stdout and only its SHA-256 is stored
    Create {
        /// A name for who uses it, e.g. runner-1
        #[arg(long)]
        name: String,
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

pub fn token(command: TokenCommand, db: &super::Db) -> anyhow::Result<ExitCode> {
    let mut store = db.open()?;
    match command {
        TokenCommand::Create { name } => {
            let secret = auth::new_secret()?;
            store.create_token(&name, &auth::sha256_hex(secret.as_bytes()))?;
            eprintln!("Created token '{name}'. Its secret follows; it is shown only this once:");
            println!("{secret}");
        }
        TokenCommand::Revoke { name } => {
            store.revoke_token(&name)?;
            eprintln!("Revoked token '{name}'.");
        }
        TokenCommand::List { json } => {
            let tokens = store.tokens()?;
            if json {
                super::print_json(&tokens)?;
            } else if tokens.is_empty() {
                println!("No tokens yet; `kbench token create --name NAME` makes one.");
            } else {
                for t in tokens {
                    let state = match t.revoked_at_ms {
                        Some(at) => format!("revoked at {at} ms"),
                        None => "active".to_string(),
                    };
                    println!("{:<24} created at {} ms, {state}", t.name, t.created_at_ms);
                }
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
