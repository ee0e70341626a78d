//! The driver on a fake workbench with a known answer: a metric that steps
//! at one commit, with seeded noise and slow spells of the whole machine;
//! builds that fail where told; a stop flag raised after a given number of
//! samples (a killed run).

use super::order::{SplitMix64, block_order};
use super::*;
use kbench_model::Sample;
use kbench_store::testing::temp_store;
use kbench_store::{Bisects, SqliteStore};
use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;
use std::sync::Arc;

/// Box-Muller normals from SplitMix64.
struct Rng(SplitMix64);

impl Rng {
    fn uniform(&mut self) -> f64 {
        ((self.0.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    fn normal(&mut self) -> f64 {
        let (u, v) = (self.uniform(), self.uniform());
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }
}

/// Commit `i` measures `level(i)` with 1 % noise, 14 % slower while the
/// machine is in a slow spell.
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
    /// Measurement numbers (from 0) that run in the slow mode.
    spells: Vec<Range<usize>>,
    /// The commit of every measurement, in order; builds run.
    order: Vec<usize>,
    builds: usize,
    built: BTreeSet<usize>,
    /// Commit -> how many of its first measurements read at good's level
    /// (a search misled at that commit).
    misread: BTreeMap<usize, usize>,
    /// Every sample it gave, in order.
    given: Vec<Sample>,
}

impl Fake {
    /// The machine's speed factor for the next measurement.
    fn mode(&self) -> f64 {
        if self.spells.iter().any(|s| s.contains(&self.measured)) {
            1.14
        } else {
            1.0
        }
    }
}

impl Workbench for Fake {
    fn build(
        &mut self,
        commit: &Commit,
        _: &mut dyn FnMut(Progress<'_>),
    ) -> Result<Result<(), String>> {
        let index = self.commits.iter().position(|c| c == commit).unwrap();
        self.current = Some(index);
        if self.built.contains(&index) {
            return Ok(Ok(()));
        }
        self.builds += 1;
        Ok(if self.broken.contains(&index) {
            Err("error: expected ';'".to_string())
        } else {
            self.built.insert(index);
            Ok(())
        })
    }

    fn measure(&mut self, round: u32) -> Result<Result<Vec<Sample>, MeasureError>> {
        let index = self.current.unwrap();
        if self.no_metric.contains(&index) {
            return Ok(Err(MeasureError::MissingMetric {
                metric: "ops".into(),
                found: vec!["other".into()],
            }));
        }
        let taken = self.order.iter().filter(|&&i| i == index).count();
        let misread = self.misread.get(&index).is_some_and(|&n| taken < n);
        let level = (self.level)(if misread { 0 } else { index }) * self.mode();
        self.measured += 1;
        self.order.push(index);
        if let Some((after, stop)) = &self.stop_after
            && self.measured >= *after
        {
            stop.store(true, Ordering::SeqCst);
        }
        let values = if self.per_round > 1 {
            // A round shares its state: 1 % between rounds, 0.2 % within.
            let shared = level * (1.0 + 0.01 * self.rng.normal());
            (0..self.per_round)
                .map(|_| shared * (1.0 + 0.002 * self.rng.normal()))
                .collect()
        } else {
            vec![level * (1.0 + 0.01 * self.rng.normal())]
        };
        let samples: Vec<Sample> = values
            .into_iter()
            .enumerate()
            .map(|(i, value)| Sample {
                value,
                iterations: ITERATIONS,
                at_ms: measured_at(self.measured, i),
                round,
            })
            .collect();
        self.given.extend(&samples);
        Ok(Ok(samples))
    }

    fn has_build(&self, commit: &Commit) -> bool {
        let index = self.commits.iter().position(|c| c == commit).unwrap();
        self.built.contains(&index)
    }

    fn measurement(&self) -> String {
        "one fake measurement".to_string()
    }
}

/// The fake's iterations per sample.
const ITERATIONS: u64 = 4096;

/// When the fake took sample `i` of its measurement number `measured`
/// (from 1): a time no two samples share, in the order taken.
fn measured_at(measured: usize, i: usize) -> i64 {
    1_700_000_000_000 + 1000 * measured as i64 + i as i64
}

/// Commit i's hash: its first 12 digits tell it apart.
fn hash(i: usize) -> String {
    format!("{:012x}{}", 0xc0ffee_u64 * 1000 + i as u64, "0".repeat(28))
}

fn commits(n: usize) -> Vec<Commit> {
    (0..=n)
        .map(|i| Commit {
            hash: hash(i),
            subject: format!("change {i}"),
            parents: if i == 0 { vec![] } else { vec![hash(i - 1)] },
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
        better: Direction::Lower,
        set: set.into(),
        options: BisectionOptions::default(),
        allow_dirty: false,
        seed: Some(7),
        rebuild: false,
    }
}

fn fake(n: usize, step_at: usize, seed: u64) -> Fake {
    Fake {
        commits: commits(n),
        level: Box::new(move |i| if i >= step_at { 105.0 } else { 100.0 }),
        broken: BTreeSet::new(),
        no_metric: BTreeSet::new(),
        current: None,
        rng: Rng(SplitMix64(seed)),
        measured: 0,
        stop_after: None,
        per_round: 1,
        spells: Vec::new(),
        order: Vec::new(),
        builds: 0,
        built: BTreeSet::new(),
        misread: BTreeMap::new(),
        given: Vec::new(),
    }
}

fn bisect(
    store: &mut SqliteStore,
    set: &str,
    bench: &mut Fake,
    stop: &AtomicBool,
) -> Result<BisectReport> {
    let plan = Plan::of(None, bench.commits.clone());
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
        let change = report.change.change_pct;
        assert!(
            change.ci_low > 1.0 && (3.0..7.0).contains(&change.point),
            "{change:?}"
        );
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
    let every = BisectionOptions::default().initial_blocks * (2 + 3 * (n - 1));
    println!("most samples over {n} culprit positions: {worst}; every commit in blocks: {every}");
    assert!(worst < every, "{worst} >= {every}");
}

#[test]
fn the_search_reports_each_commit_it_tests() {
    let (_dir, mut store) = temp_store();
    let mut bench = fake(32, 10, 3);
    let plan = Plan::of(None, bench.commits.clone());
    let session = Session::open(&mut store, request("p"), plan).unwrap();
    let mut testing = Vec::new();
    let stop = AtomicBool::new(false);
    let observe = &mut |p: Progress<'_>| {
        if let Progress::Testing {
            commit,
            tested,
            left,
        } = p
        {
            testing.push((commit.to_string(), tested, left));
        }
    };
    let report = session.run(&mut bench, observe, &stop).unwrap();
    // 30 commits between the endpoints: 5 halvings.
    assert_eq!(testing.len(), 5, "{testing:?}");
    let tested: Vec<usize> = testing.iter().map(|t| t.1).collect();
    assert_eq!(tested, [2, 3, 4, 5, 6], "the endpoints first");
    assert_eq!(testing[0].2, 5);
    assert_eq!(testing.last().unwrap().2, 1);
    assert!(testing.iter().any(|t| t.0 == report.first_bad.identifier));
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

/// A commit half-way between good and bad stays unknown however many
/// blocks: at the cap the bisection stops and names the range left
/// instead of calling it by the estimate.
#[test]
fn a_step_undecided_at_the_cap_stops_and_names_the_range_left() {
    let (_dir, mut store) = temp_store();
    let mut bench = fake(16, 9, 8);
    bench.level = Box::new(|i| match i {
        0..10 => 100.0,
        10 => 102.5,
        _ => 105.0,
    });
    let plan = Plan::of(None, bench.commits.clone());
    let mut request = request("s");
    request.options.max_blocks = 16;
    let session = Session::open(&mut store, request, plan).unwrap();
    let error = session
        .run(&mut bench, &mut |_| {}, &AtomicBool::new(false))
        .err()
        .unwrap()
        .to_string();
    assert!(
        error.contains("could not tell whether") && error.contains("within --max-blocks 16"),
        "{error}"
    );
    assert!(error.contains("kbench does not guess"), "{error}");
    // 8 like-good and 12 like-bad had narrowed it to 9 ..= 12 when 10
    // would not decide.
    let range = format!(
        "the 4 commits from {} to {} (git log {}..{})",
        bench.commits[9].short(),
        bench.commits[12].short(),
        bench.commits[8].short(),
        bench.commits[12].short()
    );
    assert!(error.contains(&range), "{error}");
    let state: serde_json::Value =
        serde_json::from_str(&store.load_bisect("s").unwrap().unwrap()).unwrap();
    let last = state["log"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["event"], "undecided at the cap of 16 blocks", "{last}");
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
    assert!(error.is_interrupted(), "{error}");
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
    let plan = Plan::of(None, fixed.commits.clone());
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
    // Stored as the workbench measured them (not as one iteration taken
    // when stored), each measurement the next round of its commit.
    let data = store.load("s").unwrap();
    let mut stored: Vec<Sample> = data
        .identifiers
        .iter()
        .flat_map(|i| i.samples.values().flatten().copied())
        .collect();
    stored.sort_by_key(|s| s.at_ms);
    assert_eq!(stored, bench.given);
    assert!(stored.iter().all(|s| s.iterations == ITERATIONS));
    for identifier in &data.identifiers {
        let rounds: BTreeSet<u32> = identifier
            .samples
            .values()
            .flatten()
            .map(|s| s.round)
            .collect();
        assert_eq!(
            rounds,
            (0..rounds.len() as u32).collect(),
            "{}",
            identifier.name
        );
    }
    // Stored as rounds: a rerun reads them back as the same measurements.
    let again = bisect(&mut store, "s", &mut bench, &AtomicBool::new(false)).unwrap();
    assert_eq!(again.measurements_now, 0);
    assert_eq!(again.first_bad, report.first_bad);
}

#[test]
fn every_decision_is_made_on_blocks_in_seeded_orders() {
    let (_dir, mut store) = temp_store();
    let mut bench = fake(16, 7, 13);
    let report = bisect(&mut store, "blocks", &mut bench, &AtomicBool::new(false)).unwrap();
    assert_eq!(report.first_bad.hash, bench.commits[7].hash);
    let initial = BisectionOptions::default().initial_blocks;
    // The endpoints: blocks of good and bad, in the seed's orders.
    let order = |block: usize, members: &[usize]| -> Vec<usize> {
        block_order(report.seed, block as u64, members.len())
            .into_iter()
            .map(|i| members[i])
            .collect()
    };
    let mut at = 0;
    let mut block = 0;
    for _ in 0..initial {
        assert_eq!(bench.order[at..at + 2], order(block, &[0, 16])[..]);
        (at, block) = (at + 2, block + 1);
    }
    // Then the first commit searched, 8, in blocks with both endpoints.
    for _ in 0..initial {
        assert_eq!(bench.order[at..at + 3], order(block, &[0, 16, 8])[..]);
        (at, block) = (at + 3, block + 1);
    }
    // The confirmation: blocks of the parent and the culprit, at the end.
    let tail = &bench.order[bench.order.len() - 2 * initial..];
    assert!(
        tail.chunks(2).all(|b| b.contains(&6) && b.contains(&7)),
        "{tail:?}"
    );
    // Every measurement belongs to one block: 2 per endpoint or
    // confirmation block, 3 per search block.
    let mut most: std::collections::BTreeMap<(String, String), usize> = Default::default();
    for entry in &report.log {
        let key = (entry.phase.to_string(), entry.commit.clone());
        let blocks = most.entry(key).or_default();
        *blocks = (*blocks).max(entry.blocks.unwrap());
    }
    let (mut measurements, mut blocks) = (0, 0);
    for ((phase, _), n) in &most {
        measurements += n * if phase == "search" { 3 } else { 2 };
        blocks += n;
    }
    assert_eq!(measurements, bench.order.len());
    assert_eq!(blocks, report.blocks);
    assert_eq!(report.reference.analysis, kbench_stats::bisection::ANALYSIS);
    assert_eq!(report.reference.blocks, initial);
    // Every commit is built once: the workbench keeps the builds.
    assert_eq!(report.builds_now, bench.builds);
    assert_eq!(bench.builds, report.commits_measured);
}

#[test]
fn a_3_pct_step_is_found_through_slow_spells_of_the_machine() {
    let (_dir, mut store) = temp_store();
    for seed in 0..6 {
        let mut bench = fake(32, 21, 100 + seed);
        bench.level = Box::new(|i| if i >= 21 { 103.0 } else { 100.0 });
        // Spells of +14 % that cover 30 to 60 measurements, starting
        // anywhere, block boundaries or not.
        let start = 7 * seed as usize;
        bench.spells = vec![
            start + 5..start + 45,
            start + 101..start + 160,
            start + 230..start + 262,
            start + 340..start + 371,
        ];
        let report = bisect(
            &mut store,
            &format!("s{seed}"),
            &mut bench,
            &AtomicBool::new(false),
        )
        .unwrap();
        assert_eq!(
            report.first_bad.hash, bench.commits[21].hash,
            "seed {seed}: {:#?}",
            report.log
        );
        assert!(report.confirmed, "seed {seed}: {:#?}", report.log);
        let change = report.change.change_pct;
        assert!(
            change.ci_low > 1.0 && (1.5..4.5).contains(&change.point),
            "{change:?}"
        );
    }
}

/// The culprit's first blocks read like good (a search misled): the
/// search ends a commit late, the confirmation fails, and the recheck of
/// the parent (the real culprit) turns the bracket back.
#[test]
fn a_search_misled_at_the_culprit_is_mended_by_a_recheck() {
    let (_dir, mut store) = temp_store();
    let mut bench = fake(32, 21, 11);
    bench.misread = BTreeMap::from([(21, BisectionOptions::default().initial_blocks)]);
    let report = bisect(&mut store, "s", &mut bench, &AtomicBool::new(false)).unwrap();
    let line = |e: &LogEntry| e.line();
    let log: Vec<String> = report.log.iter().map(line).collect();
    assert_eq!(report.first_bad.hash, bench.commits[21].hash, "{log:#?}");
    assert_eq!(report.parent.hash, bench.commits[20].hash, "{log:#?}");
    assert!(report.confirmed, "{log:#?}");
    assert!(
        log.iter().any(|l| l.contains("NOT confirmed"))
            && log.iter().any(|l| l.contains("recheck")),
        "{log:#?}"
    );
    assert!(report.notes.iter().any(|n| n.contains("measured again")));
    // The same bisection on a machine that does not mislead it needs no
    // recheck.
    let mut honest = fake(32, 21, 11);
    let report = bisect(&mut store, "t", &mut honest, &AtomicBool::new(false)).unwrap();
    assert!(report.log.iter().all(|e| e.phase != Phase::Recheck));
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

#[test]
fn a_state_of_the_unblocked_bisection_is_not_continued() {
    let (_dir, mut store) = temp_store();
    let old = r#"{"schema": "kbench.bisect-state/1", "fingerprint": {}, "worktree": null,
                  "skipped": {}, "confirm_from": {}, "log": [], "finished": false}"#;
    // Nothing stored under it: a new bisection takes the result set over.
    store.save_bisect("fresh", old).unwrap();
    let mut bench = fake(8, 4, 6);
    let report = bisect(&mut store, "fresh", &mut bench, &AtomicBool::new(false)).unwrap();
    assert!(!report.resumed);
    assert_eq!(report.first_bad.hash, bench.commits[4].hash);
    // Its samples stored: refused, saying why and what to do.
    store.save_bisect("fresh", old).unwrap();
    let error = bisect(
        &mut store,
        "fresh",
        &mut fake(8, 4, 6),
        &AtomicBool::new(false),
    )
    .unwrap_err()
    .to_string();
    assert!(
        error.contains("kbench.bisect-state/1") && error.contains("its own --into"),
        "{error}"
    );
}
