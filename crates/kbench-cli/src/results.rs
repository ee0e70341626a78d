//! Flags of the commands that read stored results: show, compare,
//! history, import, export; the `--format` lists come from the report
//! registry.

use clap::Args;
use clap::builder::{PossibleValue, PossibleValuesParser};
use kbench_analysis::comparison::ComparisonReport;
use kbench_analysis::history::HistoryReport;
use kbench_analysis::thresholds::{DEFAULT_THRESHOLD, Thresholds, threshold_percent};
use kbench_formats::registry::{self, FileFormat};
use kbench_report::format::{self, Report};
use std::path::PathBuf;

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

    /// Show one identifier's counters and monitors per operation, test by test, like `perf stat`
    /// (default: the first identifier)
    #[arg(long, value_name = "IDENTIFIER", num_args = 0..=1, conflicts_with = "format")]
    pub counters: Option<Option<String>>,
}

#[derive(Debug, Args)]
#[command(
    after_help = "Verdicts (docs/statistics.md): REGRESSION / IMPROVEMENT when the change's 95 % CI \
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

    /// Compare the levels of this factor (`--factor` of run or set edit) within each level of
    /// the other factors, e.g. --by kernel: stock against patched, in and out of the cgroup
    #[arg(long, value_name = "FACTOR", conflicts_with = "identifiers")]
    pub by: Option<String>,

    /// With --by: the level compared against (default: the level of --baseline or of the
    /// first identifier with the factor)
    #[arg(long, value_name = "LEVEL", requires = "by")]
    pub baseline_level: Option<String>,

    /// Practical threshold in percent: smaller changes are NO CHANGE. Per test too, the first
    /// match winning, `*` any text: 2,pipe-lat=3,syscall-*=1 (2 % for the rest)
    #[arg(long, value_name = "PERCENT|TEST=PERCENT,..", default_value = DEFAULT_THRESHOLD, value_parser = Thresholds::parse, env = "KBENCH_THRESHOLD")]
    pub threshold: Thresholds,

    /// Exit with status 1 when any metric is a REGRESSION (a CI gate)
    #[arg(long)]
    pub fail_on_regression: bool,

    /// Only metrics whose test name contains this text
    #[arg(long, value_name = "TEXT")]
    pub metric: Option<String>,

    /// List NO CHANGE metrics too (regressions format), not only count them
    #[arg(long)]
    pub all_rows: bool,

    /// Write the report to this file instead of stdout
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Colour: auto (on a terminal), always, never
    #[arg(long, default_value = "auto", value_parser = ["auto", "always", "never"])]
    pub color: String,
}

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The file, in a format of --from (docs/formats.md), or - for stdin
    pub file: PathBuf,

    /// Result set to import into (default: the one named in the file)
    #[arg(long, value_name = "SET")]
    pub into: Option<String>,

    /// The file's format
    #[arg(long, default_value = registry::AUTO, value_parser = import_formats())]
    pub from: String,

    /// Identifier of a hyperfine or Google Benchmark file's samples (default: the file name)
    #[arg(long, value_name = "NAME")]
    pub identifier: Option<String>,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// Result set to export
    pub set: String,

    /// The format written (docs/formats.md)
    #[arg(long, default_value = "json", value_parser = export_formats())]
    pub format: String,

    /// With --format csv: only this identifier's samples (repeat for more)
    #[arg(long, value_name = "NAME")]
    pub identifier: Vec<String>,
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

/// `kbench import --from`'s values: auto, then every format the registry
/// reads, each with its line of help.
fn import_formats() -> PossibleValuesParser {
    let auto = PossibleValue::new(registry::AUTO).help(registry::AUTO_HELP);
    PossibleValuesParser::new(std::iter::once(auto).chain(registry::imports().map(value)))
}

/// `kbench export --format`'s values: every format the registry writes.
fn export_formats() -> PossibleValuesParser {
    PossibleValuesParser::new(registry::exports().map(value))
}

fn value(format: &FileFormat) -> PossibleValue {
    PossibleValue::new(format.name).help(format.help)
}

/// `kbench import`'s line in `kbench --help`, naming the formats it reads.
pub fn import_summary() -> String {
    format!(
        "Import raw samples, all or nothing (--from {})",
        registry::names(registry::imports())
    )
}

/// `kbench export`'s line in `kbench --help`, naming the formats it writes.
pub fn export_summary() -> String {
    format!(
        "Export a result set's raw samples on stdout (--format {})",
        registry::names(registry::exports())
    )
}

/// Change points across a result set's identifiers in version order
#[derive(Debug, Args)]
#[command(
    after_help = "For each metric, the identifiers are a series of versions, each one observation: \
its mean. The noise of a version mean is estimated from the series (the spread of successive \
differences, so version-to-version drift is noise), at least the versions' own spread. Change \
points are found by E-divisive means and kept when a t-test between neighbouring segments gives \
p < 0.001 and the whole 95 % CI of the change lies beyond --threshold, as compare's verdicts \
(docs/json.md, kbench.history/1). A one-version spike that recovers is not a change.\n\n\
Examples:\n  kbench history lkml-26 --order 2.6.0,2.6.1,2.6.2\n  kbench history lkml-26 --metric pipe-lat --format markdown\n  \
kbench history lkml-26 --format html -o series.html"
)]
pub struct HistoryArgs {
    /// Result set whose identifiers are the versions
    pub set: String,

    /// Identifiers in version order, comma-separated (default: the stored order)
    #[arg(long, value_name = "V1,V2,...", value_delimiter = ',')]
    pub order: Vec<String>,

    /// Only metrics whose test name contains this text
    #[arg(long, value_name = "TEXT")]
    pub metric: Option<String>,

    /// Report format
    #[arg(long, default_value = "text", value_parser = formats::<HistoryReport>())]
    pub format: String,

    /// Write the report to this file instead of stdout
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Practical threshold in percent: a change point's whole CI must lie beyond it
    #[arg(long, value_name = "PERCENT", default_value_t = 1.0, value_parser = threshold_percent)]
    pub threshold: f64,
}
