//! External benchmark profiles: fio, redis, nginx, stress-ng and friends,
//! run and parsed like built-ins.
//!
//! A profile is a TOML file (the built-in ones are in `profiles/` and
//! embedded; users add theirs with `--profiles DIR` or `KBENCH_PROFILES`)
//! saying which programs and Debian packages it needs, an optional service
//! to start, the command of each test with `{option}` placeholders, the
//! options matrix (each combination is one test), how to read each metric
//! from the output, a timeout and the expected time per run. Its tests are
//! ordinary tests (`fio-randread[bs=4k,direct=1,engine=libaio]`): the same
//! sampling, storage, progress and reports as built-ins. docs/profiles.md
//! describes the format.
//!
//! - [`format`]: the file, checked strictly (errors name file, line, key)
//! - [`spec`]: the checked profile
//! - [`guest`]: what a profile needs of a `kbench vm` guest
//! - [`matrix`]: options, expansion into tests, descriptions
//! - [`template`]: `{placeholder}` substitution, quoted per context
//! - [`parse`]: metrics from output (regex, `NAME: VALUE` line, JSON path,
//!   elapsed time)
//! - [`name_value`]: `NAME: VALUE` lines, which bisect's `--run` commands
//!   print too
//!
//! Running a profile's tests (processes, services, scratch files) is
//! kbench-measure's `profile`.

pub mod adhoc;
pub mod format;
pub mod guest;
pub mod matrix;
pub mod name_value;
pub mod parse;
pub mod spec;
pub mod template;

pub use spec::{MetricSpec, OptionSpec, Origin, Profile, ProfileTest, ServiceSpec, VersionSpec};

use crate::PROFILES_ENV;
use crate::error::{CatalogError, Result, invalid};
use crate::programs::{find_program, is_executable};
use kbench_model::{MAIN_METRIC, TestKey};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The built-in profiles, as shipped in `profiles/`: each file's name
/// (without `.toml`) and text, by name (build.rs lists them).
const BUILTIN: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/profiles.rs"));

/// The profiles kbench knows: the built-in ones and the user's.
#[derive(Debug, Clone)]
pub struct Profiles {
    list: Vec<Profile>,
}

impl Profiles {
    /// The built-in profiles only.
    pub fn builtin() -> Profiles {
        let list = BUILTIN
            .iter()
            .map(|(name, text)| {
                format::parse(text, &format!("profiles/{name}.toml"), Origin::Builtin)
                    .unwrap_or_else(|e| panic!("built-in profiles parse (tested): {e}"))
            })
            .collect();
        Profiles { list }
    }

    /// The built-in profiles and every `*.toml` in `dirs`. A user profile
    /// with a built-in profile's name replaces it.
    pub fn load(dirs: &[PathBuf]) -> Result<Profiles> {
        let mut profiles = Profiles::builtin();
        for dir in dirs {
            let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
                .map_err(|cause| CatalogError::ProfileDirectory {
                    path: dir.clone(),
                    cause,
                })?
                .filter_map(|entry| entry.ok().map(|e| e.path()))
                .filter(|path| path.extension().is_some_and(|e| e == "toml"))
                .collect();
            files.sort();
            for file in files {
                profiles.add(load_file(&file)?)?;
            }
        }
        Ok(profiles)
    }

    /// The built-in profiles and those in the directories of
    /// `KBENCH_PROFILES` (how the agent learns of `--profiles`).
    pub fn from_env() -> Result<Profiles> {
        let dirs: Vec<PathBuf> = std::env::var_os(PROFILES_ENV)
            .map(|value| {
                std::env::split_paths(&value)
                    .filter(|p| !p.as_os_str().is_empty())
                    .collect()
            })
            .unwrap_or_default();
        Profiles::load(&dirs)
    }

