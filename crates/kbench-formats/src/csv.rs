//! `kbench export SET --format csv`: one row per raw sample, for pandas or
//! R (docs/formats.md, "CSV").
//!
//! Written by hand rather than with the `csv` crate: the only thing it
//! would do here is RFC 4180 quoting, which is [`field`]. The set is read
//! one identifier at a time ([`Results::load_part`]) and each row written
//! as it is made, so memory holds one identifier's samples, never the whole
//! set or the whole text.

use crate::ExportError;
use kbench_model::TestSpec;
use kbench_model::results::{IdentifierData, SetPart};
use kbench_store::Results;
use std::io::{self, Write};

/// The first line of every export: the columns, in order.
pub const HEADER: &str = "set,identifier,run,round,test,metric,value,unit,iterations,at_ms";

/// Writes set `set` of `store` to `out` as CSV, header first: every
/// identifier in stored order, or only those `identifiers` names (in the
/// set's order). Returns the number of rows written, header excluded.
pub fn export(
    store: &mut dyn Results,
    set: &str,
    identifiers: &[String],
    out: &mut dyn Write,
) -> Result<usize, ExportError> {
    let listing = SetPart {
        identifiers: Some(Vec::new()),
        ..SetPart::default()
    };
    let head = store.load_part(set, &listing)?;
    let names: Vec<&str> = head.identifiers.iter().map(|i| i.name.as_str()).collect();
    if let Some(name) = identifiers.iter().find(|n| !names.contains(&n.as_str())) {
        return Err(ExportError::NoIdentifier {
            set: set.to_string(),
            name: name.clone(),
            known: names.join(", "),
        });
    }
    writeln!(out, "{HEADER}")?;
    let mut rows = 0;
    for name in names {
        if !identifiers.is_empty() && !identifiers.iter().any(|n| n == name) {
            continue;
        }
        let one = SetPart {
            identifiers: Some(vec![name.to_string()]),
            ..SetPart::default()
        };
        let data = store.load_part(set, &one)?;
        if let Some(identifier) = data.identifiers.iter().find(|i| i.name == name) {
            rows += write_identifier(out, set, &data.tests, identifier)?;
        }
    }
    out.flush()?;
    Ok(rows)
}

/// The rows of one identifier: its tests in key order, each test's
/// samples in measurement order. `run` is the stored run's id, empty when
/// the samples do not say which run they came from.
fn write_identifier(
    out: &mut dyn Write,
    set: &str,
    tests: &[TestSpec],
    identifier: &IdentifierData,
) -> io::Result<usize> {
    let mut rows = 0;
    for (key, samples) in &identifier.samples {
        let unit = tests
            .iter()
            .find(|t| &t.key == key)
            .map_or("", |t| t.unit.as_str());
        let test = key.test_name();
        let runs = identifier.sample_runs.get(key);
        for (i, sample) in samples.iter().enumerate() {
            let run = runs
                .and_then(|r| r.get(i))
                .and_then(|&r| identifier.runs.get(r))
                .map_or(String::new(), |r| r.id.0.to_string());
            let texts = [set, &identifier.name, &run];
            for text in texts {
                field(out, text)?;
                out.write_all(b",")?;
            }
            write!(out, "{},", sample.round)?;
            for text in [test.as_str(), key.metric.as_str()] {
                field(out, text)?;
                out.write_all(b",")?;
            }
            write!(out, "{},", sample.value)?;
            field(out, unit)?;
            writeln!(out, ",{},{}", sample.iterations, sample.at_ms)?;
            rows += 1;
        }
    }
    Ok(rows)
}

/// `text` as one CSV field (RFC 4180): as it is, or in double quotes with
/// its quotes doubled when it holds a comma, a quote or a line break.
fn field(out: &mut dyn Write, text: &str) -> io::Result<()> {
    if text.contains([',', '"', '\n', '\r']) {
        write!(out, "\"{}\"", text.replace('"', "\"\""))
    } else {
        out.write_all(text.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quoted(text: &str) -> String {
        let mut out = Vec::new();
        field(&mut out, text).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn fields_are_quoted_only_when_they_must_be() {
        assert_eq!(quoted("pipe-lat"), "pipe-lat");
        assert_eq!(
            quoted("ctxsw[procs=8,size=16]"),
            "\"ctxsw[procs=8,size=16]\""
        );
        assert_eq!(quoted("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(quoted("two\nlines"), "\"two\nlines\"");
        assert_eq!(quoted(""), "");
    }
}
