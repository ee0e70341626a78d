//! How `kbench compare` reports read, through the binary: one comparison
//! in every format agrees on each metric's change, sign and value to the
//! printed precision (the one convention: the change the verdict decides
//! on, + for a higher value); every text format opens with the verdict
//! (counts, worst regressions, level of analysis) before any metric, `show
//! --format` included; notes that hold for every identifier are said once
//! with their count; and a set without system snapshots prints no empty
//! placeholder and never claims identical systems.

mod common;

use common::{json_of, quiet_series, seed_fixture, stdout, succeeds, temp_db};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Each test: (name, unit, direction, baseline level, current level). At
/// a 15 % threshold, one run a side: two regressions (a time up, a rate
/// down), two improvements (a rate up, a time down), no change and an
/// inconclusive one, the changes of both signs and not round numbers.
const TESTS: [(&str, &str, &str, f64, f64); 6] = [
    ("lat", "us", "lower", 10.0, 13.37),
    ("rate", "ops/s", "higher", 100.0, 61.23),
    ("bw", "MB/s", "higher", 100.0, 147.31),
    ("open", "us", "lower", 2.0, 1.234),
    ("same", "us", "lower", 5.0, 5.01),
    ("drift", "us", "lower", 10.0, 11.43),
];

/// A database holding [`TESTS`] as result set `agree`, `a` against `b`.
fn agree() -> (tempfile::TempDir, PathBuf) {
    let (dir, db) = temp_db();
    let samples = |side: usize| -> String {
        let each: Vec<String> = TESTS
            .iter()
            .map(|t| format!("\"{}\": {}", t.0, quiet_series([t.3, t.4][side])))
            .collect();
        each.join(", ")
    };
    let tests: Vec<String> = TESTS
        .iter()
        .map(|(test, unit, direction, _, _)| {
            format!(r#"{{"test": "{test}", "unit": "{unit}", "direction": "{direction}"}}"#)
        })
        .collect();
    let file = dir.path().join("agree.json");
    std::fs::write(
        &file,
        format!(
            r#"{{"schema": "kbench.samples/1", "result_set": "agree", "tests": [{}],
                "identifiers": [{{"name": "a", "samples": {{{}}}}},
                                {{"name": "b", "samples": {{{}}}}}]}}"#,
            tests.join(", "),
            samples(0),
            samples(1)
        ),
    )
    .unwrap();
    succeeds(&db, &["import", file.to_str().unwrap()]);
    (dir, db)
}

/// `compare agree` in `format` at the fixture's threshold.
fn compare(db: &Path, format: &str) -> String {
    stdout(
        db,
        &[
            "compare",
            "agree",
            "--threshold",
            "15",
            "--all-rows",
            "--format",
            format,
        ],
    )
}

/// A signed percentage as a format prints it ("+33.7%", "-38.77 %",
/// "+33.700") with its decimals.
fn signed(text: &str) -> (f64, usize) {
    let number = text.trim().trim_end_matches('%').trim();
    assert!(
        number.starts_with(['+', '-']),
        "{text:?} is not a signed change"
    );
    let decimals = number.split_once('.').map_or(0, |(_, d)| d.len());
    (number.parse().unwrap(), decimals)
}

/// bars: the change after `b`'s bar in the metric's block.
fn from_bars(text: &str, test: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let start = lines.iter().position(|l| *l == test).unwrap();
    let bar = lines[start..]
        .iter()
        .find(|l| l.starts_with("b ."))
        .unwrap();
    let word = bar
        .split_whitespace()
        .find(|w| w.ends_with('%') && !w.starts_with("+-"))
        .unwrap();
    word.to_string()
}

/// table: the line of changes under the metric's row ("Other metrics").
fn from_table(text: &str, test: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let row = lines
        .iter()
        .position(|l| l.starts_with(&format!("| {test} ")))
        .unwrap();
    let cells: Vec<&str> = lines[row + 1].trim_matches('|').split('|').collect();
    assert_eq!(cells[0].trim(), "change, %", "{}", lines[row + 1]);
    cells.last().unwrap().to_string()
}

/// regressions: the `Change, %` cell of the metric's row.
fn from_regressions(text: &str, test: &str) -> String {
    let row = text
        .lines()
        .find(|l| l.starts_with(&format!("{test}, ")))
        .unwrap();
    row.split(" | ").nth(3).unwrap().to_string()
}

/// markdown: the change before its CI in the metric's row.
fn from_markdown(text: &str, test: &str) -> String {
    let row = text
        .lines()
        .find(|l| l.starts_with(&format!("| {test} |")))
        .unwrap();
    let cell = row.split(" | ").nth(5).unwrap();
    cell.split(" \\[").next().unwrap().to_string()
}

