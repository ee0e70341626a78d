//! [`Bisects`]: the resumable state of bisections, a JSON document each.

use super::check::check_name;
use super::{Sql, args, rows, texts, with};
use crate::{BisectInfo, Bisects, Result};
use kbench_model::now_ms;

impl<S: Sql> Bisects for S {
    fn save_bisect(&mut self, name: &str, state_json: &str) -> Result<()> {
        with(self, "saving the bisection state", |db| {
            check_name("bisection", name)?;
            db.execute(
                "INSERT INTO bisects (name, state_json, updated_at_ms) VALUES (?1, ?2, ?3) \
                 ON CONFLICT (name) DO UPDATE SET state_json = excluded.state_json, \
                 updated_at_ms = excluded.updated_at_ms",
                args![name, state_json, now_ms()],
            )?;
            Ok(())
        })
    }

    fn load_bisect(&mut self, name: &str) -> Result<Option<String>> {
        with(self, "loading the bisection state", |db| {
            Ok(texts(
                db,
                "SELECT state_json FROM bisects WHERE name = ?1",
                args![name],
            )?
            .pop())
        })
    }

    fn delete_bisect(&mut self, name: &str) -> Result<()> {
        with(self, "forgetting the bisection state", |db| {
            db.execute("DELETE FROM bisects WHERE name = ?1", args![name])?;
            Ok(())
        })
    }

    fn bisects(&mut self) -> Result<Vec<BisectInfo>> {
        with(self, "listing bisections", |db| {
            rows(
                db,
                "SELECT name, state_json, updated_at_ms FROM bisects ORDER BY name",
                args![],
                |row| {
                    Ok(BisectInfo {
                        name: row.req_text(0)?,
                        state_json: row.req_text(1)?,
                        updated_at_ms: row.req_int(2)?,
                    })
                },
            )
        })
    }
}
