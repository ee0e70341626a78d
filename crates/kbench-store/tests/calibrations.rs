//! Host calibrations (`Calibrations`, schema version 11) on SQLite and on
//! PostgreSQL: stored whole or not at all, read back exactly and newest
//! first, and stored in a database made by an older kbench once upgraded.

#[macro_use]
mod common;

use common::{SCHEMA_VERSION, TestDb, UNDO_V11, UNDO_V12, info, sample, spec};
use kbench_model::{CalibratedUnit, Calibration, Direction, Hardware, TestDrift, TestKey};
use kbench_store::{RunStatus, StoreError};

on_both_backends!(
    calibrations_read_back_exactly_newest_first,
    an_invalid_calibration_stores_nothing,
    a_calibration_the_database_refuses_halfway_stores_nothing,
    version_10_databases_are_upgraded_and_store_calibrations,
);

/// A calibration of `unit` finished at `at_ms`, with `tests` (name, SD, df).
fn calibration(unit: CalibratedUnit, at_ms: i64, tests: &[(&str, f64, f64)]) -> Calibration {
    Calibration {
        hardware: Hardware {
            cpu_model: "AMD EPYC 7B13".into(),
            memory_gib: 24,
            machine_id: "5e1f0c2a".into(),
        },
        unit,
        at_ms,
        pairs: 6,
        kernel_release: "6.12.0-31-cloud-amd64".into(),
        tests: tests
            .iter()
            .map(|&(test, sd, df)| TestDrift {
                test: TestKey::parse(test).unwrap(),
                sd,
                df,
            })
            .collect(),
    }
}

/// What makes a valid calibration invalid.
type Spoil = fn(&mut Calibration);

/// Rows of both calibration tables, as `(calibrations, drifts)`.
fn stored_rows(db: &TestDb) -> (i64, i64) {
    (
        db.count("SELECT COUNT(*) FROM calibrations"),
        db.count("SELECT COUNT(*) FROM calibration_drifts"),
    )
}

/// Every field comes back as written, floats to the bit and tests in
/// their order (not sorted); newest first, and of two finished in the same
/// millisecond, the one stored last first; the same after reopening.
fn calibrations_read_back_exactly_newest_first(db: &TestDb) {
    let mut store = db.open();
    assert_eq!(store.calibrations().unwrap(), vec![]);
    let older = calibration(
        CalibratedUnit::Run,
        1_700_000_000_000,
        &[
            ("syscall-null", 0.1 + 0.2, 5.0),
            ("pipe-lat[placement=cross]:p99", 0.0, 5.0),
            ("futex1[mode=thread,tasks=2]:per_task", 1e-300, 4.5),
        ],
    );
    let mut newer = calibration(
        CalibratedUnit::Boot,
        1_700_000_500_000,
        &[("a", 0.035, 2.0)],
    );
    newer.hardware = Hardware {
        cpu_model: "Intel(R) Xeon(R) Platinum 8481C CPU @ 2.70GHz".into(),
        memory_gib: u64::from(u32::MAX) + 7,
        machine_id: String::new(),
    };
    newer.pairs = 3;
    newer.kernel_release = String::new();
    let mut same_time = newer.clone();
    same_time.unit = CalibratedUnit::Run;
    same_time.tests[0].sd = 0.5;

    let ids = [&older, &newer, &same_time].map(|c| store.record_calibration(c).unwrap());
    assert!(ids[0] < ids[1] && ids[1] < ids[2], "{ids:?}");
    let expected = vec![same_time, newer, older];
    assert_eq!(store.calibrations().unwrap(), expected);
    assert_eq!(stored_rows(db), (3, 5));
    drop(store);
    assert_eq!(db.open().calibrations().unwrap(), expected);
}

