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
//! ([`pool::Stores`]), on a store taken from a bounded pool of open
//! connections, so requests run in parallel on PostgreSQL and the async
//! threads never wait on the database. A database that cannot be reached,
//! or a pool that stays busy, answers 503: the client retries.
//!
//! Connections are served under [`Limits`] (timeouts, a cap, a drain at
//! shutdown): see `connections.rs`.

mod access;
pub mod auth;
mod connections;
mod dashboard;
mod error;
mod handlers;
mod headers;
mod pool;
pub mod tls;

pub use error::{ApiError, StartError};
pub use pool::Stores;

use axum::Router;
use kbench_store::Location;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

/// Default request body limit: 32 MiB.
pub const DEFAULT_MAX_BODY: usize = 32 << 20;

/// Checks a submitted job before it is queued: what its names and kernel
/// resolve to on the lab's machines (kbench-catalog's `job::check_spec`, which
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
    pub limits: Limits,
    /// Serve HTTPS with this certificate and key (else plain HTTP).
    pub tls: Option<tls::TlsFiles>,
}

/// How long the server waits for clients, how many it serves at once, and
/// how long it drains at shutdown (docs/api.md, "Limits, timeouts and
/// TLS").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// A request head must arrive complete within this; it also closes a
    /// connection that sends nothing, or stays idle between requests.
    pub header_timeout: Duration,
    /// A request body must arrive complete within this of the handler's
    /// first read (408 after).
    pub body_timeout: Duration,
    /// Connections served at once; more wait to be accepted.
    pub max_connections: usize,
    /// Store connections open at once (PostgreSQL connections, or SQLite
    /// handles on the file).
    pub db_connections: usize,
    /// How long a request waits for a free store connection (503 after).
    pub db_wait: Duration,
    /// At shutdown, how long requests in flight may take to finish before
    /// their connections are cut.
    pub drain: Duration,
}

impl Limits {
    /// `kbench serve`'s defaults.
    pub const DEFAULT: Limits = Limits {
        header_timeout: Duration::from_secs(10),
        body_timeout: Duration::from_secs(60),
        max_connections: 256,
        db_connections: 16,
        db_wait: Duration::from_secs(30),
        drain: Duration::from_secs(10),
    };
}

impl Default for Limits {
    fn default() -> Limits {
        Limits::DEFAULT
    }
}

impl Config {
    /// `location` and `check_job` with the defaults: the body limit,
    /// reading open, [`Limits::DEFAULT`], plain HTTP.
    pub fn new(location: Location, check_job: JobCheck) -> Config {
        Config {
            location,
            max_body: DEFAULT_MAX_BODY,
            check_job,
            private: false,
            limits: Limits::DEFAULT,
            tls: None,
        }
    }
}

#[derive(Clone)]
pub(crate) struct AppState {
    pub stores: Arc<Stores>,
    pub max_body: usize,
    pub body_timeout: Duration,
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
        body_timeout: config.limits.body_timeout,
    };
    headers::secure(
        api_router()
            .merge(dashboard::routes())
            .fallback(handlers::not_found)
            .layer(axum::middleware::from_fn_with_state(
                state.clone(),
                handlers::extract::private_reads,
            ))
            .layer(axum::middleware::from_fn(access::log))
            .with_state(state),
    )
}

/// The server's stores for `config`, the first one opened (so a bad
/// `--db` fails before listening).
pub fn open_stores(config: &Config) -> Result<Arc<Stores>, StartError> {
    let limits = config.limits;
    let stores = Stores::open(
        config.location.clone(),
        limits.db_connections,
        limits.db_wait,
    )?;
    Ok(Arc::new(stores))
}

/// The TLS acceptor of `config`'s certificate and key, if it has them
/// (read before listening, so bad files fail first).
pub fn tls_acceptor(config: &Config) -> Result<Option<tokio_rustls::TlsAcceptor>, StartError> {
    let Some(files) = &config.tls else {
        return Ok(None);
    };
    let server = files.server_config().map_err(StartError::Tls)?;
    Ok(Some(tokio_rustls::TlsAcceptor::from(server)))
}

/// Serves on `listener` under `config`'s limits (over `tls` when given)
/// until `shutdown` completes, then drains (see [`router`] on where to
/// drop `stores`).
pub async fn serve(
    listener: tokio::net::TcpListener,
    stores: Arc<Stores>,
    config: &Config,
    tls: Option<tokio_rustls::TlsAcceptor>,
    shutdown: impl Future<Output = ()> + Send,
) -> std::io::Result<()> {
    let router = router(stores, config);
    connections::serve(listener, router, config.limits, tls, shutdown).await
}

/// A server on its own thread and runtime (tests, `kbench serve`): binds
/// `listen` and returns the bound address; the server stops when the
/// returned handle is dropped or [`Running::stop`] is called.
pub fn spawn(listen: &str, config: Config) -> Result<Running, StartError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(StartError::os("starting the server's runtime"))?;
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind(listen))
        .map_err(StartError::os(format!("cannot listen on {listen}")))?;
    let addr = listener
        .local_addr()
        .map_err(StartError::os("reading the bound address"))?;
    let tls = tls_acceptor(&config)?;
    let stores = open_stores(&config)?;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let thread = std::thread::spawn(move || {
        let drain = config.limits.drain;
        let served = runtime.block_on(serve(listener, stores.clone(), &config, tls, async {
            let _ = stopped.await;
        }));
        runtime.shutdown_timeout(drain);
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
/// requests in flight within the drain deadline and returns.
pub fn run(listen: &str, config: Config) -> Result<(), StartError> {
    let tls = tls_acceptor(&config)?;
    let stores = open_stores(&config)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(StartError::os("starting the server's runtime"))?;
    let shared = stores.clone();
    let drain = config.limits.drain;
    let served = runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(listen)
            .await
            .map_err(StartError::os(format!("cannot listen on {listen}")))?;
        let addr = listener
            .local_addr()
            .map_err(StartError::os("reading the bound address"))?;
        let scheme = if tls.is_some() { "https" } else { "http" };
        eprintln!(
            "kbench serve: listening on {scheme}://{addr} (results in {}); Ctrl-C stops",
            config.location
        );
        serve(listener, shared, &config, tls, shutdown_signal())
            .await
            .map_err(StartError::os("serving"))?;
        eprintln!("kbench serve: stopped");
        Ok(())
    });
    // Store calls of requests cut at the drain deadline run on; they get
    // as long again before the process leaves them.
    runtime.shutdown_timeout(drain);
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
