//! The driver on a fake workbench with a known answer: a metric that steps
//! at one commit, with seeded noise; builds that fail where told; a stop
//! flag raised after a given number of samples (a killed run).

use super::*;
use crate::runner::temp_store;
use kbench_store::SqliteStore;
use std::collections::BTreeSet;
use std::sync::Arc;

/// SplitMix64 with Box-Muller normals.
struct Rng(u64);

impl Rng {
    fn uniform(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        (((z ^ (z >> 31)) >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    fn normal(&mut self) -> f64 {
        let (u, v) = (self.uniform(), self.uniform());
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }
}

/// Commit `i` measures `level(i)` with 1 % noise.
struct Fake {
    commits: Vec<Commit>,
    level: Box<dyn Fn(usize) -> f64>,
    broken: BTreeSet<usize>,
    no_metric: BTreeSet<usize>,
    current: Option<usize>,
    rng: Rng,
    measured: usize,
    stop_after: Option<(usize, Arc<AtomicBool>)>,
    /// Samples per measurement (a boot's round); 1 for a command.
    per_round: usize,
    /// Keeps every build (a VM's images): interleaving is free.
    keeps: bool,
    /// The commit of every measurement, in order; builds run.
    order: Vec<usize>,
    builds: usize,
}

impl Workbench for Fake {
    fn build(&mut self, commit: &Commit) -> anyhow::Result<Result<(), String>> {
        let index = self.commits.iter().position(|c| c == commit).unwrap();
        self.current = Some(index);
        self.builds += 1;
        Ok(if self.broken.contains(&index) {
            Err("error: expected ';'".to_string())
        } else {
            Ok(())
        })
    }

    fn measure(&mut self) -> anyhow::Result<Result<Vec<f64>, MeasureError>> {
        let index = self.current.unwrap();
        if self.no_metric.contains(&index) {
            return Ok(Err(MeasureError::MissingMetric {
                metric: "ops".into(),
                found: vec!["other".into()],
            }));
        }
        self.measured += 1;
        self.order.push(index);
        if let Some((after, stop)) = &self.stop_after
            && self.measured >= *after
        {
            stop.store(true, Ordering::SeqCst);
        }
        if self.per_round > 1 {
            // A round shares its state: 1 % between rounds, 0.2 % within.
            let round = (self.level)(index) * (1.0 + 0.01 * self.rng.normal());
            return Ok(Ok((0..self.per_round)
                .map(|_| round * (1.0 + 0.002 * self.rng.normal()))
                .collect()));
        }
        Ok(Ok(vec![
            (self.level)(index) * (1.0 + 0.01 * self.rng.normal()),
        ]))
    }

    fn keeps_builds(&self) -> bool {
        self.keeps
    }
}

fn commits(n: usize) -> Vec<Commit> {
    (0..=n)
        .map(|i| Commit {
            hash: format!("{:040x}", 0xc0ffee_u64 * 1000 + i as u64),
            subject: format!("change {i}"),
            merge: false,
        })
        .collect()
}

fn request(set: &str) -> BisectRequest {
    BisectRequest {
        repo: PathBuf::from("/nowhere"),
        good: "good".into(),
        bad: "bad".into(),
        build: "make".into(),
        measure: "./bench".into(),
        metric: "ops".into(),
        unit: "ns".into(),
        better: Better::Lower,
        set: set.into(),
        options: BisectionOptions::default(),
        allow_dirty: false,
    }
}

fn fake(n: usize, step_at: usize, seed: u64) -> Fake {
    Fake {
        commits: commits(n),
        level: Box::new(move |i| if i >= step_at { 105.0 } else { 100.0 }),
        broken: BTreeSet::new(),
        no_metric: BTreeSet::new(),
        current: None,
        rng: Rng(seed),
        measured: 0,
        stop_after: None,
        per_round: 1,
        keeps: false,
        order: Vec::new(),
        builds: 0,
    }
}

fn bisect(
    store: &mut SqliteStore,
    set: &str,
    bench: &mut Fake,
    stop: &AtomicBool,
) -> anyhow::Result<BisectReport> {
    let plan = Plan {
        repo: None,
        commits: bench.commits.clone(),
    };
    let session = Session::open(store, request(set), plan)?;
    session.run(bench, &mut |_| {}, stop)
}

#[test]
fn finds_every_culprit_in_fewer_samples_than_measuring_every_commit() {
    let (_dir, mut store) = temp_store();
    let n = 32;
    let mut worst = 0;
    for step_at in 1..=n {
        let mut bench = fake(n, step_at, step_at as u64);
        let set = format!("b{step_at}");
        let report = bisect(&mut store, &set, &mut bench, &AtomicBool::new(false)).unwrap();
        assert_eq!(
            report.first_bad.hash, bench.commits[step_at].hash,
            "step at {step_at}: {:#?}",
            report.log
        );
        assert_eq!(report.parent.hash, bench.commits[step_at - 1].hash);
        assert!(report.confirmed, "step at {step_at}");
        assert_eq!(report.reference.verdict, kbench_stats::Verdict::Regression);
        assert!(report.change.change_pct.ci_low > 2.0 && report.change.change_pct.ci_high < 8.0);
        assert_eq!(report.samples, bench.measured);
        assert_eq!(report.measurements, bench.measured);
        assert_eq!(report.measurements_now, bench.measured);
        worst = worst.max(report.measurements);
        // Every sample is in the store under its commit's identifier.
        let data = store.load(&set).unwrap();
        let stored: usize = data
            .identifiers
            .iter()
            .map(|i| i.samples.values().map(Vec::len).sum::<usize>())
            .sum();
        assert_eq!(stored, report.samples);
    }
    let every = (n + 1) * BisectionOptions::default().initial_samples;
    println!("most samples over {n} culprit positions: {worst}; every commit once: {every}");
    assert!(worst < every, "{worst} >= {every}");
}

#[test]
fn commits_that_fail_to_build_are_skipped() {
    let (_dir, mut store) = temp_store();
    let mut bench = fake(16, 9, 3);
    bench.broken = [8, 3].into();
    let report = bisect(&mut store, "s", &mut bench, &AtomicBool::new(false)).unwrap();
    // 8 failed: the change is in 8 or 9, after 7.
    assert_eq!(report.parent.hash, bench.commits[7].hash);
    assert_eq!(report.first_bad.hash, bench.commits[9].hash);
    let candidates: Vec<&str> = report.candidates.iter().map(|c| c.hash.as_str()).collect();
    assert_eq!(
        candidates,
        [
            bench.commits[8].hash.as_str(),
            bench.commits[9].hash.as_str()
        ]
    );
    assert!(
        report
            .skipped
            .iter()
            .any(|s| s.reason.contains("fails to build"))
    );
    assert!(report.notes.iter().any(|n| n.contains("skipped")));
    // A commit whose output lacks the metric is skipped too.
    let mut bench = fake(16, 9, 4);
    bench.no_metric = [9].into();
    let report = bisect(&mut store, "t", &mut bench, &AtomicBool::new(false)).unwrap();
    assert_eq!(report.first_bad.hash, bench.commits[10].hash);
    assert_eq!(report.candidates.len(), 2);
}

#[test]
fn endpoints_that_do_not_differ_stop_with_the_comparison() {
    let (_dir, mut store) = temp_store();
    let mut bench = fake(8, 100, 5);
    let error = bisect(&mut store, "s", &mut bench, &AtomicBool::new(false))
        .unwrap_err()
        .to_string();
    assert!(error.contains("there is nothing to bisect"), "{error}");
    assert!(error.contains("% [95 % CI"), "{error}");
}

#[test]
fn broken_endpoints_are_errors() {
    let (_dir, mut store) = temp_store();
    let mut bench = fake(8, 4, 6);
    bench.broken = (0..=8).collect();
    let error = bisect(&mut store, "s", &mut bench, &AtomicBool::new(false))
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("good commit") && error.contains("fails to build"),
        "{error}"
    );
    let mut bench = fake(8, 4, 6);
    bench.no_metric = [8].into();
    let error = bisect(&mut store, "t", &mut bench, &AtomicBool::new(false))
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("bad commit")
            && error.contains("no metric 'ops'")
            && error.contains("other"),
        "{error}"
    );
}

#[test]
fn an_interrupted_bisection_continues_where_it_stopped() {
    let (_dir, mut store) = temp_store();
    // Straight through, for reference.
    let mut bench = fake(20, 13, 8);
    let straight = bisect(&mut store, "straight", &mut bench, &AtomicBool::new(false)).unwrap();
    // Stopped after 30 samples, then continued with the same noise stream.
    let stop = Arc::new(AtomicBool::new(false));
    let mut bench = fake(20, 13, 8);
    bench.stop_after = Some((30, stop.clone()));
    let error = bisect(&mut store, "resumed", &mut bench, &stop).unwrap_err();
    assert!(is_interrupted(&error), "{error}");
    assert_eq!(bench.measured, 30);
    bench.stop_after = None;
    let report = bisect(&mut store, "resumed", &mut bench, &AtomicBool::new(false)).unwrap();
    assert!(report.resumed);
    assert_eq!(report.first_bad.hash, straight.first_bad.hash);
    assert_eq!(report.samples, straight.samples);
    assert_eq!(report.measurements_now, straight.measurements - 30);
    assert_eq!(report.log.len(), straight.log.len());
    // Once finished, a rerun measures nothing and says the same.
    let again = bisect(&mut store, "resumed", &mut bench, &AtomicBool::new(false)).unwrap();
    assert_eq!(again.measurements_now, 0);
    assert_eq!(again.builds_now, 0);
    assert_eq!(again.first_bad, report.first_bad);
    // Another request cannot take over the state.
    let mut other = fake(20, 13, 8);
    other.commits = commits(21);
    let error = bisect(&mut store, "resumed", &mut other, &AtomicBool::new(false))
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("holds samples of another bisection"),
        "{error}"
    );
}

