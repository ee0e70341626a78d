//! Reading PTS result files (a real one PTS 10.8.6 wrote, and a hand-made
//! one of three identifiers), writing them back, and refusing bad ones
//! whole with the element named.

use kbench_formats::{Format, FormatError, ReadOptions, pts, read};
use kbench_model::Direction;
use kbench_model::results::ResultSetData;
use kbench_store::exchange::to_result_set;

const REAL: &str = include_str!("fixtures/real-syscall-2ids.composite.xml");
const THREE: &str = include_str!("fixtures/pts-3ids-hib-lib.composite.xml");

fn import(text: &str) -> (ResultSetData, Vec<String>) {
    let imported = read(Format::Pts, text, &ReadOptions::default()).unwrap();
    (to_result_set(&imported.file, None).unwrap(), imported.notes)
}

fn values(data: &ResultSetData, identifier: &str, test: &str) -> Vec<f64> {
    let id = data
        .identifiers
        .iter()
        .find(|i| i.name == identifier)
        .unwrap();
    let key = kbench_model::TestKey::parse(test).unwrap();
    id.samples[&key].iter().map(|s| s.value).collect()
}

fn refused(text: &str) -> FormatError {
    read(Format::Pts, text, &ReadOptions::default()).unwrap_err()
}

#[test]
fn the_real_file_gives_every_raw_value_as_a_round() {
    assert_eq!(Format::detect(REAL), Some(Format::Pts));
    let (data, notes) = import(REAL);
    assert!(notes.is_empty(), "{notes:?}");
    assert_eq!(data.name, "kbench-pts-real");
    let names: Vec<&str> = data.identifiers.iter().map(|i| i.name.as_str()).collect();
    assert_eq!(names, ["6.18 stock", "6.18 seccomp"]);
    assert_eq!(data.tests.len(), 1);
    let spec = &data.tests[0];
    assert_eq!(spec.key.to_string(), "local/kbsys-1.0.0");
    assert_eq!(
        (spec.unit.as_str(), spec.direction),
        ("usecs/op", Direction::Lower)
    );
    let stock = values(&data, "6.18 stock", "local/kbsys-1.0.0");
    assert_eq!(stock.len(), 12);
    assert_eq!((stock[0], stock[11]), (0.148172, 0.158587));
    let id = &data.identifiers[0];
    let rounds: Vec<u32> = id
        .samples
        .values()
        .next()
        .unwrap()
        .iter()
        .map(|s| s.round)
        .collect();
    assert_eq!(rounds, (0..12).collect::<Vec<_>>());
    // 2026-12-01 18:50:09, read as UTC.
    assert_eq!(id.runs[0].info.started_at_ms, 1_796_151_009_000);
    let snapshot = &id.runs[0].info.snapshot;
    let facts = snapshot.facts();
    assert_eq!(
        facts[0],
        ("Processor".into(), "Intel Xeon (2 Cores)".into())
    );
    assert!(facts.contains(&("Kernel".into(), "6.18.44-fc-v657 (x86_64)".into())));
    assert!(facts.contains(&("System Layer".into(), "docker".into())));
    let record = snapshot.imported.as_ref().unwrap();
    assert_eq!(record.tool, "Phoronix Test Suite v10.8.6");
    assert_eq!(record.field("User"), Some("root"));
    assert_eq!(
        record.test_field("local/kbsys-1.0.0", "Title"),
        Some("Syscall Basic")
    );
}

#[test]
fn descriptions_become_options_and_what_kbench_cannot_hold_is_noted() {
    let (data, notes) = import(THREE);
    assert_eq!(data.name, "redis-and-syscalls");
    let tests: Vec<(String, Direction)> = data
        .tests
        .iter()
        .map(|t| (t.key.to_string(), t.direction))
        .collect();
    assert_eq!(
        tests,
        [
            (
                "pts/redis-1.4.0[Parallel Connections=50,Test=GET]".to_string(),
                Direction::Higher
            ),
            ("local/kbsys-1.0.0".to_string(), Direction::Lower),
        ]
    );
    let redis = "pts/redis-1.4.0[Parallel Connections=50,Test=GET]";
    // An entry without RawString gives its Value.
    assert_eq!(values(&data, "6.17", redis), [2050000.0]);
    assert_eq!(values(&data, "6.18 patched", redis).len(), 3);
    // 6.17 has no syscall entry: no samples, no error.
    let old = data.identifiers.iter().find(|i| i.name == "6.17").unwrap();
    assert_eq!(old.samples.len(), 1);
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(notes[0].contains("Result 3 (Stress-NG") && notes[0].contains("LINE_GRAPH"));
    // The file-level notes go with the first identifier's run.
    assert!(data.identifiers[0].runs[0].info.notes.contains(&notes[0]));
}

