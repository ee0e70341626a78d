//! `kbench bisect`: find the commit that changed a metric, by automatic
//! bisection with the three-state decision of statistics.md, on blocked
//! measurements. Progress on stderr; the result as text, or `--json`
//! (kbench.bisect/2), on stdout.

use anyhow::{Context, bail};
use kbench_bisect::{Bisection, KernelMeasure, Measure, Progress, Setup};
use kbench_report::format::{Render, Style, Text};
use kbench_stats::Better;
use kbench_stats::bisection::BisectionOptions;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

/// Exit status after Ctrl-C, as shells report a SIGINT death.
const EXIT_INTERRUPTED: u8 = 130;

/// Find the commit that changed a metric: automatic bisection with statistics
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Every decision is made on blocks: short groups of one fresh measurement of each \
commit involved, in a random order drawn from a recorded seed, so that drift and slow spells of the \
machine cancel in the per-block ratios; the analysis is the Hodges-Lehmann shift of the per-block \
log ratios with its signed-rank CI. The endpoints must differ (blocks of good and bad; verdict \
REGRESSION or IMPROVEMENT: significant, the CI beyond --threshold). Each commit between is built \
and measured in blocks with both endpoints, and is like-bad when its per-block shift is \
significantly nearer bad's, like-good when nearer good's, else unknown (twice the blocks, up to \
--max-blocks; then it is called by the estimate and the report says it could not tell). Commits \
that fail to build or run are skipped. At the end the culprit and its parent are measured in \
fresh blocks to confirm.\n\n\
The repository's checkout, index and branches are never touched: kbench builds in detached \
`git worktree`s of its own in the temporary directory (hooks off; one per commit of the last 4 \
built, so that a block needs no rebuild) and removes them at the end. With \
--kernel each measurement boots the built image in a VM as `kbench vm` does (KVM when a probe boot \
works, else emulated) and takes one round of the test's samples. Samples go to the result set (--into), one \
identifier per commit ('<hash> <subject>'), so `kbench compare` and `kbench history` read them; \
the state is kept in the store and the same command run again continues an interrupted \
bisection.\n\n\
Examples:\n  kbench bisect --repo . --good v1.0 --bad main --build 'cargo build --release' \\\n      \
--run './target/release/app --bench' --metric ops_per_sec --higher-is-better\n  \
kbench bisect --repo ~/linux --good v6.9 --bad v6.10-rc5 --build 'make -j$(nproc) bzImage' \\\n      \
--kernel arch/x86/boot/bzImage --bench madvise --into bisect-madvise"
)]
pub struct BisectArgs {
    /// The git repository (a checkout); it is only read
    #[arg(long, value_name = "PATH")]
    pub repo: PathBuf,

    /// A commit without the change (tag, branch or hash); must be an ancestor of --bad
    #[arg(long, value_name = "COMMIT")]
    pub good: String,

    /// A commit with the change
    #[arg(long, value_name = "COMMIT")]
    pub bad: String,

    /// Shell command that builds a checked-out commit, run in the worktree
    #[arg(long, value_name = "CMD")]
    pub build: String,

    /// Shell command run in the worktree for one sample; prints `NAME: VALUE` lines or one JSON object
    #[arg(long, value_name = "CMD", conflicts_with = "kernel")]
    pub run: Option<String>,

    /// The metric to take from the --run output (with --kernel: which --bench test, e.g. pipe-lat)
    #[arg(long, value_name = "NAME")]
    pub metric: Option<String>,

    /// Larger values of the metric are better (throughput)
    #[arg(long, conflicts_with = "lower_is_better")]
    pub higher_is_better: bool,

    /// Smaller values of the metric are better (latency, time)
    #[arg(long)]
    pub lower_is_better: bool,

    /// Unit of the --run metric, as stored
    #[arg(long, default_value = "value")]
    pub unit: String,

    /// Path of the built kernel image in the tree, booted with `kbench vm`
    #[arg(long, value_name = "PATH_IN_TREE", requires = "bench")]
    pub kernel: Option<PathBuf>,

    /// Built-in benchmarks for --kernel; the first (or the one --metric names) is run and bisected
    #[arg(long, value_name = "NAME", num_args = 1..)]
    pub bench: Vec<String>,

