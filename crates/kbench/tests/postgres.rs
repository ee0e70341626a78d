//! kbench on PostgreSQL, end to end: runs stored through a postgres:// URL
//! compare exactly as the same samples do from a SQLite file.
//!
//! Needs `KBENCH_TEST_POSTGRES_URL` (`bash .ci/postgres.sh cargo test`
//! starts a throwaway server); skipped without it, failed without it under
//! `CI=true`. Each test makes its own database and drops it.

mod common;

use common::{SHORT, assert_success, json_of, kbench, temp_db};
use kbench_store::testing::{ThrowawayDatabase, postgres_server};

fn ok(command: &mut assert_cmd::Command) -> Vec<u8> {
    let out = command.output().unwrap();
    assert_success(&out, &format!("{command:?} failed: "));
    out.stdout
}

#[test]
fn compare_is_the_same_from_postgres_and_from_sqlite() {
    let Some(server) = postgres_server() else {
        return;
    };
    let pg = ThrowawayDatabase::create(&server, "e2e");
    for identifier in ["a", "b"] {
        ok(kbench(&pg.url)
            .args(["run", "syscall-null", "--as", identifier, "--into", "p"])
            .args(SHORT));
    }
    // --db takes the URL as well as KBENCH_DB does.
    let listed = json_of("", &["--db", &pg.url, "show", "--json"]);
    assert_eq!(
        listed["result_sets"][0]["identifiers"],
        serde_json::json!(["a", "b"])
    );

    let exported = ok(kbench(&pg.url).args(["export", "p"]));
    let (dir, sqlite) = temp_db();
    let file = dir.path().join("p.json");
    std::fs::write(&file, &exported).unwrap();
    ok(kbench(&sqlite).arg("import").arg(&file));
    assert_eq!(
        ok(kbench(&sqlite).args(["export", "p"])),
        exported,
        "the export differs after a trip through SQLite"
    );

    let from_pg = json_of(&pg.url, &["compare", "p", "--format", "json"]);
    let from_sqlite = json_of(&sqlite, &["compare", "p", "--format", "json"]);
    assert_eq!(from_pg["schema"], "kbench.compare/1");
    assert_eq!(from_pg["metrics"], from_sqlite["metrics"]);
    assert_eq!(from_pg, from_sqlite);
    for format in ["bars", "table", "regressions", "markdown", "csv"] {
        let args = ["compare", "p", "--format", format, "--color", "never"];
        assert_eq!(
            String::from_utf8(ok(kbench(&pg.url).args(args))).unwrap(),
            String::from_utf8(ok(kbench(&sqlite).args(args))).unwrap(),
            "compare --format {format}"
        );
    }
}

#[test]
fn an_unreachable_server_is_named_without_its_password() {
    // A port nothing listens on: bound, then released.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("postgres://kbench:s3cret@127.0.0.1:{port}/kbench");
    let out = kbench(&url).args(["show", "p"]).output().unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("postgres://kbench:***@127.0.0.1:{port}/kbench"))
            && !stderr.contains("s3cret")
            && stderr.contains("no PostgreSQL server answered"),
        "{stderr}"
    );
    let out = kbench("mysql://root@h/db").args(["show"]).output().unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("postgres:// URL"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
