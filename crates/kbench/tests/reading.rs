//! The commands that only read a result database (show, compare, export,
//! history, push) never create one: a `--db` naming a file that does not
//! exist is an error saying how to make one, and no file or directory
//! appears.

mod common;

use common::kbench;

#[test]
fn reading_a_missing_database_creates_nothing_and_says_how_to_make_one() {
    let dir = tempfile::tempdir().unwrap();
    let missing_dir = dir.path().join("missing");
    let db = missing_dir.join("dir").join("x.db");
    let empty = dir.path().join("empty.db");
    std::fs::write(&empty, b"").unwrap();
    let commands: [&[&str]; 6] = [
        &["show"],
        &["show", "plu"],
        &["compare", "plu"],
        &["export", "plu"],
        &["history", "plu"],
        &[
            "push",
            "plu",
            "--to",
            "http://127.0.0.1:9",
            "--token",
            "kbt_x",
        ],
    ];
    for args in commands {
        for target in [&db, &empty] {
            let output = kbench(target).args(args).output().unwrap();
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert!(!output.status.success(), "{args:?}: {stderr}");
            assert!(
                stderr.contains("there is no kbench database there")
                    && stderr.contains("kbench run")
                    && stderr.contains(&target.display().to_string()),
                "{args:?}: {stderr}"
            );
        }
        assert!(!missing_dir.exists(), "{args:?} created {missing_dir:?}");
        assert_eq!(std::fs::metadata(&empty).unwrap().len(), 0, "{args:?}");
    }
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name())
        .collect();
    assert_eq!(names, ["empty.db"], "nothing else appeared");
}
