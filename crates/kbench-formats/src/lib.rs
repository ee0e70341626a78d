//! Result files of other tools, in and out (docs/formats.md).
//!
//! Every reader turns a file into a `kbench.samples/1` document
//! ([`SamplesFile`]), so an import passes the store's checks like any other
//! (`kbench_store::exchange::to_result_set`); what the file said that
//! kbench has no place for is kept, in the tool's own words, as each run's
//! [`kbench_model::ImportedRecord`] (shown as the system's facts, written
//! back by an export) or as a note. Files that cannot be read are refused
//! whole, naming the element or key.
//!
//! - PTS `composite.xml`: read ([`pts::read`]) and written ([`pts::write`]).
//! - hyperfine `--export-json`: read, one round per timed run.
//! - Google Benchmark `--benchmark_format=json`: read, one round per
//!   repetition.

mod error;
mod gbench;
mod hyperfine;
pub mod pts;
mod shared;

pub use error::FormatError;

use kbench_model::results::ResultSetData;
use kbench_store::exchange::{self, SamplesFile};
use std::io::Read;
use std::path::Path;

/// The `--from` names of `kbench import`: `auto` finds the format from the
/// file's content, `kbench` is kbench.samples/1.
pub const FROM: [&str; 5] = ["auto", "kbench", "pts", "hyperfine", "gbench"];

/// The `--format` names of `kbench export`.
pub const EXPORTS: [&str; 2] = ["json", "pts"];

/// The formats `kbench import` reads besides its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// The Phoronix Test Suite's result file, `composite.xml`.
    Pts,
    /// `hyperfine --export-json FILE`.
    Hyperfine,
    /// Google Benchmark's `--benchmark_format=json` (or `--benchmark_out`).
    GoogleBenchmark,
}

impl Format {
    /// Every format, in the order `--from` lists them.
    pub const ALL: [Format; 3] = [Format::Pts, Format::Hyperfine, Format::GoogleBenchmark];

    /// Its `--from` name.
    pub fn name(self) -> &'static str {
        match self {
            Format::Pts => "pts",
            Format::Hyperfine => "hyperfine",
            Format::GoogleBenchmark => "gbench",
        }
    }

    /// The format named `name` (see [`Format::name`]).
    pub fn parse(name: &str) -> Option<Format> {
        Format::ALL.into_iter().find(|f| f.name() == name)
    }

    /// The foreign format `text` is in, by its first element or keys; None
    /// for anything else (kbench's own JSON, or a file no reader knows).
    pub fn detect(text: &str) -> Option<Format> {
        let start = text.trim_start_matches('\u{feff}').trim_start();
        if start.starts_with('<') {
            return Some(Format::Pts);
        }
        let value: serde_json::Value = serde_json::from_str(text).ok()?;
        let object = value.as_object()?;
        if object.contains_key("results") {
            Some(Format::Hyperfine)
        } else if object.contains_key("benchmarks") && object.contains_key("context") {
            Some(Format::GoogleBenchmark)
        } else {
            None
        }
    }
}

/// What the file does not say and the caller knows.
#[derive(Debug, Clone, Default)]
pub struct ReadOptions {
    /// The identifier the samples go under, for formats that have none
    /// (hyperfine, Google Benchmark): usually the file's name.
    pub identifier: Option<String>,
    /// When it was measured, for formats that do not say (hyperfine): the
    /// file's modification time, in milliseconds since the epoch.
    pub at_ms: i64,
}

/// A file read: the document to import, and the notes of what was not
/// imported or is worth knowing (also stored with the first run).
#[derive(Debug, Clone, PartialEq)]
pub struct Imported {
    pub file: SamplesFile,
    pub notes: Vec<String>,
}

/// Reads `text` as `format`.
pub fn read(format: Format, text: &str, options: &ReadOptions) -> Result<Imported, FormatError> {
    match format {
        Format::Pts => pts::read(text),
        Format::Hyperfine => hyperfine::read(text, options),
        Format::GoogleBenchmark => gbench::read(text, options),
    }
}

