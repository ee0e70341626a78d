//! Reading a run's metrics from what the tool printed: a regex or a
//! `NAME: VALUE` line over its output (stdout, then stderr), or a path into
//! the JSON document on its stdout, each with fallbacks for other versions
//! of the tool, and scaled into the metric's unit. When nothing matches,
//! the error shows what was searched.
//!
//! JSON is looked for from the first line that starts a document, so text a
//! tool prints before it (fio's error lines, axboe/fio#731) is skipped.

use super::name_value;
use super::spec::{MetricSpec, SourceKind};
use super::template::{self, Quote};
use regex::Regex;
use serde_json::Value;
use std::time::Duration;

/// How many lines of output an error shows.
pub const SHOWN_LINES: usize = 15;

/// What one run of a tool left behind.
#[derive(Debug, Clone, Default)]
pub struct RunOutput {
    pub stdout: String,
    pub stderr: String,
    pub elapsed: Duration,
}

impl RunOutput {
    /// stdout then stderr, as regexes see them.
    fn text(&self) -> String {
        match (self.stdout.is_empty(), self.stderr.is_empty()) {
            (_, true) => self.stdout.clone(),
            (true, false) => self.stderr.clone(),
            (false, false) => format!("{}\n{}", self.stdout.trim_end_matches('\n'), self.stderr),
        }
    }
}

/// The metrics of one test with its option values filled in.
#[derive(Debug)]
pub struct Parser {
    metrics: Vec<Metric>,
    reject: Option<Regex>,
}

#[derive(Debug)]
struct Metric {
    name: String,
    optional: bool,
    sources: Vec<(Source, f64)>,
}

#[derive(Debug)]
enum Source {
    Regex(Regex),
    Json(Vec<String>),
    Line(String),
    Elapsed,
}

