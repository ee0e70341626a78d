//! Test identity: benchmark id, its options and the metric.
//!
//! The canonical text form is `bench[k=v,k=v]` with the options sorted by
//! name, and `:metric` after it when the metric is not the benchmark's main
//! one (for example `futex1[mode=thread,tasks=2]:per_task`).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// The main metric's name; omitted from the text form.
pub const MAIN_METRIC: &str = "value";

#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct TestKey {
    pub benchmark: String,
    #[serde(default)]
    pub options: BTreeMap<String, String>,
    #[serde(default = "main_metric")]
    pub metric: String,
}

fn main_metric() -> String {
    MAIN_METRIC.to_string()
}

/// A test name that does not parse, with the reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseTestKeyError {
    pub input: String,
    pub reason: String,
}

impl fmt::Display for ParseTestKeyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let input = crate::names::shown(&self.input);
        write!(f, "cannot read test name {input}: {}", self.reason)
    }
}

impl std::error::Error for ParseTestKeyError {}

impl TestKey {
    /// The main metric of a benchmark with no options.
    pub fn new(benchmark: impl Into<String>) -> TestKey {
        TestKey {
            benchmark: benchmark.into(),
            options: BTreeMap::new(),
            metric: main_metric(),
        }
    }

    /// The same test with another metric.
    pub fn with_metric(&self, metric: &str) -> TestKey {
        TestKey {
            metric: metric.to_string(),
            ..self.clone()
        }
    }

    /// Whether `other` is the same test: options are part of a test's
    /// identity, the metric is not (one test ends for all its metrics).
    pub fn same_test(&self, other: &TestKey) -> bool {
        self.benchmark == other.benchmark && self.options == other.options
    }

    /// `bench[k=v,...]` without the metric.
    pub fn test_name(&self) -> String {
        if self.options.is_empty() {
            return self.benchmark.clone();
        }
        let opts: Vec<String> = self
            .options
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        format!("{}[{}]", self.benchmark, opts.join(","))
    }

    /// The options alone as `k=v,k=v` (empty when there are none).
    pub fn options_text(&self) -> String {
        let opts: Vec<String> = self
            .options
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        opts.join(",")
    }

    /// Parses `bench`, `bench[k=v,...]` and either followed by `:metric`,
    /// and refuses characters that act on a terminal (see
    /// [`crate::check_test_spec`], which the store applies before it writes
    /// and which also limits the length).
    pub fn parse(text: &str) -> Result<TestKey, ParseTestKeyError> {
        let fail = |reason| ParseTestKeyError {
            input: text.to_string(),
            reason,
        };
        // The whole text first: the parts are trimmed, and a newline at
        // the end of one would not show in the key.
        if let Some(holds) = crate::names::acting_char(text) {
            return Err(fail(format!("it {holds}")));
        }
        let key = TestKey::parse_text(text)?;
        crate::names::check_parts(&key).map_err(fail)?;
        Ok(key)
    }

    /// The checks of [`crate::check_test_spec`] on the key alone, for a key
    /// built without a unit (a suite's or profile's expansion).
    pub fn check(&self) -> Result<(), String> {
        crate::names::check_key(self)
    }

    /// The syntax alone of [`TestKey::parse`].
    pub(crate) fn parse_text(text: &str) -> Result<TestKey, ParseTestKeyError> {
        let fail = |reason: &str| ParseTestKeyError {
            input: text.to_string(),
            reason: reason.to_string(),
        };
        let (body, metric) = match text.rfind(':') {
            Some(i) if text[i..].find(']').is_none() => (&text[..i], &text[i + 1..]),
            _ => (text, MAIN_METRIC),
        };
        if metric.is_empty() {
            return Err(fail("empty metric after ':'"));
        }
        let (benchmark, options) = match body.find('[') {
            None => (body, BTreeMap::new()),
            Some(open) => {
                let inner = body[open + 1..]
                    .strip_suffix(']')
                    .ok_or_else(|| fail("options must end with ']'"))?;
                let mut options = BTreeMap::new();
                for pair in inner.split(',').filter(|p| !p.trim().is_empty()) {
                    let (k, v) = pair
                        .split_once('=')
                        .ok_or_else(|| fail(&format!("option '{pair}' is not key=value")))?;
                    let (k, v) = (k.trim(), v.trim());
                    if k.is_empty() || v.is_empty() {
                        return Err(fail(&format!("option '{pair}' has an empty key or value")));
                    }
                    if options.insert(k.to_string(), v.to_string()).is_some() {
                        return Err(fail(&format!("option '{k}' is given twice")));
                    }
                }
                (&body[..open], options)
            }
        };
        if benchmark.trim().is_empty() {
            return Err(fail("no benchmark name"));
        }
        Ok(TestKey {
            benchmark: benchmark.trim().to_string(),
            options,
            metric: metric.to_string(),
        })
    }
}

impl fmt::Display for TestKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.test_name())?;
        if self.metric != MAIN_METRIC {
            write!(f, ":{}", self.metric)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_canonical_form() {
        for text in [
            "pipe-lat",
            "pipe-lat[placement=cross]",
            "futex1[mode=thread,tasks=2]:per_task",
        ] {
            assert_eq!(TestKey::parse(text).unwrap().to_string(), text);
        }
    }

    #[test]
    fn sorts_options() {
        let key = TestKey::parse("x[b=1,a=2]").unwrap();
        assert_eq!(key.to_string(), "x[a=2,b=1]");
    }

    #[test]
    fn rejects_malformed() {
        for text in ["", "x[a=1", "x[a]", "x[a=1,a=2]", "x:", "[a=1]"] {
            assert!(TestKey::parse(text).is_err(), "{text} should not parse");
        }
    }
}
