//! Stores for requests: the store's role traits are synchronous, so each store
//! call runs in `tokio::task::spawn_blocking` on a store of its own, taken
//! from a bounded pool: at most `size` stores are open at once (`kbench
//! serve --db-connections`), kept open between calls. A call beyond them
//! waits for one, in turn, up to `wait`; then it is answered 503 ("busy,
//! retry"). One store per call rather than one behind a Mutex: PostgreSQL
//! serves requests in parallel, and a slow comparison does not hold up
//! pushes; SQLite serialises writers itself (WAL, one writer at a time with
//! readers beside it).
//!
//! The first store is opened by [`Stores::open`], before the server
//! listens: it creates or migrates the database, and on SQLite runs the
//! file's integrity check (which reads the whole file) once; the pool's
//! later connections skip it. The server's SQLite connections use
//! synchronous=FULL: a sample it acknowledged survives an OS crash.
//!
//! A database restart: the requests in flight fail with 503 (the client
//! retries them), and no later request fails for it. A store whose call
//! met an unreachable database is dropped rather than pooled; an idle
//! PostgreSQL store checks its connection itself before its next operation
//! and reconnects when the server closed it meanwhile (kbench-store's
//! `PostgresStore`).
//!
//! Messages sent to clients never name the database: its path or URL is
//! replaced by "the lab's database" (the server's stderr keeps the full
//! text of server errors).

use crate::error::ApiError;
use axum::http::StatusCode;
use kbench_store::{Database, Location, Opening};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::Semaphore;

/// How error messages to clients name the database.
const DATABASE: &str = "the lab's database";

pub struct Stores {
    location: Location,
    idle: Mutex<Vec<Box<dyn Database + Send>>>,
    /// One permit per store that may be open: held by a call from before
    /// it takes a store until it gave it back (by the blocking task, so a
    /// request dropped meanwhile does not free it early).
    permits: Arc<Semaphore>,
    wait: Duration,
}

impl Stores {
    /// Opens the first store (creating or migrating the database, checking
    /// a SQLite file), so that a bad `--db` fails before the server
    /// listens; at most `size` (at least 1) stores are then open at once,
    /// and a call waits at most `wait` for one.
    pub fn open(location: Location, size: usize, wait: Duration) -> kbench_store::Result<Stores> {
        let first = location.open_with(Opening::SERVER)?;
        Ok(Stores {
            location,
            idle: Mutex::new(vec![first]),
            permits: Arc::new(Semaphore::new(size.max(1))),
            wait,
        })
    }

    fn take(&self) -> Result<Box<dyn Database + Send>, ApiError> {
        let idle = self.idle.lock().unwrap_or_else(|e| e.into_inner()).pop();
        match idle {
            Some(store) => Ok(store),
            None => Ok(self.location.open_with(Opening {
                check: false,
                ..Opening::SERVER
            })?),
        }
    }

    fn put(&self, store: Box<dyn Database + Send>) {
        self.idle
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(store);
    }

    /// Runs `f` with a store on the blocking pool, once a store is free.
    pub async fn with<T: Send + 'static>(
        self: &Arc<Self>,
        f: impl FnOnce(&mut dyn Database) -> Result<T, ApiError> + Send + 'static,
    ) -> Result<T, ApiError> {
        let permit = tokio::time::timeout(self.wait, self.permits.clone().acquire_owned())
            .await
            .map_err(|_| self.busy())?
            .expect("the semaphore is never closed");
        let stores = self.clone();
        let result = tokio::task::spawn_blocking(move || {
            let _permit = permit;
            let mut store = stores.take()?;
            let result = f(store.as_mut());
            if !result.as_ref().is_err_and(ApiError::is_unreachable) {
                stores.put(store);
            }
            result
        })
        .await
        .unwrap_or_else(|e| Err(ApiError::internal(format!("a store task failed: {e}"))));
        result.map_err(|error| self.unnamed(error))
    }

    fn busy(&self) -> ApiError {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            format!(
                "the server is busy: every connection to {DATABASE} stayed in use for {} s; retry",
                self.wait.as_secs_f64()
            ),
        )
    }

    /// `error` without the database's path or URL; a server error is
    /// logged in full first.
    fn unnamed(&self, mut error: ApiError) -> ApiError {
        if error.status.is_server_error() {
            tracing::error!(
                status = error.status.as_u16(),
                "store error (the access log names it without the database): {}",
                error.message
            );
        }
        let name = self.location.to_string();
        if !name.is_empty() {
            error.message = error.message.replace(&name, DATABASE);
        }
        error
    }
}
