//! The report formats: renderers of the three report models (a
//! [`ShowDocument`], a [`ComparisonReport`], a [`HistoryReport`]) behind
//! one trait, [`Render`], and one registry, which names every format, gives
//! its line of help, and says which reports it lays out and what it needs.
//! The `--format` lists of `kbench show`, `compare` and `history` (and of
//! `kbench serve`'s API) come from here.
//!
//! One file per format (reports.md): `text` (show and history), `bars`
//! (seeds 000/002), `table` (seed 003), `regressions` (seed 004),
//! `markdown`, `json` (every report), `csv`, and the pictures: `html` (a
//! self-contained page with charts, of a comparison or a history) and `svg`
//! (one metric's charts). The text formats of a comparison open with the
//! system header (`common::header_lines`); only bars, table and
//! regressions use colour, and only when [`Style::color`] asks for it.

use crate::Error;
use crate::comparison::ComparisonReport;
use crate::history::HistoryReport;
use crate::show::ShowDocument;

mod bars;
mod bisect;
mod common;
pub mod csp;
mod csv;
pub mod html;
mod json;
mod markdown;
mod regressions;
pub mod svg;
mod table;
mod text;

pub use bars::Bars;
pub use csv::Csv;
pub use html::Html;
pub use json::Json;
pub use markdown::Markdown;
pub use regressions::Regressions;
pub use svg::Svg;
pub use table::Table;
pub use text::Text;

/// How a format may dress its output.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Style {
    /// ANSI colours (only when writing to a terminal).
    pub color: bool,
}

/// Lays out one report model `R` as text (a document, a page, a picture).
pub trait Render<R>: Sync {
    fn render(&self, report: &R, style: Style) -> String;
}

/// A report model, and which of a format's renderers lays it out.
pub trait Report: Sized + 'static {
    fn renderer(format: &Format) -> Option<&'static dyn Render<Self>>;
}

impl Report for ShowDocument {
    fn renderer(format: &Format) -> Option<&'static dyn Render<Self>> {
        format.show
    }
}

impl Report for ComparisonReport {
    fn renderer(format: &Format) -> Option<&'static dyn Render<Self>> {
        format.compare
    }
}

impl Report for HistoryReport {
    fn renderer(format: &Format) -> Option<&'static dyn Render<Self>> {
        format.history
    }
}

/// One format of the registry: the name users type after `--format`, its
/// line of help, its renderer of each report it lays out, and what it
/// needs of a comparison.
pub struct Format {
    name: &'static str,
    help: &'static str,
    show: Option<&'static dyn Render<ShowDocument>>,
    compare: Option<&'static dyn Render<ComparisonReport>>,
    history: Option<&'static dyn Render<HistoryReport>>,
    /// Draws one metric of a comparison, which `--metric` chooses.
    one_metric: bool,
}

impl Format {
    const fn new(name: &'static str, help: &'static str) -> Format {
        Format {
            name,
            help,
            show: None,
            compare: None,
            history: None,
            one_metric: false,
        }
    }

    const fn show(mut self, renderer: &'static dyn Render<ShowDocument>) -> Format {
        self.show = Some(renderer);
        self
    }

    const fn compare(mut self, renderer: &'static dyn Render<ComparisonReport>) -> Format {
        self.compare = Some(renderer);
        self
    }

    const fn history(mut self, renderer: &'static dyn Render<HistoryReport>) -> Format {
        self.history = Some(renderer);
        self
    }

    const fn one_metric(mut self) -> Format {
        self.one_metric = true;
        self
    }
}

