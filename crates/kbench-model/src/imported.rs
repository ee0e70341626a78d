//! What another tool's result file said of a run kbench imported from it
//! (`kbench import composite.xml`, a hyperfine or Google Benchmark JSON
//! file), kept in that tool's own words: reports show its facts in place
//! of the ones kbench reads itself, and an export to the same format
//! writes its fields back.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A labelled text: (label, value), in the order the file gave them.
pub type Field = (String, String);

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ImportedRecord {
    /// The tool that wrote the file: "Phoronix Test Suite v10.8.6",
    /// "hyperfine", "Google Benchmark".
    pub tool: String,
    /// The system as the tool described it ("Processor", "Intel Xeon (2
    /// Cores)"); shown by reports instead of kbench's own facts.
    pub facts: Vec<Field>,
    /// The file's other fields about this run, by element or key name
    /// (PTS: "Hardware", "Software", "User", "JSON", ...).
    pub fields: Vec<Field>,
    /// Per test (its kbench name), the file's fields about it (PTS:
    /// "Title", "AppVersion", "Arguments", "Description", ...).
    pub tests: BTreeMap<String, Vec<Field>>,
}

impl ImportedRecord {
    /// The value of the run's field `name`, when the file had it.
    pub fn field(&self, name: &str) -> Option<&str> {
        field_value(&self.fields, name)
    }

    /// The value of test `test`'s field `name`, when the file had it.
    pub fn test_field(&self, test: &str, name: &str) -> Option<&str> {
        self.tests
            .get(test)
            .and_then(|fields| field_value(fields, name))
    }
}

/// The value of the first field labelled `name`.
pub fn field_value<'a>(fields: &'a [Field], name: &str) -> Option<&'a str> {
    fields
        .iter()
        .find(|(label, _)| label == name)
        .map(|(_, value)| value.as_str())
}
