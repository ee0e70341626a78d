//! Writing a result set as a `composite.xml` that validates against PTS's
//! schema: one `<System>` per identifier, one `<Result>` per test with
//! samples (monitors and counters are not results), each identifier's
//! raw values as `<RawString>` and their mean as `<Value>`. What a PTS
//! import kept (titles, arguments, descriptions, Hardware and Software
//! strings, each entry's JSON) is written back as it was read.

use super::schema::{
    BAR_GRAPH, ENTRY_PREFIX, Element, GENERATED, GENERATED_PREFIX, RESULT, SYSTEM,
};
use crate::FormatError;
use crate::shared;
use kbench_model::results::{IdentifierData, ResultSetData};
use kbench_model::{Direction, ImportedRecord, MAIN_METRIC, SystemSnapshot, TestKey, TestSpec};

/// What an export says of itself.
#[derive(Debug, Clone)]
pub struct Export {
    /// The kbench version writing the file (its `<TestClient>`).
    pub kbench_version: String,
    /// When it is written (its `<LastModified>`), ms since the epoch.
    pub now_ms: i64,
}

/// `data` as a PTS result file; refused when no test has samples (PTS
/// requires a `<Result>`).
pub fn write(data: &ResultSetData, export: &Export) -> Result<String, FormatError> {
    let records: Vec<Option<&ImportedRecord>> = data.identifiers.iter().map(imported).collect();
    let generated = |name: &str| {
        records
            .iter()
            .flatten()
            .find_map(|r| r.field(&format!("{GENERATED_PREFIX}{name}")))
            .map(str::to_string)
    };
    let mut xml = Xml::default();
    xml.open("PhoronixTestSuite");
    xml.group("Generated", GENERATED, |name| match name {
        "Title" => Some(clip(
            &data
                .title
                .clone()
                .or_else(|| generated("Title"))
                .unwrap_or(data.name.clone()),
            126,
        )),
        "LastModified" => Some(shared::format_time(export.now_ms)),
        "TestClient" => Some(format!("kbench {}", export.kbench_version)),
        "Description" => Some(clip(
            &data
                .description
                .clone()
                .or_else(|| generated("Description"))
                .unwrap_or_else(|| format!("kbench result set {}", data.name)),
            2048,
        )),
        other => generated(other),
    });
    for (identifier, record) in data.identifiers.iter().zip(&records) {
        xml.group("System", SYSTEM, |name| {
            system_field(identifier, *record, name, export)
        });
    }
    let mut results = 0;
    for spec in &data.tests {
        if !kbench_model::is_result_metric(&spec.key.metric) {
            continue;
        }
        let entries: Vec<(&IdentifierData, Option<&ImportedRecord>, Vec<f64>)> = data
            .identifiers
            .iter()
            .zip(&records)
            .map(|(id, record)| (id, *record, raw_values(id, &spec.key)))
            .filter(|(_, _, raw)| !raw.is_empty())
            .collect();
        if entries.is_empty() {
            continue;
        }
        results += 1;
        let name = spec.key.to_string();
        let kept = |field: &str| {
            entries
                .iter()
                .find_map(|(_, record, _)| record.and_then(|r| r.test_field(&name, field)))
                .map(str::to_string)
        };
        xml.open("Result");
        xml.fields(RESULT, |field| match field {
            "Proportion" => Some(proportion(spec.direction).to_string()),
            "Data" => None,
            "Title" => Some(kept("Title").map_or_else(|| title(&spec.key), |t| clip(&t, 50))),
            other => kept(other).or_else(|| described(spec, other)),
        });
        xml.open("Data");
        for (identifier, record, raw) in &entries {
            xml.open("Entry");
            xml.leaf("Identifier", &identifier.name);
            xml.leaf("Value", &value_text(mean(raw)));
            let text: Vec<String> = raw.iter().map(f64::to_string).collect();
            xml.leaf("RawString", &text.join(":"));
            let json = format!("{ENTRY_PREFIX}JSON");
            if let Some(json) = record.and_then(|r| r.test_field(&name, &json)) {
                xml.leaf("JSON", json);
            }
            xml.close("Entry");
        }
        xml.close("Data");
        xml.close("Result");
    }
    xml.close("PhoronixTestSuite");
    if results == 0 {
        return Err(FormatError::new(
            format!("result set {:?}", data.name),
            "has no test with samples; a PTS result file holds at least one result",
        ));
    }
    Ok(xml.text)
}

