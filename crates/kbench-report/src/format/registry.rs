//! The registry of formats: each format's name, its line of help, its
//! renderer of each report it lays out, and what it needs of a
//! comparison. The `--format` lists of `kbench show`, `compare` (by
//! factor too) and `history` (and of `kbench serve`'s API) come from here,
//! and so do the text and JSON of a bisection, the lab's job list, the
//! list of result sets and the host's calibrations.

use super::bars::Bars;
use super::csv::Csv;
use super::factors::{Grouped, Heading};
use super::html::Html;
use super::json::Json;
use super::markdown::Markdown;
use super::regressions::Regressions;
use super::render::{Render, Style};
use super::svg::Svg;
use super::table::Table;
use super::tap::Tap;
use super::text::Text;
use crate::Error;
use kbench_analysis::bisect::BisectReport;
use kbench_analysis::comparison::ComparisonReport;
use kbench_analysis::counters::CounterDocument;
use kbench_analysis::factors::FactorReport;
use kbench_analysis::history::HistoryReport;
use kbench_analysis::show::{SetList, ShowDocument};
use kbench_model::Calibration;
use kbench_model::campaign::Campaign;
use kbench_model::lab::Job;

/// A report model, and which of a format's renderers lays it out.
pub trait Report: Sized + 'static {
    fn renderer(format: &Format) -> Option<&'static dyn Render<Self>>;
}

/// Each report model and the slot of [`Format`] that holds its renderer.
macro_rules! reports {
    ($($model:ty => $slot:ident),* $(,)?) => {
        $(impl Report for $model {
            fn renderer(format: &Format) -> Option<&'static dyn Render<Self>> {
                format.$slot
            }
        })*

        /// One format of the registry: the name users type after
        /// `--format`, its line of help, its renderer of each report it
        /// lays out, and what it needs of a comparison.
        pub struct Format {
            name: &'static str,
            help: &'static str,
            $($slot: Option<&'static dyn Render<$model>>,)*
            /// Draws one metric of a comparison, which `--metric` chooses.
            one_metric: bool,
        }

        impl Format {
            const fn new(name: &'static str, help: &'static str) -> Format {
                Format { name, help, $($slot: None,)* one_metric: false }
            }

            $(const fn $slot(mut self, renderer: &'static dyn Render<$model>) -> Format {
                self.$slot = Some(renderer);
                self
            })*
        }
    };
}

reports! {
    ShowDocument => show,
    CounterDocument => counters,
    ComparisonReport => compare,
    FactorReport => factors,
    HistoryReport => history,
    BisectReport => bisect,
    Vec<Job> => jobs,
    SetList => sets,
    Vec<Calibration> => calibrations,
    Campaign => campaign,
    Vec<Campaign> => campaigns,
}

impl Format {
    const fn one_metric(mut self) -> Format {
        self.one_metric = true;
        self
    }
}

/// Every format, in `--help` order.
static FORMATS: &[Format] = &[
    Format::new("text", "plain text for a terminal")
        .show(&Text)
        .counters(&Text)
        .history(&Text)
        .bisect(&Text)
        .jobs(&Text)
        .sets(&Text)
        .calibrations(&Text)
        .campaign(&Text)
        .campaigns(&Text),
    Format::new(
        "bars",
        "a bar per identifier and metric, with the change and verdict (OpenBenchmarking's text)",
    )
    .compare(&Bars)
    .factors(&Grouped::new(&Bars, Heading::Underlined)),
    Format::new(
        "table",
        "the lmbench matrix of LKML reports: a row per identifier, a column per metric",
    )
    .compare(&Table)
    .factors(&Grouped::new(&Table, Heading::Underlined)),
    Format::new(
        "regressions",
        "Linaro's regression report: per identifier, its metrics by verdict",
    )
    .compare(&Regressions)
    .factors(&Grouped::new(&Regressions, Heading::Underlined)),
    Format::new("markdown", "a markdown document for an issue or a mail")
        .compare(&Markdown)
        .factors(&Grouped::new(&Markdown, Heading::Hashes))
        .history(&Markdown),
    Format::new("json", "the report's JSON document (docs/json.md)")
        .show(&Json)
        .counters(&Json)
        .compare(&Json)
        .factors(&Json)
        .history(&Json)
        .bisect(&Json)
        .sets(&Json)
        .calibrations(&Json)
        .campaign(&Json)
        .campaigns(&Json),
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
    Format::new(
        "tap",
        "TAP for CI: a test point per metric and identifier, not ok for a regression",
    )
    .compare(&Tap),
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

/// What a command without `--format` prints: report `R` in `text`, or in
/// `json` with `--json`. The registry's test lists which reports have
/// which; the job list has only `text` (`kbench job list --json` prints
/// the server's own document).
pub fn text_or_json<R: Report>(json: bool) -> Renderer<R> {
    let name = if json { "json" } else { "text" };
    find(name).unwrap_or_else(|| panic!("the registry has no {name} format of this report"))
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
    fn every_report_has_its_formats_in_help_order() {
        assert_eq!(names::<ShowDocument>(), ["text", "json"]);
        assert_eq!(names::<CounterDocument>(), ["text", "json"]);
        assert_eq!(
            names::<HistoryReport>(),
            ["text", "markdown", "json", "html"]
        );
        assert_eq!(
            names::<FactorReport>(),
            ["bars", "table", "regressions", "markdown", "json"]
        );
        assert_eq!(names::<BisectReport>(), ["text", "json"]);
        assert_eq!(names::<Vec<Job>>(), ["text"]);
        assert_eq!(names::<SetList>(), ["text", "json"]);
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