    /// Result set for the samples (default: bisect-<metric>)
    #[arg(long, value_name = "SET")]
    pub into: Option<String>,

    /// Blocks per decision to start with (a block is one run of --run, or one boot, of each commit involved)
    #[arg(long, alias = "samples", default_value_t = 8, value_parser = clap::value_parser!(u64).range(2..=1000))]
    pub blocks: u64,

    /// Cap of the doubling of blocks for an undecided decision
    #[arg(long, alias = "max-samples", default_value_t = 128, value_parser = clap::value_parser!(u64).range(2..=10000))]
    pub max_blocks: u64,

    /// Practical threshold in percent for the endpoint and confirmation verdicts
    #[arg(long, value_name = "PERCENT", default_value_t = 1.0)]
    pub threshold: f64,

    /// Bisect although the repository has uncommitted changes (they are not built)
    #[arg(long)]
    pub allow_dirty: bool,

    /// Print the result as JSON on stdout (schema kbench.bisect/2)
    #[arg(long)]
    pub json: bool,
}

pub fn bisect(args: BisectArgs, db: &super::Db) -> anyhow::Result<ExitCode> {
    let setup = setup(&args, db)?;
    // Everything that can be checked without writing comes first.
    let bisection = Bisection::prepare(setup, &mut say)?;
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(signal, stop.clone())?;
    }
    let mut store = db.open()?;
    let report = match bisection.run(store.as_mut(), &stop, &mut say) {
        Ok(report) => report,
        Err(error) if error.is_interrupted() => {
            eprintln!("kbench: {error}");
            return Ok(ExitCode::from(EXIT_INTERRUPTED));
        }
        Err(error) => return Err(error.into()),
    };
    if args.json {
        super::print_json(&report)?;
    } else {
        print!("{}", Text.render(&report, Style::default()));
    }
    Ok(ExitCode::SUCCESS)
}

/// The flags as the library's request, with the checks that need nothing
/// but the flags.
fn setup(args: &BisectArgs, db: &super::Db) -> anyhow::Result<Setup> {
    if !(args.threshold.is_finite() && (0.0..100.0).contains(&args.threshold)) {
        bail!(
            "--threshold {} must be a percentage from 0 to below 100",
            args.threshold
        );
    }
    if args.max_blocks < args.blocks {
        bail!(
            "--max-blocks {} is below --blocks {}",
            args.max_blocks,
            args.blocks
        );
    }
    let measure = match &args.kernel {
        Some(image) => Measure::Kernel(KernelMeasure {
            image: image.clone(),
            benches: args.bench.clone(),
            metric: args.metric.clone(),
            guest_binary: std::env::current_exe()
                .context("finding the kbench binary for the guest")?,
            log_dir: db.location()?.data_dir().join("vm-logs"),
        }),
        None => {
            let Some(run) = args.run.clone() else {
                bail!(
                    "say how to measure: --run CMD --metric NAME, or --kernel PATH_IN_TREE \
                     --bench NAMES"
                );
            };
            let Some(metric) = args.metric.clone() else {
                bail!("--run needs --metric NAME: the metric to take from the command's output");
            };
            let better = match (args.higher_is_better, args.lower_is_better) {
                (true, false) => Better::Higher,
                (false, true) => Better::Lower,
                _ => bail!(
                    "--run needs the metric's direction: --higher-is-better or --lower-is-better"
                ),
            };
            Measure::Command {
                run,
                metric,
                unit: args.unit.clone(),
                better,
            }
        }
    };
    Ok(Setup {
        repo: args.repo.clone(),
        good: args.good.clone(),
        bad: args.bad.clone(),
        build: args.build.clone(),
        measure,
        into: args.into.clone(),
        options: BisectionOptions {
            threshold: args.threshold / 100.0,
            initial_blocks: args.blocks as usize,
            max_blocks: args.max_blocks as usize,
            ..BisectionOptions::default()
        },
        allow_dirty: args.allow_dirty,
    })
}

/// Progress on stderr.
fn say(progress: Progress<'_>) {
    match progress {
        Progress::Step(line) => eprintln!("{line}"),
        Progress::Note(note) => eprintln!("kbench: {note}"),
        Progress::Warning(warning) => eprintln!("kbench: WARNING: {warning}"),
    }
}
