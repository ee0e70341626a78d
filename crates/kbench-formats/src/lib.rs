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
//! - CSV, one row per raw sample: written ([`csv::export`]).
//! - hyperfine `--export-json`: read, one round per timed run.
//! - Google Benchmark `--benchmark_format=json`: read, one round per
//!   repetition.
//!
//! [`registry`] names them all for `kbench import --from` and `kbench
//! export --format`.

pub mod csv;
mod error;
mod gbench;
mod hyperfine;
pub mod pts;
pub mod registry;
mod shared;

pub use error::{ExportError, FormatError};

use registry::{AUTO, Reading, Writing};

use kbench_model::results::ResultSetData;
use kbench_store::exchange::stream::{self, Stored};
use kbench_store::exchange::{self, SamplesFile};
use kbench_store::{Exchange, Results, StoreError};
use serde::Deserializer;
use std::io::{BufRead, BufReader, Read, Seek, Write};
use std::path::Path;
use std::time::SystemTime;

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
    /// The foreign format `text` is in, by its first element or keys; None
    /// for anything else (kbench's own JSON, or a file no reader knows).
    pub fn detect(text: &str) -> Option<Format> {
        Format::sniff(text.as_bytes())
    }

    /// [`Format::detect`] of what `reader` gives, read once in memory that
    /// does not grow with it (the top-level keys, their values skipped,
    /// up to kbench's own "schema").
    pub fn sniff(reader: impl Read) -> Option<Format> {
        let mut reader = BufReader::with_capacity(1 << 16, reader);
        loop {
            let start = reader.fill_buf().ok()?;
            let blank = start.iter().take_while(|b| b.is_ascii_whitespace()).count();
            let bom = start[blank..].starts_with("\u{feff}".as_bytes());
            match start.get(blank) {
                None if start.is_empty() => return None,
                Some(b'<') => return Some(Format::Pts),
                Some(_) if !bom => break,
                _ => {}
            }
            reader.consume(blank + if bom { 3 } else { 0 });
        }
        let mut keys = Vec::new();
        let read =
            serde_json::Deserializer::from_reader(reader).deserialize_map(TopKeys(&mut keys));
        // Reading stopped at "schema" fails serde_json's check of the map's
        // end; that is fine, the keys so far decide.
        if read.is_err() && keys.last().is_none_or(|key| key != OWN_FIRST_KEY) {
            return None;
        }
        let has = |key: &str| keys.iter().any(|k| k == key);
        if has("results") {
            Some(Format::Hyperfine)
        } else if has("benchmarks") && has("context") {
            Some(Format::GoogleBenchmark)
        } else {
            None
        }
    }

    /// [`Format::sniff`] of a pipe or standard input, and a reader of
    /// everything it gives from its start: what sniffing read is kept and
    /// given again, so that a pipe is read once. What is kept is what
    /// sniffing read: a buffer of 64 KiB, or more for a JSON document
    /// whose keys before "schema" are long. A regular file is not kept but
    /// read again from its start ([`open_sniffed`]).
    fn sniff_keeping(reader: Box<dyn Read + Send>) -> (Option<Format>, Box<dyn Read + Send>) {
        let mut kept = Keeping {
            reader,
            read: Vec::new(),
        };
        let format = Format::sniff(&mut kept);
        let again = std::io::Cursor::new(kept.read).chain(kept.reader);
        (format, Box::new(again))
    }
}

/// A reader that keeps a copy of every byte read through it.
struct Keeping<R> {
    reader: R,
    read: Vec<u8>,
}

impl<R: Read> Read for Keeping<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.reader.read(buf)?;
        self.read.extend_from_slice(&buf[..n]);
        Ok(n)
    }
}

/// The key kbench.samples/1 documents begin with and no foreign format
/// has: reading a file's keys stops there, so kbench's own file (of any
/// size) is not read twice.
const OWN_FIRST_KEY: &str = "schema";

/// The keys of a JSON object, its values skipped as they are read, up to
/// [`OWN_FIRST_KEY`].
struct TopKeys<'a>(&'a mut Vec<String>);

