//! `kbench token`: API tokens for `kbench serve` (stored hashed in --db).

use kbench_server::auth;
use kbench_store::Scope;
use std::process::ExitCode;

/// Create, list and revoke the API tokens that writes to `kbench serve` need
#[derive(Debug, clap::Subcommand)]
pub enum TokenCommand {
    /// Create a token; its secret is printed once on stdout and only its SHA-256 is stored
    #[command(
        after_help = "Scopes: read (GET on a --private server), push (kbench push, \
run --upload), submit (kbench job submit), work (kbench worker: lease, renew and finish its own \
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

pub fn token(command: TokenCommand, db: &super::Db) -> anyhow::Result<ExitCode> {
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
                super::print_json(&tokens)?;
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

/// The scopes of `--scope`, at least one.
#[derive(Debug, Clone)]
pub struct Scopes(Vec<Scope>);

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