#[test]
fn a_request_that_stored_nothing_makes_way() {
    let (_dir, mut store) = temp_store();
    let mut bench = fake(8, 4, 6);
    bench.broken = (0..=8).collect();
    assert!(bisect(&mut store, "s", &mut bench, &AtomicBool::new(false)).is_err());
    // The build is fixed: another request, same result set.
    let mut fixed = fake(8, 4, 6);
    fixed.commits = commits(8);
    let plan = Plan {
        repo: None,
        commits: fixed.commits.clone(),
    };
    let mut request = request("s");
    request.build = "make fixed".into();
    let report = Session::open(&mut store, request, plan)
        .unwrap()
        .run(&mut fixed, &mut |_| {}, &AtomicBool::new(false))
        .unwrap();
    assert!(!report.resumed);
    assert_eq!(report.first_bad.hash, fixed.commits[4].hash);
}

#[test]
fn rounds_of_samples_count_as_one_measurement_each() {
    let (_dir, mut store) = temp_store();
    let mut bench = fake(16, 11, 12);
    bench.per_round = 4;
    let report = bisect(&mut store, "s", &mut bench, &AtomicBool::new(false)).unwrap();
    assert_eq!(report.first_bad.hash, bench.commits[11].hash);
    assert_eq!(report.samples, 4 * report.measurements);
    assert_eq!(report.measurements, bench.measured);
    // Stored as rounds: a rerun reads them back as the same measurements.
    let again = bisect(&mut store, "s", &mut bench, &AtomicBool::new(false)).unwrap();
    assert_eq!(again.measurements_now, 0);
    assert_eq!(again.first_bad, report.first_bad);
}

