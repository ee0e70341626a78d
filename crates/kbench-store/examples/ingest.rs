//! How fast samples go into the store, for the README's figures:
//!
//!     cargo run --release -p kbench-store --example ingest [N] [DIR | postgres://URL]
//!
//! `add_sample` with each sample committed on its own, as `kbench run`
//! stores them: N samples (default 20,000), five times, each time into a
//! fresh SQLite database in DIR (default: the temp directory; ext4 and
//! tmpfs differ), or into the PostgreSQL database at URL (result sets
//! `ingest-*` are added to it). Prints the median, least and greatest rate,
//! then `import` of 20 x N samples in one transaction (multi-row INSERTs),
//! `load` of them back, and `append_live` of 20 x N samples in batches of
//! 1,000 (as `kbench serve` stores a live upload).

use kbench_model::{Direction, Sample, TestKey, TestSpec, now_ms};
use kbench_store::{
    Database, IdentifierData, LiveBatch, LiveSamples, Location, ResultSetData, RunInfo, RunRecord,
    RunStatus,
};
use std::path::PathBuf;
use std::time::Instant;

const RUNS: usize = 5;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let count: usize = args.next().map_or(Ok(20_000), |n| n.parse())?;
    let place = args.next();
    let postgres = place
        .as_deref()
        .map(Location::parse)
        .transpose()?
        .filter(|location| matches!(location, Location::Postgres(_)));
    let dir = match &postgres {
        Some(_) => None,
        None => {
            let parent = place.map_or_else(std::env::temp_dir, PathBuf::from);
            let dir = tempfile::Builder::new()
                .prefix("kbench-ingest-")
                .tempdir_in(&parent)
                .map_err(|e| format!("{} is not a writable directory: {e}", parent.display()))?;
            Some(dir)
        }
    };
    // A fresh database per measurement for SQLite; the one given otherwise.
    let open = |n: usize| -> kbench_store::Result<Box<dyn Database>> {
        match (&postgres, &dir) {
            (Some(location), _) => location.open(),
            (None, Some(dir)) => Location::Sqlite(dir.path().join(format!("ingest-{n}.db"))).open(),
            (None, None) => unreachable!("a directory or a URL"),
        }
    };
    let tag = now_ms();
    let spec = TestSpec {
        key: TestKey::new("ingest"),
        unit: "ns".into(),
        direction: Direction::Lower,
    };
    let sample = |i: usize| Sample {
        value: 100.0 + (i % 13) as f64,
        iterations: 1000,
        at_ms: tag + i as i64,
        round: 0,
    };
    let info = RunInfo {
        started_at_ms: tag,
        ..RunInfo::default()
    };
    let live_info = info.clone();

    let mut rates = Vec::new();
    for n in 0..RUNS {
        let mut store = open(n)?;
        let set = format!("ingest-{tag}-{n}");
        let run = store.begin_run(&set, "a", &info)?;
        let test = store.test_id(&set, &spec)?;
        let started = Instant::now();
        for i in 0..count {
            store.add_sample(run, test, &sample(i))?;
        }
        rates.push(count as f64 / started.elapsed().as_secs_f64());
    }
    rates.sort_by(f64::total_cmp);
    let shown = match (&postgres, &dir) {
        (Some(location), _) => location.to_string(),
        (None, Some(dir)) => dir.path().display().to_string(),
        (None, None) => unreachable!(),
    };
    println!(
        "add_sample, each committed: median {:.0} samples/s (min {:.0}, max {:.0}) over {RUNS} runs of {count} in {shown}",
        rates[RUNS / 2],
        rates[0],
        rates[RUNS - 1]
    );

    let bulk = 20 * count;
    let data = ResultSetData {
        name: format!("ingest-import-{tag}"),
        title: None,
        description: None,
        tests: vec![spec.clone()],
        identifiers: vec![IdentifierData {
            sample_runs: Default::default(),
            name: "imported".into(),
            factors: Default::default(),
            runs: vec![RunRecord {
                id: kbench_store::RunId(0),
                status: RunStatus::Complete,
                info,
                ended_at_ms: None,
                outcomes: vec![],
            }],
            samples: [(spec.key.clone(), (0..bulk).map(sample).collect())].into(),
        }],
    };
    let mut store = open(RUNS)?;
    let started = Instant::now();
    store.import(&data)?;
    let seconds = started.elapsed().as_secs_f64();
    println!(
        "import, one transaction: {bulk} samples in {seconds:.2} s = {:.0} samples/s",
        bulk as f64 / seconds
    );
    let started = Instant::now();
    let loaded = store.load(&data.name)?;
    let seconds = started.elapsed().as_secs_f64();
    let read: usize = loaded.identifiers[0].samples.values().map(Vec::len).sum();
    println!(
        "load: {read} samples in {seconds:.2} s = {:.0} samples/s",
        read as f64 / seconds
    );

    const LIVE_BATCH: usize = 1000;
    let uid = format!("ingest-{tag}");
    let started = Instant::now();
    for first in (0..bulk).step_by(LIVE_BATCH) {
        let batch = LiveBatch {
            identifier: "live".into(),
            run_uid: uid.clone(),
            info: live_info.clone(),
            status: RunStatus::Running,
            ended_at_ms: None,
            steal_percent: None,
            tests: vec![spec.clone()],
            samples: vec![LiveSamples {
                test: spec.key.clone(),
                first: first as u64,
                samples: (first..bulk.min(first + LIVE_BATCH)).map(sample).collect(),
            }],
            outcomes: vec![],
            lease: None,
        };
        store.append_live(&format!("ingest-live-{tag}"), &batch, "ingest")?;
    }
    let seconds = started.elapsed().as_secs_f64();
    println!(
        "append_live, batches of {LIVE_BATCH}: {bulk} samples in {seconds:.2} s = {:.0} samples/s",
        bulk as f64 / seconds
    );
    Ok(())
}
