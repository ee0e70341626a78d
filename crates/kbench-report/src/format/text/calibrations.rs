//! The host's calibrations as `kbench calibrate` prints them: per
//! calibration its hardware, date and pairs, then each test's drift.

use kbench_analysis::number::date;
use kbench_model::Calibration;
use std::fmt::Write;

pub(super) fn text(calibrations: &[Calibration]) -> String {
    if calibrations.is_empty() {
        return "No calibration stored: `kbench calibrate` measures this host's drift.\n"
            .to_string();
    }
    let mut out = String::new();
    for c in calibrations {
        let _ = writeln!(
            out,
            "{} drift on {} ({}, {} pairs, kernel {}):",
            c.unit.as_str(),
            c.hardware,
            date(c.at_ms),
            c.pairs,
            c.kernel_release
        );
        let names: Vec<String> = c.tests.iter().map(|t| t.test.to_string()).collect();
        let width = names.iter().map(String::len).max().unwrap_or(0);
        for (name, t) in names.iter().zip(&c.tests) {
            let _ = writeln!(
                out,
                "  {name:width$}  {:>6.2} %  ({} df)",
                100.0 * t.sd,
                t.df
            );
        }
    }
    out
}
