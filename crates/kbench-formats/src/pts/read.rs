//! Reading a `composite.xml`: every `<System>` becomes an identifier with
//! one run (its Hardware and Software as the run's facts), every bar-graph
//! `<Result>` with a better direction a test, and each `<Entry>`'s raw
//! values (`<RawString>`, else `<Value>`) its samples, one round each.

use super::schema::{
    BAR_GRAPH, ENTRY, ENTRY_PREFIX, Element, GENERATED, GENERATED_PREFIX, RESULT, ROOT, SYSTEM,
};
use crate::shared;
use crate::{FormatError, Imported};
use kbench_model::{
    Direction, Field, ImportedRecord, MAX_TEST_NAME_CHARS, MAX_UNIT_CHARS, TestKey, field_value,
};
use kbench_store::exchange::{IdentifierEntry, SCHEMA, SampleEntry, SamplesFile, TestEntry};
use roxmltree::{Document, Node};
use std::collections::{BTreeMap, HashSet};

/// Reads a PTS result file; refuses it whole, naming the element and its
/// line, when it is not well-formed, not PTS's, lacks a required element
/// or holds a value that is not a positive number.
pub fn read(text: &str) -> Result<Imported, FormatError> {
    let doc = Document::parse(text).map_err(|e| {
        FormatError::new(
            "composite.xml",
            format!("not well-formed XML ({e}); a file cut short fails like this"),
        )
    })?;
    let root = doc.root_element();
    let mut reader = Reader {
        doc: &doc,
        notes: Vec::new(),
    };
    if root.tag_name().name() != ROOT {
        return Err(FormatError::new(
            reader.at(root, &format!("<{}>", root.tag_name().name())),
            format!("this is not a PTS result file, whose root element is <{ROOT}>"),
        ));
    }
    let generated = reader.only_child(root, "Generated", "the file")?;
    let generated_fields = reader.fields(generated, "Generated", GENERATED)?;
    let client = field_value(&generated_fields, "TestClient")
        .unwrap_or("PTS")
        .to_string();
    let mut systems = Vec::new();
    for (i, node) in children(root, "System").enumerate() {
        systems.push(reader.system(node, i, &systems)?);
    }
    if systems.is_empty() {
        return Err(FormatError::new(
            reader.at(root, "the file"),
            "has no <System>: a PTS result file names at least one",
        ));
    }
    let mut tests = Vec::new();
    for (i, node) in children(root, "Result").enumerate() {
        if let Some(test) = reader.result(node, i, &systems, &tests)? {
            tests.push(test);
        }
    }
    for (name, node) in unknown(root, &["Generated", "System", "Result"]) {
        reader.note_unknown(node, &name, "the file");
    }
    let mut notes = reader.notes;
    if tests.is_empty() {
        notes.push("no result of the file could be imported (see the notes above)".to_string());
    }
    let generated_fields: Vec<Field> = generated_fields
        .into_iter()
        .map(|(name, value)| (format!("{GENERATED_PREFIX}{name}"), value))
        .collect();
    let identifiers = systems
        .iter()
        .enumerate()
        .map(|(i, system)| {
            let mut run_notes = vec![format!("imported from a {client} result file")];
            if i == 0 {
                run_notes.extend(notes.iter().cloned());
            }
            system.entry(i, &client, &generated_fields, &tests, run_notes)
        })
        .collect();
    let title = field_value(&generated_fields, "Generated/Title").map(str::to_string);
    let description = field_value(&generated_fields, "Generated/Description").map(str::to_string);
    Ok(Imported {
        file: SamplesFile {
            schema: SCHEMA.to_string(),
            result_set: title
                .clone()
                .filter(|t| kbench_model::validate_name("result set", t).is_ok()),
            title,
            description,
            tests: tests.iter().map(|t| t.spec.clone()).collect(),
            identifiers,
        },
        notes,
    })
}

/// A `<System>` read.
struct System {
    name: String,
    started_at_ms: i64,
    fields: Vec<Field>,
}

/// A `<Result>` read: its test, its elements, and per system (by index)
/// its raw values and the entry's own elements.
struct ResultTest {
    spec: TestEntry,
    fields: Vec<Field>,
    entries: BTreeMap<usize, (Vec<f64>, Vec<Field>)>,
}

