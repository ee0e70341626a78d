//! Flags several commands share: sampling, upload, --json.

use clap::Args;
use kbench_measure::MeasureError;
use kbench_measure::plan::{
    MAX_SAMPLES, MAX_TIME, MIN_SAMPLES, PlanChoice, Recording, SHORT_ROUND, SamplingPlan,
    TARGET_CI_PERCENT,
};

/// Uploading a run to the lab's server as it goes (shared by `run` and `vm run`).
#[derive(Debug, Args)]
pub struct UploadArgs {
    /// Also send every sample to this kbench server (http://HOST:PORT) while the run goes on
    /// (its old name --upload still works, for one release)
    #[arg(
        long = "server",
        alias = "upload",
        env = "KBENCH_SERVER",
        value_name = "URL"
    )]
    pub upload: Option<String>,

    /// API token for --server (`kbench token create` on the server's database)
    #[arg(long, env = "KBENCH_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
}

/// When to stop sampling a test, and a run (shared by `run` and `vm`).
#[derive(Debug, Args)]
pub struct SamplingArgs {
    /// Stop sampling a test when its 95 % CI half-width is within this percent of the mean
    #[arg(
        long,
        value_name = "PERCENT",
        default_value_t = TARGET_CI_PERCENT,
        env = "KBENCH_TARGET_CI"
    )]
    pub target_ci: f64,

    #[arg(long, value_name = "SECONDS", env = "KBENCH_MAX_TIME", help = max_time_help())]
    pub max_time: Option<f64>,

    #[arg(long, value_parser = clap::value_parser!(u64).range(2..), help = min_samples_help())]
    pub min_samples: Option<u64>,

    /// Most samples per test and round
    #[arg(long, default_value_t = MAX_SAMPLES as u64, value_parser = clap::value_parser!(u64).range(2..))]
    pub max_samples: u64,

    /// Do not record the measuring task's perf counters (task clock, context switches, CPU
    /// migrations, page faults, and instructions, cycles, branch and cache misses where there is
    /// a PMU), per operation
    #[arg(long)]
    pub no_counters: bool,

    /// System monitors recorded per round, comma-separated: vmstat, interrupts, softirqs, sched,
    /// psi, or none
    #[arg(long, value_name = "LIST", default_value = kbench_measure::DEFAULT_MONITORS)]
    pub monitor: String,

    /// After a test FAILED, measure the other tests too (as make -k); without it the run stops
    /// at the first FAILED test (in a VM, after that boot). Either way what was measured is
    /// stored, the summary names the tests that FAILED, and kbench exits with status 3
    #[arg(short = 'k', long)]
    pub keep_going: bool,
}

impl SamplingArgs {
    /// The flags as a sampling plan, checked.
    pub fn plan(&self) -> Result<SamplingPlan, MeasureError> {
        let mut plan = SamplingPlan::chosen(&PlanChoice {
            target_ci_percent: self.target_ci,
            max_time: self.max_time,
            min_samples: self.min_samples,
            max_samples: self.max_samples,
        })?;
        plan.record = Recording::chosen(self.no_counters, &self.monitor)?;
        Ok(plan)
    }
}

/// `--max-time`'s help, with the defaults a run uses.
fn max_time_help() -> String {
    format!(
        "Time budget per test and round, in seconds [default: {} in `kbench run`'s adaptive rounds \
         and its variants' blocks, {} with --rounds and in `kbench vm`; an external profile's own \
         budget for its tests]",
        SHORT_ROUND.as_secs_f64(),
        MAX_TIME.as_secs_f64()
    )
}

/// `--min-samples`' help, with the default a run uses.
fn min_samples_help() -> String {
    format!(
        "Fewest samples per test and round [default: {MIN_SAMPLES}; an external profile's own \
         minimum for its tests, whose runs take seconds]"
    )
}

#[derive(Debug, Args)]
pub struct JsonArg {
    /// Print JSON on stdout
    #[arg(long)]
    pub json: bool,
}
