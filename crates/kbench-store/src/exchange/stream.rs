//! `kbench import` of a kbench.samples/1 document as it is read: each
//! identifier is parsed, checked ([`super::to_result_set`]'s checks) and
//! handed to the store, which writes it while the next is read (on a
//! thread of its own), so memory holds a few identifiers, never the file.
//! The whole document is read inside the store's one transaction
//! ([`Exchange::import_each`]): a bad last sample, a file cut off or
//! trailing garbage roll everything back.
//!
//! Streaming needs the set's name (in the file or `--into`) and `tests`
//! before `identifiers`, the order `kbench export` writes. A file in
//! another order is still imported: its identifiers are read whole into
//! memory first, and [`Stored::read_whole`] says so.

use super::{
    ExchangeError, IdentifierEntry, Identifiers, SCHEMA, TestEntry, check_schema, check_text,
    set_name, test_specs,
};
use crate::{Exchange, IdentifierData, SetHead, SetWriter, StoreError};
use kbench_model::TestSpec;
use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use std::io::{BufReader, Read};
use std::sync::mpsc::SyncSender;

/// What an import stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stored {
    pub set: String,
    pub identifiers: usize,
    pub tests: usize,
    pub samples: usize,
    /// The file gave its identifiers before the set's name or tests, so
    /// they were held in memory until those came.
    pub read_whole: bool,
}

/// A document refused (nothing of it stored): the file's fault, or the
/// store's.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error(transparent)]
    File(#[from] ExchangeError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The document's fields, for serde's messages.
const FIELDS: &[&str] = &[
    "schema",
    "result_set",
    "title",
    "description",
    "tests",
    "identifiers",
];

/// Reads a kbench.samples/1 document from `reader` and imports it into
/// `store`, identifier by identifier, in one transaction; `into` overrides
/// its result set's name. The document is read and checked on a thread of
/// its own while the store writes what came before (a few identifiers in
/// flight at most).
pub fn import(
    reader: impl Read + Send,
    into: Option<&str>,
    store: &mut dyn Exchange,
) -> Result<Stored, ImportError> {
    let mut reader = Some(reader);
    let mut outcome = None;
    let stored = store.import_each(&mut |writer| {
        let Some(reader) = reader.take() else {
            return Err(StoreError::Database(
                "the import read its document twice".to_string(),
            ));
        };
        let (send, parts) = std::sync::mpsc::sync_channel(IN_FLIGHT);
        let (read, written) = std::thread::scope(|scope| {
            let reading = scope.spawn(move || read(reader, into, send));
            // Stops at the first failure: the reader then fails to send.
            let written = parts.iter().try_for_each(|part| part.write(writer));
            drop(parts);
            let read = reading
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            (read, written)
        });
        let result = match (read, written) {
            (Ok(stored), Ok(())) => Ok(stored),
            // A failed write stopped the reading.
            (_, Err(failed)) => Err(failed.into()),
            (Err(refused), Ok(())) => Err(refused),
        };
        let refused = result.is_err();
        outcome = Some(result);
        if refused {
            // The reason is in `outcome`; this only rolls back.
            Err(StoreError::Invalid("the document was refused".to_string()))
        } else {
            Ok(())
        }
    });
    match (stored, outcome) {
        (_, Some(Err(refused))) => Err(refused),
        (Ok(()), Some(Ok(stored))) => Ok(stored),
        (Err(failed), _) => Err(failed.into()),
        (Ok(()), None) => Err(StoreError::Database(
            "the import ended without reading its document".to_string(),
        )
        .into()),
    }
}

/// Identifiers read ahead of the store, waiting to be written.
const IN_FLIGHT: usize = 2;

/// What the reading thread hands to the store, in order.
enum Part {
    Start {
        name: String,
        tests: Vec<TestSpec>,
    },
    Identifier(IdentifierData),
    Describe {
        title: Option<String>,
        description: Option<String>,
    },
}

impl Part {
    fn write(self, writer: &mut dyn SetWriter) -> Result<(), StoreError> {
        match self {
            Part::Start { name, tests } => writer.start(&SetHead {
                name: &name,
                tests: &tests,
            }),
            Part::Identifier(identifier) => writer.identifier(&identifier),
            Part::Describe { title, description } => {
                writer.describe(title.as_deref(), description.as_deref())
            }
        }
    }
}

/// Reads and checks the whole document, sending its parts to `send`.
fn read(
    reader: impl Read,
    into: Option<&str>,
    send: SyncSender<Part>,
) -> Result<Stored, ImportError> {
    let mut document = Document {
        into,
        send,
        fields: Fields::default(),
        stored: None,
        failed: None,
    };
    let mut de = serde_json::Deserializer::from_reader(BufReader::with_capacity(1 << 16, reader));
    let read = (&mut document).deserialize(&mut de).and_then(|()| de.end());
    read.map_err(|e| {
        // serde_json's message ends with the line and column.
        document
            .failed
            .take()
            .unwrap_or_else(|| ExchangeError(e.to_string()).into())
    })?;
    document.finish()
}

/// The top-level fields read so far.
#[derive(Default)]
struct Fields {
    schema: Option<String>,
    result_set: Option<Option<String>>,
    title: Option<Option<String>>,
    description: Option<Option<String>>,
    tests: Option<Vec<TestSpec>>,
    /// Identifiers held in memory because they came before what streaming
    /// needs; `Some(vec![])` once streamed.
    identifiers: Option<Vec<IdentifierEntry>>,
}

/// The document being read and written: serde's visitor of its top-level
/// object.
struct Document<'a> {
    into: Option<&'a str>,
    send: SyncSender<Part>,
    fields: Fields,
    /// Set once the set is started.
    stored: Option<Stored>,
    /// Why reading stopped, when it was not the JSON itself.
    failed: Option<ImportError>,
}