    fn add(&mut self, profile: Profile) -> Result<()> {
        let origin = profile.origin.clone();
        let clash = |name: &str| -> Option<String> {
            if kbench_bench::find(name).is_some() {
                return Some(format!("the built-in benchmark '{name}'"));
            }
            if crate::suite::builtin_suites()
                .iter()
                .any(|s| s.name == name)
            {
                return Some(format!("the built-in suite '{name}'"));
            }
            None
        };
        for name in std::iter::once(profile.name.as_str())
            .chain(profile.tests.iter().map(|t| t.id.as_str()))
        {
            if let Some(other) = clash(name) {
                invalid!("profile {origin}: '{name}' is already {other}; rename it");
            }
        }
        self.list.retain(|p| p.name != profile.name);
        for test in &profile.tests {
            if let Some((other, _)) = self.test(&test.id) {
                invalid!(
                    "profile {origin}: test '{}' is already a test of profile '{}' ({}); rename it",
                    test.id,
                    other.name,
                    other.origin
                );
            }
        }
        self.list.push(profile);
        Ok(())
    }

    pub fn all(&self) -> &[Profile] {
        &self.list
    }

    pub fn profile(&self, name: &str) -> Option<&Profile> {
        self.list.iter().find(|p| p.name == name)
    }

    /// The profile test with this id, and its profile.
    pub fn test(&self, id: &str) -> Option<(&Profile, &ProfileTest)> {
        self.list.iter().find_map(|p| p.test(id).map(|t| (p, t)))
    }

