//! `kbench list`: built-in benchmarks and suites.

use kbench_model::Direction;
use serde::Serialize;
use std::collections::BTreeMap;
use std::process::ExitCode;

/// The `kbench.list/1` document.
#[derive(Serialize)]
struct Listing {
    schema: &'static str,
    benchmarks: Vec<BenchmarkEntry>,
    suites: Vec<SuiteEntry>,
}

#[derive(Serialize)]
struct SuiteEntry {
    name: String,
    summary: String,
    /// The canonical tests it runs on this machine.
    tests: Vec<String>,
}

#[derive(Serialize)]
struct BenchmarkEntry {
    id: &'static str,
    unit: &'static str,
    direction: Direction,
    summary: &'static str,
    /// Option name -> default on this machine.
    options: BTreeMap<&'static str, String>,
}

pub fn list(json: bool) -> anyhow::Result<ExitCode> {
    let listing = Listing {
        schema: "kbench.list/1",
        benchmarks: kbench_bench::all()
            .into_iter()
            .map(|b| BenchmarkEntry {
                id: b.id,
                unit: b.unit.label(),
                direction: b.direction,
                summary: b.summary,
                options: b.options.iter().map(|o| (o.name, (o.default)())).collect(),
            })
            .collect(),
        suites: kbench_lab::suite::builtin_suites()
            .into_iter()
            .map(|s| {
                let tests = kbench_lab::suite::expand(std::slice::from_ref(&s.name))?;
                Ok(SuiteEntry {
                    name: s.name,
                    summary: s.summary,
                    tests: tests.iter().map(ToString::to_string).collect(),
                })
            })
            .collect::<anyhow::Result<_>>()?,
    };
    if json {
        super::print_json(&listing)?;
        return Ok(ExitCode::SUCCESS);
    }
    println!("Benchmarks ({}):", listing.benchmarks.len());
    for b in &listing.benchmarks {
        let options: Vec<String> = b.options.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let name = if options.is_empty() {
            b.id.to_string()
        } else {
            format!("{}[{}]", b.id, options.join(","))
        };
        println!(
            "  {name:<36} {:<8} {:<17} {}",
            b.unit,
            b.direction.phrase(),
            b.summary
        );
    }
    println!("\nSuites:");
    for s in &listing.suites {
        println!("  {:<12} {} tests: {}", s.name, s.tests.len(), s.summary);
    }
    Ok(ExitCode::SUCCESS)
}