/// What a PTS import kept of an identifier: its newest run's record.
fn imported(identifier: &IdentifierData) -> Option<&ImportedRecord> {
    identifier
        .runs
        .iter()
        .rev()
        .find_map(|run| run.info.snapshot.imported.as_ref())
}

/// A `<System>` element's text: as imported, else from kbench's run.
fn system_field(
    identifier: &IdentifierData,
    record: Option<&ImportedRecord>,
    name: &str,
    export: &Export,
) -> Option<String> {
    if name == "Identifier" {
        return Some(identifier.name.clone());
    }
    if let Some(kept) = record.and_then(|r| r.field(name)) {
        return Some(kept.to_string());
    }
    if let (Some(record), "Hardware") = (record, name) {
        let facts: Vec<String> = record
            .facts
            .iter()
            .map(|(l, v)| format!("{l}: {v}"))
            .collect();
        return Some(facts.join(", "));
    }
    let first = identifier.runs.first();
    let snapshot = identifier.runs.last().map(|run| &run.info.snapshot);
    match name {
        "Hardware" => Some(snapshot.map(hardware).unwrap_or_default()),
        "Software" => Some(snapshot.map(software).unwrap_or_default()),
        "User" => Some(String::new()),
        "TimeStamp" => Some(shared::format_time(
            first.map_or(export.now_ms, |run| run.info.started_at_ms),
        )),
        "TestClientVersion" => Some(
            first
                .map(|run| run.info.tool_version.clone())
                .filter(|v| !v.is_empty())
                .unwrap_or_else(|| export.kbench_version.clone()),
        ),
        "Notes" => {
            let notes: Vec<&str> = identifier
                .runs
                .iter()
                .flat_map(|run| run.info.notes.iter().map(String::as_str))
                .collect();
            Some(notes.join("; "))
        }
        _ => None,
    }
}

/// "Processor: ..., Memory: ..." of what kbench's snapshot knows.
fn hardware(snapshot: &SystemSnapshot) -> String {
    let mut facts = Vec::new();
    if !snapshot.cpu_model.is_empty() {
        facts.push(format!("Processor: {}", snapshot.processor()));
    }
    if snapshot.memory_total_kib > 0 {
        let gib = snapshot.memory_total_kib as f64 / (1024.0 * 1024.0);
        facts.push(format!("Memory: {gib:.1}GB"));
    }
    facts.join(", ")
}

/// "OS: ..., Kernel: ..., Compiler: ..., File-System: ..." of what kbench's
/// snapshot knows, as PTS labels them.
fn software(snapshot: &SystemSnapshot) -> String {
    let kernel = match (snapshot.kernel_release.as_str(), snapshot.arch.as_str()) {
        ("", _) => String::new(),
        (release, "") => release.to_string(),
        (release, arch) => format!("{release} ({arch})"),
    };
    let layer = match snapshot.virtualization.as_str() {
        "none" => "",
        other => other,
    };
    [
        ("OS", snapshot.os.as_str()),
        ("Kernel", kernel.as_str()),
        ("Compiler", snapshot.compiler.as_str()),
        ("File-System", snapshot.work_dir_fs.as_str()),
        ("System Layer", layer),
    ]
    .into_iter()
    .filter(|(_, value)| !value.is_empty())
    .map(|(label, value)| format!("{label}: {value}"))
    .collect::<Vec<_>>()
    .join(", ")
}

