//! Stores for requests: the `Store` trait is synchronous, so each request's
//! store calls run in `tokio::task::spawn_blocking` on a store of its own,
//! taken from a pool of idle open stores (opened when none is idle, kept
//! up to [`MAX_IDLE`]). One store per request rather than one behind a
//! Mutex: PostgreSQL serves requests in parallel, and a slow comparison
//! does not hold up pushes; SQLite serialises writers itself (WAL, one
//! writer at a time with readers beside it).
//!
//! A database restart: the requests in flight fail with 503 (the client
//! retries them), and no later request fails for it. A store whose call
//! met an unreachable database is dropped rather than pooled; an idle
//! PostgreSQL store checks its connection itself before its next operation
//! and reconnects when the server closed it meanwhile (kbench-store's
//! `PostgresStore`).

use crate::error::ApiError;
use kbench_store::{Location, Store};
use std::sync::{Arc, Mutex};

/// Idle stores kept open between requests.
pub const MAX_IDLE: usize = 8;

pub struct Stores {
    location: Location,
    idle: Mutex<Vec<Box<dyn Store + Send>>>,
}

impl Stores {
    pub fn new(location: Location) -> Stores {
        Stores {
            location,
            idle: Mutex::new(Vec::new()),
        }
    }

    fn take(&self) -> Result<Box<dyn Store + Send>, ApiError> {
        let idle = self.idle.lock().unwrap_or_else(|e| e.into_inner()).pop();
        match idle {
            Some(store) => Ok(store),
            None => Ok(self.location.open_send()?),
        }
    }

    fn put(&self, store: Box<dyn Store + Send>) {
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        if idle.len() < MAX_IDLE {
            idle.push(store);
        }
    }

    /// Runs `f` with a store on the blocking pool.
    pub async fn with<T: Send + 'static>(
        self: &Arc<Self>,
        f: impl FnOnce(&mut dyn Store) -> Result<T, ApiError> + Send + 'static,
    ) -> Result<T, ApiError> {
        let stores = self.clone();
        tokio::task::spawn_blocking(move || {
            let mut store = stores.take()?;
            let result = f(store.as_mut());
            if !result.as_ref().is_err_and(ApiError::is_unreachable) {
                stores.put(store);
            }
            result
        })
        .await
        .map_err(|e| ApiError::internal(format!("a store task failed: {e}")))?
    }
}
