//! `kbench calibrate`: the host's drift between identical runs or boots.

use clap::Args;
use kbench_catalog::suite::DEFAULT_SUITE;

#[derive(Debug, Args)]
#[command(
    long_about = "Measure how far identical runs (or, with --kernel, boots) of this host differ, per \
test: the drift that `kbench compare` decides with when a side was measured in one run or boot. \
It runs the tests again and again on this unchanged system, each time in a fresh `kbench run` (or \
`kbench vm run` boot), pairs consecutive ones and stores the drift of their means in the result \
database, keyed by this hardware (CPU model, memory, machine id) and the unit, not by the kernel. \
An interrupted calibration stores nothing.",
    after_help = "Examples:\n  kbench calibrate                          # quick suite, 6 pairs of runs\n  kbench calibrate syscall-null open-close --pairs 10\n  kbench calibrate --kernel 6.12.57+deb13-amd64   # boots of a VM kernel\n  kbench calibrate --show"
)]
pub struct CalibrateArgs {
    /// Suites, benchmark ids or tests to calibrate, as for `kbench run`
    #[arg(value_name = "NAME", default_value = DEFAULT_SUITE)]
    pub names: Vec<String>,

    /// A/A pairs of units to measure; the drift's degrees of freedom are pairs - 1
    #[arg(long, default_value_t = 6, value_parser = clap::value_parser!(u32).range(2..=100))]
    pub pairs: u32,

    /// Rounds per run (per boot with --kernel)
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub rounds: u32,

    /// Calibrate boots: every unit boots this kernel in a VM, as `kbench vm run --kernel`
    #[arg(long, value_name = "PATH|RELEASE")]
    pub kernel: Option<String>,

    /// Print the stored calibrations instead of measuring
    #[arg(long, conflicts_with_all = ["pairs", "rounds", "kernel"])]
    pub show: bool,

    /// Print JSON on stdout
    #[arg(long)]
    pub json: bool,
}