/// A `<Result>` element of a kbench test that was not imported from PTS.
fn described(spec: &TestSpec, element: &str) -> Option<String> {
    let key = &spec.key;
    let mut pairs: Vec<(String, String)> = key.options.clone().into_iter().collect();
    if key.metric != MAIN_METRIC {
        pairs.push(("Metric".to_string(), key.metric.clone()));
    }
    match element {
        "Identifier" => Some(format!("kbench/{}", key.benchmark)),
        "Arguments" => Some(
            pairs
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(" "),
        ),
        "AppVersion" => Some(String::new()),
        "Description" => Some(
            pairs
                .iter()
                .map(|(k, v)| format!("{k}: {v}"))
                .collect::<Vec<_>>()
                .join(" - "),
        ),
        "Scale" => Some(spec.unit.clone()),
        "DisplayFormat" => Some(BAR_GRAPH.to_string()),
        _ => None,
    }
}

/// A PTS title (2 to 50 characters) for a kbench test: its benchmark.
fn title(key: &TestKey) -> String {
    let title = clip(&key.benchmark, 50);
    if title.chars().count() < 2 {
        format!("kbench {title}")
    } else {
        title
    }
}

fn proportion(direction: Direction) -> &'static str {
    match direction {
        Direction::Higher => "HIB",
        Direction::Lower => "LIB",
    }
}

/// An identifier's raw values of a test, as PTS keeps one per run of the
/// test: each round's mean when there are several rounds, else every
/// sample.
fn raw_values(identifier: &IdentifierData, key: &TestKey) -> Vec<f64> {
    let rounds = identifier.rounds(key);
    if rounds.len() > 1 {
        rounds
            .values()
            .map(|samples| mean(&samples.iter().map(|s| s.value).collect::<Vec<_>>()))
            .collect()
    } else {
        rounds.into_values().flatten().map(|s| s.value).collect()
    }
}

fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len() as f64
}

/// A mean with six significant digits, at least two decimals, as PTS
/// writes its values ("0.210730", "1523456.70").
fn value_text(value: f64) -> String {
    let digits = value.abs().log10().floor() as i64 + 1;
    let decimals = (6 - digits).clamp(2, 15) as usize;
    format!("{value:.decimals$}")
}

/// The first `max` characters of `text`.
fn clip(text: &str, max: usize) -> String {
    text.chars().take(max).collect()
}

/// An indented XML document built element by element.
#[derive(Default)]
struct Xml {
    text: String,
    depth: usize,
}

impl Xml {
    fn indent(&mut self) {
        if self.text.is_empty() {
            self.text
                .push_str("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        }
        self.text.push_str(&"  ".repeat(self.depth));
    }

    fn open(&mut self, name: &str) {
        self.indent();
        self.text.push_str(&format!("<{name}>\n"));
        self.depth += 1;
    }

    fn close(&mut self, name: &str) {
        self.depth -= 1;
        self.indent();
        self.text.push_str(&format!("</{name}>\n"));
    }

    fn leaf(&mut self, name: &str, text: &str) {
        self.indent();
        self.text
            .push_str(&format!("<{name}>{}</{name}>\n", escape(text)));
    }

    /// The elements of `sequence` in its order: each that `text` gives,
    /// and each required one (empty when `text` gives none).
    fn fields(&mut self, sequence: &[Element], text: impl Fn(&str) -> Option<String>) {
        for &(name, required) in sequence {
            match text(name) {
                Some(value) => self.leaf(name, &value),
                None if required && name != "Data" => self.leaf(name, ""),
                None => {}
            }
        }
    }

    /// `<name>` holding the elements of `sequence` (see [`Xml::fields`]).
    fn group(&mut self, name: &str, sequence: &[Element], text: impl Fn(&str) -> Option<String>) {
        self.open(name);
        self.fields(sequence, text);
        self.close(name);
    }
}

/// `text` as XML character data: markup characters escaped, characters
/// XML 1.0 cannot hold left out.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if c < ' ' => {}
            c => out.push(c),
        }
    }
    out
}
