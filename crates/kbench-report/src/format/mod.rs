//! Report formats of a [`ComparisonReport`], one file each behind one trait
//! (reports.md): `bars` (seeds 000/002), `table` (seed 003), `regressions`
//! (seed 004), `markdown`, `json`, `csv`.

use crate::comparison::ComparisonReport;

/// How a format may dress its output.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Style {
    /// ANSI colours (only when writing to a terminal).
    pub color: bool,
}

/// One report format.
pub trait Format {
    /// The name users type after `--format`.
    fn name(&self) -> &'static str;
    fn render(&self, report: &ComparisonReport, style: Style) -> String;
}

/// Every format, in `--help` order.
pub fn all() -> Vec<Box<dyn Format>> {
    vec![]
}

/// The format called `name`.
pub fn by_name(name: &str) -> Option<Box<dyn Format>> {
    all().into_iter().find(|f| f.name() == name)
}