impl System {
    /// This system (the `index`th) as an identifier of the samples file:
    /// one run holding its entries of every test, with what the file said
    /// of it as the run's imported record.
    fn entry(
        &self,
        index: usize,
        client: &str,
        generated: &[Field],
        tests: &[ResultTest],
        notes: Vec<String>,
    ) -> IdentifierEntry {
        let mut record = ImportedRecord {
            tool: client.to_string(),
            facts: facts(&self.fields),
            fields: self.fields.iter().chain(generated).cloned().collect(),
            tests: BTreeMap::new(),
        };
        let mut samples: BTreeMap<String, Vec<SampleEntry>> = BTreeMap::new();
        for test in tests {
            let Some((values, entry_fields)) = test.entries.get(&index) else {
                continue;
            };
            let name = test.spec.test.clone();
            samples.insert(name.clone(), shared::rounds(values, self.started_at_ms));
            let entry_fields = entry_fields
                .iter()
                .map(|(field, value)| (format!("{ENTRY_PREFIX}{field}"), value.clone()));
            let fields = test.fields.iter().cloned().chain(entry_fields).collect();
            record.tests.insert(name, fields);
        }
        shared::identifier(&self.name, record, self.started_at_ms, notes, samples)
    }
}

/// The walk over the document, with the notes of what it leaves out.
struct Reader<'a, 'input> {
    doc: &'a Document<'input>,
    notes: Vec<String>,
}

impl Reader<'_, '_> {
    /// "`label` (line N)": where `node` starts.
    fn at(&self, node: Node, label: &str) -> String {
        let line = self.doc.text_pos_at(node.range().start).row;
        format!("{label} (line {line})")
    }

    /// The one child `name` of `parent`, required.
    fn only_child<'a, 'input>(
        &self,
        parent: Node<'a, 'input>,
        name: &str,
        label: &str,
    ) -> Result<Node<'a, 'input>, FormatError> {
        let mut found = children(parent, name);
        match (found.next(), found.next()) {
            (Some(node), None) => Ok(node),
            (None, _) => Err(FormatError::new(
                self.at(parent, label),
                format!("has no <{name}>, which a PTS result file requires here"),
            )),
            (Some(_), Some(again)) => Err(FormatError::new(
                self.at(again, &format!("{label} > {name}")),
                format!("<{name}> is given twice; PTS allows it once"),
            )),
        }
    }

    /// The text of every element of `sequence` that `node` has (each at
    /// most once, the required ones present), in the schema's order;
    /// elements not in it become notes.
    fn fields(
        &mut self,
        node: Node,
        label: &str,
        sequence: &[Element],
    ) -> Result<Vec<Field>, FormatError> {
        let mut fields = Vec::new();
        for &(name, required) in sequence {
            let mut found = children(node, name);
            match (found.next(), found.next()) {
                (_, Some(again)) => {
                    return Err(FormatError::new(
                        self.at(again, &format!("{label} > {name}")),
                        format!("<{name}> is given twice; PTS allows it once"),
                    ));
                }
                (Some(child), None) => {
                    fields.push((name.to_string(), child.text().unwrap_or("").to_string()));
                }
                (None, None) if required => {
                    return Err(FormatError::new(
                        self.at(node, label),
                        format!("has no <{name}>, which a PTS result file requires here"),
                    ));
                }
                (None, None) => {}
            }
        }
        let known: Vec<&str> = sequence.iter().map(|(name, _)| *name).collect();
        for (name, child) in unknown(node, &known) {
            self.note_unknown(child, &name, label);
        }
        Ok(fields)
    }

    /// Keeps an element the schema does not have as a note.
    fn note_unknown(&mut self, node: Node, name: &str, label: &str) {
        let text = node.text().unwrap_or("").trim();
        self.notes.push(format!(
            "composite.xml: {} holds <{name}>, which PTS's schema does not have; kept here: {:?}",
            self.at(node, label),
            shared::shorten(text)
        ));
    }

