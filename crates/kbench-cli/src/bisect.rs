//! Flags of `kbench bisect`.

use clap::Args;
use kbench_analysis::thresholds::threshold_percent;
use kbench_bisect::{KernelBuild, KernelMeasure, LinuxBuild, Measure, Setup};
use kbench_stats::bisection::BisectionOptions;
use kbench_vm::guest_config::ConfigBase;
use std::path::PathBuf;

/// Find the commit that changed a metric: automatic bisection with statistics
#[derive(Debug, Args)]
#[command(
    after_help = "Every decision is made on blocks: short groups of one fresh measurement of each \
commit involved, in a random order drawn from a recorded seed, so that drift and slow spells of the \
machine cancel in the per-block ratios; the analysis is the Hodges-Lehmann shift of the per-block \
log ratios with its signed-rank CI. The endpoints must differ (blocks of good and bad; verdict \
REGRESSION or IMPROVEMENT: significant, the CI beyond --threshold). Each commit tested is built \
and measured in blocks with both endpoints, and is like-bad when its per-block shift is \
significantly nearer bad's, like-good when nearer good's, else unknown (twice the blocks, up to \
--max-blocks; a commit still unknown there stops the bisection, which names the range left: \
kbench does not guess). The range is searched as a graph, merged branches included, as git bisect \
does. Commits that fail to build or run are skipped. At the end the culprit and its parent are \
measured in fresh blocks to confirm.\n\n\
The repository's checkout, index and branches are never touched: kbench builds in detached \
`git worktree`s of its own in the temporary directory (hooks off; one per commit of the last 4 \
built, so that a block needs no rebuild) and removes them at the end. With \
--kernel each measurement boots the built image in a VM as `kbench vm` does (KVM when a probe boot \
works, else emulated) and takes one round of the test's samples. With --kernel-config kbench \
builds the kernels itself: the guest's options merged into the base config, out of tree (O=), \
incrementally, KBUILD_BUILD_* fixed, through ccache when installed (each build's log is kept in \
build-logs/ beside the database), and good is rebuilt from scratch and measured against its \
first build (A/A: what a rebuild alone moves). Samples go to the result set (--into), one \
identifier per commit ('<hash> <subject>'), so `kbench compare` and `kbench history` read them; \
the state is kept in the store and the same command run again continues an interrupted \
bisection.\n\n\
Examples:\n  kbench bisect --repo . --good v1.0 --bad main --build 'cargo build --release' \\\n      \
--run './target/release/app --bench' --metric ops_per_sec --higher-is-better\n  \
kbench bisect --repo ~/linux --good v6.9 --bad v6.10-rc5 --kernel-config tiny \\\n      \
--bench madvise --into bisect-madvise --html bisect.html\n  \
kbench bisect --repo ~/linux --good v6.9 --bad v6.10-rc5 --build 'make -j$(nproc) bzImage' \\\n      \
--kernel arch/x86/boot/bzImage --bench madvise"
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
    #[arg(long, value_name = "CMD", required_unless_present = "kernel_config")]
    pub build: Option<String>,

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

    /// Path of the built kernel image in the tree, booted with `kbench vm`: arch/x86/boot/bzImage,
    /// or arch/arm64/boot/Image for an arm64 cross-build (qemu-system-aarch64)
    #[arg(long, value_name = "PATH_IN_TREE", requires_all = ["bench", "build"])]
    pub kernel: Option<PathBuf>,

    #[command(flatten)]
    pub guest: super::vm::GuestKbenchArg,

    /// kbench builds each commit of the Linux tree itself, out of tree with ccache, from this
    /// config with the guest's options merged in: tiny (make tinyconfig), default (make
    /// defconfig) or the path of your .config; and boots it like --kernel
    #[arg(long, value_name = "tiny|default|FILE", requires = "bench", conflicts_with_all = ["build", "kernel", "run"])]
    pub kernel_config: Option<String>,

    /// With --kernel-config: align every function to 64 bytes
    /// (CONFIG_DEBUG_FORCE_FUNCTION_ALIGN_64B), so that commits cannot move code they do not touch
    #[arg(long, requires = "kernel_config")]
    pub align_functions: bool,

    /// With --kernel-config: skip the A/A rebuild of good (built again from scratch and measured
    /// against its first build, to show what a rebuild alone moves)
    #[arg(long, requires = "kernel_config")]
    pub no_rebuild: bool,

    /// Also write the report as a self-contained HTML page to FILE
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,

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
    #[arg(long, value_name = "PERCENT", default_value_t = 1.0, value_parser = threshold_percent)]
    pub threshold: f64,

    /// Bisect although the repository has uncommitted changes (they are not built)
    #[arg(long)]
    pub allow_dirty: bool,

    /// Print the result as JSON on stdout (schema kbench.bisect/3)
    #[arg(long)]
    pub json: bool,
}

impl BisectArgs {
    /// The flags as the library's request (which checks them); a guest
    /// (`--kernel`, `--kernel-config`) runs this kbench binary and logs its
    /// boots in `log_dir/vm-logs`, kbench's builds in `log_dir/build-logs`.
    pub fn setup(&self, log_dir: PathBuf) -> kbench_bisect::Result<Setup> {
        let build = match (&self.kernel_config, &self.kernel) {
            (Some(base), _) => Some(KernelBuild::Linux(LinuxBuild::new(
                ConfigBase::parse(base),
                self.align_functions,
                log_dir.join("build-logs"),
            )?)),
            (None, Some(image)) => Some(KernelBuild::Command {
                command: self.build.clone().unwrap_or_default(),
                image: image.clone(),
            }),
            (None, None) => None,
        };
        let measure = match build {
            Some(build) => Measure::Kernel(KernelMeasure {
                build,
                benches: self.bench.clone(),
                metric: self.metric.clone(),
                guest_kbench: self.guest.guest_kbench.clone(),
                log_dir: log_dir.join("vm-logs"),
            }),
            None => Measure::command(
                self.run.clone(),
                self.metric.clone(),
                self.unit.clone(),
                self.higher_is_better,
                self.lower_is_better,
            )?,
        };
        Ok(Setup {
            repo: self.repo.clone(),
            good: self.good.clone(),
            bad: self.bad.clone(),
            build: self.build.clone().unwrap_or_default(),
            measure,
            into: self.into.clone(),
            options: BisectionOptions {
                threshold: self.threshold / 100.0,
                initial_blocks: self.blocks as usize,
                max_blocks: self.max_blocks as usize,
                ..BisectionOptions::default()
            },
            allow_dirty: self.allow_dirty,
            rebuild: self.kernel_config.is_some() && !self.no_rebuild,
        })
    }
}
