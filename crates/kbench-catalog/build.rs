//! Embeds the built-in profiles and suites: writes `profiles.rs` and
//! `suites.rs` into OUT_DIR, each the table of every `*.toml` of the
//! workspace's `profiles/` or `suites/`, sorted by name, as
//! `(file name without .toml, include_str!(its absolute path))`. Adding
//! a built-in profile or suite is adding its file.

use std::fmt::Write;
use std::path::{Path, PathBuf};

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("set by cargo"));
    for name in ["profiles", "suites"] {
        let dir = manifest.join("../..").join(name);
        // Cargo watches a directory's files, so a new one reruns this.
        println!("cargo:rerun-if-changed={}", dir.display());
        let file = out.join(format!("{name}.rs"));
        std::fs::write(&file, table(&dir)).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    }
}

/// The `&[(name, text)]` expression of the `*.toml` files in `dir`.
fn table(dir: &Path) -> String {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let mut files: Vec<PathBuf> = entries
        .map(|entry| {
            entry
                .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
                .path()
        })
        .filter(|path| path.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    let mut table = String::from("&[\n");
    for path in files {
        let name = path.file_stem().and_then(|s| s.to_str());
        let (Some(name), Some(text)) = (name, path.to_str()) else {
            panic!("{}: not a UTF-8 file name", path.display());
        };
        writeln!(table, "    ({name:?}, include_str!({text:?})),").unwrap();
    }
    table + "]\n"
}
