//! The command-line interface: every subcommand, option and its help.

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "kbench",
    version,
    about = "A kernel performance regression lab: measure kernel paths, keep every sample, compare identifiers",
    long_about = "kbench measures the kernel paths that regression reports track (syscalls, signals, \
pipes, sockets, fork/exec, context switches, bandwidth), keeps every raw sample with a snapshot of the \
system in a local SQLite database, and shows them per result set and identifier.\n\n\
A result set (--into) groups identifiers (--as): one identifier per kernel, patch or setting you compare.",
    after_help = "Examples:\n  kbench run                                   # quick suite, identifier = running kernel\n  kbench run quick --as \"6.18 stock\" --into plu-test\n  kbench run syscall-null pipe-lat --as patched --into plu-test\n  kbench show plu-test\n  kbench list"
)]
pub struct Cli {
    /// Result database (SQLite file). Default: $XDG_DATA_HOME/kbench/results.db
    #[arg(long, global = true, env = "KBENCH_DB", value_name = "PATH")]
    pub db: Option<PathBuf>,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Measure benchmarks or suites and store every sample
    Run(RunArgs),
    /// Show a result set: identifiers, system, per-test summary
    Show(ShowArgs),
    /// List built-in benchmarks and suites with their units and direction
    List(JsonArg),
    /// Print this system's snapshot (what every run records)
    Sysinfo(JsonArg),
    /// Measuring process used by `run` (internal)
    #[command(hide = true)]
    Agent(AgentArgs),
}

#[derive(Debug, Args)]
#[command(
    after_help = "Running again under the same identifier adds samples (a new round); \
a run that was interrupted or killed is resumed where it stopped. Ctrl-C keeps every sample \
so far and exits with status 130."
)]
pub struct RunArgs {
    /// Suites, benchmark ids or tests with options, e.g. quick, pipe-lat, 'ctxsw[procs=8,size=16]'
    #[arg(value_name = "NAME", default_value = "quick")]
    pub names: Vec<String>,

    /// Identifier of this run's column (default: the running kernel's release)
    #[arg(long = "as", value_name = "IDENTIFIER")]
    pub identifier: Option<String>,

    /// Result set to store into
    #[arg(long, value_name = "SET", default_value = "default")]
    pub into: String,

    /// Run the measuring process under this command, e.g. "taskset -c 1" or "systemd-run --scope"
    #[arg(long, value_name = "CMD ARGS")]
    pub wrap: Option<String>,

    /// Fresh invocations of each test, interleaved (the unit of replication for compare)
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub rounds: u32,

    /// Stop sampling a test when its 95 % CI half-width is within this percent of the mean
    #[arg(long, value_name = "PERCENT", default_value_t = 1.0)]
    pub target_ci: f64,

    /// Time budget per test and round, in seconds
    #[arg(long, value_name = "SECONDS", default_value_t = 3.0)]
    pub max_time: f64,

    /// Fewest samples per test and round
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(2..))]
    pub min_samples: u64,

    /// Most samples per test and round
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(2..))]
    pub max_samples: u64,

    /// Print the run's result as JSON on stdout (schema kbench.run/1)
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// Result set to show (default: list the result sets)
    pub set: Option<String>,

    /// Print JSON on stdout (schema kbench.show/1, or kbench.sets/1 without a set)
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct JsonArg {
    /// Print JSON on stdout
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct AgentArgs {
    /// The job as JSON
    #[arg(long)]
    pub job: String,
}