/// html: the change shown in the metric's row of the table.
fn from_html(text: &str, test: &str) -> String {
    let row = &text[text.find(&format!("data-name=\"{test}\"")).unwrap()..];
    let start = row.find("<span class=\"pct\">").unwrap() + "<span class=\"pct\">".len();
    row[start..start + row[start..].find("</span>").unwrap()].to_string()
}

/// csv: the `change_pct` cell of `b`'s row of the metric.
fn from_csv(text: &str, test: &str) -> String {
    let header: Vec<&str> = text.lines().next().unwrap().split(',').collect();
    let column = header.iter().position(|c| *c == "change_pct").unwrap();
    let row = text
        .lines()
        .find(|l| l.starts_with(&format!("agree,{test},")) && l.contains(",b,false,"))
        .unwrap();
    let cell = row.split(',').nth(column).unwrap();
    // Full precision, signed only when negative: as written.
    if cell.starts_with('-') {
        cell.to_string()
    } else {
        format!("+{cell}")
    }
}

/// tap: the change in the metric's test point.
fn from_tap(text: &str, test: &str) -> String {
    let point = text
        .lines()
        .find(|l| l.contains(&format!(" - {test} b against a: ")))
        .unwrap();
    let after = point.split(" against a: ").nth(1).unwrap();
    after.split(" [").next().unwrap().to_string()
}

/// Reads a metric's change from a format's text: the text as printed.
type Reader = fn(&str, &str) -> String;

