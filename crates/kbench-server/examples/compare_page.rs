//! The dashboard's comparison page of a large result set, timed (the
//! target: 1,000 metrics served in under 1 s).
//!
//! Fills a temp SQLite store with one set of METRICS tests x 2 identifiers
//! x 5 rounds of 5 samples (one `Exchange::import`), serves it in process and
//! GETs `/sets/{set}/compare` RUNS times; prints the median, fastest and
//! slowest latency, the page size, and where one page's time goes (store
//! load, comparison, HTML) measured outside the server.
//!
//! `cargo run --release -p kbench-server --example compare_page [-- METRICS [RUNS]]`

use kbench_analysis::comparison::{self, CompareRequest};
use kbench_analysis::thresholds::Thresholds;
use kbench_fleet::client;
use kbench_model::{Direction, Sample, TestKey, TestSpec};
use kbench_report::format::html::compare_page;
use kbench_server::Config;
use kbench_store::{IdentifierData, Location, ResultSetData, RunId, RunInfo, RunRecord, RunStatus};
use std::time::{Duration, Instant};

const SET: &str = "large";
const ROUNDS: u32 = 5;
const PER_ROUND: u32 = 5;

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let metrics: usize = args.next().map_or(Ok(1000), |a| a.parse())?;
    let runs: usize = args.next().map_or(Ok(10), |a| a.parse())?;
    let dir = tempfile::tempdir()?;
    let location = Location::Sqlite(dir.path().join("results.db"));
    let data = data(metrics);
    let started = Instant::now();
    location.open_send()?.import(&data)?;
    println!(
        "stored {metrics} tests x 2 identifiers x {ROUNDS} rounds x {PER_ROUND} samples in {}",
        ms(started.elapsed())
    );

    let server = kbench_server::spawn(
        "127.0.0.1:0",
        Config::new(
            location.clone(),
            std::sync::Arc::new(kbench_catalog::job::checker(
                kbench_catalog::profile::Profiles::builtin(),
            )),
        ),
    )?;
    let addr = server.addr.to_string();
    let path = format!("/sets/{SET}/compare");
    let mut times = Vec::with_capacity(runs);
    let mut size = 0;
    // One more than asked: the first opens the store and warms its cache.
    for run in 0..=runs {
        let started = Instant::now();
        let page = client::request(&addr, "GET", &path, &[], b"")?;
        let took = started.elapsed();
        anyhow::ensure!(page.status == 200, "{path}: {}", page.status);
        anyhow::ensure!(
            page.body.matches("<tr class=\"v-regression\"").count() == metrics.div_ceil(10),
            "the page does not show the regressions it should"
        );
        size = page.body.len();
        if run > 0 {
            times.push(took);
        }
    }
    server.stop()?;
    times.sort();
    println!(
        "GET {path} ({metrics} metrics), {runs} runs: median {}, fastest {}, slowest {}; {:.2} MB",
        ms(times[times.len() / 2]),
        ms(times[0]),
        ms(times[times.len() - 1]),
        size as f64 / 1e6
    );

    // Where one page's time goes, outside the server.
    let started = Instant::now();
    let loaded = location.open_send()?.load(SET)?;
    let load = started.elapsed();
    let started = Instant::now();
    let request = CompareRequest {
        baseline: None,
        identifiers: vec![],
        threshold: Thresholds::uniform(0.01),
        metric_filter: None,
        calibrations: vec![],
    };
    let report = comparison::build(&loaded, &request)?;
    let build = started.elapsed();
    let started = Instant::now();
    let html = compare_page(&report);
    let render = started.elapsed();
    println!(
        "one page: store load {}, comparison {}, HTML {} ({} bytes)",
        ms(load),
        ms(build),
        ms(render),
        html.len()
    );
    Ok(())
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

/// `metrics` tests (half of them lower-is-better), measured by "base" and
/// "next"; "next" is 5 % worse on every tenth metric.
fn data(metrics: usize) -> ResultSetData {
    let tests: Vec<TestSpec> = (0..metrics)
        .map(|m| TestSpec {
            key: TestKey::parse(&format!("bench-{}[size={}]", m / 4, m % 4 * 64)).expect("a key"),
            unit: "ns".into(),
            direction: if m % 2 == 0 {
                Direction::Lower
            } else {
                Direction::Higher
            },
        })
        .collect();
    // A fixed scatter of +-0.5 %.
    let mut noise = kbench_report::testing::scatter();
    let identifiers = ["base", "next"]
        .iter()
        .enumerate()
        .map(|(i, name)| IdentifierData {
            sample_runs: Default::default(),
            name: name.to_string(),
            factors: Default::default(),
            runs: vec![RunRecord {
                id: RunId(0),
                status: RunStatus::Complete,
                info: RunInfo {
                    tool_version: "compare_page example".into(),
                    started_at_ms: 1_767_225_600_000,
                    ..RunInfo::default()
                },
                ended_at_ms: Some(1_767_225_660_000),
                outcomes: vec![],
            }],
            samples: tests
                .iter()
                .enumerate()
                .map(|(m, spec)| {
                    let worse = match spec.direction {
                        Direction::Lower => 1.05,
                        Direction::Higher => 0.95,
                    };
                    let level =
                        100.0 * (m + 1) as f64 * if i == 1 && m % 10 == 0 { worse } else { 1.0 };
                    let samples = (0..ROUNDS * PER_ROUND)
                        .map(|s| Sample {
                            value: level * (1.0 + 0.005 * noise()),
                            iterations: 1,
                            at_ms: i64::from(s),
                            round: s / PER_ROUND,
                        })
                        .collect();
                    (spec.key.clone(), samples)
                })
                .collect(),
        })
        .collect();
    ResultSetData {
        name: SET.into(),
        title: None,
        description: None,
        tests,
        identifiers,
    }
}