    /// The `index`th `<System>`: its identifier (new among `before`), its
    /// time and its elements.
    fn system(
        &mut self,
        node: Node,
        index: usize,
        before: &[System],
    ) -> Result<System, FormatError> {
        let label = format!("System {}", index + 1);
        let fields = self.fields(node, &label, SYSTEM)?;
        let name = field_value(&fields, "Identifier").unwrap_or("").to_string();
        let at = |reader: &Self, element: &str| {
            let child = children(node, element).next().unwrap_or(node);
            reader.at(child, &format!("{label} > {element}"))
        };
        kbench_model::validate_name("identifier", &name)
            .map_err(|e| FormatError::new(at(self, "Identifier"), e))?;
        if before.iter().any(|s| s.name == name) {
            return Err(FormatError::new(
                at(self, "Identifier"),
                format!("identifier {name:?} is given twice"),
            ));
        }
        let stamp = field_value(&fields, "TimeStamp").unwrap_or("");
        let started_at_ms = shared::parse_time(stamp)
            .filter(|&ms| ms >= 0)
            .ok_or_else(|| {
                FormatError::new(
                    at(self, "TimeStamp"),
                    format!("{stamp:?} is not a time like 2026-12-01 18:50:09"),
                )
            })?;
        Ok(System {
            name,
            started_at_ms,
            fields,
        })
    }

    /// The `index`th `<Result>` as a test, or None (with a note) when
    /// kbench cannot hold it: not a bar graph, or no better direction.
    fn result(
        &mut self,
        node: Node,
        index: usize,
        systems: &[System],
        before: &[ResultTest],
    ) -> Result<Option<ResultTest>, FormatError> {
        let label = format!("Result {}", index + 1);
        let mut fields = self.fields(node, &label, RESULT)?;
        fields.retain(|(name, _)| name != "Data");
        let field = |name: &str| field_value(&fields, name).unwrap_or("").trim().to_string();
        let shown = format!("{label} ({} {:?})", field("Title"), field("Description"));
        let direction = match field("Proportion").as_str() {
            "HIB" => Some(Direction::Higher),
            "LIB" => Some(Direction::Lower),
            _ => None,
        };
        let (Some(direction), BAR_GRAPH) = (direction, field("DisplayFormat").as_str()) else {
            self.notes.push(format!(
                "not imported: {shown}, a {} with proportion {:?}: kbench keeps bar-graph \
                 results that are higher or lower is better",
                field("DisplayFormat"),
                field("Proportion")
            ));
            return Ok(None);
        };
        let scale = field("Scale");
        if scale.is_empty() {
            return Err(FormatError::new(
                self.at(
                    children(node, "Scale").next().unwrap_or(node),
                    &format!("{label} > Scale"),
                ),
                "is empty; kbench needs the unit of the numbers",
            ));
        }
        let unit: String = scale.chars().take(MAX_UNIT_CHARS).collect();
        let used: HashSet<&str> = before.iter().map(|t| t.spec.test.as_str()).collect();
        let test = test_name(&fields, index, &used);
        let data = self.only_child(node, "Data", &label)?;
        for (name, child) in unknown(data, &["Entry"]) {
            self.note_unknown(child, &name, &format!("{label} > Data"));
        }
        let mut entries = BTreeMap::new();
        for (j, entry) in children(data, "Entry").enumerate() {
            let at = format!("{label} > Data > Entry {}", j + 1);
            let entry_fields = self.fields(entry, &at, ENTRY)?;
            let name = field_value(&entry_fields, "Identifier")
                .unwrap_or("")
                .to_string();
            let Some(system) = systems.iter().position(|s| s.name == name) else {
                return Err(FormatError::new(
                    self.at(entry, &at),
                    format!("identifier {name:?} is not one of the file's <System>s"),
                ));
            };
            let values = self.values(entry, &at, &entry_fields)?;
            let kept = entry_fields
                .into_iter()
                .filter(|(n, _)| !matches!(n.as_str(), "Identifier" | "Value" | "RawString"))
                .collect();
            if entries.insert(system, (values, kept)).is_some() {
                return Err(FormatError::new(
                    self.at(entry, &at),
                    format!("identifier {name:?} has two entries in this result"),
                ));
            }
        }
        if entries.is_empty() {
            return Err(FormatError::new(
                self.at(data, &format!("{label} > Data")),
                "has no <Entry>; PTS writes one per identifier measured",
            ));
        }
        Ok(Some(ResultTest {
            spec: TestEntry {
                test,
                unit,
                direction,
            },
            fields,
            entries,
        }))
    }

