//! `kbench token`: API tokens for `kbench serve` (stored hashed in --db).

use super::context::{Db, print_json};
use crate::cli::TokenCommand;
use kbench_server::auth;
use kbench_store::Scope;
use std::process::ExitCode;

pub fn token(command: TokenCommand, db: &Db) -> anyhow::Result<ExitCode> {
    let mut store = db.open()?;
    match command {
        TokenCommand::Create { name, scopes } => {
            let secret = auth::new_secret()?;
            store.create_token(&name, &auth::sha256_hex(secret.as_bytes()), &scopes.0)?;
            eprintln!(
                "Created token '{name}' with scopes {}. Its secret follows; it is shown only this once:",
                Scope::list_text(&scopes.0)
            );
            println!("{secret}");
        }
        TokenCommand::Revoke { name } => {
            store.revoke_token(&name)?;
            eprintln!("Revoked token '{name}'.");
        }
        TokenCommand::List { json } => {
            let tokens = store.tokens()?;
            if json {
                print_json(&tokens)?;
            } else if tokens.is_empty() {
                println!("No tokens yet; `kbench token create --name NAME` makes one.");
            } else {
                for t in tokens {
                    let state = match t.revoked_at_ms {
                        Some(at) => format!("revoked at {at} ms"),
                        None => "active".to_string(),
                    };
                    println!(
                        "{:<24} {:<24} created at {} ms, {state}",
                        t.name,
                        Scope::list_text(&t.scopes),
                        t.created_at_ms
                    );
                }
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