/// What `kbench import` was asked: the file (`-` for stdin), its format
/// (one of [`FROM`]), the result set to import into and, for formats that
/// name none, the identifier (default: the file's name without extension).
#[derive(Debug, Clone, Copy)]
pub struct ImportRequest<'a> {
    pub path: &'a Path,
    pub from: &'a str,
    pub into: Option<&'a str>,
    pub identifier: Option<&'a str>,
}

/// A file read and checked, ready for the store.
#[derive(Debug, Clone, PartialEq)]
pub struct Loaded {
    pub data: ResultSetData,
    /// What was not imported or is worth knowing.
    pub notes: Vec<String>,
}

impl Loaded {
    /// The lines `kbench import` prints when it is done.
    pub fn summary(&self) -> String {
        let data = &self.data;
        let mut text = format!(
            "Imported {} identifier(s), {} test(s), {} sample(s) into result set '{}'.",
            data.identifiers.len(),
            data.tests.len(),
            data.sample_count(),
            data.name
        );
        for note in &self.notes {
            text.push_str(&format!("\nnote: {note}"));
        }
        text
    }
}

/// Reads and checks the file of `request`; nothing is written.
pub fn load(request: &ImportRequest) -> Result<Loaded, FormatError> {
    let source = request.path.display().to_string();
    let io = |e: std::io::Error| FormatError::new(&source, format!("cannot read it: {e}"));
    let (text, at_ms) = if source == "-" {
        let mut text = String::new();
        std::io::stdin().read_to_string(&mut text).map_err(io)?;
        (text, kbench_model::now_ms())
    } else {
        let text = std::fs::read_to_string(request.path).map_err(io)?;
        let modified = std::fs::metadata(request.path).and_then(|m| m.modified());
        let at_ms = modified
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok());
        (
            text,
            at_ms.map_or_else(kbench_model::now_ms, |d| d.as_millis() as i64),
        )
    };
    let format = match request.from {
        "auto" => Format::detect(&text),
        "kbench" => None,
        name => Some(Format::parse(name).ok_or_else(|| {
            FormatError::new("--from", format!("{name:?} is none of {}", FROM.join(", ")))
        })?),
    };
    let named = matches!(format, Some(Format::Hyperfine | Format::GoogleBenchmark));
    if request.identifier.is_some() && !named {
        return Err(FormatError::new(
            "--identifier",
            "this file names its identifiers; --identifier is for hyperfine and Google \
             Benchmark files",
        ));
    }
    let stem = request.path.file_stem().filter(|_| source != "-");
    let options = ReadOptions {
        identifier: request
            .identifier
            .map(str::to_string)
            .or_else(|| stem.map(|s| s.to_string_lossy().into_owned())),
        at_ms,
    };
    let imported = match format {
        Some(format) => read(format, &text, &options)?,
        None => {
            let data = exchange::parse(&text, request.into)
                .map_err(|e| FormatError::new("kbench.samples/1", e.0))?;
            return Ok(Loaded {
                data,
                notes: vec![],
            });
        }
    };
    let data = exchange::to_result_set(&imported.file, request.into)
        .map_err(|e| FormatError::new("the samples read from it", e.0))?;
    Ok(Loaded {
        data,
        notes: imported.notes,
    })
}

/// `data` written as `format` (one of [`EXPORTS`]) by kbench
/// `kbench_version`.
pub fn export(
    data: &ResultSetData,
    format: &str,
    kbench_version: &str,
) -> Result<String, FormatError> {
    match format {
        "json" => serde_json::to_string_pretty(&exchange::export(data))
            .map(|text| text + "\n")
            .map_err(|e| FormatError::new("the export", e.to_string())),
        "pts" => pts::write(
            data,
            &pts::Export {
                kbench_version: kbench_version.to_string(),
                now_ms: kbench_model::now_ms(),
            },
        ),
        other => Err(FormatError::new(
            "--format",
            format!("{other:?} is none of {}", EXPORTS.join(", ")),
        )),
    }
}
