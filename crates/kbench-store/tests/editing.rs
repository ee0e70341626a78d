//! Arranging a result set through [`Editing`], on SQLite and on PostgreSQL
//! (when `KBENCH_TEST_POSTGRES_URL` is set): title and description,
//! renaming, ordering and removing identifiers, factors; bad input changes
//! nothing, and no edit touches another identifier's samples.

#[macro_use]
mod common;

use common::{
    SCHEMA_VERSION, TestDb, UNDO_V6, UNDO_V7, UNDO_V9, UNDO_V11, UNDO_V12, info, outcome, sample,
    spec,
};
use kbench_model::Direction;
use kbench_store::{Database, Removed, ResultSetData, RunStatus, StoreError, TestOutcomeKind};
use std::collections::BTreeMap;

on_both_backends!(
    version_5_databases_are_migrated_keeping_their_data,
    title_and_description_are_set_kept_and_cleared,
    renaming_keeps_every_sample,
    ordering_puts_the_named_first,
    removing_takes_only_that_identifiers_runs,
    removing_leaves_no_sample_behind,
    factors_are_set_replaced_and_unset,
    bad_edits_change_nothing,
    a_measured_identifier_is_neither_renamed_nor_removed,
    imports_bring_title_description_and_factors,
);

/// Identifiers `names` in set "s", each one run of 3 samples of test "a"
/// (values distinct per identifier) with an outcome.
fn filled(store: &mut dyn Database, names: &[&str]) -> ResultSetData {
    let t = spec("a", "ns", Direction::Lower);
    for (n, name) in names.iter().enumerate() {
        let start = 1000 * (n as i64 + 1);
        let run = store.begin_run("s", name, &info(name, start)).unwrap();
        let test = store.test_id("s", &t).unwrap();
        for i in 0..3 {
            let value = 10.0 * (n as f64 + 1.0) + i as f64;
            store
                .add_sample(run, test, &sample(value, start + i, 0))
                .unwrap();
        }
        store
            .end_test(run, test, &outcome(&t, TestOutcomeKind::TargetMet))
            .unwrap();
        store.end_run(run, RunStatus::Complete, None).unwrap();
    }
    store.load("s").unwrap()
}

fn names(data: &ResultSetData) -> Vec<&str> {
    data.identifiers.iter().map(|i| i.name.as_str()).collect()
}

fn version_5_databases_are_migrated_keeping_their_data(db: &TestDb) {
    let mut store = db.open();
    let before = filled(store.as_mut(), &["stock", "patched"]);
    drop(store);
    db.raw(UNDO_V12);
    db.raw(UNDO_V11);
    db.undo_v10();
    db.raw(&format!("{UNDO_V9} {} {UNDO_V7} {UNDO_V6}", db.undo_v8()));
    db.set_schema_version(5);

    let mut store = db.open();
    assert_eq!(db.schema_version(), SCHEMA_VERSION);
    let after = store.load("s").unwrap();
    assert_eq!(after, before);
    assert_eq!(after.title, None);
    assert!(after.identifiers.iter().all(|i| i.factors.is_empty()));
    store.describe_set("s", Some("After"), None).unwrap();
    assert_eq!(store.load("s").unwrap().title.as_deref(), Some("After"));
}

fn title_and_description_are_set_kept_and_cleared(db: &TestDb) {
    let mut store = db.open();
    filled(store.as_mut(), &["a"]);
    store
        .describe_set("s", Some("PLU on 6.18"), Some("Two kernels.\nOne cgroup."))
        .unwrap();
    let data = store.load("s").unwrap();
    assert_eq!(data.title.as_deref(), Some("PLU on 6.18"));
    assert_eq!(
        data.description.as_deref(),
        Some("Two kernels.\nOne cgroup.")
    );
    assert_eq!(
        store.result_sets().unwrap()[0].title.as_deref(),
        Some("PLU on 6.18")
    );
    // None keeps, empty clears.
    store.describe_set("s", None, Some("")).unwrap();
    let data = store.load("s").unwrap();
    assert_eq!(data.title.as_deref(), Some("PLU on 6.18"));
    assert_eq!(data.description, None);
}