/// Every format that shows a change agrees with the JSON document's
/// `change_pct` on each metric: the same sign, and the value rounded to
/// the decimals it prints. The verdicts make sure both signs are there
/// and that the sign is the value's (a time down is -, better; a rate
/// down is -, worse).
#[test]
fn every_format_shows_the_same_change() {
    let (_dir, db) = agree();
    let report = json_of(
        &db,
        &["compare", "agree", "--threshold", "15", "--format", "json"],
    );
    let metric = |test: &str| -> &Value {
        report["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["test"] == test)
            .unwrap()
    };
    let verdicts: Vec<(&str, &str)> = TESTS
        .iter()
        .map(|t| {
            let c = &metric(t.0)["results"][1]["comparison"];
            (t.0, c["verdict"].as_str().unwrap())
        })
        .collect();
    assert_eq!(
        verdicts,
        [
            ("lat", "regression"),
            ("rate", "regression"),
            ("bw", "improvement"),
            ("open", "improvement"),
            ("same", "no_change"),
            ("drift", "inconclusive")
        ]
    );
    let formats: [(&str, Reader); 7] = [
        ("bars", from_bars),
        ("table", from_table),
        ("regressions", from_regressions),
        ("markdown", from_markdown),
        ("csv", from_csv),
        ("html", from_html),
        ("tap", from_tap),
    ];
    for (format, read) in formats {
        let text = compare(&db, format);
        for (test, _, _, baseline, current) in TESTS {
            let exact = metric(test)["results"][1]["comparison"]["change_pct"]["point"]
                .as_f64()
                .unwrap();
            assert_eq!(exact.signum(), (current - baseline).signum(), "{test}");
            let shown = read(&text, test);
            let (value, decimals) = signed(&shown);
            let scale = 10f64.powi(decimals as i32);
            assert_eq!(value.signum(), exact.signum(), "{format} {test}: {shown}");
            assert!(
                ((exact * scale).round() - value * scale).abs() < 1e-6,
                "{format} {test}: {shown}, the JSON's {exact}"
            );
        }
    }
}

/// Each text format's first lines, before any metric, give the verdict:
/// the counts per verdict, the worst regressions with their change, the
/// level of analysis and how a change reads. `show --format` (all
/// identifiers, the first as baseline) goes through the same renderers.
#[test]
fn text_formats_open_with_the_verdict() {
    let (_dir, db) = agree();
    let shown = |format: &str| stdout(&db, &["show", "agree", "--format", format]);
    for format in ["bars", "table", "regressions", "markdown"] {
        for (text, threshold) in [(compare(&db, format), 15.0), (shown(format), 1.0)] {
            let first_metric = text
                .lines()
                .position(|l| {
                    let l = l.trim_start_matches("| ");
                    ["lat", "rate", "bw", "open", "same", "drift"]
                        .iter()
                        .any(|t| {
                            l == *t
                                || l.starts_with(&format!("{t} "))
                                || l.starts_with(&format!("{t}, "))
                        })
                })
                .unwrap_or_else(|| panic!("{format}: no metric in\n{text}"));
            let opening = text
                .lines()
                .take(first_metric)
                .collect::<Vec<_>>()
                .join("\n");
            let counts = if threshold == 15.0 {
                "2 regressions, 2 improvements, 1 no change, 1 inconclusive"
            } else {
                " regression"
            };
            let markdown = format == "markdown";
            assert!(
                opening.contains(counts) || (markdown && opening.contains("| b |")),
                "{format}: no counts before the metrics:\n{opening}"
            );
            assert!(
                opening.contains("measured apart (1 and 1 runs): one run on a side"),
                "{format}: no level of analysis:\n{opening}"
            );
            assert!(
                opening.contains("+ = a higher value"),
                "{format}:\n{opening}"
            );
            if threshold == 15.0 {
                assert!(
                    opening.contains("lat +33.7") && opening.contains("rate -38.8"),
                    "{format}: no worst regressions:\n{opening}"
                );
            }
            if !markdown {
                let verdict = opening.find("Verdict against the baseline 'a':").unwrap();
                assert!(verdict < opening.find("Runs: 1 each").unwrap(), "{opening}");
                assert!(verdict < opening.find("Notes:").unwrap(), "{opening}");
            } else {
                let summary = opening.find("## Summary against a").unwrap();
                assert!(summary < opening.find("## Systems").unwrap(), "{opening}");
            }
        }
    }
}

/// Seed 003: twelve kernels transcribed from one LKML report. Every note
/// that holds for all of them is said once with their count, the eleven
/// compared ones decided alike share one line, and the kernels get the
/// advice that fits kernels (boot in turn, or `vm compare`), never
/// `--variant`. The system all share is one line.
#[test]
fn notes_for_every_identifier_are_said_once_with_their_count() {
    let (_dir, db) = temp_db();
    succeeds(
        &db,
        &["import", seed_fixture("003_lmbench.json").to_str().unwrap()],
    );
    let text = stdout(&db, &["compare", "seed-003", "--format", "table"]);
    let notes: Vec<&str> = text
        .lines()
        .skip_while(|l| *l != "Notes:")
        .skip(1)
        .take_while(|l| l.starts_with("  - "))
        .collect();
    let with = |needle: &str| notes.iter().filter(|n| n.contains(needle)).count();
    assert_eq!(
        with("  - All 12 identifiers: transcribed from an LKML report"),
        1,
        "{notes:#?}"
    );
    assert_eq!(
        with("  - All 12 identifiers: no record of the processes"),
        1
    );
    assert_eq!(with("were measured apart"), 1, "{notes:#?}");
    assert_eq!(
        with("  - All 11 identifiers against '2.6.0' were measured apart (1 and 1 runs)"),
        1
    );
    assert_eq!(with("'2.6.0', '2.6.1'"), 0, "no note lists all twelve");
    let kernels: Vec<&&str> = notes
        .iter()
        .filter(|n| n.contains("another kernel"))
        .collect();
    assert_eq!(kernels.len(), 1, "{notes:#?}");
    assert!(kernels[0].contains("boot the other kernel between runs"));
    assert!(kernels[0].contains("`kbench vm compare`"));
    assert!(!text.contains("--variant"), "{text}");
    let shared = "System (shared): Processor: two-way 2.8 GHz Xeon SMP @ 2800 MHz";
    assert_eq!(text.lines().filter(|l| *l == shared).count(), 1, "{text}");
    assert!(
        text.contains(
            "\nDifferences between identifiers:\n  Kernel: 2.6.0 = 2.6.0; 2.6.1 = 2.6.1;"
        )
    );
}

/// Seed 004: two identifiers imported without system snapshots. No
/// format prints a line of empty facts or claims they ran on identical
/// systems; the text formats, `show` and the html page say the same.
#[test]
fn a_set_without_snapshots_prints_no_placeholder() {
    let (_dir, db) = temp_db();
    succeeds(
        &db,
        &["import", seed_fixture("004_linaro.json").to_str().unwrap()],
    );
    let none = "No identifier has a system snapshot (imported samples): their systems \
                cannot be compared.";
    let mut texts: Vec<(String, String)> = ["bars", "table", "regressions", "markdown", "html"]
        .iter()
        .map(|f| {
            (
                f.to_string(),
                stdout(&db, &["compare", "seed-004", "--format", f]),
            )
        })
        .collect();
    texts.push(("show".into(), stdout(&db, &["show", "seed-004"])));
    // The page's systems section (its style and script are no facts).
    let page = &mut texts[4].1;
    let start = page.find("<section id=\"systems\">").unwrap();
    let end = start + page[start..].find("</section>").unwrap();
    *page = page[start..end].to_string();
    for (name, text) in &texts {
        assert!(text.contains(none), "{name}:\n{text}");
        for placeholder in [
            "identical systems",
            "Processor:",
            "Cores / 0 Threads",
            "0.0 GiB",
            " ()",
            "| Processor |",
        ] {
            assert!(!text.contains(placeholder), "{name} holds {placeholder:?}");
        }
    }
}
