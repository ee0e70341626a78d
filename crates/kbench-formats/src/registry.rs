//! The registry of result-file formats: each one's name (what users type
//! after `kbench import --from` or `kbench export --format`), its line of
//! help, and whether and how it is read and written. kbench-cli builds
//! both value lists, their help and the commands' summaries from it.

use crate::{Format, FormatError};

/// How `kbench import` reads a format. `--from auto` tells every one of
/// them apart by the file's content ([`Format::sniff`]): a foreign format
/// by its first element or keys, kbench's own as what is none of those.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reading {
    /// kbench.samples/1, streamed into the store as it is read.
    Own,
    /// Another tool's file, read whole by its reader.
    Foreign(Format),
}

/// What `kbench export` writes a result set as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Writing {
    /// kbench.samples/1 JSON.
    Samples,
    /// A PTS composite.xml.
    Pts,
    /// CSV, one row per raw sample.
    Csv,
}

/// One format of the registry.
#[derive(Debug)]
pub struct FileFormat {
    /// The name after `--from` or `--format`.
    pub name: &'static str,
    /// One line for `--help`.
    pub help: &'static str,
    /// How `kbench import --from NAME` reads it; `None`: not imported.
    pub reading: Option<Reading>,
    /// What `kbench export --format NAME` writes; `None`: not exported.
    pub writing: Option<Writing>,
}

/// `--from`'s name for a format told apart by the file's content.
pub const AUTO: &str = "auto";

/// `--from auto`'s line of help.
pub const AUTO_HELP: &str = "told apart by the file's content";

/// Every format, in `--help` order.
pub static FORMATS: &[FileFormat] = &[
    FileFormat {
        name: "kbench",
        help: "kbench.samples/1 JSON, as `kbench export` writes it (docs/samples-format.md)",
        reading: Some(Reading::Own),
        writing: None,
    },
    FileFormat {
        name: "json",
        help: "kbench.samples/1 JSON, which `kbench import` reads back (docs/samples-format.md)",
        reading: None,
        writing: Some(Writing::Samples),
    },
    FileFormat {
        name: "pts",
        help: "a Phoronix Test Suite composite.xml",
        reading: Some(Reading::Foreign(Format::Pts)),
        writing: Some(Writing::Pts),
    },
    FileFormat {
        name: "hyperfine",
        help: "hyperfine's JSON (`hyperfine --export-json FILE`)",
        reading: Some(Reading::Foreign(Format::Hyperfine)),
        writing: None,
    },
    FileFormat {
        name: "gbench",
        help: "Google Benchmark's JSON (`--benchmark_format=json` or `--benchmark_out=FILE`)",
        reading: Some(Reading::Foreign(Format::GoogleBenchmark)),
        writing: None,
    },
    FileFormat {
        name: "csv",
        help: "one row per raw sample, for pandas or R",
        reading: None,
        writing: Some(Writing::Csv),
    },
];

/// The formats `kbench import` reads, in `--help` order.
pub fn imports() -> impl Iterator<Item = &'static FileFormat> {
    FORMATS.iter().filter(|f| f.reading.is_some())
}

/// The formats `kbench export` writes, in `--help` order.
pub fn exports() -> impl Iterator<Item = &'static FileFormat> {
    FORMATS.iter().filter(|f| f.writing.is_some())
}

/// How `kbench import --from NAME` reads; an error names the choices.
/// `auto`, which tells them apart, is the caller's.
pub fn reading(name: &str) -> Result<Reading, FormatError> {
    let found = imports().find(|f| f.name == name).and_then(|f| f.reading);
    let known = || format!("{AUTO}, {}", names(imports()));
    found.ok_or_else(|| none_of("--from", name, known()))
}

/// What `kbench export --format NAME` writes; an error names the choices.
pub fn writing(name: &str) -> Result<Writing, FormatError> {
    let found = exports().find(|f| f.name == name).and_then(|f| f.writing);
    found.ok_or_else(|| none_of("--format", name, names(exports())))
}

/// The names of `formats`, comma-separated.
pub fn names<'a>(formats: impl Iterator<Item = &'a FileFormat>) -> String {
    formats.map(|f| f.name).collect::<Vec<_>>().join(", ")
}

/// "`name` is none of `known`", about `option`.
fn none_of(option: &str, name: &str, known: String) -> FormatError {
    FormatError::new(option, format!("{name:?} is none of {known}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The names `kbench import` and `kbench export` accepted before the
    /// registry, each once.
    #[test]
    fn the_names_of_import_and_export_are_those_they_always_were() {
        let import: Vec<&str> = imports().map(|f| f.name).collect();
        assert_eq!(import, ["kbench", "pts", "hyperfine", "gbench"]);
        let export: Vec<&str> = exports().map(|f| f.name).collect();
        assert_eq!(export, ["json", "pts", "csv"]);
        let mut all: Vec<&str> = FORMATS.iter().map(|f| f.name).chain([AUTO]).collect();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), FORMATS.len() + 1, "each name once");
        assert!(
            FORMATS
                .iter()
                .all(|f| f.reading.is_some() || f.writing.is_some())
        );
    }

    #[test]
    fn names_resolve_to_their_reader_and_writer() {
        assert_eq!(reading("kbench").unwrap(), Reading::Own);
        let gbench = Reading::Foreign(Format::GoogleBenchmark);
        assert_eq!(reading("gbench").unwrap(), gbench);
        assert_eq!(writing("csv").unwrap(), Writing::Csv);
        assert_eq!(
            reading("csv").unwrap_err().to_string(),
            "--from: \"csv\" is none of auto, kbench, pts, hyperfine, gbench"
        );
        assert!(reading("json").is_err() && reading("auto").is_err());
        assert_eq!(
            writing("kbench").unwrap_err().to_string(),
            "--format: \"kbench\" is none of json, pts, csv"
        );
    }
}