impl Document<'_> {
    /// Keeps `why` and stops serde with an error standing for it.
    fn stop<E: de::Error>(&mut self, why: impl Into<ImportError>) -> E {
        self.failed = Some(why.into());
        E::custom("stopped")
    }

    /// The set's name when streaming can start: its tests and name known.
    fn ready(&self) -> Option<String> {
        self.fields.tests.as_ref()?;
        set_name(
            self.into,
            self.fields.result_set.clone().flatten().as_deref(),
        )
        .ok()
    }

    /// Hands `part` to the store; fails once the store has stopped (its
    /// own failure is then the import's).
    fn send(&self, part: Part) -> Result<(), ImportError> {
        self.send.send(part).map_err(|_| {
            StoreError::Database("the store stopped taking the import".to_string()).into()
        })
    }

    /// Starts the set named `name` with the tests read.
    fn start(&mut self, name: String) -> Result<(), ImportError> {
        let tests = self.fields.tests.clone().unwrap_or_default();
        self.stored = Some(Stored {
            set: name.clone(),
            identifiers: 0,
            tests: tests.len(),
            samples: 0,
            read_whole: false,
        });
        self.send(Part::Start { name, tests })
    }

    /// Checks and writes one identifier.
    fn write(
        &mut self,
        checked: &mut Identifiers,
        entry: &IdentifierEntry,
    ) -> Result<(), ImportError> {
        let data = checked.next(entry)?;
        if let Some(stored) = &mut self.stored {
            stored.identifiers += 1;
            stored.samples += data.sample_count();
        }
        self.send(Part::Identifier(data))
    }

    /// After the document's end: the checks of what came late or not at
    /// all, then the identifiers held back, the title and description.
    fn finish(mut self) -> Result<Stored, ImportError> {
        let missing = |field: &str| ExchangeError(format!("missing field `{field}`"));
        check_schema(
            self.fields
                .schema
                .as_deref()
                .ok_or_else(|| missing("schema"))?,
        )?;
        let held = self
            .fields
            .identifiers
            .take()
            .ok_or_else(|| missing("identifiers"))?;
        if self.fields.tests.is_none() {
            return Err(missing("tests").into());
        }
        if self.stored.is_none() {
            let name = set_name(
                self.into,
                self.fields.result_set.clone().flatten().as_deref(),
            )?;
            self.start(name)?;
            let mut checked = Identifiers::new(self.fields.tests.as_deref().unwrap_or_default());
            for entry in &held {
                self.write(&mut checked, entry)?;
            }
            if let Some(stored) = &mut self.stored {
                stored.read_whole = !held.is_empty();
            }
        }
        let describe = Part::Describe {
            title: self.fields.title.take().flatten(),
            description: self.fields.description.take().flatten(),
        };
        self.send(describe)?;
        self.stored.take().ok_or_else(|| {
            StoreError::Database("the import stored no result set".to_string()).into()
        })
    }
}

impl<'de> DeserializeSeed<'de> for &mut Document<'_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for &mut Document<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "a {SCHEMA} document (an object)")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            let fields = &mut self.fields;
            let given = match key.as_str() {
                "schema" => fields.schema.is_some(),
                "result_set" => fields.result_set.is_some(),
                "title" => fields.title.is_some(),
                "description" => fields.description.is_some(),
                "tests" => fields.tests.is_some(),
                "identifiers" => fields.identifiers.is_some(),
                _ => return Err(de::Error::unknown_field(&key, FIELDS)),
            };
            if given {
                return Err(de::Error::custom(format_args!("duplicate field `{key}`")));
            }
            match key.as_str() {
                "schema" => {
                    let schema: String = map.next_value()?;
                    check_schema(&schema).map_err(|e| self.stop(e))?;
                    self.fields.schema = Some(schema);
                }
                "result_set" => self.fields.result_set = Some(map.next_value()?),
                "title" | "description" => {
                    let text: Option<String> = map.next_value()?;
                    check_text(&key, text.as_deref()).map_err(|e| self.stop(e))?;
                    let field = match key.as_str() {
                        "title" => &mut self.fields.title,
                        _ => &mut self.fields.description,
                    };
                    *field = Some(text);
                }
                "tests" => {
                    let entries: Vec<TestEntry> = map.next_value()?;
                    self.fields.tests = Some(test_specs(&entries).map_err(|e| self.stop(e))?);
                }
                _ => match self.ready() {
                    Some(name) => {
                        self.start(name).map_err(|e| self.stop(e))?;
                        map.next_value_seed(Streamed(&mut *self))?;
                        self.fields.identifiers = Some(Vec::new());
                    }
                    None => self.fields.identifiers = Some(map.next_value()?),
                },
            }
        }
        Ok(())
    }
}

/// The `identifiers` list, each written as soon as it is read.
struct Streamed<'d, 'a>(&'d mut Document<'a>);

impl<'de> DeserializeSeed<'de> for Streamed<'_, '_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Streamed<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a list of identifiers")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut checked = Identifiers::new(self.0.fields.tests.as_deref().unwrap_or_default());
        while let Some(entry) = seq.next_element::<IdentifierEntry>()? {
            self.0
                .write(&mut checked, &entry)
                .map_err(|e| self.0.stop(e))?;
        }
        Ok(())
    }
}