impl Parser {
    /// Prepares `metrics` (the first is the main one) and the `reject`
    /// pattern; `lookup` gives placeholder values.
    pub fn new(
        metrics: &[MetricSpec],
        reject: Option<&str>,
        lookup: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Parser, String> {
        let compile = |pattern: &str| -> Result<Regex, String> {
            let text = template::render(pattern, Quote::Regex, lookup)?;
            Regex::new(&format!("(?m){text}")).map_err(|e| format!("regex {text}: {e}"))
        };
        let mut prepared = Vec::new();
        for metric in metrics {
            let mut sources = Vec::new();
            for source in &metric.sources {
                let ready = match &source.kind {
                    SourceKind::Regex(pattern) => Source::Regex(compile(pattern)?),
                    SourceKind::Json(path) => Source::Json(
                        template::render(path, Quote::Raw, lookup)?
                            .split('.')
                            .map(str::to_string)
                            .collect(),
                    ),
                    SourceKind::Line(name) => {
                        Source::Line(template::render(name, Quote::Raw, lookup)?)
                    }
                    SourceKind::Elapsed => Source::Elapsed,
                };
                sources.push((ready, source.scale));
            }
            prepared.push(Metric {
                name: metric.name.clone(),
                optional: metric.optional,
                sources,
            });
        }
        Ok(Parser {
            metrics: prepared,
            reject: reject.map(compile).transpose()?,
        })
    }

    /// Every metric's value in order (optional metrics that are missing are
    /// left out), or why the output cannot be read.
    pub fn read(&self, output: &RunOutput) -> Result<Vec<(String, f64)>, String> {
        let text = output.text();
        if let Some(reject) = &self.reject
            && let Some(found) = reject.find(&text)
        {
            let line = line_around(&text, found.start());
            return Err(format!(
                "the output holds \"{line}\", which marks a failed run (reject = {})",
                strip_flags(reject)
            ));
        }
        let mut values = Vec::new();
        for (index, metric) in self.metrics.iter().enumerate() {
            let mut first_error: Option<String> = None;
            let mut found = None;
            for (source, scale) in &metric.sources {
                match read_source(source, output, &text) {
                    Ok(v) => {
                        found = Some(v * scale);
                        break;
                    }
                    Err(e) => {
                        first_error.get_or_insert(e);
                    }
                }
            }
            match (found, metric.optional) {
                (Some(value), _) => {
                    if !(value.is_finite() && value >= 0.0) {
                        return Err(format!(
                            "metric '{}': read {value}, not a measurement",
                            metric.name
                        ));
                    }
                    // The store keeps values above 0 only (ratios are
                    // differences of logs): a side metric that reads 0
                    // (no errors, a latency under the tool's resolution)
                    // is left out of this sample; the main one fails it.
                    if value == 0.0 {
                        if index == 0 {
                            return Err(format!(
                                "metric '{}': read 0, which cannot be compared (kbench keeps \
                                 values above 0)",
                                metric.name
                            ));
                        }
                        continue;
                    }
                    values.push((metric.name.clone(), value));
                }
                (None, true) => {}
                (None, false) => {
                    let alternatives = if metric.sources.len() > 1 {
                        format!(" (nor any of its {} fallbacks)", metric.sources.len() - 1)
                    } else {
                        String::new()
                    };
                    return Err(format!(
                        "metric '{}'{alternatives}: {}",
                        metric.name,
                        first_error.unwrap_or_default()
                    ));
                }
            }
        }
        Ok(values)
    }
}

/// The version a tool's version command printed: the `value` group, else
/// group 1, of `regex` over its output (stdout, then stderr), or why none.
pub fn version(regex: &str, output: &RunOutput) -> Result<String, String> {
    let compiled =
        Regex::new(&format!("(?m){regex}")).map_err(|e| format!("regex {regex}: {e}"))?;
    let text = output.text();
    let captures = compiled
        .captures(&text)
        .ok_or_else(|| format!("its output matches no /{regex}/; {}", shown_lines(&text)))?;
    let group = captures.name("value").or_else(|| captures.get(1));
    match group.map(|g| g.as_str().trim()) {
        Some(found) if !found.is_empty() => Ok(found.to_string()),
        _ => Err(format!("/{regex}/ matched without a version in its group")),
    }
}

fn read_source(source: &Source, output: &RunOutput, text: &str) -> Result<f64, String> {
    match source {
        Source::Elapsed => Ok(output.elapsed.as_secs_f64()),
        Source::Regex(regex) => {
            let Some(captures) = regex.captures(text) else {
                return Err(format!(
                    "no line of the output matches /{}/; {}",
                    strip_flags(regex),
                    shown_lines(text)
                ));
            };
            let group = captures
                .name("value")
                .or_else(|| captures.get(1))
                .ok_or_else(|| format!("/{}/ matched without its group", strip_flags(regex)))?;
            number(group.as_str()).ok_or_else(|| {
                format!(
                    "/{}/ matched \"{}\", which is not a number",
                    strip_flags(regex),
                    group.as_str()
                )
            })
        }
        Source::Line(name) => {
            let Some(value) = name_value::last(text, name) else {
                return Err(format!(
                    "no `{name}: VALUE` line in the output; {}",
                    shown_lines(text)
                ));
            };
            number(value).ok_or_else(|| {
                format!("the `{name}: VALUE` line holds \"{value}\", which is not a number")
            })
        }
        Source::Json(path) => {
            let document = json_document(&output.stdout).ok_or_else(|| {
                format!(
                    "stdout holds no JSON document; {}",
                    shown_lines(&output.stdout)
                )
            })?;
            json_number(&document, path)
        }
    }
}

/// The first JSON document in `text`, from the first line that starts one
/// and parses.
pub fn json_document(text: &str) -> Option<Value> {
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_start();
        if trimmed.starts_with('{') || trimmed.starts_with('[') {
            let start = offset + (line.len() - trimmed.len());
            let mut documents =
                serde_json::Deserializer::from_str(&text[start..]).into_iter::<Value>();
            if let Some(Ok(value)) = documents.next() {
                return Some(value);
            }
        }
        offset += line.len();
    }
    None
}

