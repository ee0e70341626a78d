//! [`Tokens`]: the lab server's API tokens, by the hash of their secret.

use super::check::check_name;
use super::{Fail, Res, Row, Sql, args, first_int, rows, with};
use crate::{Result, Scope, StoreError, TokenInfo, Tokens};
use kbench_model::now_ms;

/// The columns [`read_token`] reads.
const TOKEN_QUERY: &str = "SELECT name, created_at_ms, revoked_at_ms, scopes FROM api_tokens";

fn read_token(row: &dyn Row) -> Res<TokenInfo> {
    let name = row.req_text(0)?;
    let scopes = Scope::parse_list(&row.req_text(3)?)
        .map_err(|why| Fail::Damaged(format!("token {name:?}'s scopes: {why}")))?;
    Ok(TokenInfo {
        name,
        created_at_ms: row.req_int(1)?,
        revoked_at_ms: row.int(2)?,
        scopes,
    })
}

impl<S: Sql> Tokens for S {
    fn create_token(&mut self, name: &str, secret_sha256: &str, scopes: &[Scope]) -> Result<()> {
        with(self, "creating an API token", |db| {
            check_name("token", name)?;
            if scopes.is_empty() {
                return Err(Fail::Store(StoreError::Invalid(format!(
                    "token \"{name}\" would have no scope; give one or more of {}",
                    Scope::list_text(&Scope::ALL)
                ))));
            }
            let mut scopes = scopes.to_vec();
            scopes.sort();
            scopes.dedup();
            let added = db.execute(
                "INSERT INTO api_tokens (name, secret_sha256, created_at_ms, scopes) \
                 VALUES (?1, ?2, ?3, ?4) ON CONFLICT DO NOTHING",
                args![name, secret_sha256, now_ms(), &Scope::list_text(&scopes)],
            )?;
            if added == 0 {
                return Err(Fail::Store(StoreError::Conflict(format!(
                    "a token named \"{name}\" exists in {} (revoked tokens keep their name); \
                     choose another name",
                    db.name()
                ))));
            }
            Ok(())
        })
    }

    fn revoke_token(&mut self, name: &str) -> Result<()> {
        with(self, "revoking an API token", |db| {
            db.execute(
                "UPDATE api_tokens SET revoked_at_ms = ?2 WHERE name = ?1 AND revoked_at_ms IS NULL",
                args![name, now_ms()],
            )?;
            if first_int(
                db,
                "SELECT created_at_ms FROM api_tokens WHERE name = ?1",
                args![name],
            )?
            .is_none()
            {
                return Err(Fail::Store(StoreError::NotFound(format!(
                    "there is no token \"{name}\" in {}; `kbench token list` shows them",
                    db.name()
                ))));
            }
            Ok(())
        })
    }

    fn tokens(&mut self) -> Result<Vec<TokenInfo>> {
        with(self, "listing API tokens", |db| {
            rows(
                db,
                &format!("{TOKEN_QUERY} ORDER BY created_at_ms, name"),
                args![],
                read_token,
            )
        })
    }

    fn token_by_hash(&mut self, secret_sha256: &str) -> Result<Option<TokenInfo>> {
        with(self, "checking an API token", |db| {
            Ok(rows(
                db,
                &format!("{TOKEN_QUERY} WHERE secret_sha256 = ?1 AND revoked_at_ms IS NULL"),
                args![secret_sha256],
                read_token,
            )?
            .pop())
        })
    }
}
