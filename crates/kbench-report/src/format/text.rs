//! `text`: for a terminal. The show report as a table per test, one
//! identifier's counters the way `perf stat` prints them, the history as
//! each metric's series with its change points, a bisection's culprit and
//! log, the lab's jobs as a table, a line per result set, and the host's
//! drift calibrations, and campaigns of boots (see the submodules). Never coloured.

mod bisect;
mod calibrations;
mod campaigns;
mod counters;
mod history;
mod jobs;
mod sets;
mod show;

use super::render::{Render, Style};
use kbench_analysis::bisect::BisectReport;
use kbench_analysis::counters::CounterDocument;
use kbench_analysis::history::HistoryReport;
use kbench_analysis::show::{SetList, ShowDocument};
use kbench_model::Calibration;
use kbench_model::campaign::Campaign;
use kbench_model::lab::Job;

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

impl Render<BisectReport> for Text {
    fn render(&self, report: &BisectReport, _style: Style) -> String {
        bisect::text(report)
    }
}

impl Render<Vec<Job>> for Text {
    fn render(&self, jobs: &Vec<Job>, _style: Style) -> String {
        jobs::table(jobs)
    }
}

impl Render<SetList> for Text {
    fn render(&self, list: &SetList, _style: Style) -> String {
        sets::text(list)
    }
}

impl Render<Vec<Calibration>> for Text {
    fn render(&self, calibrations: &Vec<Calibration>, _style: Style) -> String {
        calibrations::text(calibrations)
    }
}

impl Render<Campaign> for Text {
    fn render(&self, campaign: &Campaign, _style: Style) -> String {
        campaigns::text(campaign)
    }
}

impl Render<Vec<Campaign>> for Text {
    fn render(&self, campaigns: &Vec<Campaign>, _style: Style) -> String {
        campaigns::list(campaigns)
    }
}
