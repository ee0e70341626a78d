//! `table`: the lmbench matrix of LKML regression reports. One
//! row per identifier, one column per metric, in the seed's sections:
//! processes, context switching, local communication latencies, file and VM
//! latencies, local communication bandwidths. Then "Other metrics": every
//! metric no column showed, one row each with the identifiers as columns,
//! so nothing is silently left out.
//!
//! Rules (also printed under each section as its column key):
//! - A column is a benchmark with some of its options fixed (`ctxsw` with
//!   `procs=2,size=16`); it shows the first metric of the report (main
//!   metric only) that has them. Other variants of the benchmark (e.g.
//!   `pipe-lat[placement=same]` after `placement=cross`) go to "Other
//!   metrics". lmbench's "null I/O" is shown as two columns, read and write.
//! - Latency sections are in microseconds: ns, ms and s are converted; a
//!   rate (`files/s` of fs-create/fs-delete, any `x/s`) is shown as
//!   microseconds per operation, 1e6 / mean. Bandwidths are in MB/s (GB/s
//!   and KB/s converted). Any other unit is shown as stored and named in the
//!   column key.
//! - A cell is the identifier's mean, marked against the baseline: `*`
//!   REGRESSION, `+` IMPROVEMENT, `?` INCONCLUSIVE, `!` CANNOT DECIDE
//!   (legend line on top). Under a compared identifier's row (a metric's
//!   row in "Other metrics") a line holds its changes against the
//!   baseline, the one every format shows (`opening::CHANGE_RULE`): of
//!   the stored metric, + for a higher value.
//! - Columns without data in any identifier, and sections without columns,
//!   are dropped.

use super::common::{self, paint};
use super::opening;
use super::render::{Render, Style};
use kbench_analysis::comparison::{ComparisonReport, IdentifierResult, MetricReport};
use kbench_analysis::number;
use kbench_model::MAIN_METRIC;
use kbench_stats::Verdict;
use std::fmt::Write;

pub struct Table;

/// The label of the line of changes under a compared row.
const CHANGE_ROW: &str = "change, %";

/// The unit a section's cells are shown in.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Scale {
    Micros,
    MegabytesPerSec,
}

struct Section {
    title: &'static str,
    scale: Scale,
    /// The processor clock column of the seed's first section.
    mhz: bool,
    columns: &'static [Column],
}