fn renaming_keeps_every_sample(db: &TestDb) {
    let mut store = db.open();
    let before = filled(store.as_mut(), &["a", "b", "c"]);
    store.rename_identifier("s", "b", "b2").unwrap();
    let mut after = store.load("s").unwrap();
    assert_eq!(names(&after), ["a", "b2", "c"]);
    after.identifiers[1].name = "b".into();
    assert_eq!(after, before);
}

fn ordering_puts_the_named_first(db: &TestDb) {
    let mut store = db.open();
    let before = filled(store.as_mut(), &["a", "b", "c", "d"]);
    let order = store
        .order_identifiers("s", &["c".into(), "a".into()])
        .unwrap();
    assert_eq!(order, ["c", "a", "b", "d"]);
    let after = store.load("s").unwrap();
    assert_eq!(names(&after), ["c", "a", "b", "d"]);
    for identifier in &before.identifiers {
        let moved = after
            .identifiers
            .iter()
            .find(|i| i.name == identifier.name)
            .unwrap();
        assert_eq!(moved, identifier);
    }
    // New identifiers still go last.
    store.begin_run("s", "e", &info("e", 9000)).unwrap();
    assert_eq!(names(&store.load("s").unwrap()), ["c", "a", "b", "d", "e"]);
}

fn removing_takes_only_that_identifiers_runs(db: &TestDb) {
    let mut store = db.open();
    let before = filled(store.as_mut(), &["a", "b", "c"]);
    let removed = store.remove_identifier("s", "b").unwrap();
    assert_eq!(
        removed,
        Removed {
            runs: 1,
            samples: 3
        }
    );
    let after = store.load("s").unwrap();
    assert_eq!(
        after.identifiers,
        [before.identifiers[0].clone(), before.identifiers[2].clone()]
    );
    assert_eq!(after.tests, before.tests);
    assert_eq!(store.result_sets().unwrap()[0].samples, 6);
    // The name is free again.
    store.begin_run("s", "b", &info("b", 9000)).unwrap();
}

/// Every run of the identifier goes with its samples and outcomes (no
/// foreign key does it on PostgreSQL: the store's code), and no sample can
/// be stored under a removed run afterwards.
fn removing_leaves_no_sample_behind(db: &TestDb) {
    let mut store = db.open();
    filled(store.as_mut(), &["a", "b"]);
    let t = spec("a", "ns", Direction::Lower);
    let test = store.test_id("s", &t).unwrap();
    let second = store.begin_run("s", "b", &info("b", 5000)).unwrap();
    for i in 0..2 {
        store
            .add_sample(second, test, &sample(99.0, 5000 + i, 1))
            .unwrap();
    }
    let removed = store.remove_identifier("s", "b").unwrap();
    assert_eq!(
        removed,
        Removed {
            runs: 2,
            samples: 5
        }
    );
    assert_eq!(db.orphan_samples(), 0);
    assert_eq!(db.stored_samples(), 3);
    assert_eq!(
        db.count(
            "SELECT COUNT(*) FROM test_outcomes o WHERE NOT EXISTS \
             (SELECT 1 FROM runs r WHERE r.id = o.run_id)"
        ),
        0
    );
    let err = store
        .add_sample(second, test, &sample(1.0, 6000, 2))
        .unwrap_err();
    assert!(matches!(err, StoreError::NotFound(_)), "{err:?}");
    assert_eq!(db.stored_samples(), 3);
}

fn factors_are_set_replaced_and_unset(db: &TestDb) {
    let mut store = db.open();
    filled(store.as_mut(), &["a", "b"]);
    let levels = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    };
    let now = store
        .set_factors(
            "s",
            "a",
            &levels(&[("kernel", "stock"), ("cgroup", "no")]),
            &[],
        )
        .unwrap();
    assert_eq!(now, levels(&[("cgroup", "no"), ("kernel", "stock")]));
    let now = store
        .set_factors(
            "s",
            "a",
            &levels(&[("kernel", "patched")]),
            &["cgroup".into()],
        )
        .unwrap();
    assert_eq!(now, levels(&[("kernel", "patched")]));
    let data = store.load("s").unwrap();
    assert_eq!(data.identifiers[0].factors, now);
    assert!(data.identifiers[1].factors.is_empty());
}

