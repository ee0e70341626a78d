//! What only the PostgreSQL store does: connecting (and saying why it
//! cannot, without the password), sharing a database with other
//! applications' tables, and reconnecting after a lost connection. The
//! behaviour both stores share is in store.rs.

mod common;

use common::{SCHEMA_VERSION, TestDb, client, info, postgres_url, unique_name, with_param};
use kbench_store::{Location, PostgresStore, StoreError};

fn open_error(url: &str) -> (String, String) {
    match PostgresStore::open(url) {
        Err(StoreError::Open { db, reason }) => (db, reason),
        other => panic!("{url}: {other:?}"),
    }
}

#[test]
fn unreachable_server_is_an_open_error_without_the_password() {
    // A port nothing listens on: bound, then released.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("postgres://kbench:s3cret@127.0.0.1:{port}/kbench?connect_timeout=5");
    let err = Location::parse(&url).unwrap().open().err().unwrap();
    let text = err.to_string();
    assert!(matches!(err, StoreError::Open { .. }), "{err:?}");
    assert!(!text.contains("s3cret"), "{text}");
    assert!(
        text.contains(&format!("postgres://kbench:***@127.0.0.1:{port}/kbench")),
        "{text}"
    );
    assert!(text.contains("no PostgreSQL server answered"), "{text}");
}

#[test]
fn missing_database_says_to_create_it() {
    let Some(base) = postgres_url() else { return };
    let mut config: postgres::Config = base.parse().unwrap();
    let name = unique_name("kbench_missing");
    config.dbname(&name);
    let (user, host, port) = (
        config.get_user().unwrap_or("postgres").to_string(),
        "127.0.0.1",
        config.get_ports().first().copied().unwrap_or(5432),
    );
    let url = format!("postgres://{user}:pw@{host}:{port}/{name}");
    let (db, reason) = open_error(&url);
    assert_eq!(db, format!("postgres://{user}:***@{host}:{port}/{name}"));
    assert!(
        reason.contains("does not exist") && reason.contains("createdb"),
        "{reason}"
    );
}

#[test]
fn tls_is_refused_with_what_to_do() {
    let Some(base) = postgres_url() else { return };
    let (_, reason) = open_error(&with_param(&base, "sslmode", "require"));
    assert!(reason.contains("without TLS"), "{reason}");
}

#[test]
fn tables_named_like_ours_but_not_ours_are_left_alone() {
    let Some(db) = TestDb::postgres() else { return };
    db.raw("CREATE TABLE samples (x INT); CREATE TABLE result_sets (y TEXT); INSERT INTO samples VALUES (7)");
    let err = db.try_open().err().expect("must be refused");
    let text = err.to_string();
    assert!(matches!(err, StoreError::Corrupt { .. }), "{err:?}");
    assert!(text.contains("result_sets, samples"), "{text}");
    let tables: i64 = client(&db.location)
        .query_one(
            "SELECT COUNT(*) FROM pg_tables WHERE schemaname = current_schema()",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(tables, 2, "tables were added");
}

#[test]
fn other_applications_tables_may_share_the_database() {
    let Some(db) = TestDb::postgres() else { return };
    db.raw("CREATE TABLE bookmarks (url TEXT)");
    let mut store = db.open();
    store.begin_run("set", "id", &info("k", 1)).unwrap();
    assert_eq!(db.schema_version(), SCHEMA_VERSION);
}

#[test]
fn a_search_path_without_a_schema_is_an_open_error() {
    let Some(base) = postgres_url() else { return };
    let url = with_param(&base, "options", "-csearch_path%3Dno_such_schema_kbt");
    let (_, reason) = open_error(&url);
    assert!(reason.contains("search_path"), "{reason}");
}

#[test]
fn a_lost_connection_is_reopened() {
    let Some(db) = TestDb::postgres() else { return };
    let name = unique_name("kbt_app");
    let url = with_param(&db.location, "application_name", &name);
    let mut store = Location::parse(&url).unwrap().open().unwrap();
    store.begin_run("set", "id", &info("k", 1)).unwrap();
    let killed: i64 = client(&db.location)
        .query_one(
            "SELECT COUNT(pg_terminate_backend(pid)) FROM pg_stat_activity \
             WHERE application_name = $1",
            &[&name],
        )
        .unwrap()
        .get(0);
    assert_eq!(killed, 1);
    // The first call may meet the dead connection (Unavailable: retry);
    // the next one reconnects.
    if let Err(err) = store.result_sets() {
        assert!(matches!(err, StoreError::Unavailable(_)), "{err:?}");
    }
    assert_eq!(store.result_sets().unwrap()[0].name, "set");
}

/// Set "s" with identifier "b": one run, test "a", one sample.
fn one_run(db: &TestDb) -> (kbench_store::RunId, kbench_store::TestId, i64) {
    let mut store = db.open();
    let t = common::spec("a", "ns", kbench_model::Direction::Lower);
    let run = store.begin_run("s", "b", &info("b", 1)).unwrap();
    let test = store.test_id("s", &t).unwrap();
    store
        .add_sample(run, test, &common::sample(1.0, 1, 0))
        .unwrap();
    let id = db.count("SELECT MAX(id) FROM runs");
    (run, test, id)
}

/// The samples table has no foreign key (schema version 8): a sample
/// stored while another transaction deletes its run waits for it (the
/// store locks the run's row), then is refused, leaving no orphan.
#[test]
fn a_sample_for_a_run_being_deleted_waits_and_is_refused() {
    let Some(db) = TestDb::postgres() else { return };
    let (run, test, id) = one_run(&db);
    let mut deleter = client(&db.location);
    let mut tx = deleter.transaction().unwrap();
    tx.batch_execute(&format!(
        "DELETE FROM test_outcomes WHERE run_id = {id}; DELETE FROM runs WHERE id = {id}"
    ))
    .unwrap();
    let adding = common::on_thread(&db.location, move |store| {
        store.add_sample(run, test, &common::sample(2.0, 2, 1))
    });
    assert!(
        common::still_waiting(&adding),
        "the sample did not wait for the delete"
    );
    tx.batch_execute(&format!("DELETE FROM sample_blocks WHERE run_id = {id}"))
        .unwrap();
    tx.commit().unwrap();
    let err = adding.join().unwrap().unwrap_err();
    assert!(matches!(err, StoreError::NotFound(_)), "{err:?}");
    assert_eq!(db.orphan_samples(), 0);
    assert_eq!(db.stored_samples(), 0);
}

/// Removing an identifier while another transaction stores samples under
/// its run (holding the run's row, as the store does) waits for it, then
/// removes those samples too.
#[test]
fn removing_waits_for_samples_being_stored_and_takes_them() {
    let Some(db) = TestDb::postgres() else { return };
    let (_, _, id) = one_run(&db);
    let test = db.count("SELECT MAX(id) FROM tests");
    let mut writer = client(&db.location);
    let mut tx = writer.transaction().unwrap();
    tx.batch_execute(&format!(
        "SELECT id FROM runs WHERE id = {id} FOR KEY SHARE; \
         UPDATE sample_blocks SET samples = samples || samples \
         WHERE run_id = {id} AND test_id = {test}"
    ))
    .unwrap();
    let removing = common::on_thread(&db.location, |store| store.remove_identifier("s", "b"));
    assert!(
        common::still_waiting(&removing),
        "the removal did not wait for the writer"
    );
    tx.commit().unwrap();
    let removed = removing.join().unwrap().unwrap();
    assert_eq!((removed.runs, removed.samples), (1, 2));
    assert_eq!(db.orphan_samples(), 0);
    assert_eq!(db.stored_samples(), 0);
}
