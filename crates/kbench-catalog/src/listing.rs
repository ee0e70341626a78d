//! What the catalog holds, as `kbench list` shows it: the built-in
//! benchmarks with their defaults on this machine, the suites with the
//! tests they run here, and the profiles with their tests, options and
//! whether their programs are installed. As data (the `kbench.list/1`
//! document) and as text.

use crate::error::{CatalogError, Result};
use crate::profile::{Profiles, matrix};
use kbench_model::{Direction, TestKey};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write;

/// The `kbench.list/1` document.
#[derive(Debug, Serialize)]
pub struct Listing {
    pub schema: &'static str,
    pub benchmarks: Vec<BenchmarkEntry>,
    pub suites: Vec<SuiteEntry>,
    pub profiles: Vec<ProfileEntry>,
}

#[derive(Debug, Serialize)]
pub struct ProfileEntry {
    pub name: String,
    pub summary: String,
    /// "built-in" or the file it was read from.
    pub source: String,
    /// Debian packages `kbench install NAME` installs.
    pub packages: Vec<String>,
    /// Required programs that are not installed here.
    pub missing_programs: Vec<String>,
    /// Whether it starts a service (a server on loopback).
    pub service: bool,
    pub tests: Vec<ProfileTestEntry>,
}

#[derive(Debug, Serialize)]
pub struct ProfileTestEntry {
    pub id: String,
    pub unit: String,
    pub direction: Direction,
    /// Every metric, the main one first (stored as `value`).
    pub metrics: Vec<MetricEntry>,
    pub options: BTreeMap<String, OptionEntry>,
    /// The tests it runs by default: canonical name and description.
    pub tests: Vec<DescribedTest>,
}

#[derive(Debug, Serialize)]
pub struct MetricEntry {
    pub name: String,
    pub unit: String,
    pub direction: Direction,
}

#[derive(Debug, Serialize)]
pub struct OptionEntry {
    /// Tested by default; empty when the user must give one.
    pub values: Vec<String>,
    /// Other values accepted (a regex), if any.
    pub pattern: Option<String>,
    /// Other values accepted: numbers from the first to the second.
    pub range: Option<(f64, f64)>,
    pub help: String,
}

#[derive(Debug, Serialize)]
pub struct DescribedTest {
    pub test: String,
    pub description: String,
}

#[derive(Debug, Serialize)]
pub struct SuiteEntry {
    pub name: String,
    pub summary: String,
    /// The canonical tests it runs on this machine.
    pub tests: Vec<String>,
}

#[derive(Debug, Serialize)]
pub struct BenchmarkEntry {
    pub id: &'static str,
    pub unit: &'static str,
    pub direction: Direction,
    pub summary: &'static str,
    /// Option name -> default on this machine.
    pub options: BTreeMap<&'static str, String>,
}

impl Listing {
    /// Everything the catalog holds with `profiles` loaded.
    pub fn of(profiles: &Profiles) -> Result<Listing> {
        Ok(Listing {
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
            suites: crate::suite::builtin_suites()
                .into_iter()
                .map(|s| {
                    let tests = crate::expand_with(std::slice::from_ref(&s.name), profiles)?;
                    Ok(SuiteEntry {
                        name: s.name,
                        summary: s.summary,
                        tests: tests.iter().map(ToString::to_string).collect(),
                    })
                })
                .collect::<Result<_>>()?,
            profiles: profile_entries(profiles)?,
        })
    }

    /// The listing as `kbench list` prints it.
    pub fn text(&self) -> String {
        let mut out = String::new();
        writeln!(out, "Benchmarks ({}):", self.benchmarks.len()).unwrap();
        for b in &self.benchmarks {
            let options: Vec<String> = b.options.iter().map(|(k, v)| format!("{k}={v}")).collect();
            let name = if options.is_empty() {
                b.id.to_string()
            } else {
                format!("{}[{}]", b.id, options.join(","))
            };
            writeln!(
                out,
                "  {name:<36} {:<8} {:<17} {}",
                b.unit,
                b.direction.phrase(),
                b.summary
            )
            .unwrap();
        }
        writeln!(out, "\nSuites:").unwrap();
        for s in &self.suites {
            writeln!(
                out,
                "  {:<12} {} tests: {}",
                s.name,
                s.tests.len(),
                s.summary
            )
            .unwrap();
        }
        profiles_text(&mut out, &self.profiles);
        out
    }
}

fn profile_entries(profiles: &Profiles) -> Result<Vec<ProfileEntry>> {
    let mut entries = Vec::new();
    for profile in profiles.all() {
        let mut tests = Vec::new();
        for test in &profile.tests {
            let keys = matrix::expand(test, &BTreeMap::new()).map_err(CatalogError::Invalid)?;
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
                            range: spec.range,
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

fn profiles_text(out: &mut String, profiles: &[ProfileEntry]) {
    writeln!(
        out,
        "\nProfiles (external tools; `kbench run NAME` runs all of a profile's tests, \
         `kbench install NAME` installs its packages):"
    )
    .unwrap();
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
        writeln!(out, "  {:<12} {}{source} [{state}]", p.name, p.summary).unwrap();
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
            writeln!(
                out,
                "    {name:<52} {:<11} {:<17} {count}",
                t.unit,
                t.direction.phrase()
            )
            .unwrap();
        }
    }
}
