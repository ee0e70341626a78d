//! The report formats: renderers of every report model of kbench-analysis
//! (show, counters, comparison, comparison by factor, history, bisection)
//! and of the lab's job list and the list of result sets, behind one
//! trait, [`Render`] (`render`), and one registry (`registry`), which names
//! every format, gives its line of help, and says which reports it lays
//! out and what it needs. The `--format` lists of `kbench show`, `compare`
//! and `history` (and of `kbench serve`'s API) come from the registry.
//!
//! One file per format (docs/reports.md): `text` (show, counters, history,
//! bisection, jobs, sets), `bars` (Phoronix), `table` (lmbench),
//! `regressions` (Linaro), `markdown`, `json` (every report's model),
//! `csv`, and the pictures: `html` (a self-contained page with charts, of
//! a comparison or a history), `svg` (one metric's charts) and `tap` (a
//! test point per metric and identifier, for CI); `factors`
//! lays out a comparison by factor in any of the text formats of a
//! comparison. The text formats of a comparison open with the verdict,
//! then the systems and the notes (`opening`, `systems`), and show one
//! change, the same in every format (`opening::CHANGE_RULE`); only bars,
//! table and regressions use colour, and only when [`Style::color`] asks
//! for it.

mod bars;
mod common;
pub mod csp;
mod csv;
mod factors;
pub mod html;
mod json;
mod markdown;
mod opening;
mod registry;
mod regressions;
mod render;
pub mod svg;
mod systems;
mod table;
mod tap;
mod text;

pub use bars::Bars;
pub use csv::Csv;
pub use html::Html;
pub use json::Json;
pub use markdown::Markdown;
pub use registry::{Format, Renderer, Report, all, by_name, find, formats, text_or_json};
pub use regressions::Regressions;
pub use render::{Render, Style};
pub use svg::Svg;
pub use table::Table;
pub use text::Text;
