//! Turning what a user typed (suite names, suite files, benchmark ids, test
//! names with options, external profiles and their tests) into the
//! canonical tests to run.
//!
//! A name that is not built-in is looked up in the profiles
//! ([`crate::profile`]): a profile name is all its tests, a profile test id
//! its options matrix (`fio-randread[bs=64k]` sweeps the other options).

use crate::error::{CatalogError, Result, invalid};
use crate::profile::Profiles;
use crate::suite::{Suite, builtin_suites, load_suite_file};
use kbench_model::TestKey;
use std::collections::BTreeMap;
use std::path::Path;

/// The value of a sweep that stands for "every CPU this process may use".
const ALL_CPUS: &str = "cpus";

/// Expands names into canonical test keys (every option named, defaults
/// filled in), in order, without duplicates. A name ending in `.toml` is a
/// suite file. An unknown name is an error suggesting the closest known one.
/// Profiles are the built-in ones and those of `KBENCH_PROFILES`.
pub fn expand(names: &[String]) -> Result<Vec<TestKey>> {
    expand_with(names, &Profiles::from_env()?)
}

/// [`expand`] with these profiles.
pub fn expand_with(names: &[String], profiles: &Profiles) -> Result<Vec<TestKey>> {
    let builtins = builtin_suites();
    let mut tests: Vec<TestKey> = Vec::new();
    for name in names {
        let expanded = if name.ends_with(".toml") {
            expand_suite(&load_suite_file(Path::new(name))?, &builtins, profiles, 0)?
        } else if let Some(suite) = builtins.iter().find(|s| s.name == *name) {
            expand_suite(suite, &builtins, profiles, 0)?
        } else {
            expand_test(name, &BTreeMap::new(), profiles)?
        };
        for test in expanded {
            test.check()
                .map_err(|e| CatalogError::Invalid(format!("{name}: {e}")))?;
            if !tests.contains(&test) {
                tests.push(test);
            }
        }
    }
    Ok(tests)
}

/// How deep suites may include suites (catches a suite including itself).
const MAX_NESTING: usize = 8;

fn expand_suite(
    suite: &Suite,
    builtins: &[Suite],
    profiles: &Profiles,
    depth: usize,
) -> Result<Vec<TestKey>> {
    if depth > MAX_NESTING {
        invalid!(
            "suite '{}' includes suites more than {MAX_NESTING} deep (a loop?)",
            suite.name
        );
    }
    let mut tests = Vec::new();
    for included in &suite.suites {
        let Some(inner) = builtins.iter().find(|s| s.name == *included) else {
            invalid!(
                "suite '{}' includes '{included}', which is not a built-in suite",
                suite.name
            );
        };
        tests.extend(expand_suite(inner, builtins, profiles, depth + 1)?);
    }
    for test in &suite.tests {
        let keys = expand_test(test, &suite.sweep, profiles)
            .map_err(|e| e.at(format!("in suite '{}'", suite.name)))?;
        tests.extend(keys);
    }
    Ok(tests)
}

/// One test name, with the sweep's combinations of the options it does not
/// set; a profile or profile test expands to its own matrix.
fn expand_test(
    name: &str,
    sweep: &BTreeMap<String, Vec<String>>,
    profiles: &Profiles,
) -> Result<Vec<TestKey>> {
    let key = TestKey::parse(name).map_err(|e| CatalogError::Invalid(e.to_string()))?;
    let Some(info) = kbench_bench::find(&key.benchmark) else {
        return match profiles.expand(&key) {
            Some(keys) => keys,
            None => Err(CatalogError::Invalid(unknown_message(
                &key.benchmark,
                profiles,
            ))),
        };
    };
    let mut sweep = sweep.clone();
    if info.options.iter().any(|o| o.name == "tasks") {
        sweep
            .entry("tasks".into())
            .or_insert_with(|| vec!["1".into(), ALL_CPUS.into()]);
    }
    let mut variants = vec![key.clone()];
    for (option, values) in &sweep {
        if key.options.contains_key(option) || !info.options.iter().any(|o| o.name == option) {
            continue;
        }
        variants = variants
            .into_iter()
            .flat_map(|v| {
                values.iter().map(move |value| {
                    let mut v = v.clone();
                    v.options.insert(option.clone(), sweep_value(value));
                    v
                })
            })
            .collect();
    }
    let mut keys: Vec<TestKey> = Vec::new();
    for variant in variants {
        let (canonical, _) = info
            .resolve(&variant)
            .map_err(|e| CatalogError::Invalid(format!("{variant}: {e}")))?;
        if !keys.contains(&canonical) {
            keys.push(canonical);
        }
    }
    Ok(keys)
}

fn sweep_value(value: &str) -> String {
    if value == ALL_CPUS {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
            .to_string()
    } else {
        value.to_string()
    }
}

/// "unknown benchmark, suite or profile 'x'; did you mean 'y'?" with the listing hint.
pub fn unknown_name_message(name: &str) -> String {
    unknown_message(name, &Profiles::builtin())
}

