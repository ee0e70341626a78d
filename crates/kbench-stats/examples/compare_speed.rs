//! How long a full A/B report's statistics take: 1,000 metrics x 5
//! identifiers x 30 samples, each identifier compared with the first (the
//! baseline), plus the geometric mean. Prints the median of 7 runs.
//!
//! cargo run --release -p kbench-stats --example compare_speed

use kbench_model::Direction;
use std::time::{Duration, Instant};

use kbench_stats::geomean::{GeomeanRow, geomean_vs_baseline};
use kbench_stats::{CompareOptions, MetricInput, Samples, Side, compare_all};

const METRICS: usize = 1000;
const IDENTIFIERS: usize = 5;
const SAMPLES: usize = 30;
const RUNS: usize = 7;

/// SplitMix64: deterministic input without a rand dependency.
fn next(state: &mut u64) -> f64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
}

fn main() {
    let mut state = 42;
    // data[identifier][metric]: uniform noise of +-2 %, a few real changes.
    let data: Vec<Vec<Samples>> = (0..IDENTIFIERS)
        .map(|id| {
            (0..METRICS)
                .map(|m| {
                    let level = if id > 0 && m % 50 == 0 { 103.0 } else { 100.0 };
                    let values = (0..SAMPLES).map(|_| level * (0.98 + 0.04 * next(&mut state)));
                    Samples::new(values.collect()).expect("finite")
                })
                .collect()
        })
        .collect();
    let mut times: Vec<Duration> = (0..RUNS).map(|_| run(&data)).collect();
    times.sort();
    let comparisons = (IDENTIFIERS - 1) * METRICS;
    let median = times[RUNS / 2];
    println!(
        "{METRICS} metrics x {IDENTIFIERS} identifiers x {SAMPLES} samples \
         ({comparisons} comparisons + geomean): median {:.1} ms of {RUNS} runs ({:.1} us per comparison)",
        median.as_secs_f64() * 1e3,
        median.as_secs_f64() * 1e6 / comparisons as f64
    );
}

fn run(data: &[Vec<Samples>]) -> Duration {
    let start = Instant::now();
    let options = CompareOptions::default();
    let sides: Vec<Vec<Side>> = data
        .iter()
        .map(|metrics| {
            metrics
                .iter()
                .map(|s| Side::new(s.clone()).expect("positive"))
                .collect()
        })
        .collect();
    let mut regressions = 0;
    for current in &sides[1..] {
        let inputs: Vec<MetricInput<'_>> = sides[0]
            .iter()
            .zip(current)
            .map(|(baseline, current)| MetricInput {
                baseline,
                current,
                better: Direction::Lower,
                blocks: None,
                units: None,
            })
            .collect();
        let results = compare_all(&inputs, &options);
        regressions += results
            .iter()
            .filter(|c| c.verdict == kbench_stats::Verdict::Regression)
            .count();
    }
    let rows: Vec<GeomeanRow> = (0..METRICS)
        .map(|m| GeomeanRow {
            better: Direction::Lower,
            baseline: Some(data[0][m].mean()),
            current: data[1..].iter().map(|id| Some(id[m].mean())).collect(),
        })
        .collect();
    let geomean = geomean_vs_baseline(&rows).expect("every identifier has every metric");
    assert!(regressions > 0 && geomean.ratios.len() == IDENTIFIERS - 1);
    start.elapsed()
}
