//! How long change-point detection takes on many long series: 10,000
//! series of 500 points (500 versions of one sample each, 1 % noise; every
//! third series has a 5 % step, every fifth a one-version spike), split
//! over the threads given (default 2). Prints the wall time of each of 3
//! runs and their median, and the change points found.
//!
//! cargo run --release -p kbench-stats --example changepoint_speed [THREADS]

use kbench_model::Direction;
use std::time::{Duration, Instant};

use kbench_stats::changepoint::{ChangePointOptions, change_points};
use kbench_stats::{Samples, Side};

const SERIES: usize = 10_000;
const POINTS: usize = 500;
const RUNS: usize = 3;

#[path = "../tests/support/mod.rs"]
mod support;

use support::Rng;

fn main() {
    let threads: usize = std::env::args()
        .nth(1)
        .map(|t| t.parse().expect("THREADS is a number"))
        .unwrap_or(2);
    let mut rng = Rng(7);
    let data: Vec<Vec<Side>> = (0..SERIES)
        .map(|s| {
            let step = (s % 3 == 0).then_some(100 + s % 300);
            let spike = (s % 5 == 0).then_some(50 + s % 400);
            (0..POINTS)
                .map(|i| {
                    let mut level = if step.is_some_and(|at| i >= at) {
                        105.0
                    } else {
                        100.0
                    };
                    if spike == Some(i) {
                        level *= 1.1;
                    }
                    let value = level * (1.0 + 0.01 * rng.normal());
                    Side::new(Samples::new(vec![value]).expect("finite")).expect("positive")
                })
                .collect()
        })
        .collect();
    let mut times = Vec::new();
    let mut found = 0;
    for _ in 0..RUNS {
        let (time, count) = run(&data, threads);
        println!("run: {:.2} s", time.as_secs_f64());
        times.push(time);
        found = count;
    }
    times.sort();
    println!(
        "change points in {SERIES} series x {POINTS} points on {threads} thread(s): \
         median {:.2} s of {RUNS} runs ({:.0} us per series); {found} change points found \
         ({} series have a step)",
        times[RUNS / 2].as_secs_f64(),
        times[RUNS / 2].as_secs_f64() * 1e6 / SERIES as f64,
        SERIES.div_ceil(3)
    );
}

fn run(data: &[Vec<Side>], threads: usize) -> (Duration, usize) {
    let start = Instant::now();
    let options = ChangePointOptions::default();
    let chunk = data.len().div_ceil(threads.max(1));
    let found: usize = std::thread::scope(|scope| {
        let workers: Vec<_> = data
            .chunks(chunk)
            .map(|part| {
                scope.spawn(move || {
                    part.iter()
                        .map(|series| change_points(series, Direction::Lower, &options).len())
                        .sum::<usize>()
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().expect("worker")).sum()
    });
    (start.elapsed(), found)
}
