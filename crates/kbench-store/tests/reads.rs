//! Reading a part of a result set ([`Results::load_part`]) on SQLite and on
//! PostgreSQL (when `KBENCH_TEST_POSTGRES_URL` is set): what it reads is
//! exactly what `load` has of it, and what it leaves out is left out.

#[macro_use]
mod common;

use common::{TestDb, info, outcome, sample, spec};
use kbench_model::Direction;
use kbench_store::{Database, ResultSetData, RunStatus, SetPart, TestOutcomeKind};

on_both_backends!(
    a_part_is_the_whole_set_cut_down,
    a_metric_filter_keeps_its_tests
);

/// Set "s": identifiers a, b, c, d (b with two runs), each with samples of
/// tests "lat", "lat:cycles" and "bw" and an outcome.
fn filled(store: &mut dyn Database) -> ResultSetData {
    let specs = [
        spec("lat", "ns", Direction::Lower),
        spec("lat:cycles", "cycles", Direction::Lower),
        spec("bw", "MB/s", Direction::Higher),
    ];
    let mut at = 1000;
    for (n, name) in ["a", "b", "c", "b", "d"].iter().enumerate() {
        let run = store.begin_run("s", name, &info(name, at)).unwrap();
        for (t, test_spec) in specs.iter().enumerate() {
            let test = store.test_id("s", test_spec).unwrap();
            for i in 0..3 {
                at += 1;
                let value = 10.0 * (n as f64 + 1.0) + t as f64 + i as f64;
                store
                    .add_sample(run, test, &sample(value, at, n as u32))
                    .unwrap();
            }
            store
                .end_test(run, test, &outcome(test_spec, TestOutcomeKind::TargetMet))
                .unwrap();
        }
        store.end_run(run, RunStatus::Complete, None).unwrap();
    }
    store.load("s").unwrap()
}

fn a_part_is_the_whole_set_cut_down(db: &TestDb) {
    let mut store = db.open();
    let whole = filled(store.as_mut());
    let part = SetPart {
        identifiers: Some(vec!["c".into(), "b".into(), "nosuch".into()]),
        first: true,
        metric_filter: None,
    };
    let read = store.load_part("s", &part).unwrap();
    let mut expected = whole.clone();
    for identifier in &mut expected.identifiers {
        if identifier.name == "d" {
            identifier.runs.clear();
            identifier.samples.clear();
            identifier.sample_runs.clear();
        }
    }
    assert_eq!(read, expected);
    assert_eq!(store.load_part("s", &SetPart::all()).unwrap(), whole);
    // Without the first: a alone is listed, not read.
    let only_d = SetPart {
        identifiers: Some(vec!["d".into()]),
        ..SetPart::all()
    };
    let read = store.load_part("s", &only_d).unwrap();
    let sizes: Vec<(&str, usize, usize)> = read
        .identifiers
        .iter()
        .map(|i| (i.name.as_str(), i.runs.len(), i.sample_count()))
        .collect();
    assert_eq!(sizes, [("a", 0, 0), ("b", 0, 0), ("c", 0, 0), ("d", 1, 9)]);
}

fn a_metric_filter_keeps_its_tests(db: &TestDb) {
    let mut store = db.open();
    let whole = filled(store.as_mut());
    let part = SetPart {
        metric_filter: Some("lat".into()),
        ..SetPart::all()
    };
    let read = store.load_part("s", &part).unwrap();
    let mut expected = whole.clone();
    expected.tests.retain(|t| t.key.benchmark == "lat");
    for identifier in &mut expected.identifiers {
        identifier.samples.retain(|k, _| k.benchmark == "lat");
        identifier.sample_runs.retain(|k, _| k.benchmark == "lat");
    }
    assert_eq!(read.tests.len(), 2);
    assert_eq!(read, expected);
}
