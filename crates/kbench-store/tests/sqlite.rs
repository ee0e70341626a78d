//! What only the SQLite store does: it opens files, and never damages one
//! that is not its own. The behaviour both stores share is in store.rs.

mod common;

use common::{info, sample, spec};
use kbench_model::Direction;
use kbench_store::{Results, RunSink, SqliteStore, StoreError};
use std::path::{Path, PathBuf};

fn temp_db() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nested/dir/results.db");
    (dir, path)
}

/// Side files SQLite would make next to `path`.
fn side_files(path: &Path) -> Vec<PathBuf> {
    ["-wal", "-shm", "-journal"]
        .iter()
        .map(|suffix| {
            let mut name = path.as_os_str().to_owned();
            name.push(suffix);
            PathBuf::from(name)
        })
        .filter(|p| p.exists())
        .collect()
}

fn assert_rejected_untouched(path: &Path, expect_corrupt: bool) -> StoreError {
    let before = std::fs::read(path).unwrap();
    let err = SqliteStore::open(path).expect_err("must not open");
    assert_eq!(
        std::fs::read(path).unwrap(),
        before,
        "the file was modified"
    );
    assert_eq!(
        side_files(path),
        Vec::<PathBuf>::new(),
        "side files appeared"
    );
    if expect_corrupt {
        assert!(
            matches!(&err, StoreError::Corrupt { db, .. } if *db == path.display().to_string()),
            "{err:?}"
        );
        assert!(
            err.to_string().contains(&path.display().to_string()),
            "{err}"
        );
    }
    err
}

#[test]
fn foreign_or_damaged_files_are_left_untouched() {
    let dir = tempfile::tempdir().unwrap();

    let random = dir.path().join("random.db");
    let bytes: Vec<u8> = (0..8192u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    std::fs::write(&random, bytes).unwrap();
    assert_rejected_untouched(&random, true);

    let text = dir.path().join("notes.txt");
    std::fs::write(&text, "these are my notes, not a database\n".repeat(200)).unwrap();
    let err = assert_rejected_untouched(&text, true);
    assert!(err.to_string().contains("not a SQLite database"), "{err}");

    let short = dir.path().join("short.db");
    std::fs::write(&short, b"SQLite format 3\0abc").unwrap();
    assert_rejected_untouched(&short, true);

    for wal in [false, true] {
        let foreign = dir.path().join(format!("foreign-{wal}.db"));
        let conn = rusqlite::Connection::open(&foreign).unwrap();
        if wal {
            conn.pragma_update(None, "journal_mode", "WAL").unwrap();
        }
        conn.execute_batch(
            "CREATE TABLE bookmarks (url TEXT); INSERT INTO bookmarks VALUES ('x');",
        )
        .unwrap();
        drop(conn);
        let err = assert_rejected_untouched(&foreign, true);
        assert!(err.to_string().contains("bookmarks"), "{err}");
    }

    // A kbench database with a page overwritten by garbage.
    let damaged = dir.path().join("damaged.db");
    {
        let mut store = SqliteStore::open(&damaged).unwrap();
        let run = store.begin_run("s", "i", &info("k", 1)).unwrap();
        let test = store
            .test_id("s", &spec("a", "ns", Direction::Lower))
            .unwrap();
        for i in 0..2000 {
            store
                .add_sample(run, test, &sample(1.0 + i as f64, i, 0))
                .unwrap();
        }
    }
    let mut bytes = std::fs::read(&damaged).unwrap();
    let page = 4096;
    assert!(bytes.len() > 8 * page);
    bytes[3 * page..4 * page].fill(0xA5);
    std::fs::write(&damaged, bytes).unwrap();
    let err = assert_rejected_untouched(&damaged, true);
    let text = err.to_string();
    assert!(
        text.contains("integrity check failed") || text.contains("malformed"),
        "{text}"
    );
}

/// store.rs checks the error on both stores; here, that the file is left
/// byte for byte as it was.
#[test]
fn newer_schema_leaves_the_file_untouched() {
    let (_dir, path) = temp_db();
    drop(SqliteStore::open(&path).unwrap());
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.pragma_update(None, "user_version", 99).unwrap();
    drop(conn);
    let err = assert_rejected_untouched(&path, false);
    assert!(matches!(err, StoreError::TooNew { .. }), "{err:?}");
}

#[test]
fn empty_file_becomes_a_database() {
    let file = tempfile::NamedTempFile::new().unwrap();
    let mut store = SqliteStore::open(file.path()).unwrap();
    assert_eq!(store.result_sets().unwrap(), vec![]);
}

#[test]
fn unwritable_locations_are_open_errors() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("plain-file");
    std::fs::write(&file, "x").unwrap();
    for path in [
        PathBuf::from("/proc/kbench-test/results.db"),
        file.join("results.db"),
        dir.path().to_path_buf(),
    ] {
        match SqliteStore::open(&path) {
            Err(StoreError::Open { db, reason }) => {
                assert_eq!(db, path.display().to_string(), "{reason}")
            }
            other => panic!("{}: {other:?}", path.display()),
        }
    }
}
