//! `kbench import` of a kbench.samples/1 file larger than the memory the
//! process may use (`prlimit --as`): the file is read as it streams in, so
//! it imports whole into SQLite and into PostgreSQL. (That a file cut off
//! or with a bad last sample stores nothing is tested on both stores in
//! kbench-store's tests/store.rs.)

mod common;

use common::{have_programs, kbench, temp_db};
use kbench_store::testing::{ThrowawayDatabase, postgres_server};
use std::io::Write;
use std::path::Path;
use std::process::Command;

/// The address space the importing kbench may use: less than the file.
/// (Its peak memory is under 100 MB, up to 64 MiB of it SQLite's page
/// cache.)
const LIMIT: u64 = 128 << 20;

/// Writes a document as `kbench export` does (pretty, one run per
/// identifier, every field of every sample): `identifiers` x `tests` x
/// `per` samples. Returns how many samples it holds.
fn write_export(path: &Path, identifiers: usize, tests: usize, per: usize) -> usize {
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let names: Vec<String> = (0..tests).map(|t| format!("metric-{t:05}")).collect();
    write!(
        out,
        "{{\n  \"schema\": \"kbench.samples/1\",\n  \"result_set\": \"big\",\n  \"tests\": ["
    )
    .unwrap();
    for (t, name) in names.iter().enumerate() {
        let comma = if t == 0 { "" } else { "," };
        write!(
            out,
            "{comma}\n    {{\n      \"test\": \"{name}\",\n      \"unit\": \"ns\",\n      \
             \"direction\": \"lower\"\n    }}"
        )
        .unwrap();
    }
    write!(out, "\n  ],\n  \"identifiers\": [").unwrap();
    for i in 0..identifiers {
        let comma = if i == 0 { "" } else { "," };
        write!(
            out,
            "{comma}\n    {{\n      \"name\": \"v{i}\",\n      \"runs\": [\n        {{\n          \
             \"status\": \"complete\",\n          \"info\": {{ \"started_at_ms\": 1000 }},\n          \
             \"ended_at_ms\": 9000000,\n          \"samples\": {{"
        )
        .unwrap();
        for (t, name) in names.iter().enumerate() {
            let comma = if t == 0 { "" } else { "," };
            write!(out, "{comma}\n            \"{name}\": [").unwrap();
            for k in 0..per {
                let comma = if k == 0 { "" } else { "," };
                let value = 100.0 + t as f64 + (i * per + k) as f64 * 1e-4;
                write!(
                    out,
                    "{comma}\n              {{\n                \"value\": {value},\n                \
                     \"iterations\": 1000,\n                \"at_ms\": {},\n                \
                     \"round\": {}\n              }}",
                    2000 + k,
                    k / 5
                )
                .unwrap();
            }
            write!(out, "\n            ]").unwrap();
        }
        write!(out, "\n          }}\n        }}\n      ]\n    }}").unwrap();
    }
    writeln!(out, "\n  ]\n}}").unwrap();
    out.flush().unwrap();
    identifiers * tests * per
}

/// Imports `file` into `db` under [`LIMIT`], then checks that the export
/// holds every sample.
fn imports_under_the_limit(db: &str, file: &Path, samples: usize) {
    let out = Command::new("prlimit")
        // glibc reserves 64 MiB of address space (not memory) for the
        // allocations of each further thread, here the one that reads the
        // file: with one arena the limit counts what is used.
        .env("MALLOC_ARENA_MAX", "1")
        .arg(format!("--as={LIMIT}"))
        .arg(assert_cmd::cargo::cargo_bin("kbench"))
        .args(["--db", db, "import"])
        .arg(file)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the import failed: {stderr}");
    assert!(
        stderr.contains(&format!("{samples} sample(s) into result set 'big'")),
        "{stderr}"
    );
    let export = kbench(db).args(["export", "big"]).output().unwrap();
    assert!(export.status.success());
    let text = String::from_utf8(export.stdout).unwrap();
    assert_eq!(text.matches("\"value\":").count(), samples);
}

#[test]
fn a_file_larger_than_the_memory_limit_imports_into_both_stores() {
    if !have_programs(&["prlimit"], "apt-get install util-linux") {
        return;
    }
    let (dir, sqlite) = temp_db();
    let file = dir.path().join("big.json");
    let samples = write_export(&file, 40, 1000, 30);
    let size = std::fs::metadata(&file).unwrap().len();
    assert!(
        size > LIMIT,
        "the file ({size} bytes) must exceed the limit"
    );
    imports_under_the_limit(sqlite.to_str().unwrap(), &file, samples);
    if let Some(server) = postgres_server() {
        let pg = ThrowawayDatabase::create(&server, "import");
        imports_under_the_limit(&pg.url, &file, samples);
    }
}
