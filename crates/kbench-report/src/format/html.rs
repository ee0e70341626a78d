//! `html`: a report as one self-contained HTML page for a mail attachment
//! or a CI artifact (`kbench compare SET --format html -o page.html`,
//! `kbench history SET --format html`). Everything is inline (CSS, SVG
//! charts, a small script that sorts and filters the table) and a content
//! security policy forbids any load, so the page opens offline and asks no
//! network host for anything. Light and dark with the reader's colour
//! scheme, printable, and the table turns into cards on a phone.
//!
//! - [`compare_page`]: the systems, a summary card per compared
//!   identifier, the table of every metric and its charts;
//! - [`history_page`]: a line per metric over the versions with its change
//!   points marked;
//! - [`bisect_page`]: a bisection's culprit, steps and builds;
//! - `page`: the skeleton, table script and systems section both share;
//!   `fragments`: the markup both write.
//!
//! Every user string (result set, identifiers, test names, units, system
//! facts, notes) reaches the page through [`crate::markup`]'s escaping; the
//! charts are the svg format's.

mod bisect;
mod compare;
mod fragments;
mod history;
mod page;

pub use bisect::bisect_page;
pub use compare::{MetricPart, changed, compare_page, compare_page_part};
pub use history::history_page;
pub use page::{PAGE_SCRIPT, PAGE_STYLE, page, page_policy, policy_meta, systems_section};

use super::render::{Render, Style};
use kbench_analysis::comparison::ComparisonReport;
use kbench_analysis::history::HistoryReport;

pub struct Html;

impl Render<ComparisonReport> for Html {
    fn render(&self, report: &ComparisonReport, _style: Style) -> String {
        compare_page(report)
    }
}

impl Render<HistoryReport> for Html {
    fn render(&self, report: &HistoryReport, _style: Style) -> String {
        history_page(report)
    }
}
