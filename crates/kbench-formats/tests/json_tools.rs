//! Reading the JSON files of hyperfine 1.15 and Google Benchmark 1.7.1,
//! as those versions wrote them here (the .cc beside the Google Benchmark
//! file is the program that made it).

use kbench_formats::{Format, ReadOptions, read};
use kbench_model::results::ResultSetData;
use kbench_model::{Direction, TestKey};
use kbench_store::exchange::to_result_set;

const HYPERFINE: &str = include_str!("fixtures/hyperfine-1.15.json");
const HYPERFINE_SCAN: &str = include_str!("fixtures/hyperfine-1.15-param.json");
const GBENCH: &str = include_str!("fixtures/gbench-1.7.1.json");

fn options(identifier: &str) -> ReadOptions {
    ReadOptions {
        identifier: Some(identifier.to_string()),
        at_ms: 1_000,
    }
}

fn import(format: Format, text: &str, identifier: &str) -> (ResultSetData, Vec<String>) {
    let imported = read(format, text, &options(identifier)).unwrap();
    (
        to_result_set(&imported.file, Some("s")).unwrap(),
        imported.notes,
    )
}

fn test(data: &ResultSetData, name: &str) -> Vec<(f64, u64, u32)> {
    let key = TestKey::parse(name).unwrap();
    data.identifiers[0].samples[&key]
        .iter()
        .map(|s| (s.value, s.iterations, s.round))
        .collect()
}

/// Telling kbench's own document apart stops at its "schema", the key it
/// begins with: what follows is not read (here, a "results" that would
/// make it hyperfine's, then a cut-off end).
#[test]
fn detection_stops_at_kbench_s_own_schema() {
    assert_eq!(
        Format::detect(r#"{"schema": "kbench.samples/1", "results": []}"#),
        None
    );
    assert_eq!(
        Format::detect(r#"{"schema": "kbench.samples/1", "results": [], "#),
        None
    );
    assert_eq!(
        Format::detect(r#"{"results": [], "schema": "x"}"#),
        Some(Format::Hyperfine)
    );
}

#[test]
fn hyperfine_runs_are_rounds_in_seconds() {
    assert_eq!(Format::detect(HYPERFINE), Some(Format::Hyperfine));
    let (data, notes) = import(Format::Hyperfine, HYPERFINE, "stock");
    assert!(notes.is_empty());
    assert_eq!(data.identifiers[0].name, "stock");
    let names: Vec<String> = data.tests.iter().map(|t| t.key.to_string()).collect();
    assert_eq!(names, ["true", "sleep 0.01"]);
    assert!(
        data.tests
            .iter()
            .all(|t| t.unit == "s" && t.direction == Direction::Lower)
    );
    let sleep = test(&data, "sleep 0.01");
    assert_eq!(sleep.len(), 5);
    assert_eq!(sleep[1], (0.013811206000000001, 1, 1));
    let (scan, _) = import(Format::Hyperfine, HYPERFINE_SCAN, "scan");
    assert_eq!(test(&scan, "sleep 0.001[n=1]").len(), 3);
}

#[test]
fn hyperfine_files_without_times_or_identifier_are_refused() {
    let err = read(Format::Hyperfine, HYPERFINE, &ReadOptions::default()).unwrap_err();
    assert!(err.what.contains("--identifier"), "{err}");
    let no_times = r#"{"results": [{"command": "x", "mean": 1.0}]}"#;
    let err = read(Format::Hyperfine, no_times, &options("a")).unwrap_err();
    assert_eq!(err.at, "results[0].times");
    let negative = HYPERFINE.replacen("0.0007843790000000001", "-1", 1);
    let err = read(Format::Hyperfine, &negative, &options("a")).unwrap_err();
    assert_eq!(err.at, "results[0].times[0]");
    let failed = HYPERFINE.replacen(
        "\"exit_codes\": [\n        0",
        "\"exit_codes\": [\n        1",
        1,
    );
    let (_, notes) = import(Format::Hyperfine, &failed, "a");
    assert_eq!(
        notes,
        ["true: 1 of 5 runs exited non-zero or by a signal (hyperfine -i)"]
    );
}

#[test]
fn gbench_repetitions_are_rounds_and_aggregates_are_left_out() {
    assert_eq!(Format::detect(GBENCH), Some(Format::GoogleBenchmark));
    let (data, notes) = import(Format::GoogleBenchmark, GBENCH, "patched");
    assert_eq!(notes, ["Google Benchmark's library was a debug build"]);
    let memcpy = test(&data, "BM_memcpy/64");
    assert_eq!(
        memcpy.len(),
        3,
        "the _mean/_median/_stddev rows are not samples"
    );
    assert_eq!(memcpy[0], (3.3404537558566494, 11685402, 0));
    assert_eq!(memcpy[2].2, 2);
    assert_eq!(test(&data, "BM_memcpy/64:cpu_time").len(), 3);
    let bytes = data
        .tests
        .iter()
        .find(|t| t.key.to_string() == "BM_memcpy/64:bytes_per_second")
        .unwrap();
    assert_eq!(
        (bytes.unit.as_str(), bytes.direction),
        ("B/s", Direction::Higher)
    );
    // `std::string` holds the ':' of a metric: it becomes '_', and the
    // name as written is kept for an export.
    assert_eq!(test(&data, "BM_construct<std__string>").len(), 3);
    let record = data.identifiers[0].runs[0]
        .info
        .snapshot
        .imported
        .as_ref()
        .unwrap();
    assert_eq!(
        record.test_field("BM_construct<std__string>", "name"),
        Some("BM_construct<std::string>")
    );
    assert_eq!(
        record.facts,
        [("Processor".to_string(), "2 CPUs @ 2600 MHz".to_string())]
    );
    // 2026-12-02T22:28:43+00:00
    assert_eq!(
        data.identifiers[0].runs[0].info.started_at_ms,
        1_796_250_523_000
    );
}

#[test]
fn gbench_errors_name_the_key() {
    let zero = GBENCH.replacen(
        "\"real_time\": 3.3404537558566494e+00",
        "\"real_time\": 0",
        1,
    );
    let err = read(Format::GoogleBenchmark, &zero, &options("a")).unwrap_err();
    assert_eq!(err.at, "benchmarks[0].real_time");
    let err = read(
        Format::GoogleBenchmark,
        "{\"context\": {}, \"benchmarks\": [{}]}",
        &options("a"),
    )
    .unwrap_err();
    assert!(err.what.contains("missing field"), "{err}");
}