#[test]
fn endpoints_are_interleaved_when_builds_are_kept() {
    let (_dir, mut store) = temp_store();
    let mut blocks = fake(16, 7, 13);
    let report = bisect(&mut store, "blocks", &mut blocks, &AtomicBool::new(false)).unwrap();
    assert_eq!(&blocks.order[..12], &[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 16, 16]);
    let mut kept = fake(16, 7, 13);
    kept.keeps = true;
    let interleaved = bisect(&mut store, "kept", &mut kept, &AtomicBool::new(false)).unwrap();
    assert_eq!(&kept.order[..6], &[0, 16, 0, 16, 0, 16]);
    assert_eq!(interleaved.first_bad.hash, report.first_bad.hash);
    // The confirmation alternates parent and culprit too.
    let tail: Vec<usize> = kept.order[kept.order.len() - 4..].to_vec();
    assert_eq!(tail, [6, 7, 6, 7]);
    // Re-selecting a kept build is not counted as a build.
    assert!(
        interleaved.builds_now < kept.builds,
        "{} {}",
        interleaved.builds_now,
        kept.builds
    );
}

#[test]
fn an_improvement_is_bisected_too() {
    let (_dir, mut store) = temp_store();
    let mut bench = fake(12, 5, 9);
    bench.level = Box::new(|i| if i >= 5 { 95.0 } else { 100.0 });
    let report = bisect(&mut store, "s", &mut bench, &AtomicBool::new(false)).unwrap();
    assert_eq!(report.reference.verdict, kbench_stats::Verdict::Improvement);
    assert_eq!(report.first_bad.hash, bench.commits[5].hash);
    assert!(report.confirmed);
}
