//! Flags of the commands that measure on this machine: run, install,
//! and the agent that `run` starts.

use super::common::{SamplingArgs, UploadArgs};
use clap::Args;
use kbench_catalog::profile::adhoc::{self, AdHoc, AdHocMetric};
use kbench_catalog::suite::DEFAULT_SUITE;
use kbench_measure::adaptive::{AdaptiveRounds, BUDGET_SECONDS, MAX_ROUNDS, MIN_ROUNDS};
use kbench_measure::interleave::BlockPlan;
use kbench_measure::plan::SamplingPlan;
use kbench_measure::runner::RunRequest;
use kbench_model::TestKey;
use std::path::PathBuf;

#[derive(Debug, Args)]
#[command(
    after_help = "Running again under the same identifier adds samples (a new round); \
a run that was interrupted or killed is resumed where it stopped. Ctrl-C keeps every sample \
so far and exits with status 130.\n\n\
With --server, every sample also goes to a `kbench serve` server while the run goes on (batched \
about once a second; retried while the server is unreachable). The local --db still stores \
everything first. A server that refuses the upload (bad token, conflict) stops the upload, not \
the run, which then exits with status 2; `kbench push` can send the samples later.\n\n\
Example:\n  kbench run quick --as 6.18 --into lab --server http://lab:8080 --token $T"
)]
pub struct RunArgs {
    /// Suites, benchmark ids or tests with options, e.g. quick, pipe-lat, 'ctxsw[procs=8,size=16]'
    #[arg(value_name = "NAME", default_value = DEFAULT_SUITE)]
    pub names: Vec<String>,

    /// Identifier of this run's column (default: the running kernel's release)
    #[arg(long = "as", value_name = "IDENTIFIER")]
    pub identifier: Option<String>,

    /// Result set to store into
    #[arg(long, value_name = "SET", default_value = "default")]
    pub into: String,

    /// Run the measuring process under this command, e.g. "taskset -c 1", split into words as a
    /// shell would: --wrap "sh -c 'taskset -c 1 \"$0\" \"$@\"'"
    #[arg(long, value_name = "CMD ARGS")]
    pub wrap: Option<String>,

    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_ROUNDS)),
          conflicts_with_all = ["variant", "variants"], help = rounds_help())]
    pub rounds: Option<u32>,

    /// Measure several identifiers on this kernel in randomized interleaved blocks, where the
    /// variants take turns sample by sample (single-task built-ins: on one CPU); the first is the
    /// baseline. NAME or NAME=SETTING;SETTING with wrap:CMD, env:KEY=VALUE,
    /// sysctl:key=value, cgroup:PATH, cpus:LIST, counters:on|off, e.g. --variant base --variant
    /// 'slow=wrap:./seccomp-slow 1' --variant 'plu5=sysctl:vm.page_lock_unfairness=5'
    #[arg(long, value_name = "NAME[=SETTINGS]", conflicts_with_all = ["identifier", "wrap"])]
    pub variant: Vec<String>,

    /// Variants from a TOML file of [[variant]] tables (name, wrap, env, sysctl, cgroup, cpus,
    /// counters), before any --variant
    #[arg(long, value_name = "FILE.toml", conflicts_with_all = ["identifier", "wrap"])]
    pub variants: Vec<PathBuf>,

    /// With two variants: run them at the same time, each on a CPU of its own (swapped at random
    /// per block), so both see the same interference; single-task built-in tests only
    #[arg(long)]
    pub duet: bool,

    /// A factor of this identifier in a designed experiment, e.g. --factor kernel=patched
    /// --factor cgroup=yes: `compare --by kernel` compares kernels within each cgroup level
    #[arg(long = "factor", value_name = "NAME=LEVEL", value_parser = kbench_model::parse_factor,
          conflicts_with_all = ["variant", "variants"])]
    pub factors: Vec<(String, String)>,

    /// Seed of the variants' order within blocks (default: random; recorded with the runs)
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,

    #[arg(long, value_name = "SECONDS", default_value_t = BUDGET_SECONDS, help = budget_help())]
    pub budget: f64,

    /// Run rounds that ran disturbed (steal, a busy machine, a slow control loop) again as new
    /// rounds, once each and at most 2 per test; compare leaves out a disturbed round for each
    /// quiet replacement
    #[arg(long)]
    pub redo_disturbed: bool,

    #[command(flatten)]
    pub command: CommandArgs,

    #[command(flatten)]
    pub sampling: SamplingArgs,

    #[command(flatten)]
    pub upload: UploadArgs,

    /// Show the output of profile tools and --command runs on stderr (after each run) instead of
    /// only keeping it for error messages
    #[arg(long)]
    pub show_output: bool,

    /// Print the run's result as JSON on stdout (schema kbench.run/1)
    #[arg(long)]
    pub json: bool,
}

