//! `tap`: the Test Anything Protocol (version 13) that CI systems and
//! `prove` read: one test point per compared identifier and metric, `not
//! ok` for a REGRESSION and `ok` otherwise, with the change (the one every
//! format shows, + for a higher value), its 95 % CI and the verdict in the
//! description. A metric an identifier lacks is
//! `ok ... # SKIP`; a `#` in a name is escaped. Never coloured.

use super::render::{Render, Style};
use kbench_analysis::comparison::ComparisonReport;
use kbench_analysis::number::{Unbounded, signed};
use kbench_stats::Verdict;

pub struct Tap;

impl Render<ComparisonReport> for Tap {
    fn render(&self, report: &ComparisonReport, _style: Style) -> String {
        let points: Vec<String> = report
            .metrics
            .iter()
            .flat_map(|metric| metric.results.iter().skip(1).map(move |r| (metric, r)))
            .enumerate()
            .map(|(index, (metric, result))| {
                let name = format!(
                    "{} {} against {}",
                    metric.test, result.identifier, report.baseline
                )
                // A `#` would start a directive.
                .replace('#', "\\#");
                let Some(c) = &result.comparison else {
                    return format!("ok {} - {name} # SKIP not measured on both", index + 1);
                };
                let percent = |v: f64| signed(v, 2, " %", Unbounded::NotAvailable);
                let status = if c.verdict == Verdict::Regression {
                    "not ok"
                } else {
                    "ok"
                };
                format!(
                    "{status} {} - {name}: {} [{}, {}] {}",
                    index + 1,
                    percent(c.change_pct.point),
                    percent(c.change_pct.ci_low),
                    percent(c.change_pct.ci_high),
                    c.verdict
                )
            })
            .collect();
        let mut out = format!("TAP version 13\n1..{}\n", points.len());
        for point in points {
            out.push_str(&point);
            out.push('\n');
        }
        out
    }
}
