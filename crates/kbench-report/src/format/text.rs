//! `text`: for a terminal. The show report as a table per test, and the
//! history as each metric's series with its change points (see the
//! submodules). Never coloured.

mod history;
mod show;

use super::render::{Render, Style};
use crate::history::HistoryReport;
use crate::show::ShowDocument;

pub struct Text;

impl Render<ShowDocument> for Text {
    fn render(&self, doc: &ShowDocument, _style: Style) -> String {
        show::text(doc)
    }
}

impl Render<HistoryReport> for Text {
    fn render(&self, report: &HistoryReport, _style: Style) -> String {
        history::text(report)
    }
}
