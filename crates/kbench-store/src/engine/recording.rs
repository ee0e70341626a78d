//! A decorator of [`Sql`] for the store's own tests: every query it passes
//! on is recorded with its integer parameters and the number of rows it
//! returned, so a test can say what a call read.

use super::{DbError, Param, Res, Row, SampleBlock, Sql};
use crate::StoreError;

/// One query as it went to the database.
#[derive(Debug, Clone, PartialEq)]
pub struct Query {
    pub sql: String,
    /// Its integer parameters (row ids), in order.
    pub ints: Vec<i64>,
    pub rows: usize,
}

/// `inner` with each query recorded in `queries`.
pub struct Recording<S> {
    pub inner: S,
    pub queries: Vec<Query>,
}

impl<S: Sql> Sql for Recording<S> {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn ready(&mut self) -> Res<()> {
        self.inner.ready()
    }

    fn execute(&mut self, sql: &str, args: &[Param]) -> Res<u64> {
        self.inner.execute(sql, args)
    }

    fn query(
        &mut self,
        sql: &str,
        args: &[Param],
        each: &mut dyn FnMut(&dyn Row) -> Res<()>,
    ) -> Res<()> {
        let mut rows = 0;
        let done = self.inner.query(sql, args, &mut |row| {
            rows += 1;
            each(row)
        });
        let ints = args
            .iter()
            .filter_map(|arg| match arg {
                Param::Int(value) => Some(*value),
                _ => None,
            })
            .collect();
        self.queries.push(Query {
            sql: sql.to_string(),
            ints,
            rows,
        });
        done
    }

    fn insert_blocks(&mut self, blocks: &[SampleBlock]) -> Res<()> {
        self.inner.insert_blocks(blocks)
    }

    fn begin_write(&mut self) -> Res<()> {
        self.inner.begin_write()
    }

    fn begin_read(&mut self) -> Res<()> {
        self.inner.begin_read()
    }

    fn commit(&mut self) -> Res<()> {
        self.inner.commit()
    }

    fn rollback(&mut self) -> Res<()> {
        self.inner.rollback()
    }

    fn try_lock(&mut self, key: i64) -> Res<bool> {
        self.inner.try_lock(key)
    }

    fn skip_locked(&self) -> &'static str {
        self.inner.skip_locked()
    }

    fn key_share(&self) -> &'static str {
        self.inner.key_share()
    }

    fn describe(&self, doing: &str, err: DbError) -> StoreError {
        self.inner.describe(doing, err)
    }
}
