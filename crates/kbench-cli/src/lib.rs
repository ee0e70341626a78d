//! kbench's command-line interface: every subcommand, option and its help,
//! by concern. Parsing only: nothing here runs a command (the binary's
//! `commands/` does), though it spells the command line a lab worker runs
//! its job with (`job_run`), from the same definitions. A library so that
//! what walks the flags (completions, man pages, their tests) reads the
//! real definitions.

mod bisect;
mod calibrate;
mod campaign;
mod common;
pub mod config;
mod docs;
mod job_run;
mod lab;
mod lava;
mod measure;
mod results;
mod rootfs;
mod set;
mod vm;

pub use bisect::BisectArgs;
pub use calibrate::CalibrateArgs;
pub use campaign::{CampaignCommand, CampaignShowArgs, CampaignStartArgs};
pub use common::{JsonArg, SamplingArgs, UploadArgs};
pub use docs::{CompletionsArgs, ManArgs};
pub use job_run::job_run_args;
pub use lab::{
    JobCommand, ListArgs as JobListArgs, PushArgs, ServeArgs, SubmitArgs, TokenCommand, WorkerArgs,
};
pub use lava::{LavaCommand, LavaImportArgs, LavaJobArgs, LavaSubmitArgs};
pub use measure::{AgentArgs, InstallArgs, RunArgs};
pub use results::{CompareArgs, ExportArgs, HistoryArgs, ImportArgs, ShowArgs};
pub use rootfs::{RootfsBuildArgs, RootfsCommand};
pub use set::{SetCommand, SetEditArgs};
pub use vm::{
    FetchArgs, KernelCommand, ListArgs as KernelListArgs, VmCommand, VmCompareArgs, VmOptions,
};

use clap::{Parser, Subcommand};
use std::ffi::OsString;
use std::path::PathBuf;

/// "0.1.0 (1960f73abcd1-dirty)": the version and the git commit built from
/// (build.rs), for `--version` and every run's snapshot.
pub const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " (", env!("KBENCH_COMMIT"), ")");

#[derive(Debug, Parser)]
#[command(
    name = "kbench",
    version = VERSION,
    about = "A kernel performance regression lab: measure kernel paths, keep every sample, compare identifiers",
    long_about = "kbench measures the kernel paths that regression reports track (syscalls, signals, \
pipes, sockets, fork/exec, context switches, bandwidth), keeps every raw sample with a snapshot of the \
system in a local SQLite database (or a shared PostgreSQL one, --db postgres://...), and shows them per result set and identifier.\n\n\
A result set (--into) groups identifiers (--as): one identifier per kernel, patch or setting you compare.",
    after_help = "Examples:\n  kbench run                                   # quick suite, identifier = running kernel\n  kbench run quick --as \"6.18 stock\" --into plu-test\n  kbench run syscall-null pipe-lat --as patched --into plu-test\n  kbench show plu-test\n  kbench list"
)]
pub struct Cli {
    /// Result database: a SQLite file, or a PostgreSQL URL (postgres://USER[:PASSWORD]@HOST[:PORT]/DB).
    /// Default: $XDG_DATA_HOME/kbench/results.db
    #[arg(long, global = true, env = "KBENCH_DB", value_name = "PATH|URL")]
    pub db: Option<OsString>,

    /// Directories of user profiles (external benchmarks, *.toml; docs/profiles.md), besides the
    /// built-in ones; several with ':' in KBENCH_PROFILES
    #[arg(
        long = "profiles",
        global = true,
        env = "KBENCH_PROFILES",
        value_name = "DIR",
        value_delimiter = ':'
    )]
    pub profile_dirs: Vec<PathBuf>,

    /// No progress bars and no notes on stderr; errors still print
    #[arg(short, long, global = true)]
    pub quiet: bool,

    /// Log the commands kbench runs (profiles, qemu, git, apt-get) on stderr; -vv: debug.
    /// KBENCH_LOG (e.g. debug, kbench_server=info) overrides -q and -v
    #[arg(short, long, global = true, action = clap::ArgAction::Count, conflicts_with = "quiet")]
    pub verbose: u8,

    #[command(subcommand)]
    pub command: Command,
}

/// `kbench config`.
#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// Print each setting's value before flags, and its source: environment, config file
    /// ($XDG_CONFIG_HOME/kbench/config.toml or KBENCH_CONFIG) or built-in default
    Show(JsonArg),
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Measure benchmarks or suites and store every sample
    Run(RunArgs),
    /// Show a result set: identifiers, system, per-test summary
    Show(ShowArgs),
    /// Compare identifiers: change with confidence interval, p/q values and a verdict per metric
    Compare(CompareArgs),
    #[command(about = results::import_summary())]
    Import(ImportArgs),
    #[command(about = results::export_summary())]
    Export(ExportArgs),
    /// Arrange a result set: title, description, identifiers' names, order, factors
    #[command(subcommand)]
    Set(SetCommand),
    /// Measure this host's drift between identical runs or boots, which compare decides one run
    /// (or boot) on a side with
    Calibrate(CalibrateArgs),
    /// Change points across a result set's identifiers in version order
    History(HistoryArgs),
    /// Find the commit that changed a metric: automatic bisection with statistics
    Bisect(BisectArgs),
    /// Measure kernels one boot at a time on this machine, alternating, with no one at the keyboard
    #[command(subcommand)]
    Campaign(CampaignCommand),
    /// Run benchmarks in a VM that boots a given kernel with kbench as its init
    #[command(subcommand)]
    Vm(VmCommand),
    /// Fetch and list kernels for `kbench vm`
    #[command(subcommand)]
    Kernel(KernelCommand),
    /// Compare kernels on a LAVA lab: write the job that boots them in turn, read its results back
    #[command(subcommand)]
    Lava(LavaCommand),
    /// Build, list and remove guest root filesystems with profiles' packages, for `kbench vm`
    #[command(subcommand)]
    Rootfs(RootfsCommand),
    /// Serve the shared lab: JSON HTTP API, dashboard pages and the job queue
    Serve(ServeArgs),
    /// Create, list and revoke API tokens for `kbench serve`
    #[command(subcommand)]
    Token(TokenCommand),
    /// Send a local result set to a `kbench serve` server
    Push(PushArgs),
    /// Submit jobs to a lab server for its workers, and list them
    #[command(subcommand)]
    Job(JobCommand),
    /// Run the lab server's jobs: lease one, measure it, upload its samples, repeat
    Worker(WorkerArgs),
    /// Install the Debian packages that external benchmark profiles need
    Install(InstallArgs),
    /// List built-in benchmarks, suites and external profiles with their units and direction
    List(JsonArg),
    /// Print this system's snapshot (what every run records)
    Sysinfo(JsonArg),
    /// Print a shell completion script: bash, zsh, fish, elvish or powershell
    Completions(CompletionsArgs),
    /// Print the man page (kbench.1) on stdout, or write one page per command into --dir
    Man(ManArgs),
    /// The config file: `kbench config show` prints each setting and where it comes from
    #[command(subcommand)]
    Config(ConfigCommand),
    /// Measuring process used by `run` (internal)
    #[command(hide = true)]
    Agent(AgentArgs),
}