impl<'de> serde::de::Visitor<'de> for TopKeys<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an object")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            let own = key == OWN_FIRST_KEY;
            self.0.push(key);
            if own {
                return Ok(());
            }
            map.next_value::<serde::de::IgnoredAny>()?;
        }
        Ok(())
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
/// ([`registry::AUTO`] or the name of a format [`registry::imports`]), the result set to import into and, for formats that
/// name none, the identifier (default: the file's name without extension).
#[derive(Debug, Clone, Copy)]
pub struct ImportRequest<'a> {
    pub path: &'a Path,
    pub from: &'a str,
    pub into: Option<&'a str>,
    pub identifier: Option<&'a str>,
}

/// What `kbench import` stored, as the lines it prints when done.
fn summary(stored: &Stored, notes: &[String]) -> String {
    let mut text = format!(
        "Imported {} identifier(s), {} test(s), {} sample(s) into result set '{}'.",
        stored.identifiers, stored.tests, stored.samples, stored.set
    );
    if stored.read_whole {
        text.push_str(
            "\nnote: the file gives its identifiers before the set's name or tests, so it was \
             held in memory whole; files in kbench export's order are read as they stream in",
        );
    }
    for note in notes {
        text.push_str(&format!("\nnote: {note}"));
    }
    text
}

/// Why `kbench import` stored nothing: the file (its path first), or the
/// store.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("{0}; nothing was imported")]
    Format(FormatError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Not `#[from]`: that would make the file's error this one's source too,
/// and its message would be printed twice.
impl From<FormatError> for ImportError {
    fn from(error: FormatError) -> ImportError {
        ImportError::Format(error)
    }
}

/// Reads the file of `request` and imports it into `store` in one
/// transaction (all or nothing); returns the lines to print. A
/// kbench.samples/1 file is imported as it is read, in memory that does not
/// grow with the file ([`stream::import`]); the other formats are read
/// whole (one tool's run of one machine: small by nature).
pub fn import(request: &ImportRequest, store: &mut dyn Exchange) -> Result<String, ImportError> {
    store_file(request, store).map_err(|e| match e {
        ImportError::Format(mut e) => {
            let path = request.path.display();
            e.at = match e.at.as_str() {
                "" => path.to_string(),
                at => format!("{path}: {at}"),
            };
            ImportError::Format(e)
        }
        e => e,
    })
}

fn store_file(request: &ImportRequest, store: &mut dyn Exchange) -> Result<String, ImportError> {
    // `import` puts the file's path before the message.
    let io = |e: std::io::Error| FormatError::new("", format!("cannot read it: {e}"));
    let stdin = request.path == Path::new("-");
    let named = |format| matches!(format, Some(Format::Hyperfine | Format::GoogleBenchmark));
    let (format, sniffed) = if request.from == AUTO {
        let (format, file, modified) = open_sniffed(request.path).map_err(io)?;
        (format, Some((file, modified)))
    } else {
        let reading = registry::reading(request.from)?;
        match reading {
            Reading::Own => (None, None),
            Reading::Foreign(format) => (Some(format), None),
        }
    };
    if request.identifier.is_some() && !named(format) {
        return Err(FormatError::new(
            "--identifier",
            "this file names its identifiers; --identifier is for hyperfine and Google \
             Benchmark files",
        )
        .into());
    }
    let (mut file, modified) = match sniffed {
        Some(opened) => opened,
        None => open(request.path).map_err(io)?,
    };
    let Some(format) = format else {
        let stored = stream::import(file, request.into, store).map_err(|e| match e {
            stream::ImportError::File(e) => FormatError::new("kbench.samples/1", e.0).into(),
            stream::ImportError::Store(e) => ImportError::Store(e),
        })?;
        return Ok(summary(&stored, &[]));
    };
    let mut text = String::new();
    file.read_to_string(&mut text).map_err(io)?;
    let at_ms = modified
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or_else(kbench_model::now_ms, |d| d.as_millis() as i64);
    let stem = request.path.file_stem().filter(|_| !stdin);
    let options = ReadOptions {
        identifier: request
            .identifier
            .map(str::to_string)
            .or_else(|| stem.map(|s| s.to_string_lossy().into_owned())),
        at_ms,
    };
    let imported = read(format, &text, &options)?;
    let data = exchange::to_result_set(&imported.file, request.into)
        .map_err(|e| FormatError::new("the samples read from it", e.0))?;
    store.import(&data)?;
    let stored = Stored {
        set: data.name.clone(),
        identifiers: data.identifiers.len(),
        tests: data.tests.len(),
        samples: data.sample_count(),
        read_whole: false,
    };
    Ok(summary(&stored, &imported.notes))
}

/// The file at `path` (stdin for `-`) and its modification time (none for
/// stdin), opened once: a pipe (`-`, or a path such as `<(...)`'s
/// /dev/fd/63) cannot be read again.
/// A file's format as told by its content, a reader from its start, and
/// its modification time.
type Sniffed = (Option<Format>, Box<dyn Read + Send>, Option<SystemTime>);

/// `path` (`-`: standard input) opened once and its format told apart by
/// its content. A regular file is sought back to its start after
/// sniffing, so nothing of it is held; a pipe (`<(...)`, `/dev/fd/N`) or
/// standard input gives again what sniffing kept.
fn open_sniffed(path: &Path) -> std::io::Result<Sniffed> {
    if path == Path::new("-") {
        let (format, input) = Format::sniff_keeping(Box::new(std::io::stdin()));
        return Ok((format, input, None));
    }
    let mut file = std::fs::File::open(path)?;
    let metadata = file.metadata()?;
    let modified = metadata.modified().ok();
    if !metadata.is_file() {
        let (format, input) = Format::sniff_keeping(Box::new(file));
        return Ok((format, input, modified));
    }
    let format = Format::sniff(&mut file);
    file.rewind()?;
    Ok((format, Box::new(file), modified))
}

fn open(path: &Path) -> std::io::Result<(Box<dyn Read + Send>, Option<SystemTime>)> {
    if path == Path::new("-") {
        return Ok((Box::new(std::io::stdin()), None));
    }
    let file = std::fs::File::open(path)?;
    let modified = file.metadata().and_then(|m| m.modified()).ok();
    Ok((Box::new(file), modified))
}

/// What `kbench export` was asked: the set, the format (the name of one
/// of [`registry::exports`]), the identifiers to keep (empty: all; CSV only) and the
/// version of kbench writing it.
#[derive(Debug, Clone, Copy)]
pub struct ExportRequest<'a> {
    pub set: &'a str,
    pub format: &'a str,
    pub identifiers: &'a [String],
    pub kbench_version: &'a str,
}

