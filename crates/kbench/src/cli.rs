//! The command-line interface: every subcommand, option and its help.

use clap::builder::{PossibleValue, PossibleValuesParser};
use clap::{Args, Parser, Subcommand};
use kbench_report::comparison::ComparisonReport;
use kbench_report::format::{self, Report};
use std::ffi::OsString;
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "kbench",
    version,
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

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Measure benchmarks or suites and store every sample
    Run(RunArgs),
    /// Show a result set: identifiers, system, per-test summary
    Show(ShowArgs),
    /// Compare identifiers: change with confidence interval, p/q values and a verdict per metric
    Compare(CompareArgs),
    /// Import raw samples (kbench.samples/1 JSON) into a result set, all or nothing
    Import(ImportArgs),
    /// Export a result set's raw samples as JSON (kbench.samples/1) on stdout
    Export(ExportArgs),
    /// Change points across a result set's identifiers in version order
    History(crate::commands::history::HistoryArgs),
    /// Find the commit that changed a metric: automatic bisection with statistics
    Bisect(crate::commands::bisect::BisectArgs),
    /// Run benchmarks in a VM that boots a given kernel with kbench as its init
    #[command(subcommand)]
    Vm(crate::commands::vm::VmCommand),
    /// Fetch and list kernels for `kbench vm`
    #[command(subcommand)]
    Kernel(crate::commands::kernel::KernelCommand),
    /// Serve the shared lab: JSON HTTP API, dashboard pages and the job queue
    Serve(crate::commands::serve::ServeArgs),
    /// Create, list and revoke API tokens for `kbench serve`
    #[command(subcommand)]
    Token(crate::commands::token::TokenCommand),
    /// Send a local result set to a `kbench serve` server
    Push(crate::commands::push::PushArgs),
    /// Submit jobs to a lab server for its workers, and list them
    #[command(subcommand)]
    Job(crate::commands::job::JobCommand),
    /// Run the lab server's jobs: lease one, measure it, upload its samples, repeat
    Worker(crate::commands::worker::WorkerArgs),
    /// Install the Debian packages that external benchmark profiles need
    Install(crate::commands::install::InstallArgs),
    /// List built-in benchmarks, suites and external profiles with their units and direction
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
so far and exits with status 130.\n\n\
With --upload, every sample also goes to a `kbench serve` server while the run goes on (batched \
about once a second; retried while the server is unreachable). The local --db still stores \
everything first. A server that refuses the upload (bad token, conflict) stops the upload, not \
the run, which then exits with status 1; `kbench push` can send the samples later.\n\n\
Example:\n  kbench run quick --as 6.18 --into lab --upload http://lab:8080 --token $T"
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

    /// Fresh invocations of each test, interleaved: compare treats the round as the unit of
    /// replication, so drift between invocations shows up in the verdict's CI [default:
    /// adaptive: short rounds until the CI of the round means is within --target-ci or the test
    /// used --budget, at least 5]
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=100),
          conflicts_with_all = ["variant", "variants"])]
    pub rounds: Option<u32>,

    /// Measure several identifiers on this kernel in randomized interleaved blocks, where the
    /// variants take turns sample by sample (single-task built-ins: on one CPU); the first is the
    /// baseline. NAME or NAME=SETTING;SETTING with wrap:CMD, env:KEY=VALUE,
    /// sysctl:key=value, cgroup:PATH, cpus:LIST, e.g. --variant base --variant
    /// 'slow=wrap:./seccomp-slow 1' --variant 'plu5=sysctl:vm.page_lock_unfairness=5'
    #[arg(long, value_name = "NAME[=SETTINGS]", conflicts_with_all = ["identifier", "wrap"])]
    pub variant: Vec<String>,

    /// Variants from a TOML file of [[variant]] tables (name, wrap, env, sysctl, cgroup, cpus),
    /// before any --variant
    #[arg(long, value_name = "FILE.toml", conflicts_with_all = ["identifier", "wrap"])]
    pub variants: Vec<PathBuf>,

    /// With two variants: run them at the same time, each on a CPU of its own (swapped at random
    /// per block), so both see the same interference; single-task built-in tests only
    #[arg(long)]
    pub duet: bool,

    /// Seed of the variants' order within blocks (default: random; recorded with the runs)
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,

    /// Seconds per test (and variant) that adaptive rounds or blocks may take once the minimum
    /// is done (5 rounds, 12 blocks), unless the CI reaches --target-ci first; 3.5 s keeps the
    /// quick suite near 60 s per identifier. Not used with --rounds
    #[arg(long, value_name = "SECONDS", default_value_t = 3.5)]
    pub budget: f64,

    /// Run rounds that ran disturbed (steal, a busy machine, a slow control loop) again as new
    /// rounds, once each and at most 2 per test; compare leaves out a disturbed round for each
    /// quiet replacement
    #[arg(long)]
    pub redo_disturbed: bool,

    #[command(flatten)]
    pub sampling: SamplingArgs,

    #[command(flatten)]
    pub upload: UploadArgs,

    /// Print the run's result as JSON on stdout (schema kbench.run/1)
    #[arg(long)]
    pub json: bool,
}

