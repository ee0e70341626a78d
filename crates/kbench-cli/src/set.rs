//! Flags of `kbench set`: arranging a stored result set as its author
//! wants it read (docs/reports.md, "Arranging a result set").

use clap::{Args, Subcommand};
use kbench_model::parse_factor;

#[derive(Debug, Subcommand)]
#[command(
    after_help = "Examples:\n  kbench set edit plu --title \"PLU on 6.18\" --description \"2 x 2: kernel x cgroup\"\n  \
kbench set edit plu --identifier patched-cg --factor kernel=patched --factor cgroup=yes\n  \
kbench set rename plu \"6.18 stock\" stock\n  kbench set order plu stock patched\n  kbench set remove plu broken --yes"
)]
pub enum SetCommand {
    /// Set the title and description, or an identifier's factors (an empty text clears one)
    Edit(SetEditArgs),
    /// Rename an identifier; its runs and samples stay as they are
    Rename {
        set: String,
        old: String,
        new: String,
    },
    /// Show these identifiers first, in this order; the others follow in the order they had
    Order {
        set: String,
        #[arg(required = true, value_name = "IDENTIFIER")]
        identifiers: Vec<String>,
    },
    /// Remove an identifier with all its runs and samples (asks for --yes)
    Remove {
        set: String,
        identifier: String,
        /// Yes, delete its runs and samples for good
        #[arg(long)]
        yes: bool,
    },
}

#[derive(Debug, Args)]
pub struct SetEditArgs {
    pub set: String,

    /// The set's title, shown atop show, compare and the html report
    #[arg(long)]
    pub title: Option<String>,

    /// The set's description (what was measured and why); lines with \n
    #[arg(long)]
    pub description: Option<String>,

    /// The identifier whose factors --factor and --unset-factor change (alone: print them)
    #[arg(long)]
    pub identifier: Option<String>,

    /// Set a factor of --identifier, e.g. --factor kernel=patched (what compare --by groups by)
    #[arg(long = "factor", value_name = "NAME=LEVEL", value_parser = parse_factor,
          requires = "identifier")]
    pub factors: Vec<(String, String)>,

    /// Remove a factor of --identifier
    #[arg(long, value_name = "NAME", requires = "identifier")]
    pub unset_factor: Vec<String>,
}