    /// Profile names and test ids (for suggestions).
    pub fn names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = Vec::new();
        for profile in &self.list {
            names.push(&profile.name);
            names.extend(profile.tests.iter().map(|t| t.id.as_str()));
        }
        names.sort_unstable();
        names.dedup();
        names
    }

    /// What a name means here: a test id (with options fixed) is its
    /// matrix; a profile name is all its tests (options given apply to the
    /// tests that have them). `None` when it is neither.
    pub fn expand(&self, key: &TestKey) -> Option<Result<Vec<TestKey>>> {
        let checked = |result: std::result::Result<Vec<TestKey>, String>| {
            result.map_err(CatalogError::Invalid)
        };
        if let Some((_, test)) = self.test(&key.benchmark) {
            return Some(
                metric_free(key).and_then(|()| checked(matrix::expand(test, &key.options))),
            );
        }
        let profile = self.profile(&key.benchmark)?;
        Some(metric_free(key).and_then(|()| {
            if let Some(name) = key
                .options
                .keys()
                .find(|name| !profile.tests.iter().any(|t| t.options.contains_key(*name)))
            {
                invalid!(
                    "no test of profile '{}' has option '{name}' (`kbench list` shows the options)",
                    profile.name
                );
            }
            let mut keys = Vec::new();
            for test in &profile.tests {
                let given: BTreeMap<String, String> = key
                    .options
                    .iter()
                    .filter(|(name, _)| test.options.contains_key(*name))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                keys.extend(checked(matrix::expand(test, &given))?);
            }
            Ok(keys)
        }))
    }

    /// The programs `profile` needs that are not installed, with their
    /// packages.
    pub fn missing_programs(&self, profile: &Profile) -> Vec<(String, String)> {
        let dirs = program_dirs(profile);
        profile
            .requires
            .iter()
            .filter(|(program, _)| {
                !dirs.iter().any(|d| is_executable(&d.join(program)))
                    && find_program(program).is_none()
            })
            .map(|(program, package)| (program.clone(), package.clone()))
            .collect()
    }

    /// Fails, naming the programs, packages and the install command, when
    /// a profile test among `tests` needs a program that is not installed.
    pub fn check_installed(&self, tests: &[TestKey]) -> Result<()> {
        let mut seen: Vec<&str> = Vec::new();
        let mut lines = Vec::new();
        for test in tests {
            let Some((profile, _)) = self.test(&test.benchmark) else {
                continue;
            };
            if seen.contains(&profile.name.as_str()) {
                continue;
            }
            seen.push(&profile.name);
            let missing = self.missing_programs(profile);
            if !missing.is_empty() {
                lines.push((profile.name.clone(), missing_message(profile, &missing)));
            }
        }
        if lines.is_empty() {
            return Ok(());
        }
        let names: Vec<&str> = lines.iter().map(|(n, _)| n.as_str()).collect();
        let details: Vec<&str> = lines.iter().map(|(_, l)| l.as_str()).collect();
        invalid!(
            "{}\nInstall them with `kbench install {}` (as root), then run again; nothing was run.",
            details.join("\n"),
            names.join(" ")
        )
    }

    /// The Debian packages of the named profiles (a test id names its
    /// profile), sorted and unique.
    pub fn packages_of(&self, names: &[String]) -> Result<Vec<String>> {
        let mut packages: Vec<String> = self
            .profiles_of(names)?
            .into_iter()
            .flat_map(Profile::packages)
            .collect();
        packages.sort();
        packages.dedup();
        Ok(packages)
    }

    /// What the profiles of `names` (as [`Profiles::packages_of`] takes
    /// them) need of a guest, together: the largest of each need.
    pub fn guest_needs_of(&self, names: &[String]) -> Result<guest::GuestNeeds> {
        Ok(self
            .profiles_of(names)?
            .into_iter()
            .fold(guest::GuestNeeds::default(), |needs, p| needs.max(p.guest)))
    }

    /// The profile a name names: a profile, or a test of one, with or
    /// without options.
    pub fn profile_of(&self, name: &str) -> Option<&Profile> {
        let base = name.split('[').next().unwrap_or(name);
        self.profile(base)
            .or_else(|| self.test(base).map(|(p, _)| p))
    }

    /// [`Profiles::profile_of`] each name; an unknown one is an error.
    fn profiles_of(&self, names: &[String]) -> Result<Vec<&Profile>> {
        names
            .iter()
            .map(|name| {
                self.profile_of(name).ok_or_else(|| {
                    let base = name.split('[').next().unwrap_or(name);
                    CatalogError::Invalid(self.unknown_profile(base))
                })
            })
            .collect()
    }

    fn unknown_profile(&self, name: &str) -> String {
        let closest = self
            .list
            .iter()
            .map(|p| (strsim::damerau_levenshtein(name, &p.name), p.name.as_str()))
            .min()
            .filter(|(distance, p)| *distance <= (p.len() / 2).max(2));
        match closest {
            Some((_, p)) => {
                format!("unknown profile '{name}'; did you mean '{p}'? (`kbench list` shows all)")
            }
            None => format!("unknown profile '{name}'; `kbench list` shows the profiles"),
        }
    }
}

/// "redis needs redis-benchmark (package redis-tools), which is not
/// installed: run `kbench install redis`".
pub fn missing_message(profile: &Profile, missing: &[(String, String)]) -> String {
    let programs: Vec<String> = missing
        .iter()
        .map(|(program, package)| format!("{program} (package {package})"))
        .collect();
    let which = if missing.len() == 1 {
        "which is not installed"
    } else {
        "which are not installed"
    };
    format!(
        "{} needs {}, {which}: run `kbench install {}` as root",
        profile.name,
        programs.join(", "),
        profile.name
    )
}

fn metric_free(key: &TestKey) -> Result<()> {
    if key.metric != MAIN_METRIC {
        invalid!("{key}: name a test, not one of its metrics");
    }
    Ok(())
}

/// Reads one user profile file.
pub fn load_file(path: &Path) -> Result<Profile> {
    let text = std::fs::read_to_string(path).map_err(|cause| CatalogError::Read {
        what: "profile file",
        path: path.to_path_buf(),
        cause,
    })?;
    Ok(format::parse(
        &text,
        &path.display().to_string(),
        Origin::File(path.to_path_buf()),
    )?)
}

