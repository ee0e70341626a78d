//! Logs and verbosity (README "Logs and verbosity"): the libraries log with
//! `tracing`; this installs the one subscriber, plain lines on stderr so
//! stdout stays the command's output, filtered by `KBENCH_LOG` when set,
//! else by `-q` / `-v`. `-q` also silences progress, notes and closing
//! lines ([`quiet`], [`note`], [`closing`]): a command that succeeds
//! leaves stderr empty.

use std::sync::atomic::{AtomicBool, Ordering};
use tracing_subscriber::EnvFilter;

/// The environment variable of the log filter (`debug`,
/// `kbench_server=info`, ...); it overrides `-q` and `-v`.
const FILTER_ENV: &str = "KBENCH_LOG";

static QUIET: AtomicBool = AtomicBool::new(false);

/// Whether `-q` asked for no progress and no notes.
pub fn quiet() -> bool {
    QUIET.load(Ordering::Relaxed)
}

/// Prints a note on stderr, unless `-q`.
pub fn note(text: impl std::fmt::Display) {
    if !quiet() {
        eprintln!("{text}");
    }
}

/// Prints a command's closing line on stderr: unless `-q`, or always when
/// the command was interrupted (the line says how to resume).
pub fn closing(text: &str, interrupted: bool) {
    if interrupted || !quiet() {
        eprintln!("{text}");
    }
}

/// Installs the subscriber. `default` is the level without flags (`info`
/// for `serve`, whose access log shows by default; `warn` otherwise).
/// Called first thing in `main`, while the process has one thread.
pub fn init(quiet: bool, verbose: u8, default: &str) {
    QUIET.store(quiet, Ordering::Relaxed);
    let filter = match std::env::var(FILTER_ENV) {
        Ok(filter) if !filter.is_empty() => filter,
        _ => {
            let level = match (quiet, verbose) {
                (true, _) => "error",
                (false, 0) => default,
                (false, 1) => "info",
                (false, 2) => "debug",
                _ => "trace",
            };
            // Agents and workers that this process starts inherit it, so
            // that what they run is logged as asked too.
            // SAFETY: no other thread exists yet to read the environment.
            unsafe { std::env::set_var(FILTER_ENV, level) };
            level.to_string()
        }
    };
    let filter = EnvFilter::try_new(&filter).unwrap_or_else(|error| {
        eprintln!("kbench: {FILTER_ENV}={filter:?} is not a log filter ({error}); using warn");
        EnvFilter::new("warn")
    });
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .init();
}
