//! The built-in profiles and suites are the TOML files of `profiles/` and
//! `suites/` (listed by build.rs): every file, in name order, each holding
//! the profile or suite its file is named after.

use kbench_catalog::profile::Profiles;
use kbench_catalog::suite::builtin_suites;
use std::path::Path;

/// The names of the `*.toml` files in the workspace's `dir`, sorted.
fn files_of(dir: &str) -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(dir);
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "toml"))
        .map(|path| path.file_stem().unwrap().to_str().unwrap().to_string())
        .collect();
    names.sort();
    names
}

#[test]
fn every_file_of_profiles_is_a_builtin_profile_named_after_it() {
    let names: Vec<String> = Profiles::builtin()
        .all()
        .iter()
        .map(|p| p.name.clone())
        .collect();
    assert_eq!(names, files_of("profiles"));
    assert!(names.len() >= 17, "{names:?}");
}

#[test]
fn every_file_of_suites_is_a_builtin_suite_named_after_it() {
    let names: Vec<String> = builtin_suites().into_iter().map(|s| s.name).collect();
    assert_eq!(names, files_of("suites"));
    assert!(names.len() >= 5, "{names:?}");
}