fn bad_edits_change_nothing(db: &TestDb) {
    let mut store = db.open();
    filled(store.as_mut(), &["stock", "patched"]);
    store.describe_set("s", Some("kept"), None).unwrap();
    let before = store.load("s").unwrap();
    let check = |err: StoreError, needle: &str| {
        assert!(err.to_string().contains(needle), "{needle:?} not in {err}");
    };
    check(
        store.rename_identifier("t", "stock", "x").unwrap_err(),
        "no result set \"t\"",
    );
    let err = store.rename_identifier("s", "stok", "x").unwrap_err();
    assert!(matches!(err, StoreError::NotFound(_)), "{err:?}");
    check(err, "did you mean \"stock\"?");
    let err = store
        .rename_identifier("s", "stock", "patched")
        .unwrap_err();
    assert!(matches!(err, StoreError::Conflict(_)), "{err:?}");
    for bad in ["", "a\u{1b}[31m", &"x".repeat(129)] {
        let err = store.rename_identifier("s", "stock", bad).unwrap_err();
        assert!(matches!(err, StoreError::Invalid(_)), "{err:?}");
    }
    check(
        store
            .order_identifiers("s", &["patched".into(), "patched".into()])
            .unwrap_err(),
        "named twice",
    );
    check(
        store
            .order_identifiers("s", &["patched".into(), "nope".into()])
            .unwrap_err(),
        "no identifier \"nope\"",
    );
    check(
        store.remove_identifier("s", "nope").unwrap_err(),
        "no identifier",
    );
    check(
        store
            .describe_set("s", Some("two\nlines"), None)
            .unwrap_err(),
        "title",
    );
    let bad_level: BTreeMap<String, String> = [("kernel".into(), "a b".into())].into();
    check(
        store
            .set_factors("s", "stock", &bad_level, &[])
            .unwrap_err(),
        "level of factor kernel",
    );
    check(
        store
            .set_factors("s", "stock", &BTreeMap::new(), &["cgroup".into()])
            .unwrap_err(),
        "no factor \"cgroup\"",
    );
    assert_eq!(store.load("s").unwrap(), before);
}

fn a_measured_identifier_is_neither_renamed_nor_removed(db: &TestDb) {
    let mut runner = db.open();
    let before = filled(runner.as_mut(), &["a", "b"]);
    runner.lock_identifier("s", "a").unwrap();
    let mut editor = db.open();
    let err = editor.rename_identifier("s", "a", "a2").unwrap_err();
    assert!(matches!(err, StoreError::Conflict(_)), "{err:?}");
    assert!(err.to_string().contains("being measured"), "{err}");
    let err = editor.remove_identifier("s", "a").unwrap_err();
    assert!(matches!(err, StoreError::Conflict(_)), "{err:?}");
    assert_eq!(editor.load("s").unwrap(), before);
    drop(runner);
    // The server lets go of a closed session's locks soon, not at once.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while let Err(StoreError::Conflict(_)) = editor.rename_identifier("s", "a", "a2") {
        assert!(
            std::time::Instant::now() < deadline,
            "the lock outlived its run"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(names(&editor.load("s").unwrap()), ["a2", "b"]);
}

fn imports_bring_title_description_and_factors(db: &TestDb) {
    let mut store = db.open();
    let mut data = filled(store.as_mut(), &["a", "b"]);
    data.name = "copy".into();
    data.title = Some("Copied".into());
    data.description = Some("From s.".into());
    data.identifiers[0].factors = [("kernel".to_string(), "stock".to_string())].into();
    store.import(&data).unwrap();
    let copy = store.load("copy").unwrap();
    assert_eq!(copy.title.as_deref(), Some("Copied"));
    assert_eq!(copy.description.as_deref(), Some("From s."));
    assert_eq!(copy.identifiers[0].factors, data.identifiers[0].factors);
    // Importing more into a set keeps the title it has.
    let mut more = data.clone();
    more.title = Some("Other".into());
    for identifier in &mut more.identifiers {
        identifier.name.push_str("-more");
    }
    store.import(&more).unwrap();
    assert_eq!(store.load("copy").unwrap().title.as_deref(), Some("Copied"));
    // A bad factor refuses the whole import.
    let mut bad = data.clone();
    bad.name = "bad".into();
    bad.identifiers[1].factors = [("k=v".to_string(), "x".to_string())].into();
    let err = store.import(&bad).unwrap_err();
    assert!(matches!(err, StoreError::Invalid(_)), "{err:?}");
    assert!(matches!(store.load("bad"), Err(StoreError::NotFound(_))));
}