/// Writes the export `request` asks for to `out`. CSV streams, one
/// identifier in memory at a time; JSON and PTS are documents written
/// from the set read whole.
pub fn export(
    store: &mut dyn Results,
    request: &ExportRequest,
    out: &mut dyn Write,
) -> Result<(), ExportError> {
    let writing = registry::writing(request.format)?;
    let text = match writing {
        Writing::Csv => {
            csv::export(store, request.set, request.identifiers, out)?;
            return Ok(());
        }
        Writing::Samples => {
            serde_json::to_string_pretty(&exchange::export(&whole_set(store, request)?))
                .map(|text| text + "\n")
                .map_err(|e| FormatError::new("the export", e.to_string()))?
        }
        Writing::Pts => pts::write(
            &whole_set(store, request)?,
            &pts::Export {
                kbench_version: request.kbench_version.to_string(),
                now_ms: kbench_model::now_ms(),
            },
        )?,
    };
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}

/// The set `request` exports as one document (JSON or PTS), read whole:
/// such a document holds every identifier.
fn whole_set(
    store: &mut dyn Results,
    request: &ExportRequest,
) -> Result<ResultSetData, ExportError> {
    if !request.identifiers.is_empty() {
        return Err(FormatError::new(
            "--identifier",
            "only --format csv exports some identifiers; json and pts export the whole set",
        )
        .into());
    }
    Ok(store.load(request.set)?)
}
