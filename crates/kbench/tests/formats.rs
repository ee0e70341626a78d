//! Other tools' result files through the binary: a PTS composite.xml
//! imported and exported back (both validated against PTS's own schema
//! with xmllint), and a real hyperfine run imported.

mod common;

use common::{have_path, have_programs, json_of, kbench, output, succeeds, temp_db};
use std::path::{Path, PathBuf};
use std::process::Command;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../kbench-formats/tests/fixtures")
        .join(name)
}

/// PTS's schema, from the shared fixtures beside the repository (GPL-3.0,
/// not part of kbench); None (skipped) when absent outside CI.
fn schema() -> Option<PathBuf> {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/fixtures/pts/result-file.xsd");
    have_path(
        &path,
        "PTS's schema: ../shared/fixtures beside the repository",
    )
    .then_some(path)
}

fn validates(schema: &Path, file: &Path) {
    let out = Command::new("xmllint")
        .args(["--noout", "--schema"])
        .arg(schema)
        .arg(file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{} does not validate: {}",
        file.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Every identifier's samples per test, as `kbench export` gives them.
fn samples(db: &Path, set: &str) -> Vec<(String, String, Vec<f64>)> {
    let export = json_of(db, &["export", set]);
    let mut all = vec![];
    for id in export["identifiers"].as_array().unwrap() {
        for run in id["runs"].as_array().unwrap() {
            for (test, list) in run["samples"].as_object().unwrap() {
                let values = list
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|s| s["value"].as_f64().unwrap());
                all.push((id["name"].to_string(), test.clone(), values.collect()));
            }
        }
    }
    all
}

#[test]
fn a_pts_file_round_trips_and_both_validate_against_pts_schema() {
    if !have_programs(&["xmllint"], "apt-get install libxml2-utils") {
        return;
    }
    let Some(schema) = schema() else { return };
    let original = fixture("pts-3ids-hib-lib.composite.xml");
    validates(&schema, &original);
    let (dir, db) = temp_db();
    let out = output(&db, &["import", original.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("3 identifier(s), 2 test(s), 13 sample(s)"),
        "{said}"
    );
    assert!(
        said.contains("note: not imported: Result 3 (Stress-NG"),
        "{said}"
    );
    let exported = kbench(&db)
        .args(["export", "redis-and-syscalls", "--format", "pts"])
        .output()
        .unwrap();
    assert!(exported.status.success());
    let file = dir.path().join("export.composite.xml");
    std::fs::write(&file, &exported.stdout).unwrap();
    validates(&schema, &file);
    succeeds(&db, &["import", file.to_str().unwrap(), "--into", "again"]);
    let before = samples(&db, "redis-and-syscalls");
    assert_eq!(before.len(), 5);
    assert_eq!(before, samples(&db, "again"));
    let text = String::from_utf8(exported.stdout).unwrap();
    assert!(text.contains("<Title>Redis</Title>") && text.contains("<Proportion>HIB</Proportion>"));
    assert!(text.contains("<Proportion>LIB</Proportion>"));
    // PTS's Generated title and description are the set's, both ways.
    let shown = json_of(&db, &["show", "again", "--json"]);
    assert_eq!(shown["title"], "redis-and-syscalls");
    assert_eq!(
        shown["description"],
        "Three kernels, a throughput and a latency test & one result PTS shows as a line graph."
    );
    succeeds(
        &db,
        &[
            "set",
            "edit",
            "again",
            "--title",
            "Three kernels <compared>",
        ],
    );
    let edited = kbench(&db)
        .args(["export", "again", "--format", "pts"])
        .output()
        .unwrap();
    let text = String::from_utf8(edited.stdout).unwrap();
    assert!(
        text.contains("<Title>Three kernels &lt;compared&gt;</Title>"),
        "{text}"
    );
}

#[test]
fn a_bad_composite_xml_is_refused_whole() {
    let (dir, db) = temp_db();
    let text = std::fs::read_to_string(fixture("pts-3ids-hib-lib.composite.xml")).unwrap();
    let bad = dir.path().join("bad.xml");
    std::fs::write(
        &bad,
        text.replace("<Value>2050000</Value>", "<Value>n/a</Value>"),
    )
    .unwrap();
    let out = output(&db, &["import", bad.to_str().unwrap()]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("Result 1 > Data > Entry 3 > Value (line 60): \"n/a\" is not a number")
            && err.contains("nothing was imported"),
        "{err}"
    );
    let shown = output(&db, &["show", "redis-and-syscalls"]);
    assert!(!shown.status.success(), "a result set was stored");
}

#[test]
fn a_hyperfine_run_imports_with_its_per_run_times() {
    if !have_programs(&["hyperfine"], "apt-get install hyperfine") {
        return;
    }
    let (dir, db) = temp_db();
    let file = dir.path().join("stock.json");
    let ran = Command::new("hyperfine")
        .args(["--runs", "4", "-N", "--export-json"])
        .arg(&file)
        .arg("true")
        .output()
        .unwrap();
    assert!(
        ran.status.success(),
        "{}",
        String::from_utf8_lossy(&ran.stderr)
    );
    succeeds(&db, &["import", file.to_str().unwrap(), "--into", "hf"]);
    let all = samples(&db, "hf");
    assert_eq!(all.len(), 1);
    let (identifier, test, values) = &all[0];
    assert_eq!((identifier.as_str(), test.as_str()), ("\"stock\"", "true"));
    assert_eq!(values.len(), 4);
    assert!(values.iter().all(|v| *v > 0.0 && *v < 1.0), "{values:?}");
}

#[test]
fn a_file_that_cannot_be_read_is_named_once() {
    let (dir, db) = temp_db();
    let missing = dir.path().join("missing.json");
    let out = output(&db, &["import", missing.to_str().unwrap()]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    let path = missing.display().to_string();
    assert!(
        err.contains(&format!("{path}: cannot read it: No such file")),
        "{err}"
    );
    assert_eq!(err.matches(&path).count(), 1, "{err}");
}

/// `kbench import <(...)`: a file that is a pipe can be read only once,
/// so the import must open it once, in every format, named by `--from`
/// or found from its content. `/dev/fd/0` is such a file: the test's pipe
/// to kbench's stdin, which `-` reads too. Each import must say what the
/// import of the same file from disk says.
#[test]
fn every_format_imports_from_a_pipe_named_or_detected() {
    let (dir, db) = temp_db();
    succeeds(
        &db,
        &[
            "import",
            fixture("pts-3ids-hib-lib.composite.xml").to_str().unwrap(),
        ],
    );
    let own = dir.path().join("own.json");
    let exported = kbench(&db)
        .args(["export", "redis-and-syscalls"])
        .output()
        .unwrap();
    std::fs::write(&own, &exported.stdout).unwrap();
    let files = [
        ("kbench", own),
        ("pts", fixture("pts-3ids-hib-lib.composite.xml")),
        ("hyperfine", fixture("hyperfine-1.15.json")),
        ("gbench", fixture("gbench-1.7.1.json")),
    ];
    for (format, file) in &files {
        // Stdin has no file name to take the identifier from.
        let identifier: &[&str] = match *format {
            "hyperfine" | "gbench" => &["--identifier", "piped"],
            _ => &[],
        };
        for from in ["auto", format] {
            let imported = |path: &str, stdin: Vec<u8>| {
                let (_dir, db) = temp_db();
                let out = kbench(&db)
                    .args(["import", path, "--from", from, "--into", "piped"])
                    .args(identifier)
                    .write_stdin(stdin)
                    .output()
                    .unwrap();
                let said = String::from_utf8_lossy(&out.stderr).into_owned();
                assert!(out.status.success(), "{format} --from {from}: {said}");
                said
            };
            let from_disk = imported(file.to_str().unwrap(), vec![]);
            assert!(from_disk.starts_with("Imported "), "{from_disk}");
            for pipe in ["/dev/fd/0", "-"] {
                let from_pipe = imported(pipe, std::fs::read(file).unwrap());
                assert_eq!(from_pipe, from_disk, "{format} --from {from} of {pipe}");
            }
        }
    }
}
