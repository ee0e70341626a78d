//! Benchmark options: declared with defaults, checked once, read typed.

use crate::BenchError;
use std::collections::BTreeMap;

/// One option a benchmark takes.
pub struct OptionSpec {
    pub name: &'static str,
    /// The default, computed on this machine (e.g. `placement` is `cross`
    /// with 2+ CPUs, `same` with one).
    pub default: fn() -> String,
    pub help: &'static str,
}

/// A benchmark's options with every default filled in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    values: BTreeMap<String, String>,
}

impl Options {
    /// Fills in defaults and rejects options the benchmark does not take.
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
        let values = specs
            .iter()
            .map(|s| {
                let value = given.get(s.name).cloned().unwrap_or_else(s.default);
                (s.name.to_string(), value)
            })
            .collect();
        Ok(Options { values })
    }

    /// The options as a map, for the canonical test key.
    pub fn to_map(&self) -> BTreeMap<String, String> {
        self.values.clone()
    }

    /// The raw text of an option.
    pub fn text(&self, name: &str) -> &str {
        self.values.get(name).map(String::as_str).unwrap_or("")
    }

    /// A whole number option within `min..=max`.
    pub fn number(&self, name: &str, min: u64, max: u64) -> Result<u64, BenchError> {
        let text = self.text(name);
        let value: u64 = text.parse().map_err(|_| BenchError::InvalidOption {
            option: name.to_string(),
            reason: format!("'{text}' is not a whole number"),
        })?;
        if value < min || value > max {
            return Err(BenchError::InvalidOption {
                option: name.to_string(),
                reason: format!("{value} is out of range {min}..={max}"),
            });
        }
        Ok(value)
    }

    /// An option that must be one of `choices`.
    pub fn choice(&self, name: &str, choices: &[&'static str]) -> Result<&'static str, BenchError> {
        let text = self.text(name);
        choices
            .iter()
            .copied()
            .find(|c| *c == text)
            .ok_or_else(|| BenchError::InvalidOption {
                option: name.to_string(),
                reason: format!("'{text}' is not one of {}", choices.join(", ")),
            })
    }
}
