//! `kbench serve`: the shared lab's JSON HTTP API over a result store
//! (SQLite file or PostgreSQL), on axum and tokio.
//!
//! - `POST /api/v1/result-sets/{set}/samples`: a kbench.samples/1 document,
//!   with `Authorization: Bearer TOKEN` and `Idempotency-Key: PUSH-ID`;
//!   a push id already stored answers 200 "already stored" and writes
//!   nothing, so a client retries safely.
//! - `GET /api/v1/result-sets`, `GET /api/v1/result-sets/{set}/compare`,
//!   `GET /api/v1/result-sets/{set}/history`: open reads.
//!
//! The store is synchronous: every store call runs on tokio's blocking pool
//! ([`pool::Stores`]), one store per request taken from a small pool of open
//! connections, so requests run in parallel on PostgreSQL and the async
//! threads never wait on the database.

pub mod auth;
pub mod client;
mod error;
mod handlers;
mod pool;

pub use error::ApiError;
pub use pool::Stores;

use axum::Router;
use axum::routing::{get, post};
use kbench_store::Location;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

/// Default request body limit: 32 MiB.
pub const DEFAULT_MAX_BODY: usize = 32 << 20;

/// What the server needs.
#[derive(Debug, Clone)]
pub struct Config {
    pub location: Location,
    /// Bodies over this many bytes are refused with 413.
    pub max_body: usize,
}

#[derive(Clone)]
pub(crate) struct AppState {
    pub stores: Arc<Stores>,
    pub max_body: usize,
}

/// The API's routes over `stores`.
///
/// Keep a clone of `stores` outside the runtime and drop it after the
/// runtime: the synchronous PostgreSQL client blocks on its own runtime
/// when dropped, which panics inside an async task.
pub fn router(stores: Arc<Stores>, max_body: usize) -> Router {
    let state = AppState { stores, max_body };
    Router::new()
        .route("/api/v1/result-sets", get(handlers::list_sets))
        .route(
            "/api/v1/result-sets/{set}/samples",
            post(handlers::push_samples),
        )
        .route("/api/v1/result-sets/{set}/compare", get(handlers::compare))
        .route("/api/v1/result-sets/{set}/history", get(handlers::history))
        .fallback(handlers::not_found)
        .with_state(state)
}

/// Opens (creating or migrating) the store once, so a bad `--db` fails
/// before listening.
pub fn check_store(location: &Location) -> anyhow::Result<()> {
    location.open_send()?;
    Ok(())
}

/// Serves on `listener` until `shutdown` completes (see [`router`] on
/// where to drop `stores`).
pub async fn serve(
    listener: tokio::net::TcpListener,
    stores: Arc<Stores>,
    max_body: usize,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    axum::serve(listener, router(stores, max_body))
        .with_graceful_shutdown(shutdown)
        .await
}

/// A server on its own thread and runtime (tests, `kbench serve`): binds
/// `listen` and returns the bound address; the server stops when the
/// returned handle is dropped or [`Running::stop`] is called.
pub fn spawn(listen: &str, config: Config) -> anyhow::Result<Running> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let listener = runtime.block_on(tokio::net::TcpListener::bind(listen))?;
    let addr = listener.local_addr()?;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let thread = std::thread::spawn(move || {
        let stores = Arc::new(Stores::new(config.location));
        let served = runtime.block_on(serve(listener, stores.clone(), config.max_body, async {
            let _ = stopped.await;
        }));
        drop(runtime);
        drop(stores);
        served
    });
    Ok(Running {
        addr,
        stop: Some(stop),
        thread: Some(thread),
    })
}

pub struct Running {
    pub addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<std::io::Result<()>>>,
}

impl Running {
    /// Stops accepting, finishes requests in flight and returns.
    pub fn stop(mut self) -> std::io::Result<()> {
        self.finish()
    }

    fn finish(&mut self) -> std::io::Result<()> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        match self.thread.take() {
            Some(thread) => thread
                .join()
                .unwrap_or_else(|_| Err(std::io::Error::other("the server thread panicked"))),
            None => Ok(()),
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.finish();
    }
}

/// `kbench serve`: serves until Ctrl-C or SIGTERM, then finishes the
/// requests in flight.
pub fn run(listen: &str, config: Config) -> anyhow::Result<()> {
    check_store(&config.location)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let stores = Arc::new(Stores::new(config.location.clone()));
    let shared = stores.clone();
    let served = runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(listen)
            .await
            .map_err(|e| anyhow::anyhow!("cannot listen on {listen}: {e}"))?;
        let addr = listener.local_addr()?;
        eprintln!(
            "kbench serve: listening on http://{addr} (results in {}); Ctrl-C stops",
            config.location
        );
        serve(listener, shared, config.max_body, shutdown_signal()).await?;
        eprintln!("kbench serve: stopped");
        Ok(())
    });
    drop(runtime);
    drop(stores);
    served
}

async fn shutdown_signal() {
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
    let term = async {
        match term.as_mut() {
            Some(term) => {
                term.recv().await;
            }
            None => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term => {}
    }
}