/// Every format, in `--help` order.
static FORMATS: &[Format] = &[
    Format::new("text", "plain text for a terminal")
        .show(&Text)
        .history(&Text),
    Format::new(
        "bars",
        "a bar per identifier and metric, with the change and verdict (OpenBenchmarking's text)",
    )
    .compare(&Bars),
    Format::new(
        "table",
        "the lmbench matrix of LKML reports: a row per identifier, a column per metric",
    )
    .compare(&Table),
    Format::new(
        "regressions",
        "Linaro's regression report: per identifier, its metrics by verdict",
    )
    .compare(&Regressions),
    Format::new("markdown", "a markdown document for an issue or a mail")
        .compare(&Markdown)
        .history(&Markdown),
    Format::new("json", "the report's JSON document (docs/json.md)")
        .show(&Json)
        .compare(&Json)
        .history(&Json),
    Format::new("csv", "a row per metric and identifier (RFC 4180)").compare(&Csv),
    Format::new("html", "a self-contained page with a chart per metric")
        .compare(&Html)
        .history(&Html),
    Format::new(
        "svg",
        "one metric's charts as a standalone picture (choose it with --metric)",
    )
    .compare(&Svg)
    .one_metric(),
];

/// A format's renderer of report `R`.
pub struct Renderer<R: 'static> {
    format: &'static Format,
    render: &'static dyn Render<R>,
}

impl<R: Report> Renderer<R> {
    /// The name users type after `--format`.
    pub fn name(&self) -> &'static str {
        self.format.name
    }

    /// One line for `--help`.
    pub fn help(&self) -> &'static str {
        self.format.help
    }

    pub fn render(&self, report: &R, style: Style) -> String {
        self.render.render(report, style)
    }
}

impl Renderer<ComparisonReport> {
    /// `report` cut to what the format draws. A format of one metric (svg)
    /// keeps the metric that `metric` (`--metric`) names: the one it
    /// matches, or the one whose whole name it is among longer ones
    /// (`pipe-lat` among `pipe-lat[placement=cross]`); without it, or when
    /// it matches several, the error says so. Other formats take the
    /// report whole.
    pub fn fit(&self, report: &mut ComparisonReport, metric: Option<&str>) -> Result<(), Error> {
        if !self.format.one_metric {
            return Ok(());
        }
        let Some(text) = metric else {
            return Err(Error::NoMetricChosen {
                format: self.name(),
                set: report.result_set.clone(),
                metrics: report.metrics.len(),
            });
        };
        if report.metrics.len() > 1 && report.metrics.iter().any(|m| m.test == text) {
            report.metrics.retain(|m| m.test == text);
        }
        if report.metrics.len() > 1 {
            return Err(Error::SeveralMetrics {
                format: self.name(),
                text: text.to_string(),
                matches: report.metrics.iter().map(|m| m.test.clone()).collect(),
            });
        }
        Ok(())
    }
}

/// The formats that lay out report `R`, in `--help` order.
pub fn formats<R: Report>() -> Vec<Renderer<R>> {
    FORMATS
        .iter()
        .filter_map(|format| R::renderer(format).map(|render| Renderer { format, render }))
        .collect()
}

/// The format called `name`, when it lays out report `R`.
pub fn find<R: Report>(name: &str) -> Option<Renderer<R>> {
    formats().into_iter().find(|f| f.name() == name)
}

/// The formats of a comparison (`kbench compare --format`), in `--help`
/// order.
pub fn all() -> Vec<Renderer<ComparisonReport>> {
    formats()
}

/// The format of a comparison called `name`.
pub fn by_name(name: &str) -> Option<Renderer<ComparisonReport>> {
    find(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names<R: Report>() -> Vec<&'static str> {
        formats::<R>().iter().map(|f| f.name()).collect()
    }

    /// The comparison's formats are `tests/formats.rs`'s to check.
    #[test]
    fn show_and_history_have_their_formats_in_help_order() {
        assert_eq!(names::<ShowDocument>(), ["text", "json"]);
        assert_eq!(
            names::<HistoryReport>(),
            ["text", "markdown", "json", "html"]
        );
        assert!(find::<ComparisonReport>("text").is_none());
        let mut all: Vec<&str> = FORMATS.iter().map(|f| f.name).collect();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), FORMATS.len(), "each name once");
        assert!(
            FORMATS
                .iter()
                .all(|f| !f.help.is_empty() && !f.help.contains('\n'))
        );
    }
}
