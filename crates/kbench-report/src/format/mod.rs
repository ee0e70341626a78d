//! Report formats of a [`ComparisonReport`], one file each behind one trait
//! (reports.md): `bars` (seeds 000/002), `table` (seed 003), `regressions`
//! (seed 004), `markdown`, `json`, `csv`, and the pictures: `html` (a
//! self-contained page with charts) and `svg` (one metric's charts). The
//! text formats open with the system header (`common::header_lines`); only
//! bars, table and regressions use colour, and only when [`Style::color`]
//! asks for it.

use crate::comparison::ComparisonReport;

mod bars;
mod common;
pub mod csp;
mod csv;
pub mod html;
mod json;
pub(crate) mod markdown;
mod regressions;
pub mod svg;
mod table;

pub use bars::Bars;
pub use csv::Csv;
pub use html::Html;
pub use json::Json;
pub use markdown::Markdown;
pub use regressions::Regressions;
pub use svg::Svg;
pub use table::Table;

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
    vec![
        Box::new(Bars),
        Box::new(Table),
        Box::new(Regressions),
        Box::new(Markdown),
        Box::new(Json),
        Box::new(Csv),
        Box::new(Html),
        Box::new(Svg),
    ]
}

/// The format called `name`.
pub fn by_name(name: &str) -> Option<Box<dyn Format>> {
    all().into_iter().find(|f| f.name() == name)
}
