//! `kbench serve`: the shared lab's JSON HTTP API over a result store
//! (SQLite file or PostgreSQL), on axum and tokio. docs/api.md describes
//! the routes ([`ROUTES`]) and openapi.json (served at
//! `/api/v1/openapi.json`) describes them for machines:
//!
//! - result sets: pushes of whole `kbench.samples/1` documents (once per
//!   `Idempotency-Key`, so a client retries safely), live uploads of runs
//!   going on, comparisons, histories and exports;
//! - the job queue: submitting, leasing (with renewals and expiry),
//!   finishing, and the workers seen;
//! - saved bisections, read only.
//!
//! Reading is open (unless the server is private); writing needs
//! `Authorization: Bearer TOKEN` with a token whose scopes allow it.
//!
//! The store is synchronous: every store call runs on tokio's blocking pool
//! ([`pool::Stores`]), one store per request taken from a small pool of open
//! connections, so requests run in parallel on PostgreSQL and the async
//! threads never wait on the database. A database that cannot be reached
//! answers 503: the client retries.

pub mod auth;
pub mod client;
mod dashboard;
mod error;
mod handlers;
mod headers;
mod pool;

pub use error::ApiError;
pub use pool::Stores;

use axum::Router;
use kbench_store::Location;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

/// Default request body limit: 32 MiB.
pub const DEFAULT_MAX_BODY: usize = 32 << 20;

/// Checks a submitted job before it is queued: what its names and kernel
/// resolve to on the lab's machines (kbench-lab's `job::check_spec`, which
/// `kbench serve` passes in); the error says what is wrong, for a 400.
pub type JobCheck = Arc<dyn Fn(&kbench_store::JobSpec) -> Result<(), String> + Send + Sync>;

/// What the server needs.
#[derive(Clone)]
pub struct Config {
    pub location: Location,
    /// Bodies over this many bytes are refused with 413.
    pub max_body: usize,
    pub check_job: JobCheck,
    /// Whether reading (every GET) needs a token with the `read` scope too.
    pub private: bool,
}

#[derive(Clone)]
pub(crate) struct AppState {
    pub stores: Arc<Stores>,
    pub max_body: usize,
    pub check_job: JobCheck,
    pub private: bool,
}

/// Declares the API's routes once: [`ROUTES`], which the OpenAPI test
/// checks openapi.json against, and the router built from the same list.
macro_rules! api_routes {
    ($($method:ident $path:literal => $handler:path;)*) => {
        /// Every API route as (method, path): what the router serves and
        /// openapi.json documents (tests/api.rs checks both ways).
        pub const ROUTES: &[(&str, &str)] = &[$((stringify!($method), $path)),*];

        fn api_router() -> Router<AppState> {
            Router::new()$(.route($path, axum::routing::$method($handler)))*
        }
    };
}

api_routes! {
    get "/api/v1/token" => handlers::token;
    get "/api/v1/openapi.json" => handlers::openapi;
    get "/api/v1/result-sets" => handlers::sets::list_sets;
    post "/api/v1/result-sets/{set}/samples" => handlers::sets::push_samples;
    post "/api/v1/result-sets/{set}/live" => handlers::live::append;
    get "/api/v1/result-sets/{set}/compare" => handlers::sets::compare;
    get "/api/v1/result-sets/{set}/history" => handlers::sets::history;
    get "/api/v1/result-sets/{set}/export" => handlers::sets::export;
    get "/api/v1/bisects" => handlers::bisects::list;
    get "/api/v1/bisects/{name}" => handlers::bisects::one;
    post "/api/v1/jobs" => handlers::jobs::submit;
    get "/api/v1/jobs" => handlers::jobs::list;
    get "/api/v1/jobs/{id}" => handlers::jobs::one;
    post "/api/v1/jobs/lease" => handlers::jobs::lease;
    post "/api/v1/jobs/{id}/renew" => handlers::jobs::renew;
    post "/api/v1/jobs/{id}/finish" => handlers::jobs::finish;
    get "/api/v1/workers" => handlers::jobs::workers;
}

/// The API's routes over `stores`.
///
/// Keep a clone of `stores` outside the runtime and drop it after the
/// runtime: the synchronous PostgreSQL client blocks on its own runtime
/// when dropped, which panics inside an async task.
pub fn router(stores: Arc<Stores>, config: &Config) -> Router {
    let state = AppState {
        stores,
        max_body: config.max_body,
        check_job: config.check_job.clone(),
        private: config.private,
    };
    headers::secure(
        api_router()
            .merge(dashboard::routes())
            .fallback(handlers::not_found)
            .layer(axum::middleware::from_fn_with_state(
                state.clone(),
                handlers::private_reads,
            ))
            .with_state(state),
    )
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
    config: &Config,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    axum::serve(listener, router(stores, config))
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
        let stores = Arc::new(Stores::new(config.location.clone()));
        let served = runtime.block_on(serve(listener, stores.clone(), &config, async {
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
        serve(listener, shared, &config, shutdown_signal()).await?;
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
