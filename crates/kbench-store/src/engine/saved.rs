//! [`Bisects`] and [`Campaigns`]: resumable states kept as one JSON
//! document per name, each kind in a table of its own with the same
//! columns (`name`, `state_json`, `updated_at_ms`).

use super::check::check_name;
use super::{Sql, args, rows, texts, with};
use crate::{Bisects, Campaigns, Result, SavedState};
use kbench_model::now_ms;

/// Which kind of state, and so which table.
#[derive(Clone, Copy)]
enum Kind {
    Bisection,
    Campaign,
}

impl Kind {
    fn table(self) -> &'static str {
        match self {
            Kind::Bisection => "bisects",
            Kind::Campaign => "campaigns",
        }
    }

    fn word(self) -> &'static str {
        match self {
            Kind::Bisection => "bisection",
            Kind::Campaign => "campaign",
        }
    }
}

fn save(db: &mut dyn Sql, kind: Kind, name: &str, state_json: &str) -> Result<()> {
    with(db, &format!("saving the {} state", kind.word()), |db| {
        check_name(kind.word(), name)?;
        db.execute(
            &format!(
                "INSERT INTO {} (name, state_json, updated_at_ms) VALUES (?1, ?2, ?3) \
                 ON CONFLICT (name) DO UPDATE SET state_json = excluded.state_json, \
                 updated_at_ms = excluded.updated_at_ms",
                kind.table()
            ),
            args![name, state_json, now_ms()],
        )?;
        Ok(())
    })
}

fn load(db: &mut dyn Sql, kind: Kind, name: &str) -> Result<Option<String>> {
    with(db, &format!("loading the {} state", kind.word()), |db| {
        let sql = format!("SELECT state_json FROM {} WHERE name = ?1", kind.table());
        Ok(texts(db, &sql, args![name])?.pop())
    })
}

fn delete(db: &mut dyn Sql, kind: Kind, name: &str) -> Result<()> {
    with(db, &format!("forgetting the {} state", kind.word()), |db| {
        let sql = format!("DELETE FROM {} WHERE name = ?1", kind.table());
        db.execute(&sql, args![name])?;
        Ok(())
    })
}

fn list(db: &mut dyn Sql, kind: Kind) -> Result<Vec<SavedState>> {
    with(db, &format!("listing {}s", kind.word()), |db| {
        let sql = format!(
            "SELECT name, state_json, updated_at_ms FROM {} ORDER BY name",
            kind.table()
        );
        rows(db, &sql, args![], |row| {
            Ok(SavedState {
                name: row.req_text(0)?,
                state_json: row.req_text(1)?,
                updated_at_ms: row.req_int(2)?,
            })
        })
    })
}

impl<S: Sql> Bisects for S {
    fn save_bisect(&mut self, name: &str, state_json: &str) -> Result<()> {
        save(self, Kind::Bisection, name, state_json)
    }

    fn load_bisect(&mut self, name: &str) -> Result<Option<String>> {
        load(self, Kind::Bisection, name)
    }

    fn delete_bisect(&mut self, name: &str) -> Result<()> {
        delete(self, Kind::Bisection, name)
    }

    fn bisects(&mut self) -> Result<Vec<SavedState>> {
        list(self, Kind::Bisection)
    }
}

impl<S: Sql> Campaigns for S {
    fn save_campaign(&mut self, name: &str, state_json: &str) -> Result<()> {
        save(self, Kind::Campaign, name, state_json)
    }

    fn load_campaign(&mut self, name: &str) -> Result<Option<String>> {
        load(self, Kind::Campaign, name)
    }

    fn delete_campaign(&mut self, name: &str) -> Result<()> {
        delete(self, Kind::Campaign, name)
    }

    fn campaigns(&mut self) -> Result<Vec<SavedState>> {
        list(self, Kind::Campaign)
    }
}
