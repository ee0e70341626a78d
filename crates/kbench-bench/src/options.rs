//! Benchmark options: each declared with its kind (a whole number in a
//! range, or one of some words) and its default, checked in one place,
//! [`Options::resolve`], which every path that names a test calls before
//! anything runs, and read typed by the benchmark from what it checked.

use crate::BenchError;
use std::collections::BTreeMap;

/// One option a benchmark takes.
pub struct OptionSpec {
    pub name: &'static str,
    pub kind: OptionKind,
    /// The default, computed on this machine (e.g. `placement` is `cross`
    /// with 2+ CPUs, `same` with one).
    pub default: fn() -> String,
    pub help: &'static str,
}

/// The values an option takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptionKind {
    /// A whole number from `min` to `max`, both included.
    Whole { min: u64, max: u64 },
    /// One of these words.
    Choice(&'static [&'static str]),
}

impl OptionKind {
    /// What it accepts, as messages say it: "a whole number from 2 to 64",
    /// "one of same, cross, free".
    pub fn accepted(&self) -> String {
        match self {
            OptionKind::Whole { min, max } => format!("a whole number from {min} to {max}"),
            OptionKind::Choice(words) => format!("one of {}", words.join(", ")),
        }
    }

    /// `text` as a value of this kind, or why it is none.
    fn parse(&self, text: &str) -> Result<Value, String> {
        match *self {
            OptionKind::Whole { min, max } => match text.parse::<u64>() {
                Ok(n) if (min..=max).contains(&n) => Ok(Value::Whole(n)),
                Ok(_) => Err("is out of range".to_string()),
                Err(_) => Err("is not a whole number".to_string()),
            },
            OptionKind::Choice(words) => words
                .iter()
                .find(|w| **w == text)
                .map(|w| Value::Choice(w))
                .ok_or_else(|| "is not allowed".to_string()),
        }
    }
}

/// A checked value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Value {
    Whole(u64),
    Choice(&'static str),
}

/// A benchmark's options with every default filled in and every value
/// checked against its kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// Option name -> the text given (or the default) and its value.
    values: BTreeMap<&'static str, (String, Value)>,
}

impl Options {
    /// Fills in defaults, rejects options the benchmark does not take and
    /// values outside their kind: the error names the option, the value,
    /// what it accepts and what the option is for.
    pub fn resolve(
        specs: &[OptionSpec],
        given: &BTreeMap<String, String>,
    ) -> Result<Options, BenchError> {
        if let Some(unknown) = given
            .keys()
            .find(|k| !specs.iter().any(|s| s.name == k.as_str()))
        {
            let known: Vec<&str> = specs.iter().map(|s| s.name).collect();
            let reason = if known.is_empty() {
                "this benchmark takes no options".to_string()
            } else {
                format!("unknown option; this benchmark takes: {}", known.join(", "))
            };
            return Err(BenchError::InvalidOption {
                option: unknown.clone(),
                reason,
            });
        }
        let mut values = BTreeMap::new();
        for spec in specs {
            let text = given.get(spec.name).cloned().unwrap_or_else(spec.default);
            let value = spec
                .kind
                .parse(&text)
                .map_err(|why| BenchError::InvalidOption {
                    option: spec.name.to_string(),
                    reason: format!(
                        "'{text}' {why}; it takes {} ({})",
                        spec.kind.accepted(),
                        spec.help
                    ),
                })?;
            values.insert(spec.name, (text, value));
        }
        Ok(Options { values })
    }

    /// The options as a map, for the canonical test key.
    pub fn to_map(&self) -> BTreeMap<String, String> {
        self.values
            .iter()
            .map(|(name, (text, _))| (name.to_string(), text.clone()))
            .collect()
    }

    /// A whole-number option's value, checked by [`Options::resolve`].
    /// Panics when the benchmark declared no such option: its own bug.
    pub fn number(&self, name: &str) -> u64 {
        match self.value(name) {
            Value::Whole(n) => n,
            other => panic!("option '{name}' is {other:?}, not a whole number"),
        }
    }

    /// A choice option's word, checked by [`Options::resolve`]. Panics
    /// when the benchmark declared no such option: its own bug.
    pub fn choice(&self, name: &str) -> &'static str {
        match self.value(name) {
            Value::Choice(word) => word,
            other => panic!("option '{name}' is {other:?}, not a choice"),
        }
    }

    fn value(&self, name: &str) -> Value {
        match self.values.get(name) {
            Some((_, value)) => *value,
            None => panic!("the benchmark declares no option '{name}'"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::TestKey;

    /// Every benchmark's defaults pass its own checks here.
    #[test]
    fn every_default_is_a_value_of_its_kind() {
        for bench in crate::all() {
            if let Err(error) = bench.resolve(&TestKey::new(bench.id)) {
                panic!("{}: {error}", bench.id);
            }
        }
    }

    /// A value outside its kind is refused before anything runs, naming
    /// the option, the value, what it accepts and what it is for; every
    /// kind and every option of every benchmark.
    #[test]
    fn values_outside_their_kind_are_refused_with_what_is_accepted() {
        for bench in crate::all() {
            for spec in bench.options {
                let mut bad = vec![("abc".to_string(), "is not")];
                if let OptionKind::Whole { min, max } = spec.kind {
                    bad.push(((max + 1).to_string(), "is out of range"));
                    if min > 0 {
                        bad.push(((min - 1).to_string(), "is out of range"));
                    }
                }
                for (value, why) in bad {
                    let mut key = TestKey::new(bench.id);
                    key.options.insert(spec.name.into(), value.clone());
                    let error = bench.resolve(&key).unwrap_err().to_string();
                    let accepted = spec.kind.accepted();
                    assert!(
                        error.contains(&format!("option '{}': '{value}' {why}", spec.name))
                            && error.contains(&accepted)
                            && error.contains(spec.help),
                        "{key}: {error}"
                    );
                }
            }
        }
    }

    #[test]
    fn kinds_say_what_they_accept_and_read_typed() {
        let specs = [
            OptionSpec {
                name: "n",
                kind: OptionKind::Whole { min: 2, max: 64 },
                default: || "2".into(),
                help: "how many",
            },
            OptionSpec {
                name: "mode",
                kind: OptionKind::Choice(&["process", "thread"]),
                default: || "process".into(),
                help: "which",
            },
        ];
        assert_eq!(specs[0].kind.accepted(), "a whole number from 2 to 64");
        assert_eq!(specs[1].kind.accepted(), "one of process, thread");
        let given = [("n".to_string(), "64".to_string())].into();
        let options = Options::resolve(&specs, &given).unwrap();
        assert_eq!(
            (options.number("n"), options.choice("mode")),
            (64, "process")
        );
        assert_eq!(
            options.to_map(),
            [("mode".into(), "process".into()), ("n".into(), "64".into())].into()
        );
    }
}