struct Column {
    /// Two header lines, as in the seed.
    label: [&'static str; 2],
    benchmark: &'static str,
    /// Options the metric must have.
    options: &'static [(&'static str, &'static str)],
}

const fn col(
    label: [&'static str; 2],
    benchmark: &'static str,
    options: &'static [(&'static str, &'static str)],
) -> Column {
    Column {
        label,
        benchmark,
        options,
    }
}

/// A `ctxsw` column: "2p/16K" for `procs=2,size=16`.
macro_rules! ctxsw {
    ($procs:literal, $size:literal) => {
        col(
            [concat!($procs, "p/", $size, "K"), "ctxsw"],
            "ctxsw",
            &[("procs", $procs), ("size", $size)],
        )
    };
}

const SECTIONS: &[Section] = &[
    Section {
        title: "Processor, Processes - times in microseconds - smaller is better",
        scale: Scale::Micros,
        mhz: true,
        columns: &[
            col(["null", "call"], "syscall-null", &[]),
            col(["null", "read"], "syscall-read", &[]),
            col(["null", "write"], "syscall-write", &[]),
            col(["", "stat"], "syscall-stat", &[]),
            col(["", "fstat"], "syscall-fstat", &[]),
            col(["open", "clos"], "open-close", &[]),
            col(["slct", "10fd"], "select", &[("fds", "10")]),
            col(["sig", "inst"], "sig-install", &[]),
            col(["sig", "hndl"], "sig-catch", &[]),
            col(["fork", "proc"], "fork-exit", &[]),
            col(["exec", "proc"], "fork-exec", &[]),
            col(["sh", "proc"], "fork-sh", &[]),
        ],
    },
    Section {
        title: "Context switching - times in microseconds - smaller is better",
        scale: Scale::Micros,
        mhz: false,
        columns: &[
            ctxsw!("2", "0"),
            ctxsw!("2", "16"),
            ctxsw!("2", "64"),
            ctxsw!("8", "16"),
            ctxsw!("8", "64"),
            ctxsw!("16", "16"),
            ctxsw!("16", "64"),
        ],
    },
    Section {
        title: "*Local* Communication latencies in microseconds - smaller is better",
        scale: Scale::Micros,
        mhz: false,
        columns: &[
            ctxsw!("2", "0"),
            col(["", "Pipe"], "pipe-lat", &[]),
            col(["AF", "UNIX"], "unix-lat", &[]),
            col(["", "UDP"], "udp-lat", &[]),
            col(["", "TCP"], "tcp-lat", &[]),
            col(["TCP", "conn"], "tcp-connect", &[]),
        ],
    },
    Section {
        title: "File & VM system latencies in microseconds - smaller is better",
        scale: Scale::Micros,
        mhz: false,
        columns: &[
            col(["0K File", "Create"], "fs-create", &[("size", "0")]),
            col(["0K File", "Delete"], "fs-delete", &[("size", "0")]),
            col(["10K File", "Create"], "fs-create", &[("size", "10")]),
            col(["10K File", "Delete"], "fs-delete", &[("size", "10")]),
            col(["Mmap", "Latency"], "mmap-lat", &[]),
            col(["Page", "Fault"], "pagefault", &[]),
            col(["100fd", "selct"], "select", &[("fds", "100")]),
        ],
    },
    Section {
        title: "*Local* Communication bandwidths in MB/s - bigger is better",
        scale: Scale::MegabytesPerSec,
        mhz: false,
        columns: &[
            col(["", "Pipe"], "pipe-bw", &[]),
            col(["AF", "UNIX"], "unix-bw", &[]),
            col(["", "TCP"], "tcp-bw", &[]),
            col(["File", "reread"], "file-rd-bw", &[]),
            col(["Mmap", "reread"], "mmap-rd-bw", &[]),
            col(["", "Bcopy"], "mem-bw", &[("op", "cp")]),
            col(["Mem", "read"], "mem-bw", &[("op", "rd")]),
            col(["Mem", "write"], "mem-bw", &[("op", "wr")]),
        ],
    },
];

impl Render<ComparisonReport> for Table {
    fn render(&self, report: &ComparisonReport, style: Style) -> String {
        let mut out = String::new();
        for line in opening::lines(report, style) {
            let _ = writeln!(out, "{line}");
        }
        out.push('\n');
        if report.identifiers.len() > 1 {
            let legend = format!(
                "Cells: each identifier's mean; marks against the baseline '{}': * REGRESSION, \
                 + IMPROVEMENT, ? INCONCLUSIVE, ! CANNOT DECIDE; no mark: NO CHANGE, the \
                 baseline, or not compared. Under each compared row, its {CHANGE_ROW}: the \
                 change of the stored metric against the baseline, + = a higher value (as \
                 stored, before any conversion).",
                report.baseline
            );
            for line in common::wrap(&legend, 100, "  ") {
                let _ = writeln!(out, "{line}");
            }
        } else {
            let _ = writeln!(out, "Cells: the mean of '{}'.", report.baseline);
        }
        let mut shown = vec![false; report.metrics.len()];
        for section in SECTIONS {
            let used: Vec<(&Column, usize)> = section
                .columns
                .iter()
                .filter_map(|c| find(report, c).map(|m| (c, m)))
                .collect();
            if used.is_empty() {
                continue;
            }
            for &(_, m) in &used {
                shown[m] = true;
            }
            out.push('\n');
            let _ = writeln!(out, "{}", section.title);
            section_grid(&mut out, report, section, &used, style);
        }
        let others: Vec<&MetricReport> = report
            .metrics
            .iter()
            .zip(&shown)
            .filter(|(_, shown)| !**shown)
            .map(|(m, _)| m)
            .collect();
        if !others.is_empty() {
            out.push('\n');
            let _ = writeln!(
                out,
                "Other metrics - means in the stored unit, marks as above"
            );
            others_grid(&mut out, report, &others, style);
        }
        out
    }
}

/// The first metric a column shows: its benchmark, main metric, with the
/// column's options, and a sample in some identifier.
fn find(report: &ComparisonReport, column: &Column) -> Option<usize> {
    report.metrics.iter().position(|m| {
        m.key.benchmark == column.benchmark
            && m.key.metric == MAIN_METRIC
            && column
                .options
                .iter()
                .all(|(k, v)| m.key.options.get(*k).map(String::as_str) == Some(*v))
            && m.results.iter().any(|r| r.summary.is_some())
    })
}

/// How a stored unit is shown in a section: the factor or inversion, and
/// the note for the column key.
enum Conversion {
    Factor(f64),
    /// Microseconds per operation from a rate: 1e6 / value.
    PerOperation,
    /// Shown as stored.
    AsStored,
}

fn conversion(unit: &str, scale: Scale) -> Conversion {
    match (scale, unit) {
        (Scale::Micros, "us") | (Scale::MegabytesPerSec, "MB/s") => Conversion::Factor(1.0),
        (Scale::Micros, "ns") => Conversion::Factor(1e-3),
        (Scale::Micros, "ms") => Conversion::Factor(1e3),
        (Scale::Micros, "s") => Conversion::Factor(1e6),
        (Scale::MegabytesPerSec, "GB/s") => Conversion::Factor(1e3),
        (Scale::MegabytesPerSec, "KB/s") => Conversion::Factor(1e-3),
        (Scale::Micros, rate) if rate.ends_with("/s") => Conversion::PerOperation,
        _ => Conversion::AsStored,
    }
}

impl Conversion {
    fn apply(&self, value: f64) -> f64 {
        match self {
            Conversion::Factor(f) => value * f,
            Conversion::PerOperation => 1e6 / value,
            Conversion::AsStored => value,
        }
    }

    /// "(ns, shown in us)", "(files/s, shown as us per op = 1e6 / value)".
    fn note(&self, unit: &str, scale: Scale) -> String {
        let target = match scale {
            Scale::Micros => "us",
            Scale::MegabytesPerSec => "MB/s",
        };
        match self {
            Conversion::Factor(_) if unit == target => format!("({unit})"),
            Conversion::Factor(_) => format!("({unit}, shown in {target})"),
            Conversion::PerOperation => {
                format!("({unit}, shown as us per operation = 1e6 / value)")
            }
            Conversion::AsStored => format!("({unit}, shown as stored)"),
        }
    }
}

/// A cell's text: the value with its mark (a space when unmarked, so that
/// the digits line up).
fn cell(value: f64, result: &IdentifierResult) -> (String, Option<Verdict>) {
    let verdict = result.comparison.as_ref().map(|c| c.verdict);
    let mark = match verdict {
        Some(Verdict::Regression) => '*',
        Some(Verdict::Improvement) => '+',
        Some(Verdict::Inconclusive) => '?',
        Some(Verdict::CannotDecide) => '!',
        _ => ' ',
    };
    (format!("{}{mark}", number::value(value)), verdict)
}

/// A grid cell: its text, whether it is left-aligned, its verdict colour.
struct Cell {
    text: String,
    left: bool,
    verdict: Option<Verdict>,
}

impl Cell {
    fn label(text: &str) -> Cell {
        Cell {
            text: text.to_string(),
            left: true,
            verdict: None,
        }
    }

    fn number(text: String, verdict: Option<Verdict>) -> Cell {
        Cell {
            text,
            left: false,
            verdict,
        }
    }
}

fn section_grid(
    out: &mut String,
    report: &ComparisonReport,
    section: &Section,
    used: &[(&Column, usize)],
    style: Style,
) {
    let mhz: Vec<Option<f64>> = report
        .systems
        .iter()
        .map(|s| s.snapshot.as_ref().map(|s| s.cpu_mhz).filter(|m| *m > 0.0))
        .collect();
    let with_mhz = section.mhz && mhz.iter().any(Option::is_some);
    let mut headers: Vec<[String; 2]> = vec![["identifier".into(), String::new()]];
    if with_mhz {
        headers.push(["Mhz".into(), String::new()]);
    }
    headers.extend(
        used.iter()
            .map(|(c, _)| [c.label[0].to_string(), c.label[1].to_string()]),
    );
    let rows: Vec<Vec<Vec<Cell>>> = report
        .identifiers
        .iter()
        .enumerate()
        .map(|(row, name)| {
            let mut cells = vec![Cell::label(name)];
            let mut changes = vec![Cell::label(&format!("  {CHANGE_ROW}"))];
            if with_mhz {
                let text = mhz[row].map_or(String::new(), |m| format!("{m:.0}"));
                cells.push(Cell::number(format!("{text} "), None));
                changes.push(Cell::number(String::new(), None));
            }
            for &(_, m) in used {
                let metric = &report.metrics[m];
                let result = &metric.results[row];
                let convert = conversion(&metric.unit, section.scale);
                cells.push(match &result.summary {
                    Some(s) => {
                        let (text, verdict) = cell(convert.apply(s.mean), result);
                        Cell::number(text, verdict)
                    }
                    None => Cell::number(String::new(), None),
                });
                changes.push(change_cell(result));
            }
            with_changes(cells, changes, row)
        })
        .collect();
    grid(out, &headers, &rows, style);
    let key: Vec<String> = used
        .iter()
        .map(|(c, m)| {
            let metric = &report.metrics[*m];
            let label = c
                .label
                .iter()
                .filter(|l| !l.is_empty())
                .copied()
                .collect::<Vec<_>>();
            format!(
                "{} = {} {};",
                label.join(" "),
                metric.test,
                conversion(&metric.unit, section.scale).note(&metric.unit, section.scale)
            )
        })
        .collect();
    let mut text = format!("Columns: {}", key.join(" "));
    text.pop();
    for line in common::wrap(&text, 100, "  ") {
        let _ = writeln!(out, "{line}");
    }
}

fn others_grid(
    out: &mut String,
    report: &ComparisonReport,
    metrics: &[&MetricReport],
    style: Style,
) {
    let mut headers: Vec<[String; 2]> = vec![
        ["test".into(), String::new()],
        ["unit".into(), String::new()],
    ];
    headers.extend(report.identifiers.iter().enumerate().map(|(i, name)| {
        let second = if i == 0 { "(baseline)" } else { "" };
        [name.clone(), second.to_string()]
    }));
    let rows: Vec<Vec<Vec<Cell>>> = metrics
        .iter()
        .map(|m| {
            let mut cells = vec![Cell::label(&m.test), Cell::label(&m.unit)];
            cells.extend(m.results.iter().map(|r| match &r.summary {
                Some(s) => {
                    let (text, verdict) = cell(s.mean, r);
                    Cell::number(text, verdict)
                }
                None => Cell::number(String::new(), None),
            }));
            let mut changes = vec![Cell::label(&format!("  {CHANGE_ROW}")), Cell::label("")];
            changes.extend(m.results.iter().map(change_cell));
            let compared = m.results.iter().any(|r| r.comparison.is_some());
            with_changes(cells, changes, usize::from(compared))
        })
        .collect();
    grid(out, &headers, &rows, style);
}

/// A change under a compared row: [`common::change_text`] (unmarked, so
/// it lines up with the means' digits); empty where not compared.
fn change_cell(result: &IdentifierResult) -> Cell {
    let text = result
        .comparison
        .as_ref()
        .map_or(String::new(), |c| format!("{} ", common::change_text(c)));
    Cell::number(text, None)
}

/// A grid row's lines: its cells, and under them its changes unless it is
/// the baseline's row (`row` 0, or nothing compared).
fn with_changes(cells: Vec<Cell>, changes: Vec<Cell>, row: usize) -> Vec<Vec<Cell>> {
    if row == 0 {
        vec![cells]
    } else {
        vec![cells, changes]
    }
}

/// An ASCII grid in the seed's style: a border under the header and under
/// every row (the lines of one row, its changes, together).
fn grid(out: &mut String, headers: &[[String; 2]], rows: &[Vec<Vec<Cell>>], style: Style) {
    let widths: Vec<usize> = (0..headers.len())
        .map(|i| {
            let header = headers[i]
                .iter()
                .map(|h| common::width(h))
                .max()
                .unwrap_or(0);
            rows.iter()
                .flatten()
                .map(|r| common::width(&r[i].text))
                .max()
                .unwrap_or(0)
                .max(header)
        })
        .collect();
    let border: String = widths
        .iter()
        .map(|w| format!("+{}", "-".repeat(w + 2)))
        .collect::<String>()
        + "+";
    let _ = writeln!(out, "{border}");
    for line in 0..2 {
        if line == 1 && headers.iter().all(|h| h[1].is_empty()) {
            break;
        }
        let cells: Vec<String> = headers
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(i, (h, w))| {
                if i == 0 {
                    common::left(&h[line], *w)
                } else {
                    common::right(&h[line], *w)
                }
            })
            .collect();
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    }
    let _ = writeln!(out, "{border}");
    for row in rows {
        for line in row {
            let cells: Vec<String> = line
                .iter()
                .zip(&widths)
                .map(|(c, w)| {
                    let padded = if c.left {
                        common::left(&c.text, *w)
                    } else {
                        common::right(&c.text, *w)
                    };
                    paint(&padded, c.verdict, style)
                })
                .collect();
            let _ = writeln!(out, "| {} |", cells.join(" | "));
        }
        let _ = writeln!(out, "{border}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converts_to_the_section_unit() {
        let ns = conversion("ns", Scale::Micros);
        assert_eq!(ns.apply(1500.0), 1.5);
        assert_eq!(ns.note("ns", Scale::Micros), "(ns, shown in us)");
        let rate = conversion("files/s", Scale::Micros);
        assert_eq!(rate.apply(250_000.0), 4.0);
        let mb = conversion("MB/s", Scale::MegabytesPerSec);
        assert_eq!(mb.note("MB/s", Scale::MegabytesPerSec), "(MB/s)");
        let other = conversion("ops/s", Scale::MegabytesPerSec);
        assert_eq!(other.apply(3.0), 3.0);
        assert_eq!(
            other.note("ops/s", Scale::MegabytesPerSec),
            "(ops/s, shown as stored)"
        );
    }
}
