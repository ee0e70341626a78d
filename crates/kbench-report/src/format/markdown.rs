//! `markdown`: a GitHub-flavoured markdown document for an issue, a pull
//! request or a mail. For a comparison: the systems, a summary table and a
//! metrics table, warnings last (see `compare`); for a history: its change
//! points and series as tables (see `history`). Every user string
//! (identifier, test and result set names, system facts) is escaped so that
//! `|`, `<`, `*`, `_` and the like stay text (see `escape`). Never coloured.

mod compare;
mod escape;
mod history;

use super::render::{Render, Style};
use kbench_analysis::comparison::ComparisonReport;
use kbench_analysis::history::HistoryReport;

pub struct Markdown;

impl Render<HistoryReport> for Markdown {
    fn render(&self, report: &HistoryReport, _style: Style) -> String {
        history::markdown(report)
    }
}

impl Render<ComparisonReport> for Markdown {
    fn render(&self, report: &ComparisonReport, _style: Style) -> String {
        compare::markdown(report)
    }
}
