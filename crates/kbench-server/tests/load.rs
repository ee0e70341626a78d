//! Load: 8 pushers at once against a server on PostgreSQL for
//! `KBENCH_LOAD_SECONDS` (default 60), each pushing documents under push
//! ids of its own, retrying on connection errors and 503 with the same id,
//! and re-sending every 10th push on purpose (a client's retry after a lost
//! answer). At the end the store holds exactly distinct pushes × samples
//! per push: no sample lost, none stored twice. Prints pushes/s and
//! samples/s (`cargo test --release -p kbench-server --test load --
//! --nocapture` under `bash .ci/postgres.sh`).

mod common;

use common::{Lab, Tally, pusher, set_samples};
use kbench_store::Location;
use kbench_store::testing::{ThrowawayDatabase, postgres_server};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

const PUSHERS: usize = 8;
const SAMPLES_PER_PUSH: usize = 100;
const RESEND_EVERY: u64 = 10;

fn load_duration() -> Duration {
    let seconds = std::env::var("KBENCH_LOAD_SECONDS").map_or(60.0, |text| {
        text.parse::<f64>()
            .unwrap_or_else(|e| panic!("KBENCH_LOAD_SECONDS={text:?}: {e}; give seconds"))
    });
    Duration::from_secs_f64(seconds)
}

#[test]
fn concurrent_pushers_store_every_sample_exactly_once() {
    let Some(server) = postgres_server() else {
        eprintln!(
            "SKIPPED tests/load.rs: the load test runs on PostgreSQL only; \
             run it with: bash .ci/postgres.sh cargo test --release -p kbench-server --test load -- --nocapture"
        );
        return;
    };
    let db = ThrowawayDatabase::create(&server, "load");
    let lab = Lab::start(
        Location::parse(&db.url).unwrap(),
        kbench_server::DEFAULT_MAX_BODY,
    );
    let duration = load_duration();
    let stop = AtomicBool::new(false);
    let started = Instant::now();
    let tally = std::thread::scope(|scope| {
        let pushers: Vec<_> = (0..PUSHERS)
            .map(|n| {
                let (lab, stop) = (&lab, &stop);
                scope.spawn(move || {
                    pusher(
                        &lab.addr,
                        &lab.token,
                        "load",
                        &format!("p{n}"),
                        SAMPLES_PER_PUSH,
                        RESEND_EVERY,
                        || stop.load(Ordering::Relaxed),
                    )
                })
            })
            .collect();
        std::thread::sleep(duration);
        stop.store(true, Ordering::Relaxed);
        let mut tally = Tally::default();
        for pusher in pushers {
            tally.add(pusher.join().unwrap());
        }
        tally
    });
    let elapsed = started.elapsed().as_secs_f64();
    let stored = set_samples(lab.store().as_mut(), "load");
    let expected = tally.pushes * SAMPLES_PER_PUSH as u64;
    eprintln!(
        "load: {PUSHERS} pushers for {elapsed:.1} s on PostgreSQL: {} pushes of {SAMPLES_PER_PUSH} \
         samples ({:.0} pushes/s, {:.0} samples/s), {} re-sent on purpose (answered \"already \
         stored\"), {} answers 503, {} connection errors; {stored} samples stored, {expected} expected",
        tally.pushes,
        tally.pushes as f64 / elapsed,
        expected as f64 / elapsed,
        tally.resent,
        tally.unavailable,
        tally.disconnected,
    );
    assert!(tally.pushes >= PUSHERS as u64, "{tally:?}");
    assert!(
        tally.resent > 0 || duration < Duration::from_secs(5),
        "{tally:?}"
    );
    assert_eq!(
        stored, expected,
        "no sample lost, none duplicated: {tally:?}"
    );
    let identifiers = lab.store().load("load").unwrap().identifiers.len() as u64;
    assert_eq!(identifiers, tally.pushes, "one identifier per push");
}