/// What the store refuses is `Invalid`, says what and which calibration
/// and that nothing was stored; and nothing is: not its row, not the
/// drifts of its valid tests.
fn an_invalid_calibration_stores_nothing(db: &TestDb) {
    let mut store = db.open();
    let kept = calibration(CalibratedUnit::Run, 1, &[("a", 0.03, 5.0)]);
    store.record_calibration(&kept).unwrap();
    let before = stored_rows(db);
    assert_eq!(before, (1, 1));

    let good = calibration(
        CalibratedUnit::Boot,
        2,
        &[("a", 0.03, 5.0), ("b", 0.02, 5.0)],
    );
    let bad: [(Spoil, &str); 6] = [
        (|c| c.tests[1].sd = f64::NAN, "the SD of test b is NaN"),
        (|c| c.tests[1].sd = -0.5, "the SD of test b is -0.5"),
        (
            |c| c.tests[0].df = 0.0,
            "degrees of freedom of test a are 0",
        ),
        (|c| c.pairs = 1, "at least 2"),
        (|c| c.tests.clear(), "no test"),
        (
            |c| c.hardware.cpu_model = String::new(),
            "CPU model is empty",
        ),
    ];
    for (change, says) in bad {
        let mut wrong = good.clone();
        change(&mut wrong);
        let err = store.record_calibration(&wrong).unwrap_err();
        let text = err.to_string();
        assert!(matches!(err, StoreError::Invalid(_)), "{err:?}");
        assert!(text.contains(says), "{text}");
        assert!(text.contains("the boot calibration of"), "{text}");
        assert!(text.ends_with("nothing was stored"), "{text}");
        assert_eq!(stored_rows(db), before, "{says}: rows were stored");
    }
    assert_eq!(store.calibrations().unwrap(), vec![kept]);
}

/// A drift the database itself refuses, after the calibration's row and
/// its first drift were written, takes them back with it: one transaction.
fn a_calibration_the_database_refuses_halfway_stores_nothing(db: &TestDb) {
    let mut store = db.open();
    db.raw(if db.is_postgres() {
        "ALTER TABLE calibration_drifts ADD CONSTRAINT refuse_boom CHECK (test <> 'boom')"
    } else {
        "CREATE TRIGGER refuse_boom BEFORE INSERT ON calibration_drifts \
         WHEN NEW.test = 'boom' BEGIN SELECT RAISE(ABORT, 'boom refused'); END"
    });
    let refused = calibration(
        CalibratedUnit::Run,
        5,
        &[("a", 0.03, 5.0), ("boom", 0.02, 5.0)],
    );
    let err = store.record_calibration(&refused).unwrap_err();
    assert!(matches!(err, StoreError::Database(_)), "{err:?}");
    assert!(err.to_string().contains("storing a calibration"), "{err}");
    assert_eq!(stored_rows(db), (0, 0));
    // The store goes on: a calibration the database takes is stored.
    let taken = calibration(CalibratedUnit::Run, 6, &[("a", 0.03, 5.0)]);
    store.record_calibration(&taken).unwrap();
    assert_eq!(store.calibrations().unwrap(), vec![taken]);
}

/// A result set measured by the kbench before calibrations (schema version
/// 10) is kept as it was by the upgrade, and the upgraded store stores and
/// reads calibrations.
fn version_10_databases_are_upgraded_and_store_calibrations(db: &TestDb) {
    let mut store = db.open();
    let t = spec("a", "ns", Direction::Lower);
    let run = store.begin_run("old", "stock", &info("6.1", 1)).unwrap();
    let test = store.test_id("old", &t).unwrap();
    for i in 0..3 {
        store
            .add_sample(run, test, &sample(1.0 + f64::from(i), i64::from(i), 0))
            .unwrap();
    }
    store.end_run(run, RunStatus::Complete, None).unwrap();
    let before = store.load("old").unwrap();
    drop(store);
    db.raw(UNDO_V12);
    db.raw(UNDO_V11);
    db.set_schema_version(10);
    assert_eq!(db.schema_version(), 10);

    let mut store = db.open();
    assert_eq!(db.schema_version(), SCHEMA_VERSION);
    assert_eq!(store.load("old").unwrap(), before);
    assert_eq!(store.calibrations().unwrap(), vec![]);
    let new = calibration(CalibratedUnit::Run, 7, &[("a", 0.03, 5.0)]);
    store.record_calibration(&new).unwrap();
    assert_eq!(store.calibrations().unwrap(), vec![new]);
    assert_eq!(stored_rows(db), (1, 1));
}
