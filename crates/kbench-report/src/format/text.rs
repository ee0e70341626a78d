//! `text`: for a terminal. The show report as a table per test, one
//! identifier's counters the way `perf stat` prints them, and the history
//! as each metric's series with its change points (see the submodules).
//! Never coloured.

mod counters;
mod history;
mod show;

use super::render::{Render, Style};
use crate::counters::CounterDocument;
use crate::history::HistoryReport;
use crate::show::ShowDocument;

pub struct Text;

impl Render<ShowDocument> for Text {
    fn render(&self, doc: &ShowDocument, _style: Style) -> String {
        show::text(doc)
    }
}

impl Render<CounterDocument> for Text {
    fn render(&self, doc: &CounterDocument, _style: Style) -> String {
        counters::text(doc)
    }
}

impl Render<HistoryReport> for Text {
    fn render(&self, report: &HistoryReport, _style: Style) -> String {
        history::text(report)
    }
}
