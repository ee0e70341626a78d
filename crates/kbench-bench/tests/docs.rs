//! docs/benchmarks.md against the registry ([`kbench_bench::all`]), so the
//! two cannot drift: every benchmark has exactly one row in the docs' tables
//! and every row names a benchmark, with the same unit, direction, options
//! and loop body (the `summary` that `kbench list` prints).
//!
//! A table row is any row of a table whose header starts with `| id |`:
//! `| id | options (default here) | unit | better | loop body |`. Options
//! are `-` or `name=default` pairs in name order, joined by `, `.

use kbench_bench::BenchInfo;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// One benchmark's row of docs/benchmarks.md.
#[derive(Debug)]
struct Row {
    line: usize,
    id: String,
    options: String,
    unit: String,
    better: String,
    body: String,
}

fn docs() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/benchmarks.md");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The cells of a markdown table line, trimmed; `None` for other lines.
fn cells(line: &str) -> Option<Vec<String>> {
    let inner = line.trim().strip_prefix('|')?.strip_suffix('|')?;
    Some(inner.split('|').map(|c| c.trim().to_string()).collect())
}

/// Every row of the benchmark tables, in order.
fn rows(text: &str) -> Vec<Row> {
    let mut rows = Vec::new();
    let mut in_table = false;
    for (index, line) in text.lines().enumerate() {
        let Some(cells) = cells(line) else {
            in_table = false;
            continue;
        };
        if cells.first().map(String::as_str) == Some("id") {
            assert_eq!(
                cells,
                [
                    "id",
                    "options (default here)",
                    "unit",
                    "better",
                    "loop body"
                ],
                "docs/benchmarks.md:{}: the columns of a benchmark table",
                index + 1
            );
            in_table = true;
            continue;
        }
        if !in_table || cells.iter().all(|c| c.chars().all(|ch| ch == '-')) {
            continue;
        }
        let [id, options, unit, better, body] = <[String; 5]>::try_from(cells)
            .unwrap_or_else(|c| panic!("docs/benchmarks.md:{}: {c:?}", index + 1));
        rows.push(Row {
            line: index + 1,
            id,
            options,
            unit,
            better,
            body,
        });
    }
    rows
}

/// The options cell the docs give for `bench`: `-`, or `name=default`
/// pairs in name order.
fn options_cell(bench: &BenchInfo) -> String {
    let defaults: BTreeMap<&str, String> = bench
        .options
        .iter()
        .map(|o| (o.name, (o.default)()))
        .collect();
    if defaults.is_empty() {
        return "-".to_string();
    }
    let pairs: Vec<String> = defaults.iter().map(|(k, v)| format!("{k}={v}")).collect();
    pairs.join(", ")
}

/// The option names of an options cell, in order.
fn option_names(cell: &str) -> Vec<&str> {
    if cell == "-" {
        return Vec::new();
    }
    cell.split(", ")
        .map(|pair| pair.split_once('=').map_or(pair, |(name, _)| name))
        .collect()
}

/// Whether this process may run on two CPUs or more: the docs give the
/// defaults of such a machine (`placement` is `cross` there, `same` on one).
fn two_cpus_or_more() -> bool {
    std::thread::available_parallelism().is_ok_and(|n| n.get() >= 2)
}

#[test]
fn every_benchmark_has_one_docs_row_and_every_row_a_benchmark() {
    let text = docs();
    let rows = rows(&text);
    let registry: BTreeSet<&str> = kbench_bench::all().iter().map(|b| b.id).collect();
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    for row in &rows {
        assert!(
            registry.contains(row.id.as_str()),
            "docs/benchmarks.md:{}: '{}' is no built-in benchmark (kbench_bench::all())",
            row.line,
            row.id
        );
        if let Some(first) = seen.insert(&row.id, row.line) {
            panic!(
                "docs/benchmarks.md:{}: '{}' has a row already, on line {first}",
                row.line, row.id
            );
        }
    }
    let missing: Vec<&str> = registry
        .into_iter()
        .filter(|id| !seen.contains_key(id))
        .collect();
    assert!(
        missing.is_empty(),
        "benchmarks without a row in docs/benchmarks.md: {}",
        missing.join(", ")
    );
}

#[test]
fn each_docs_row_says_what_the_registry_says() {
    let text = docs();
    for row in rows(&text) {
        let Some(bench) = kbench_bench::find(&row.id) else {
            continue; // the other test names it
        };
        let at = format!("docs/benchmarks.md:{} ({})", row.line, row.id);
        assert_eq!(row.unit, bench.unit.label(), "{at}: unit");
        assert_eq!(row.better, bench.direction.as_str(), "{at}: better");
        assert_eq!(row.body, bench.summary, "{at}: loop body");
        let expected = options_cell(bench);
        assert_eq!(
            option_names(&row.options),
            option_names(&expected),
            "{at}: option names"
        );
        if two_cpus_or_more() {
            assert_eq!(row.options, expected, "{at}: option defaults");
        }
    }
}