#[test]
fn an_export_reads_back_to_the_same_values_and_descriptions() {
    let (data, _) = import(THREE);
    let export = pts::Export {
        kbench_version: "0.1.0".into(),
        now_ms: 1_796_151_009_000,
    };
    let text = pts::write(&data, &export).unwrap();
    assert!(text.contains("<LastModified>2026-12-01 18:50:09</LastModified>"));
    assert!(text.contains("<Description>Test: GET - Parallel Connections: 50</Description>"));
    assert!(text.contains("<Arguments>-t get -c 50</Arguments>"));
    assert!(text.contains("<JSON>{\"test-run-times\":\"1.84:1.54:1.60\"}</JSON>"));
    assert!(text.contains("<Value>2041233.17</Value>"), "{text}");
    assert!(text.contains("<RawString>2038512.25:2049180.38:2036006.88</RawString>"));
    assert!(text.contains("&amp; one result"));
    let (again, _) = import(&text);
    assert_eq!(again.tests, data.tests);
    for (a, b) in data.identifiers.iter().zip(&again.identifiers) {
        assert_eq!(a.name, b.name);
        assert_eq!(a.samples, b.samples);
        assert_eq!(
            a.runs[0].info.snapshot.facts(),
            b.runs[0].info.snapshot.facts()
        );
    }
}

#[test]
fn a_set_measured_by_kbench_exports_with_described_options() {
    let (mut data, _) = import(THREE);
    for id in &mut data.identifiers {
        for run in &mut id.runs {
            run.info.snapshot = kbench_model::SystemSnapshot {
                os: "Debian GNU/Linux 12".into(),
                kernel_release: "6.18.0".into(),
                arch: "x86_64".into(),
                ..Default::default()
            };
        }
    }
    let export = pts::Export {
        kbench_version: "0.1.0".into(),
        now_ms: 0,
    };
    let text = pts::write(&data, &export).unwrap();
    assert!(text.contains("<Software>OS: Debian GNU/Linux 12, Kernel: 6.18.0 (x86_64)</Software>"));
    assert!(text.contains("<Identifier>kbench/pts/redis-1.4.0</Identifier>"));
    assert!(text.contains("<Description>Parallel Connections: 50 - Test: GET</Description>"));
    assert!(text.contains("<TestClient>kbench 0.1.0</TestClient>"));
}

#[test]
fn bad_files_are_refused_naming_the_element() {
    let not_pts = refused("<html><body>hello</body></html>");
    assert!(
        not_pts.to_string().contains("not a PTS result file"),
        "{not_pts}"
    );
    let cut = refused(&REAL[..REAL.len() / 2]);
    assert!(cut.to_string().contains("not well-formed XML"), "{cut}");
    let word = refused(&THREE.replace("<Value>2050000</Value>", "<Value>fast</Value>"));
    assert_eq!(word.at, "Result 1 > Data > Entry 3 > Value (line 60)");
    assert!(word.what.contains("\"fast\" is not a number"), "{word}");
    let raw = refused(&REAL.replace(":0.153092:", ":-0.15:"));
    assert!(
        raw.at.contains("Entry 1 > RawString (line 47), value 2"),
        "{raw}"
    );
    let scale = refused(&THREE.replace("<Scale>usecs/op</Scale>", ""));
    assert!(
        scale.at.starts_with("Result 2 (line") && scale.what.contains("no <Scale>"),
        "{scale}"
    );
    let stranger = refused(&REAL.replace(
        "<Identifier>6.18 seccomp</Identifier>\n        <Value>",
        "<Identifier>6.19</Identifier>\n        <Value>",
    ));
    assert!(
        stranger
            .what
            .contains("\"6.19\" is not one of the file's <System>s"),
        "{stranger}"
    );
    let twice = refused(&THREE.replace(
        "<Identifier>6.17</Identifier>\n    <Hardware>",
        "<Identifier>6.18 stock</Identifier>\n    <Hardware>",
    ));
    assert!(twice.what.contains("given twice"), "{twice}");
    let time = refused(&REAL.replace("2026-12-01 18:50:09", "yesterday"));
    assert!(time.at.starts_with("System 1 > TimeStamp"), "{time}");
}

#[test]
fn unknown_elements_are_kept_as_notes() {
    let text = REAL.replacen(
        "<User>root</User>",
        "<User>root</User>\n    <Cooling>liquid</Cooling>",
        1,
    );
    let (data, notes) = import(&text);
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(notes[0].contains("System 1 (line 19) holds <Cooling>") && notes[0].contains("liquid"));
    assert!(data.identifiers[0].runs[0].info.notes.contains(&notes[0]));
}

#[test]
fn the_real_file_is_written_back_element_for_element() {
    let (data, _) = import(REAL);
    let export = pts::Export {
        kbench_version: "0.1.0".into(),
        now_ms: 0,
    };
    let text = pts::write(&data, &export).unwrap();
    // What differs is who wrote it and when, and the XML declaration.
    let body = |text: &str| -> Vec<String> {
        text.lines()
            .map(|l| l.trim().to_string())
            .filter(|l| {
                !(l.starts_with("<?xml")
                    || l.starts_with("<!--")
                    || l.starts_with("<LastModified>")
                    || l.starts_with("<TestClient>"))
            })
            .collect()
    };
    assert_eq!(body(&text), body(REAL));
}
