//! A profile test's options: the matrix of tests a name expands to (every
//! combination of the values of the options the user did not set), the
//! check of values the user gave, and what a canonical key means.

use super::format::valid_value;
use super::spec::{ALL_CPUS, ProfileTest};
use kbench_model::{MAIN_METRIC, TestKey};
use std::collections::BTreeMap;

/// The CPUs this process may use.
pub fn cpus() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

/// The canonical keys of `test` with the options in `given` fixed and every
/// other option swept over its values. An option without values that the
/// user did not set stays out of the key (running it is skipped with the
/// option's help).
pub fn expand(
    test: &ProfileTest,
    given: &BTreeMap<String, String>,
) -> Result<Vec<TestKey>, String> {
    for (name, value) in given {
        check(test, name, value)?;
    }
    let mut keys = vec![TestKey {
        benchmark: test.id.clone(),
        options: given.clone(),
        metric: MAIN_METRIC.to_string(),
    }];
    for (name, spec) in &test.options {
        if given.contains_key(name) || spec.values.is_empty() {
            continue;
        }
        keys = keys
            .into_iter()
            .flat_map(|key| {
                spec.values.iter().map(move |value| {
                    let mut key = key.clone();
                    key.options.insert(name.clone(), concrete(value));
                    key
                })
            })
            .collect();
    }
    let mut unique: Vec<TestKey> = Vec::new();
    for key in keys {
        if !unique.contains(&key) {
            unique.push(key);
        }
    }
    Ok(unique)
}

/// `cpus` becomes the CPU count; other values stay.
fn concrete(value: &str) -> String {
    if value == ALL_CPUS {
        cpus().to_string()
    } else {
        value.to_string()
    }
}

/// Whether `value` may be given for option `name` of `test`.
pub fn check(test: &ProfileTest, name: &str, value: &str) -> Result<(), String> {
    let Some(spec) = test.options.get(name) else {
        let names: Vec<&str> = test.options.keys().map(String::as_str).collect();
        return Err(if names.is_empty() {
            format!("'{}' takes no options", test.id)
        } else {
            format!(
                "'{}' has no option '{name}'; its options: {}",
                test.id,
                names.join(", ")
            )
        });
    };
    if !valid_value(value) {
        return Err(format!(
            "{}: option {name}='{value}' is not a value",
            test.id
        ));
    }
    let listed = spec
        .values
        .iter()
        .any(|v| v == value || (v == ALL_CPUS && value == cpus().to_string()));
    if listed {
        return Ok(());
    }
    let matches = spec.pattern.as_ref().is_none_or(|pattern| {
        regex::Regex::new(&format!("^(?:{pattern})$")).is_ok_and(|re| re.is_match(value))
    });
    let open = spec.pattern.is_some() || spec.range.is_some();
    let why = match spec.out_of_range(value) {
        Some(why) if open => why,
        _ if open && matches => return Ok(()),
        _ => "is not allowed".to_string(),
    };
    Err(format!(
        "{}: option {name}={value} {why} ({})",
        test.id,
        spec.allowed()
    ))
}

/// A key of `test` checked against its options: the option values to run
/// with, or why it cannot run.
pub fn resolve(test: &ProfileTest, key: &TestKey) -> Result<BTreeMap<String, String>, Unresolved> {
    for (name, value) in &key.options {
        check(test, name, value).map_err(Unresolved::Invalid)?;
    }
    if let Some((name, spec)) = test
        .options
        .iter()
        .find(|(name, _)| !key.options.contains_key(*name))
    {
        let example = format!("{}[{name}=...]", test.id);
        let help = if spec.help.is_empty() {
            String::new()
        } else {
            format!(" ({})", spec.help)
        };
        return Err(if spec.values.is_empty() {
            Unresolved::Missing(format!(
                "'{}' needs option {name}{help}; run e.g. kbench run '{example}'",
                test.id
            ))
        } else {
            Unresolved::Invalid(format!(
                "{key} does not set option {name} ({}); name the test as `kbench list` shows",
                spec.allowed()
            ))
        });
    }
    Ok(key.options.clone())
}

/// Why a key cannot run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unresolved {
    /// An option without a default is not set: the test is skipped.
    Missing(String),
    /// An unknown option or a value not allowed: the test fails.
    Invalid(String),
}