fn unknown_message(name: &str, profiles: &Profiles) -> String {
    let suites = builtin_suites();
    let known = kbench_bench::all()
        .into_iter()
        .map(|b| b.id)
        .chain(suites.iter().map(|s| s.name.as_str()))
        .chain(profiles.names());
    let closest = known
        .map(|k| (strsim::damerau_levenshtein(name, k), k))
        .min()
        .filter(|(distance, k)| *distance <= (k.len() / 2).max(2));
    match closest {
        Some((_, k)) => {
            format!(
                "unknown benchmark, suite or profile '{name}'; did you mean '{k}'? (`kbench list` shows all)"
            )
        }
        None => format!("unknown benchmark, suite or profile '{name}'; `kbench list` shows all"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(keys: &[TestKey]) -> Vec<String> {
        keys.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn builtin_suites_expand() {
        for suite in builtin_suites() {
            let tests = expand(std::slice::from_ref(&suite.name)).unwrap();
            assert!(!tests.is_empty(), "{} is empty", suite.name);
        }
    }

    /// What `kbench run full` and every profile would store passes the
    /// store's checks on test names and units.
    #[test]
    fn builtin_tests_pass_the_store_checks() {
        let profiles = Profiles::builtin();
        let mut names = vec!["full".to_string()];
        names.extend(profiles.names().into_iter().map(String::from));
        let tests = expand_with(&names, &profiles).unwrap();
        assert!(tests.len() > 100, "{}", tests.len());
        for key in tests {
            let (unit, direction) = match kbench_bench::find(&key.benchmark) {
                Some(info) => (info.unit.label().to_string(), info.direction),
                None => {
                    let (_, test) = profiles.test(&key.benchmark).unwrap();
                    let main = test.main_metric();
                    (main.unit.clone(), main.direction)
                }
            };
            let spec = kbench_model::TestSpec {
                key,
                unit,
                direction,
            };
            assert_eq!(kbench_model::check_test_spec(&spec), Ok(()), "{}", spec.key);
        }
    }

    /// A profile's option values and units reach terminals and the store:
    /// one that acts on a terminal is refused, naming the character.
    #[test]
    fn profile_values_and_units_that_act_on_a_terminal_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let profile = |value: &str, unit: &str| {
            format!(
                "name = \"mine\"\nrequires = {{ sh = \"dash\" }}\ncommand = \"echo 1\"\n\
                 [options.o]\nvalues = [\"{value}\"]\n\
                 [[metrics]]\nname = \"v\"\nunit = \"{unit}\"\ndirection = \"higher\"\n\
                 regex = '([0-9]+)'\n[[tests]]\nid = \"mytest\"\n"
            )
        };
        let load = || Profiles::load(&[dir.path().to_path_buf()]);
        std::fs::write(dir.path().join("mine.toml"), profile("a\\u0007b", "ops/s")).unwrap();
        let error = expand_with(&["mytest".into()], &load().unwrap())
            .unwrap_err()
            .to_string();
        assert!(error.contains("U+0007"), "{error}");
        std::fs::write(dir.path().join("mine.toml"), profile("ab", "ops\\u001b[2J")).unwrap();
        let error = load().map(|_| ()).unwrap_err().to_string();
        assert!(
            error.contains("U+001B") && error.contains("unit"),
            "{error}"
        );
        std::fs::write(dir.path().join("mine.toml"), profile("ab", "ops/s")).unwrap();
        assert_eq!(
            names(&expand_with(&["mytest".into()], &load().unwrap()).unwrap()),
            ["mytest[o=ab]"]
        );
    }

    #[test]
    fn suggests_the_closest_name() {
        let message = unknown_name_message("quik");
        assert!(message.contains("did you mean 'quick'"), "{message}");
        let message = unknown_name_message("zzzzzzzzzzzz");
        assert!(!message.contains("did you mean"), "{message}");
    }

    #[test]
    fn fills_defaults_and_dedups() {
        let tests =
            expand(&["syscall-null".into(), "syscall-null".into(), "quick".into()]).unwrap();
        assert_eq!(
            tests
                .iter()
                .filter(|t| t.benchmark == "syscall-null")
                .count(),
            1
        );
        let pipe = tests.iter().find(|t| t.benchmark == "pipe-lat").unwrap();
        assert!(pipe.options.contains_key("placement"), "{pipe}");
    }

    #[test]
    fn user_suite_files_sweep_and_report_unknown_keys() {
        let dir = tempfile::tempdir().unwrap();
        let good = dir.path().join("mine.toml");
        std::fs::write(
            &good,
            "name = \"mine\"\ntests = [\"select\", \"syscall-null\"]\n[sweep]\nfds = [\"1\", \"50\"]\n",
        )
        .unwrap();
        let tests = expand(&[good.display().to_string()]).unwrap();
        assert_eq!(
            names(&tests),
            ["select[fds=1]", "select[fds=50]", "syscall-null"]
        );

        let bad = dir.path().join("bad.toml");
        std::fs::write(&bad, "name = \"bad\"\ntests = []\ncolour = \"red\"\n").unwrap();
        let error = expand(&[bad.display().to_string()])
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("bad.toml") && error.contains("colour") && error.contains("line 3"),
            "{error}"
        );
    }
}
