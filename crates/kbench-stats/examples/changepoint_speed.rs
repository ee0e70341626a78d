//! How long change-point detection takes on many long series, and how well
//! it does: 10,000 series of 500 points (500 versions of one sample each,
//! 1 % noise; every third series has a +5 % step, every fifth a
//! one-version +10 % spike that recovers and is no change), split over the
//! threads given (default 2). Prints the wall time of each of 3 runs and
//! their median, then the score: a stepped series is a hit when a change
//! point lies within 2 versions of its step, else a miss; every other
//! change point is false. False ones that come as a pair around a block
//! (two in a row in one series, in opposite directions) are counted apart,
//! in flat and stepped series. `--list` prints each false change point
//! with its approximate t (log ratio over the CI half-width / 1.96), p,
//! block length and ratio CI.
//!
//! cargo run --release -p kbench-stats --example changepoint_speed [THREADS] [--list]

use kbench_model::Direction;
use std::time::{Duration, Instant};

use kbench_stats::changepoint::{ChangePoint, ChangePointOptions, change_points};
use kbench_stats::{Samples, Side};

const SERIES: usize = 10_000;
const POINTS: usize = 500;
const RUNS: usize = 3;
/// How far from the step a change point may lie and still be the hit.
const NEAR: usize = 2;

#[path = "../tests/support/mod.rs"]
mod support;

use support::Rng;

/// The step of series `s`, if any: the first version of the +5 % level.
fn step_of(s: usize) -> Option<usize> {
    s.is_multiple_of(3).then_some(100 + s % 300)
}

fn main() {
    let mut threads = 2;
    let mut list = false;
    for arg in std::env::args().skip(1) {
        if arg == "--list" {
            list = true;
        } else {
            threads = arg.parse().expect("THREADS is a number (or --list)");
        }
    }
    let data = generate();
    let mut times = Vec::new();
    let mut found = Vec::new();
    for _ in 0..RUNS {
        let (time, points) = run(&data, threads);
        println!("run: {:.2} s", time.as_secs_f64());
        times.push(time);
        found = points;
    }
    times.sort();
    let total: usize = found.iter().map(Vec::len).sum();
    let stepped = (0..SERIES).filter(|&s| step_of(s).is_some()).count();
    println!(
        "change points in {SERIES} series x {POINTS} points on {threads} thread(s): \
         median {:.2} s of {RUNS} runs ({:.0} us per series); {total} change points found \
         ({stepped} series have a step)",
        times[RUNS / 2].as_secs_f64(),
        times[RUNS / 2].as_secs_f64() * 1e6 / SERIES as f64,
    );
    let score = Score::of(&found, list);
    println!(
        "score: {} hits, {} misses (of {stepped} steps); {} false: {} in pairs around a block \
         ({} in flat series, {} in stepped ones), {} alone",
        score.hits,
        score.misses,
        score.false_points,
        score.paired_flat + score.paired_stepped,
        score.paired_flat,
        score.paired_stepped,
        score.false_points - score.paired_flat - score.paired_stepped,
    );
}

/// The series, from a fixed seed.
fn generate() -> Vec<Vec<Side>> {
    let mut rng = Rng(7);
    (0..SERIES)
        .map(|s| {
            let step = step_of(s);
            let spike = s.is_multiple_of(5).then_some(50 + s % 400);
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
        .collect()
}

/// Counts of change points against the truth.
#[derive(Default)]
struct Score {
    hits: usize,
    misses: usize,
    false_points: usize,
    /// False change points in pairs around a block, by kind of series.
    paired_flat: usize,
    paired_stepped: usize,
}

impl Score {
    /// Scores every series; with `list`, prints each false change point.
    fn of(found: &[Vec<ChangePoint>], list: bool) -> Score {
        let mut score = Score::default();
        for (s, points) in found.iter().enumerate() {
            let step = step_of(s);
            // The hit: the change point nearest the step, within NEAR.
            let hit = step.and_then(|at| {
                points
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| c.index.abs_diff(at) <= NEAR)
                    .min_by_key(|(_, c)| c.index.abs_diff(at))
                    .map(|(i, _)| i)
            });
            if step.is_some() {
                if hit.is_some() {
                    score.hits += 1;
                } else {
                    score.misses += 1;
                }
            }
            let wrong: Vec<&ChangePoint> = points
                .iter()
                .enumerate()
                .filter(|(i, _)| Some(*i) != hit)
                .map(|(_, c)| c)
                .collect();
            score.false_points += wrong.len();
            // partner[i]: the other end of the block false point i bounds.
            let mut partner = vec![None; wrong.len()];
            for i in 1..wrong.len() {
                if partner[i - 1].is_none() && wrong[i - 1].verdict != wrong[i].verdict {
                    partner[i - 1] = Some(i);
                    partner[i] = Some(i - 1);
                }
            }
            let pairs = partner.iter().filter(|p| p.is_some()).count();
            if step.is_some() {
                score.paired_stepped += pairs;
            } else {
                score.paired_flat += pairs;
            }
            if list {
                for (i, c) in wrong.iter().enumerate() {
                    let block = partner[i].map_or("alone".to_string(), |j| {
                        format!("block of {}", c.index.abs_diff(wrong[j].index))
                    });
                    let (low, high) = (c.ratio.ci_low.ln(), c.ratio.ci_high.ln());
                    println!(
                        "false: series {s} (step {step:?}) at {}: t ~ {:.2}, p {:.2e}, {block}, \
                         ratio {:.4} [{:.4}, {:.4}] over {} versions",
                        c.index,
                        c.ratio.point.ln() / ((high - low) / 2.0 / 1.96),
                        c.p_value,
                        c.ratio.point,
                        c.ratio.ci_low,
                        c.ratio.ci_high,
                        c.ratio.n,
                    );
                }
            }
        }
        score
    }
}

/// Change points of every series, split over `threads`, and the time taken.
fn run(data: &[Vec<Side>], threads: usize) -> (Duration, Vec<Vec<ChangePoint>>) {
    let start = Instant::now();
    let options = ChangePointOptions::default();
    let chunk = data.len().div_ceil(threads.max(1));
    let found = std::thread::scope(|scope| {
        let workers: Vec<_> = data
            .chunks(chunk)
            .map(|part| {
                scope.spawn(move || {
                    part.iter()
                        .map(|series| change_points(series, Direction::Lower, &options))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().expect("worker"))
            .collect()
    });
    (start.elapsed(), found)
}
