//! Google Benchmark's JSON output (`--benchmark_format=json` or
//! `--benchmark_out=FILE`): each benchmark run name a test, each
//! repetition a round of one sample (its time per iteration, with the
//! iteration count), its CPU time and rates as further metrics. The
//! aggregates (mean, median, stddev) are left out: kbench computes its own
//! from the repetitions.

use crate::shared;
use crate::{FormatError, Imported, ReadOptions};
use kbench_model::{Direction, ImportedRecord, TestKey};
use kbench_store::exchange::{SampleEntry, TestEntry};
use serde::Deserialize;
use std::collections::BTreeMap;

#[derive(Deserialize)]
struct File {
    context: Context,
    benchmarks: Vec<Benchmark>,
}

/// The machine and build, as the library saw them; the fields kbench
/// reads.
#[derive(Deserialize)]
struct Context {
    date: Option<String>,
    host_name: Option<String>,
    executable: Option<String>,
    num_cpus: Option<u32>,
    mhz_per_cpu: Option<f64>,
    cpu_scaling_enabled: Option<bool>,
    library_build_type: Option<String>,
}

#[derive(Deserialize)]
struct Benchmark {
    name: String,
    run_name: Option<String>,
    #[serde(default)]
    run_type: Option<String>,
    #[serde(default)]
    repetition_index: u32,
    iterations: u64,
    real_time: f64,
    cpu_time: f64,
    time_unit: Option<String>,
    bytes_per_second: Option<f64>,
    items_per_second: Option<f64>,
    #[serde(default)]
    error_occurred: bool,
    error_message: Option<String>,
}

/// The metrics of a repetition: (metric, unit, direction, value).
type Metric = (&'static str, String, Direction, f64);

pub fn read(text: &str, options: &ReadOptions) -> Result<Imported, FormatError> {
    let file: File = serde_json::from_str(text).map_err(|e| {
        FormatError::new(
            format!("line {}, column {}", e.line(), e.column()),
            format!("not a Google Benchmark JSON file: {e}"),
        )
    })?;
    let name = shared::required_identifier(options)?;
    let context = &file.context;
    let started_at_ms = match &context.date {
        Some(date) => shared::parse_time(date).ok_or_else(|| {
            FormatError::new(
                "context.date",
                format!("{date:?} is not a time like 2026-12-01T18:50:09+00:00"),
            )
        })?,
        None => options.at_ms,
    };
    let mut notes = Vec::new();
    if context.library_build_type.as_deref() == Some("debug") {
        notes.push("Google Benchmark's library was a debug build".to_string());
    }
    if context.cpu_scaling_enabled == Some(true) {
        notes.push("CPU frequency scaling was enabled; times may be noisy".to_string());
    }
    let mut record = record(context);
    let mut tests: Vec<TestEntry> = Vec::new();
    let mut samples: BTreeMap<String, Vec<SampleEntry>> = BTreeMap::new();
    for (i, bench) in file.benchmarks.iter().enumerate() {
        let at = format!("benchmarks[{i}]");
        if bench.run_type.as_deref() == Some("aggregate") {
            continue;
        }
        let run_name = bench.run_name.as_deref().unwrap_or(&bench.name);
        if bench.error_occurred {
            notes.push(format!(
                "not imported: {run_name} repetition {}: {}",
                bench.repetition_index,
                bench.error_message.as_deref().unwrap_or("error_occurred")
            ));
            continue;
        }
        if bench.iterations == 0 {
            return Err(FormatError::new(format!("{at}.iterations"), "is 0"));
        }
        let key = TestKey::new(shared::name_part(run_name));
        record.tests.insert(
            key.to_string(),
            vec![("name".to_string(), run_name.to_string())],
        );
        for (metric, unit, direction, value) in metrics(bench) {
            let value = shared::positive_value(value, &format!("{at}.{metric}"))?;
            let metric_key = if metric == "real_time" {
                key.clone()
            } else {
                key.with_metric(metric)
            };
            let test = metric_key.to_string();
            match tests.iter().find(|t| t.test == test) {
                Some(known) if known.unit != unit => {
                    return Err(FormatError::new(
                        format!("{at}.time_unit"),
                        format!("{test} was in {} before and is in {unit} here", known.unit),
                    ));
                }
                Some(_) => {}
                None => tests.push(TestEntry {
                    test: test.clone(),
                    unit,
                    direction,
                }),
            }
            samples.entry(test).or_default().push(SampleEntry {
                value,
                iterations: bench.iterations,
                at_ms: started_at_ms,
                round: bench.repetition_index,
            });
        }
    }
    Ok(shared::one_run(
        tests,
        &name,
        record,
        started_at_ms,
        notes,
        samples,
    ))
}

/// What the context says of the machine, as the run's imported record.
fn record(context: &Context) -> ImportedRecord {
    let mut facts = Vec::new();
    if let Some(cpus) = context.num_cpus {
        let mhz = context
            .mhz_per_cpu
            .map(|mhz| format!(" @ {mhz:.0} MHz"))
            .unwrap_or_default();
        facts.push(("Processor".to_string(), format!("{cpus} CPUs{mhz}")));
    }
    let fields = [
        ("host_name", &context.host_name),
        ("executable", &context.executable),
        ("date", &context.date),
        ("library_build_type", &context.library_build_type),
    ]
    .into_iter()
    .filter_map(|(name, value)| Some((name.to_string(), value.clone()?)))
    .collect();
    ImportedRecord {
        tool: "Google Benchmark".to_string(),
        facts,
        fields,
        tests: BTreeMap::new(),
    }
}

/// A repetition's metrics: its real time per iteration (the main one), its
/// CPU time, and the rates it set.
fn metrics(bench: &Benchmark) -> Vec<Metric> {
    let unit = bench.time_unit.clone().unwrap_or_else(|| "ns".to_string());
    let mut metrics = vec![
        ("real_time", unit.clone(), Direction::Lower, bench.real_time),
        ("cpu_time", unit, Direction::Lower, bench.cpu_time),
    ];
    if let Some(rate) = bench.bytes_per_second {
        metrics.push((
            "bytes_per_second",
            "B/s".to_string(),
            Direction::Higher,
            rate,
        ));
    }
    if let Some(rate) = bench.items_per_second {
        metrics.push((
            "items_per_second",
            "items/s".to_string(),
            Direction::Higher,
            rate,
        ));
    }
    metrics
}
