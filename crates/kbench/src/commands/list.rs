//! `kbench list`: built-in benchmarks, suites and external profiles.

use kbench_catalog::profile::{Profiles, matrix};
use kbench_model::{Direction, TestKey};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

/// The `kbench.list/1` document.
#[derive(Serialize)]
struct Listing {
    schema: &'static str,
    benchmarks: Vec<BenchmarkEntry>,
    suites: Vec<SuiteEntry>,
    profiles: Vec<ProfileEntry>,
}

#[derive(Serialize)]
struct ProfileEntry {
    name: String,
    summary: String,
    /// "built-in" or the file it was read from.
    source: String,
    /// Debian packages `kbench install NAME` installs.
    packages: Vec<String>,
    /// Required programs that are not installed here.
    missing_programs: Vec<String>,
    /// Whether it starts a service (a server on loopback).
    service: bool,
    tests: Vec<ProfileTestEntry>,
}

#[derive(Serialize)]
struct ProfileTestEntry {
    id: String,
    unit: String,
    direction: Direction,
    /// Every metric, the main one first (stored as `value`).
    metrics: Vec<MetricEntry>,
    options: BTreeMap<String, OptionEntry>,
    /// The tests it runs by default: canonical name and description.
    tests: Vec<DescribedTest>,
}

#[derive(Serialize)]
struct MetricEntry {
    name: String,
    unit: String,
    direction: Direction,
}

#[derive(Serialize)]
struct OptionEntry {
    /// Tested by default; empty when the user must give one.
    values: Vec<String>,
    /// Other values accepted (a regex), if any.
    pattern: Option<String>,
    help: String,
}

#[derive(Serialize)]
struct DescribedTest {
    test: String,
    description: String,
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

pub fn list(json: bool, profile_dirs: &[PathBuf]) -> anyhow::Result<ExitCode> {
    let profiles = Profiles::load(profile_dirs)?;
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
        suites: kbench_catalog::suite::builtin_suites()
            .into_iter()
            .map(|s| {
                let tests = kbench_catalog::expand_with(std::slice::from_ref(&s.name), &profiles)?;
                Ok(SuiteEntry {
                    name: s.name,
                    summary: s.summary,
                    tests: tests.iter().map(ToString::to_string).collect(),
                })
            })
            .collect::<anyhow::Result<_>>()?,
        profiles: profile_entries(&profiles)?,
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
    print_profiles(&listing.profiles);
    Ok(ExitCode::SUCCESS)
}

fn profile_entries(profiles: &Profiles) -> anyhow::Result<Vec<ProfileEntry>> {
    let mut entries = Vec::new();
    for profile in profiles.all() {
        let mut tests = Vec::new();
        for test in &profile.tests {
            let keys = matrix::expand(test, &BTreeMap::new()).map_err(anyhow::Error::msg)?;
            tests.push(ProfileTestEntry {
                id: test.id.clone(),
                unit: test.main_metric().unit.clone(),
                direction: test.main_metric().direction,
                metrics: test
                    .metrics
                    .iter()
                    .map(|m| MetricEntry {
                        name: m.name.clone(),
                        unit: m.unit.clone(),
                        direction: m.direction,
                    })
                    .collect(),
                options: test
                    .options
                    .iter()
                    .map(|(name, spec)| {
                        let entry = OptionEntry {
                            values: spec.values.clone(),
                            pattern: spec.pattern.clone(),
                            help: spec.help.clone(),
                        };
                        (name.clone(), entry)
                    })
                    .collect(),
                tests: keys
                    .iter()
                    .map(|key: &TestKey| DescribedTest {
                        test: key.to_string(),
                        description: matrix::describe(test, &key.options),
                    })
                    .collect(),
            });
        }
        entries.push(ProfileEntry {
            name: profile.name.clone(),
            summary: profile.summary.clone(),
            source: profile.origin.to_string(),
            packages: profile.packages(),
            missing_programs: profiles
                .missing_programs(profile)
                .into_iter()
                .map(|(program, _)| program)
                .collect(),
            service: profile.service.is_some(),
            tests,
        });
    }
    Ok(entries)
}

fn print_profiles(profiles: &[ProfileEntry]) {
    println!(
        "\nProfiles (external tools; `kbench run NAME` runs all of a profile's tests, \
         `kbench install NAME` installs its packages):"
    );
    for p in profiles {
        let state = if p.missing_programs.is_empty() {
            "installed".to_string()
        } else {
            format!("not installed: {}", p.packages.join(" "))
        };
        let source = if p.source == "built-in" {
            String::new()
        } else {
            format!(" (from {})", p.source)
        };
        println!("  {:<12} {}{source} [{state}]", p.name, p.summary);
        for t in &p.tests {
            let options: Vec<String> = t
                .options
                .iter()
                .map(|(name, o)| {
                    let values = match o.values.len() {
                        0 => "...".to_string(),
                        1..=4 => o.values.join("|"),
                        n => format!("{}|... ({n})", o.values[..3].join("|")),
                    };
                    format!("{name}={values}")
                })
                .collect();
            let name = if options.is_empty() {
                t.id.clone()
            } else {
                format!("{}[{}]", t.id, options.join(","))
            };
            let count = match t.tests.len() {
                1 => "1 test".to_string(),
                n => format!("{n} tests"),
            };
            println!(
                "    {name:<52} {:<11} {:<17} {count}",
                t.unit,
                t.direction.phrase()
            );
        }
    }
}