/// The readable description of `test` with these values (labels shown).
pub fn describe(test: &ProfileTest, values: &BTreeMap<String, String>) -> String {
    let lookup = |name: &str| {
        let value = values.get(name).or_else(|| test.vars.get(name))?;
        let label = test
            .options
            .get(name)
            .and_then(|spec| spec.labels.get(value))
            .unwrap_or(value);
        Some(label.clone())
    };
    super::template::render(&test.description, super::template::Quote::Raw, &|name| {
        lookup(name).or_else(|| Some(format!("{{{name}}}")))
    })
    .unwrap_or_else(|_| test.description.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::spec::Origin;

    fn toy() -> ProfileTest {
        let text = r#"
name = "toy"
command = "toy {engine} {bs} {direct} {src}"
description = "Engine: {engine} - {direct} - Block Size: {bs}"
[options.engine]
values = ["libaio", "io_uring"]
[options.direct]
values = ["0", "1"]
labels = { "0" = "Buffered", "1" = "Direct" }
[options.bs]
values = ["4k"]
pattern = "[0-9]+[kmg]?"
[options.src]
pattern = ".+"
help = "a source tree"
[[metrics]]
name = "x"
unit = "s"
direction = "lower"
elapsed = true
[[tests]]
id = "toy"
"#;
        crate::profile::format::parse(text, "toy.toml", Origin::Builtin)
            .unwrap()
            .tests
            .remove(0)
    }

    fn given(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn expands_the_options_not_given() {
        let test = toy();
        let keys: Vec<String> = expand(&test, &BTreeMap::new())
            .unwrap()
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            keys,
            [
                "toy[bs=4k,direct=0,engine=libaio]",
                "toy[bs=4k,direct=0,engine=io_uring]",
                "toy[bs=4k,direct=1,engine=libaio]",
                "toy[bs=4k,direct=1,engine=io_uring]",
            ]
        );
        let keys = expand(&test, &given(&[("bs", "64k"), ("direct", "1")])).unwrap();
        assert_eq!(keys.len(), 2);
        assert!(keys.iter().all(|k| k.options["bs"] == "64k"));
    }

    #[test]
    fn rejects_unknown_options_and_values() {
        let test = toy();
        let error = expand(&test, &given(&[("colour", "red")])).unwrap_err();
        assert!(
            error.contains("no option 'colour'") && error.contains("engine"),
            "{error}"
        );
        let error = expand(&test, &given(&[("engine", "posixaio")])).unwrap_err();
        assert!(error.contains("one of libaio, io_uring"), "{error}");
        let error = expand(&test, &given(&[("bs", "4x")])).unwrap_err();
        assert!(error.contains("matching"), "{error}");
    }

    #[test]
    fn values_out_of_range_are_refused_naming_option_value_and_range() {
        let mut test = toy();
        let bs = test.options.get_mut("bs").unwrap();
        bs.pattern = Some("[0-9]+".into());
        bs.range = Some((1.0, 5000.0));
        assert!(expand(&test, &given(&[("bs", "5000")])).is_ok());
        for (value, why) in [
            ("0", "is out of range"),
            ("5001", "is out of range"),
            ("-3", "is out of range"),
            ("many", "is not a number"),
            ("2.5", "is not allowed"),
        ] {
            let error = expand(&test, &given(&[("bs", value)])).unwrap_err();
            assert!(
                error.contains(&format!("option bs={value} {why}"))
                    && error.contains("a number from 1 to 5000"),
                "{value}: {error}"
            );
        }
        // A range alone admits any number in it, fractions too.
        let bs = test.options.get_mut("bs").unwrap();
        bs.pattern = None;
        bs.range = Some((0.0, 10.0));
        assert!(expand(&test, &given(&[("bs", "0.5")])).is_ok());
        let error = expand(&test, &given(&[("bs", "-1")])).unwrap_err();
        assert!(error.contains("out of range"), "{error}");
    }

    #[test]
    fn a_missing_option_without_default_is_a_skip() {
        let test = toy();
        let key = &expand(&test, &BTreeMap::new()).unwrap()[0];
        match resolve(&test, key) {
            Err(Unresolved::Missing(reason)) => {
                assert!(
                    reason.contains("src") && reason.contains("a source tree"),
                    "{reason}"
                );
            }
            other => panic!("{other:?}"),
        }
        let mut key = key.clone();
        key.options.insert("src".into(), "/usr/src/linux".into());
        assert_eq!(resolve(&test, &key).unwrap()["src"], "/usr/src/linux");
    }

    #[test]
    fn describes_with_labels() {
        let test = toy();
        let values = given(&[("engine", "libaio"), ("direct", "1"), ("bs", "4k")]);
        assert_eq!(
            describe(&test, &values),
            "Engine: libaio - Direct - Block Size: 4k"
        );
    }
}