/// Uploading a run to the lab's server as it goes (shared by `run` and `vm run`).
#[derive(Debug, Args)]
pub struct UploadArgs {
    /// Also send every sample to this kbench server (http://HOST:PORT) while the run goes on
    #[arg(long, value_name = "URL")]
    pub upload: Option<String>,

    /// API token for --upload (`kbench token create` on the server's database)
    #[arg(long, env = "KBENCH_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
}

/// When to stop sampling a test (shared by `run` and `vm`).
#[derive(Debug, Args)]
pub struct SamplingArgs {
    /// Stop sampling a test when its 95 % CI half-width is within this percent of the mean
    #[arg(long, value_name = "PERCENT", default_value_t = 1.0)]
    pub target_ci: f64,

    /// Time budget per test and round, in seconds (3 rounds x 1 s = 3 s per test) [default: 1;
    /// an external profile's own budget for its tests]
    #[arg(long, value_name = "SECONDS")]
    pub max_time: Option<f64>,

    /// Fewest samples per test and round [default: 5; an external profile's own minimum for its
    /// tests, whose runs take seconds]
    #[arg(long, value_parser = clap::value_parser!(u64).range(2..))]
    pub min_samples: Option<u64>,

    /// Most samples per test and round
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(2..))]
    pub max_samples: u64,
}

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// Result set to show (default: list the result sets)
    pub set: Option<String>,

    /// Print JSON on stdout (schema kbench.show/1, or kbench.sets/1 without a set)
    #[arg(long)]
    pub json: bool,

    /// Show in a compare format instead, e.g. `table` for the lmbench matrix of all identifiers
    #[arg(long, value_name = "FORMAT", value_parser = formats::<ComparisonReport>())]
    pub format: Option<String>,
}

#[derive(Debug, Args)]
#[command(
    after_help = "Verdicts (statistics.md): REGRESSION / IMPROVEMENT when the change's 95 % CI \
lies wholly beyond --threshold in the worse / better direction and q < 0.05 (Benjamini-Hochberg over \
all metrics of one comparison, whatever --metric shows); NO CHANGE when the CI lies within \
+-threshold; CANNOT DECIDE when no test can be made (a side with one observation, no spread on \
either side, or rounds against one round); INCONCLUSIVE otherwise, with the smallest detectable \
effect and the samples that would decide.\n\n\
Exit status: 0 done (no regression, or no --fail-on-regression; CANNOT DECIDE does not fail); 1 a \
metric is a REGRESSION and --fail-on-regression was given; 2 a usage error or anything else that stopped the comparison."
)]
pub struct CompareArgs {
    /// Result set to compare
    pub set: String,

    /// Identifiers to compare with the baseline (default: all others, in stored order)
    #[arg(value_name = "IDENTIFIER")]
    pub identifiers: Vec<String>,

    /// Identifier to compare against (default: the first stored)
    #[arg(long)]
    pub baseline: Option<String>,

    /// Report format
    #[arg(long, default_value = "bars", value_parser = formats::<ComparisonReport>())]
    pub format: String,

    /// Practical threshold in percent: smaller changes are NO CHANGE
    #[arg(long, value_name = "PERCENT", default_value_t = 1.0)]
    pub threshold: f64,

    /// Exit with status 1 when any metric is a REGRESSION (a CI gate)
    #[arg(long)]
    pub fail_on_regression: bool,

    /// Only metrics whose test name contains this text
    #[arg(long, value_name = "TEXT")]
    pub metric: Option<String>,

    /// Write the report to this file instead of stdout
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Colour: auto (on a terminal), always, never
    #[arg(long, default_value = "auto", value_parser = ["auto", "always", "never"])]
    pub color: String,
}

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// A kbench.samples/1 JSON file (docs/samples-format.md), or - for stdin
    pub file: PathBuf,

    /// Result set to import into (default: the one named in the file)
    #[arg(long, value_name = "SET")]
    pub into: Option<String>,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// Result set to export
    pub set: String,

    /// Export format (only json: kbench.samples/1, which `kbench import` reads back)
    #[arg(long, default_value = "json", value_parser = ["json"])]
    pub format: String,
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

/// The values of a `--format` option: the registry's formats of report
/// `R`, each with its line of help.
pub fn formats<R: Report>() -> PossibleValuesParser {
    PossibleValuesParser::new(
        format::formats::<R>()
            .into_iter()
            .map(|f| PossibleValue::new(f.name()).help(f.help())),
    )
}