/// A profile's program directories that exist, `*` in the last component
/// resolved to the highest version (`/usr/lib/postgresql/*/bin`: 15 over 9).
pub fn program_dirs(profile: &Profile) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    for entry in &profile.path {
        let path = Path::new(entry);
        // `*` may sit in one component; what follows it is kept.
        let components: Vec<&str> = entry.split('/').collect();
        let Some(star) = components.iter().position(|c| c.contains('*')) else {
            if path.is_dir() {
                dirs.push(path.to_path_buf());
            }
            continue;
        };
        let parent = components[..star].join("/");
        let rest = components[star + 1..].join("/");
        let (prefix, suffix) = components[star]
            .split_once('*')
            .unwrap_or((components[star], ""));
        let Ok(entries) = std::fs::read_dir(if parent.is_empty() { "/" } else { &parent }) else {
            continue;
        };
        let mut matches: Vec<String> = entries
            .flatten()
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|name| {
                name.starts_with(prefix)
                    && name.ends_with(suffix)
                    && name.len() >= prefix.len() + suffix.len()
            })
            .collect();
        matches.sort_by_key(|name| version_key(name));
        if let Some(best) = matches
            .iter()
            .rev()
            .map(|name| Path::new(&parent).join(name).join(&rest))
            .find(|candidate| candidate.is_dir())
        {
            dirs.push(best);
        }
    }
    dirs
}