    /// An entry's raw values: `<RawString>`'s colon-separated numbers when
    /// it has them, else its `<Value>`.
    fn values(&self, entry: Node, at: &str, fields: &[Field]) -> Result<Vec<f64>, FormatError> {
        let raw = field_value(fields, "RawString").unwrap_or("").trim();
        let (element, parts): (&str, Vec<&str>) = if raw.is_empty() {
            ("Value", vec![field_value(fields, "Value").unwrap_or("")])
        } else {
            ("RawString", raw.split(':').collect())
        };
        let node = children(entry, element).next().unwrap_or(entry);
        let place = self.at(node, &format!("{at} > {element}"));
        parts
            .iter()
            .enumerate()
            .map(|(k, part)| {
                let which = if parts.len() > 1 {
                    format!("{place}, value {}", k + 1)
                } else {
                    place.clone()
                };
                shared::positive(part, &which)
            })
            .collect()
    }
}

/// The kbench test name of a result: its PTS test identifier with the
/// description's `Name: value` pairs as options
/// (`pts/redis-1.4.0[Parallel Connections=50,Test=GET]`), without options
/// when they do not read as pairs or make the name too long, and with the
/// result's position as the metric when that name is already `used`.
fn test_name(fields: &[Field], index: usize, used: &HashSet<&str>) -> String {
    let profile = shared::name_part(field_value(fields, "Identifier").unwrap_or(""));
    let mut key = TestKey::new(if profile.is_empty() { "pts" } else { &profile });
    let description = field_value(fields, "Description").unwrap_or("");
    let pairs: Option<Vec<(String, String)>> = description
        .split(" - ")
        .filter(|part| !part.trim().is_empty())
        .map(|part| {
            let (name, value) = part.split_once(": ")?;
            let (name, value) = (shared::name_part(name), shared::name_part(value));
            (!name.is_empty() && !value.is_empty()).then_some((name, value))
        })
        .collect();
    if let Some(pairs) = pairs {
        let mut described = key.clone();
        described.options = pairs.into_iter().collect();
        if described.to_string().chars().count() <= MAX_TEST_NAME_CHARS - 12 {
            key = described;
        }
    }
    if used.contains(key.to_string().as_str()) {
        key = key.with_metric(&format!("result{}", index + 1));
    }
    key.to_string()
}

/// The labelled facts of a system's Hardware and Software strings
/// ("Processor: Intel Xeon (2 Cores), Memory: 24GB"), in their order; a
/// piece without a label belongs to the value before it.
fn facts(fields: &[Field]) -> Vec<Field> {
    let mut facts: Vec<Field> = Vec::new();
    for text in ["Hardware", "Software"].map(|name| field_value(fields, name).unwrap_or("")) {
        for piece in text.split(", ").filter(|p| !p.trim().is_empty()) {
            match (piece.split_once(": "), facts.last_mut()) {
                (Some((label, value)), _) => {
                    facts.push((label.trim().to_string(), value.trim().to_string()));
                }
                (None, Some((_, value))) => {
                    value.push_str(", ");
                    value.push_str(piece.trim());
                }
                (None, None) => facts.push(("System".to_string(), piece.trim().to_string())),
            }
        }
    }
    facts
}

/// The element children of `node` named `name`.
fn children<'a, 'input>(
    node: Node<'a, 'input>,
    name: &str,
) -> std::vec::IntoIter<Node<'a, 'input>> {
    let found: Vec<Node> = node
        .children()
        .filter(|c| c.is_element() && c.tag_name().name() == name)
        .collect();
    found.into_iter()
}

/// The element children of `node` whose names are not in `known`.
fn unknown<'a, 'input>(node: Node<'a, 'input>, known: &[&str]) -> Vec<(String, Node<'a, 'input>)> {
    node.children()
        .filter(|c| c.is_element() && !known.contains(&c.tag_name().name()))
        .map(|c| (c.tag_name().name().to_string(), c))
        .collect()
}