/// The number at `path` (object keys and array indexes) in `document`.
pub fn json_number(document: &Value, path: &[String]) -> Result<f64, String> {
    let mut here = document;
    for (depth, step) in path.iter().enumerate() {
        let next = match here {
            Value::Object(map) => map.get(step),
            Value::Array(items) => step.parse::<usize>().ok().and_then(|i| items.get(i)),
            _ => None,
        };
        here = next.ok_or_else(|| {
            let at = if depth == 0 {
                "the top".to_string()
            } else {
                path[..depth].join(".")
            };
            let there = match here {
                Value::Object(map) => {
                    let keys: Vec<&str> = map.keys().map(String::as_str).take(20).collect();
                    format!("keys there: {}", keys.join(", "))
                }
                Value::Array(items) => format!("an array of {} there", items.len()),
                other => format!("{} there", kind(other)),
            };
            format!(
                "JSON path {}: no '{step}' at {at} ({there})",
                path.join(".")
            )
        })?;
    }
    let value = match here {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => number(s),
        _ => None,
    };
    value.ok_or_else(|| {
        format!(
            "JSON path {} holds {}, not a number",
            path.join("."),
            kind(here)
        )
    })
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A number as tools print it: `1234.5`, `1,234.5`, ` 7 `.
pub fn number(text: &str) -> Option<f64> {
    let cleaned: String = text.trim().chars().filter(|c| *c != ',').collect();
    cleaned.parse::<f64>().ok().filter(|v| v.is_finite())
}

/// "the lines searched (N):" with the last [`SHOWN_LINES`] of `text`.
fn shown_lines(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    if lines.is_empty() {
        return "the output was empty".to_string();
    }
    let from = lines.len().saturating_sub(SHOWN_LINES);
    let which = if lines.len() == 1 {
        "the line searched:".to_string()
    } else if from == 0 {
        format!("the {} lines searched:", lines.len())
    } else {
        format!(
            "the last {SHOWN_LINES} of the {} lines searched:",
            lines.len()
        )
    };
    let shown: Vec<String> = lines[from..].iter().map(|l| format!("    {l}")).collect();
    format!("{which}\n{}", shown.join("\n"))
}

fn line_around(text: &str, at: usize) -> &str {
    let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let end = text[at..].find('\n').map_or(text.len(), |i| at + i);
    text[start..end].trim()
}

fn strip_flags(regex: &Regex) -> &str {
    regex.as_str().trim_start_matches("(?m)")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::spec::SourceSpec;
    use kbench_model::Direction;

    fn metric(name: &str, sources: Vec<SourceKind>) -> MetricSpec {
        MetricSpec {
            name: name.into(),
            unit: "x".into(),
            direction: Direction::Higher,
            sources: sources
                .into_iter()
                .map(|kind| SourceSpec { kind, scale: 1.0 })
                .collect(),
            optional: false,
        }
    }

    /// A parser of one metric, "rps", read with `regex`.
    fn rps_parser(regex: &str, reject: Option<&str>) -> Parser {
        Parser::new(
            &[metric("rps", vec![SourceKind::Regex(regex.into())])],
            reject,
            &|_| None,
        )
        .unwrap()
    }

    fn out(stdout: &str) -> RunOutput {
        RunOutput {
            stdout: stdout.into(),
            ..RunOutput::default()
        }
    }

    #[test]
    fn regex_takes_the_value_group_or_the_first() {
        let parser = Parser::new(
            &[
                metric("a", vec![SourceKind::Regex(r"^rate: ([\d,.]+)".into())]),
                metric(
                    "b",
                    vec![SourceKind::Regex(r"x=(\d+) y=(?<value>\d+)".into())],
                ),
            ],
            None,
            &|_| None,
        )
        .unwrap();
        let values = parser
            .read(&out("noise\nrate: 1,234.5\nx=1 y=2\n"))
            .unwrap();
        assert_eq!(values, [("a".into(), 1234.5), ("b".into(), 2.0)]);
    }

    #[test]
    fn a_line_source_takes_the_last_name_value_line() {
        let parser = Parser::new(
            &[
                metric("ops", vec![SourceKind::Line("{m}".into())]),
                metric("lat", vec![SourceKind::Line("lat_ms".into())]),
            ],
            None,
            &|name| (name == "m").then(|| "ops".to_string()),
        )
        .unwrap();
        let output = RunOutput {
            stdout: "ops: 10\nops: 42.5 ops/s\n".into(),
            stderr: "lat_ms: 3\n".into(),
            ..RunOutput::default()
        };
        let values = parser.read(&output).unwrap();
        assert_eq!(values, [("ops".into(), 42.5), ("lat".into(), 3.0)]);
        let error = parser.read(&out("ops: 1\nlatency: 3\n")).unwrap_err();
        assert!(
            error.starts_with("metric 'lat': no `lat_ms: VALUE` line in the output; "),
            "{error}"
        );
        let error = parser.read(&out("ops: inf\nlat_ms: 1\n")).unwrap_err();
        assert!(error.contains("\"inf\", which is not a number"), "{error}");
    }

    #[test]
    fn no_match_shows_the_lines_searched() {
        let parser = rps_parser(r"^Requests/sec:\s+([\d.]+)", None);
        let text: String = (1..=20).map(|i| format!("line {i}\n")).collect();
        let error = parser.read(&out(&text)).unwrap_err();
        assert!(error.contains("metric 'rps'"), "{error}");
        assert!(error.contains("/^Requests/sec:"), "{error}");
        assert!(error.contains("last 15 of the 20 lines"), "{error}");
        assert!(
            error.contains("    line 20") && !error.contains("line 5\n"),
            "{error}"
        );
    }

    #[test]
    fn json_skips_text_before_the_document_and_explains_missing_paths() {
        let text = "fio: pid=1, err=5/file:io_u.c:1896, func=io_u error\n{\n \"jobs\": [{\"read\": {\"iops\": 12.5}}]\n}\n";
        let document = json_document(text).unwrap();
        let path = |p: &str| p.split('.').map(str::to_string).collect::<Vec<_>>();
        assert_eq!(
            json_number(&document, &path("jobs.0.read.iops")).unwrap(),
            12.5
        );
        let error = json_number(&document, &path("jobs.0.write.iops")).unwrap_err();
        assert!(
            error.contains("no 'write' at jobs.0 (keys there: read)"),
            "{error}"
        );
        let error = json_number(&document, &path("jobs.3.read")).unwrap_err();
        assert!(error.contains("an array of 1"), "{error}");
        assert!(json_document("no json here\n").is_none());
    }

    #[test]
    fn fallbacks_cover_other_versions_and_optional_metrics_may_be_missing() {
        let mut bw = metric(
            "bw",
            vec![
                SourceKind::Json("jobs.0.read.bw_bytes".into()),
                SourceKind::Json("jobs.0.read.bw".into()),
            ],
        );
        bw.sources[0].scale = 1e-6;
        bw.sources[1].scale = 1.024e-3;
        let mut lat = metric(
            "lat",
            vec![SourceKind::Json("jobs.0.read.lat_ns.mean".into())],
        );
        lat.optional = true;
        let parser = Parser::new(&[bw, lat], None, &|_| None).unwrap();
        let old = parser
            .read(&out("{\"jobs\":[{\"read\":{\"bw\":1000}}]}"))
            .unwrap();
        assert_eq!(old.len(), 1);
        assert!((old[0].1 - 1.024).abs() < 1e-9);
        let new = parser
            .read(&out("{\"jobs\":[{\"read\":{\"bw_bytes\":2000000,\"bw\":1953,\"lat_ns\":{\"mean\":5.0}}}]}"))
            .unwrap();
        assert_eq!(new, [("bw".into(), 2.0), ("lat".into(), 5.0)]);
    }

    #[test]
    fn reject_marks_a_failed_run() {
        let parser = rps_parser(
            r"Requests/sec:\s+([\d.]+)",
            Some("Non-2xx or 3xx responses"),
        );
        let error = parser
            .read(&out(
                "  Non-2xx or 3xx responses: 51646\nRequests/sec:  50976.47\n",
            ))
            .unwrap_err();
        assert!(error.contains("Non-2xx or 3xx responses: 51646"), "{error}");
    }

    #[test]
    fn version_is_the_group_over_stdout_then_stderr() {
        let nginx = RunOutput {
            stderr: "nginx version: nginx/1.22.1\n".into(),
            ..RunOutput::default()
        };
        assert_eq!(version(r"nginx/([0-9][0-9.]*)", &nginx).unwrap(), "1.22.1");
        let error = version(r"nginx/([0-9][0-9.]*)", &out("command not found\n")).unwrap_err();
        assert!(error.contains("command not found"), "{error}");
    }

    #[test]
    fn elapsed_is_the_run_time() {
        let parser =
            Parser::new(&[metric("t", vec![SourceKind::Elapsed])], None, &|_| None).unwrap();
        let output = RunOutput {
            elapsed: Duration::from_millis(1500),
            ..RunOutput::default()
        };
        assert_eq!(parser.read(&output).unwrap(), [("t".into(), 1.5)]);
    }
}