/// Sorts "9" before "15": digit runs compare as numbers.
fn version_key(name: &str) -> Vec<(u64, String)> {
    let mut key = Vec::new();
    let mut digits = String::new();
    let mut text = String::new();
    for c in name.chars() {
        if c.is_ascii_digit() {
            if !text.is_empty() {
                key.push((0, std::mem::take(&mut text)));
            }
            digits.push(c);
        } else {
            if !digits.is_empty() {
                key.push((digits.parse().unwrap_or(u64::MAX), String::new()));
                digits.clear();
            }
            text.push(c);
        }
    }
    if !digits.is_empty() {
        key.push((digits.parse().unwrap_or(u64::MAX), String::new()));
    }
    if !text.is_empty() {
        key.push((0, text));
    }
    key
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_profiles_parse_and_expand() {
        let profiles = Profiles::builtin();
        let names: Vec<&str> = profiles.all().iter().map(|p| p.name.as_str()).collect();
        for expected in [
            "fio",
            "redis",
            "nginx",
            "stress-ng",
            "sysbench",
            "hackbench",
            "perf-bench",
            "iperf3",
            "sqlite",
            "pgbench",
            "build-linux",
        ] {
            assert!(
                names.contains(&expected),
                "{expected} missing from {names:?}"
            );
        }
        for profile in profiles.all() {
            let key = TestKey::new(&profile.name);
            let tests = profiles.expand(&key).unwrap().unwrap();
            assert!(!tests.is_empty(), "{}", profile.name);
            assert!(
                !profile.requires.is_empty(),
                "{} requires nothing",
                profile.name
            );
            assert!(
                profile.version.is_some(),
                "{} has no version command",
                profile.name
            );
        }
        let fio = profiles.test("fio-randread").unwrap().1;
        assert!(fio.options.contains_key("engine") && fio.options.contains_key("bs"));
    }

    #[test]
    fn builtin_names_do_not_clash_with_benchmarks_or_suites() {
        let mut profiles = Profiles { list: vec![] };
        for profile in Profiles::builtin().list {
            profiles.add(profile).unwrap();
        }
    }

    #[test]
    fn a_profile_name_expands_to_its_tests_and_options_apply_where_they_fit() {
        let profiles = Profiles::builtin();
        let all = profiles.expand(&TestKey::new("fio")).unwrap().unwrap();
        let randread = profiles
            .expand(&TestKey::new("fio-randread"))
            .unwrap()
            .unwrap();
        assert!(
            all.len() >= 4 * randread.len(),
            "{} vs {}",
            all.len(),
            randread.len()
        );
        let big = profiles
            .expand(&TestKey::parse("fio[bs=64k]").unwrap())
            .unwrap()
            .unwrap();
        assert!(big.iter().all(|k| k.options["bs"] == "64k"));
        let error = profiles
            .expand(&TestKey::parse("fio[colour=red]").unwrap())
            .unwrap()
            .unwrap_err();
        assert!(error.to_string().contains("colour"), "{error}");
        assert!(profiles.expand(&TestKey::new("no-such-thing")).is_none());
    }

    #[test]
    fn user_profiles_load_replace_and_report_clashes() {
        let dir = tempfile::tempdir().unwrap();
        let profile = |name: &str, id: &str| {
            format!(
                "name = \"{name}\"\nrequires = {{ sh = \"dash\" }}\ncommand = \"echo 1\"\n\
                 [[metrics]]\nname = \"v\"\nunit = \"ops/s\"\ndirection = \"higher\"\nregex = '([0-9]+)'\n\
                 [[tests]]\nid = \"{id}\"\n"
            )
        };
        std::fs::write(dir.path().join("fio.toml"), profile("fio", "myfio")).unwrap();
        std::fs::write(dir.path().join("notes.txt"), "not a profile").unwrap();
        let profiles = Profiles::load(&[dir.path().to_path_buf()]).unwrap();
        assert!(profiles.test("myfio").is_some());
        assert!(
            profiles.test("fio-randread").is_none(),
            "the user's fio replaces the built-in"
        );
        std::fs::write(dir.path().join("z.toml"), profile("mine", "redis")).unwrap();
        let error = Profiles::load(&[dir.path().to_path_buf()])
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("z.toml") && error.contains("'redis'"),
            "{error}"
        );
        std::fs::write(dir.path().join("z.toml"), profile("mine", "pipe-lat")).unwrap();
        let error = Profiles::load(&[dir.path().to_path_buf()])
            .unwrap_err()
            .to_string();
        assert!(error.contains("built-in benchmark 'pipe-lat'"), "{error}");
        let error = Profiles::load(&[dir.path().join("nope")])
            .unwrap_err()
            .to_string();
        assert!(error.contains("nope"), "{error}");
    }

    #[test]
    fn missing_programs_name_their_packages() {
        let text = "name = \"toy\"\nrequires = { kbench-no-such-tool = \"kbench-toy-tools\", sh = \"dash\" }\n\
                    command = \"echo 1\"\n[[metrics]]\nname = \"v\"\nunit = \"s\"\ndirection = \"lower\"\nelapsed = true\n\
                    [[tests]]\nid = \"toy\"\n";
        let mut profiles = Profiles { list: vec![] };
        profiles
            .add(format::parse(text, "toy.toml", Origin::Builtin).unwrap())
            .unwrap();
        let profile = profiles.profile("toy").unwrap();
        let missing = profiles.missing_programs(profile);
        assert_eq!(
            missing,
            [(
                "kbench-no-such-tool".to_string(),
                "kbench-toy-tools".to_string()
            )]
        );
        let error = profiles
            .check_installed(&[TestKey::new("toy")])
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("kbench-no-such-tool (package kbench-toy-tools)")
                && error.contains("kbench install toy"),
            "{error}"
        );
        assert_eq!(
            profiles.packages_of(&["toy".into()]).unwrap(),
            ["dash", "kbench-toy-tools"]
        );
        let error = profiles
            .packages_of(&["ty".into()])
            .unwrap_err()
            .to_string();
        assert!(error.contains("did you mean 'toy'"), "{error}");
    }

    #[test]
    fn versions_sort_numerically() {
        let mut names = vec!["9.6", "15", "10", "13"];
        names.sort_by_key(|n| version_key(n));
        assert_eq!(names, ["9.6", "10", "13", "15"]);
    }
}
