//! What a lab job ([`JobSpec`]) may ask a worker to run. The same check
//! runs where a job is submitted (`kbench job submit`), where it is queued
//! (`kbench serve`, before it is stored) and where it runs (`kbench
//! worker`, before it starts anything): a job's fields become a child
//! process's arguments on every worker, so each field must be what it says
//! and nothing that could read as an option or a file on the worker.
//!
//! - every name resolves to a built-in suite, a benchmark or a profile's
//!   tests, with options of their patterns (as `kbench run` resolves them);
//!   a suite file (`*.toml`) is the submitter's and is expanded by
//!   `kbench job submit` into its tests before it is sent;
//! - the kernel is `debian:VERSION` or the release of a cached kernel, not
//!   a path;
//! - rounds, the time budget and tags pass the store's own checks.

use crate::error::{CatalogError, Result, invalid};
use crate::profile::Profiles;
use kbench_model::KernelSpec;
use kbench_model::lab::JobSpec;

/// Checks every field of `spec`: the job's own checks (names, rounds, time
/// budget, tags) and then its names and kernel against this machine's
/// suites, benchmarks and `profiles`; the error names the field, what is
/// wrong and what to do.
pub fn check_spec(spec: &JobSpec, profiles: &Profiles) -> Result<()> {
    spec.check().map_err(CatalogError::Invalid)?;
    check_names(&spec.names, profiles)?;
    if let Some(kernel) = &spec.kernel {
        check_kernel(kernel)?;
    }
    Ok(())
}

/// [`check_spec`] over `profiles`, as the lab server takes it
/// (`kbench_server::JobCheck`): the error as text, with its causes.
pub fn checker(
    profiles: Profiles,
) -> impl Fn(&JobSpec) -> std::result::Result<(), String> + Send + Sync {
    move |spec| check_spec(spec, &profiles).map_err(|err| err.to_string())
}

/// The names as a job carries them: a suite file, which the workers do
/// not have, becomes the tests it lists.
pub fn names_to_send(names: Vec<String>, profiles: &Profiles) -> Result<Vec<String>> {
    let mut sent = Vec::new();
    for name in names {
        if name.ends_with(".toml") {
            let tests = crate::expand_with(std::slice::from_ref(&name), profiles)?;
            sent.extend(tests.iter().map(ToString::to_string));
        } else {
            sent.push(name);
        }
    }
    Ok(sent)
}

/// The names of a job: tests, benchmarks, suites or profiles, resolved.
fn check_names(names: &[String], profiles: &Profiles) -> Result<()> {
    for (i, name) in names.iter().enumerate() {
        if name.starts_with('-') {
            invalid!(
                "names[{i}] {name:?} is not a suite, benchmark or test name; a job's names \
                 cannot start with '-'"
            );
        }
        if name.ends_with(".toml") {
            invalid!(
                "names[{i}] {name:?} is a suite file, which is on the submitter's machine and not \
                 the worker's; `kbench job submit FILE.toml` sends the tests it lists instead"
            );
        }
    }
    crate::expand_with(names, profiles).map_err(|e| {
        CatalogError::Invalid(format!(
            "the job's names do not resolve to suites, benchmarks or profile tests: {e}"
        ))
    })?;
    Ok(())
}

/// `debian:VERSION`, or a cached kernel's release such as
/// `6.12.117+deb12-cloud-amd64`: letters, digits and `. _ + ~ -`, starting
/// with a letter or digit (so neither a path nor an option).
fn check_kernel(kernel: &str) -> Result<()> {
    if kernel.starts_with("debian:") {
        KernelSpec::parse(kernel).map_err(CatalogError::Invalid)?;
        return Ok(());
    }
    let fine = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '+' | '~' | '-');
    let starts_well = kernel
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphanumeric());
    if kernel.len() > 128 || !starts_well || !kernel.chars().all(fine) {
        invalid!(
            "the job's kernel {kernel:?} is neither debian:VERSION nor a kernel release (letters, \
             digits and . _ + ~ -, e.g. 6.12.117+deb12-cloud-amd64); a job cannot name a file \
             on the worker"
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(names: &[&str]) -> JobSpec {
        JobSpec {
            set: "lab".into(),
            identifier: "6.18".into(),
            names: names.iter().map(|n| n.to_string()).collect(),
            kernel: None,
            rounds: 3,
            max_time: None,
            tags: vec![],
        }
    }

    fn refused(spec: &JobSpec) -> String {
        format!("{:#}", check_spec(spec, &Profiles::builtin()).unwrap_err())
    }

    #[test]
    fn known_suites_benchmarks_and_tests_pass() {
        let profiles = Profiles::builtin();
        for names in [
            &["quick"][..],
            &["syscall-null", "pipe-lat[placement=same]"],
            &["fio-randread[bs=64k]"],
        ] {
            check_spec(&spec(names), &profiles).unwrap();
        }
        let mut on_kernel = spec(&["quick"]);
        for kernel in ["debian:6.12", "6.12.117+deb12-cloud-amd64"] {
            on_kernel.kernel = Some(kernel.into());
            check_spec(&on_kernel, &profiles).unwrap();
        }
    }

    #[test]
    fn options_files_unknown_names_and_paths_are_refused() {
        let cases = [
            (
                spec(&["--wrap=sh -c touch${IFS}/tmp/pwned", "syscall-null"]),
                "start with '-'",
            ),
            (spec(&["--help"]), "start with '-'"),
            (spec(&[" "]), "the job's names are"),
            (spec(&[]), "the job's names are"),
            (spec(&["/etc/kbench/suite.toml"]), "suite file"),
            (spec(&["no-such-bench"]), "do not resolve"),
            (spec(&["pipe-lat[colour=red]"]), "do not resolve"),
            (spec(&["fio-randread[bs=;reboot]"]), "do not resolve"),
        ];
        for (job, needle) in cases {
            let message = refused(&job);
            assert!(message.contains(needle), "{needle:?} not in {message:?}");
        }
        for kernel in ["/boot/vmlinuz", "--help", "../x", "debian:x", ""] {
            let mut job = spec(&["quick"]);
            job.kernel = Some(kernel.into());
            assert!(
                check_spec(&job, &Profiles::builtin()).is_err(),
                "{kernel:?}"
            );
        }
        let mut job = spec(&["quick"]);
        job.rounds = 0;
        assert!(refused(&job).contains("rounds"));
        job.rounds = 3;
        job.max_time = Some(f64::NAN);
        assert!(refused(&job).contains("max_time"));
    }
}