impl RunArgs {
    /// The request to measure `tests` (resolved from the names) with
    /// `plan` as `identifier` (`--as`, else the running kernel's release):
    /// both names checked.
    pub fn request(
        &self,
        tests: Vec<TestKey>,
        plan: SamplingPlan,
        adaptive: Option<AdaptiveRounds>,
    ) -> Result<RunRequest, String> {
        let identifier = (self.identifier.clone()).unwrap_or_else(kbench_sysinfo::kernel_release);
        kbench_model::validate_name("identifier", &identifier)?;
        kbench_model::validate_name("result set", &self.into)?;
        Ok(RunRequest {
            set: self.into.clone(),
            identifier,
            tests,
            plan,
            rounds: self.rounds.unwrap_or(MAX_ROUNDS),
            adaptive,
            wrapper: self.wrap.clone(),
            notes: vec![],
            host: None,
            keep_going: self.sampling.keep_going,
            replayed: None,
        })
    }
}

/// `--rounds`' help, with the adaptive rounds' bounds.
fn rounds_help() -> String {
    format!(
        "Fresh invocations of each test, interleaved, at most {MAX_ROUNDS}: compare treats the \
         round as the unit of replication, so drift between invocations shows up in the \
         verdict's CI [default: adaptive: short rounds until the CI of the round means is within \
         --target-ci or the test used --budget, at least {MIN_ROUNDS} and at most {MAX_ROUNDS}]"
    )
}

/// `--budget`'s help, with the minimum of rounds and blocks.
fn budget_help() -> String {
    format!(
        "Seconds per test (and variant) that adaptive rounds or blocks may take once the minimum \
         is done ({MIN_ROUNDS} rounds, {} blocks), unless the CI reaches --target-ci first; the \
         default keeps the quick suite near 60 s per identifier. Not used with --rounds",
        BlockPlan::MIN_BLOCKS
    )
}

/// Ad-hoc commands, timed as hyperfine times them (docs/profiles.md, "Ad-hoc
/// commands").
#[derive(Debug, Args)]
pub struct CommandArgs {
    /// Time this shell command (run with `sh -c` in the current directory) as a test instead of
    /// NAMEs: the wall-clock time of the whole process, in seconds. Repeat it for several tests
    #[arg(long = "command", value_name = "CMD",
          conflicts_with_all = ["names", "variant", "variants", "duet"])]
    pub commands: Vec<String>,

    /// The test name of each --command, in order [default: cmd, or cmd-1, cmd-2, ... for several]
    #[arg(
        long = "name",
        id = "test_names",
        value_name = "NAME",
        requires = "commands"
    )]
    pub test_names: Vec<String>,

    /// Runs of each command before the timed ones, not recorded (hyperfine's default, 0)
    #[arg(long, value_name = "N", default_value_t = 0, requires = "commands",
          value_parser = clap::value_parser!(u32).range(0..=100))]
    pub warmup: u32,

    /// A shell command run before each run of a --command (warm-ups too), not timed
    #[arg(long, value_name = "CMD", requires = "commands")]
    pub prepare: Option<String>,

    /// A shell command run once after the runs of each --command (in each round)
    #[arg(long, value_name = "CMD", requires = "commands")]
    pub cleanup: Option<String>,

    /// Also read the number of a `NAME: VALUE` line the command prints, as metric NAME (lower is
    /// better unless NAME=higher)
    #[arg(long = "metric", value_name = "NAME[=higher|lower]", requires = "commands",
          value_parser = adhoc::parse_metric)]
    pub metrics: Vec<AdHocMetric>,
}

impl CommandArgs {
    /// The ad-hoc commands asked for, run in `work_dir`; `None` without
    /// --command.
    pub fn adhoc(&self, work_dir: PathBuf) -> Option<AdHoc> {
        (!self.commands.is_empty()).then(|| AdHoc {
            commands: self.commands.clone(),
            names: self.test_names.clone(),
            warmup: self.warmup as usize,
            prepare: self.prepare.clone(),
            cleanup: self.cleanup.clone(),
            metrics: self.metrics.clone(),
            work_dir,
        })
    }
}

#[derive(Debug, Args)]
pub struct AgentArgs {
    /// The job as JSON
    #[arg(long)]
    pub job: String,
}

/// Install the Debian packages that external benchmark profiles need
#[derive(Debug, Args)]
#[command(
    after_help = "Runs `apt-get install -y --no-install-recommends PACKAGES` with \
DEBIAN_FRONTEND=noninteractive (and `apt-get update` first when the package lists are empty or \
with --update); needs root. `kbench list` shows each profile's packages and whether it is installed.\n\n\
Example: kbench install redis fio stress-ng && kbench run redis fio-randread stress-ng --as X"
)]
pub struct InstallArgs {
    /// Profiles (or tests of theirs) whose packages to install, e.g. redis fio stress-ng
    #[arg(required = true, value_name = "PROFILE")]
    pub names: Vec<String>,

    /// Run `apt-get update` first even when the package lists exist
    #[arg(long)]
    pub update: bool,

    /// Print the apt-get command instead of running it
    #[arg(long)]
    pub print: bool,
}
