//! Bisection state (schema version 2): saved, replaced, loaded, forgotten,
//! and kept across reopening; a version-1 file is migrated in place with its
//! samples intact.

use kbench_store::{SqliteStore, Store};

fn temp_db() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.db");
    (dir, path)
}

#[test]
fn state_is_saved_replaced_and_forgotten() {
    let (_dir, path) = temp_db();
    let mut store = SqliteStore::open(&path).unwrap();
    assert_eq!(store.load_bisect("b").unwrap(), None);
    store.save_bisect("b", r#"{"step":1}"#).unwrap();
    store.save_bisect("b", r#"{"step":2}"#).unwrap();
    store.save_bisect("other", "{}").unwrap();
    drop(store);
    let mut store = SqliteStore::open(&path).unwrap();
    assert_eq!(
        store.load_bisect("b").unwrap().as_deref(),
        Some(r#"{"step":2}"#)
    );
    store.delete_bisect("b").unwrap();
    store.delete_bisect("never-there").unwrap();
    assert_eq!(store.load_bisect("b").unwrap(), None);
    assert_eq!(store.load_bisect("other").unwrap().as_deref(), Some("{}"));
    assert!(store.save_bisect("", "{}").is_err());
}

#[test]
fn version_1_files_are_migrated_keeping_their_data() {
    let (_dir, path) = temp_db();
    {
        // A version-1 database as kbench 0.1 wrote it.
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(include_str!("../src/sqlite/schema_v1.sql"))
            .unwrap();
        conn.execute(
            "INSERT INTO result_sets (name, created_at_ms) VALUES ('old', 1)",
            [],
        )
        .unwrap();
        conn.pragma_update(None, "user_version", 1).unwrap();
        conn.pragma_update(None, "application_id", 0x6B62_6E63)
            .unwrap();
    }
    let mut store = SqliteStore::open(&path).unwrap();
    assert_eq!(store.result_sets().unwrap()[0].name, "old");
    store.save_bisect("old", "{}").unwrap();
    drop(store);
    let conn = rusqlite::Connection::open(&path).unwrap();
    let version: i64 = conn
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    assert_eq!(version, 2);
}
