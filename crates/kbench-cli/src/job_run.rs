//! The command line of the child that measures a lab job for `kbench
//! worker`: `kbench run`, or `kbench vm run --kernel=RELEASE`. Each flag's
//! name is looked up in its clap definition by argument id, so a renamed
//! flag fails this module's tests instead of drifting from a copy.

use crate::Cli;
use clap::CommandFactory;
use kbench_model::lab::JobSpec;
use std::ffi::{OsStr, OsString};
use std::path::Path;

/// The child's arguments (after the binary) that measure `spec` into the
/// store `db`, uploading to `server`, on the VM kernel `kernel` (a cached
/// release) when there is one. No field of the job can become an option:
/// every value is joined to its option (`--as=ID`), and the names come
/// after `--`, as operands only.
pub fn job_run_args(
    spec: &JobSpec,
    kernel: Option<&str>,
    db: &Path,
    server: &str,
) -> Vec<OsString> {
    let cli = Cli::command();
    let path: &[&str] = match kernel {
        Some(_) => &["vm", "run"],
        None => &["run"],
    };
    let run = path.iter().fold(&cli, |command, name| {
        command
            .find_subcommand(name)
            .unwrap_or_else(|| panic!("kbench has no command {path:?}"))
    });
    let mut args: Vec<OsString> = path.iter().map(OsString::from).collect();
    args.extend(kernel.map(|release| flag(run, "kernel", release)));
    args.extend([
        flag(run, "identifier", &spec.identifier),
        flag(run, "into", &spec.set),
        flag(run, "rounds", spec.rounds.to_string()),
        flag(&cli, "db", db),
        flag(run, "upload", server),
        // A job measures every test it can; one that FAILED still fails
        // the job (status 3), which the worker reports.
        long(run, "keep_going"),
    ]);
    args.extend(spec.max_time.map(|t| flag(run, "max_time", t.to_string())));
    args.push("--".into());
    args.extend(spec.names.iter().map(OsString::from));
    args
}

/// `--LONG=VALUE` for the argument with id `id` of `command`.
fn flag(command: &clap::Command, id: &str, value: impl AsRef<OsStr>) -> OsString {
    let mut flag = long(command, id);
    flag.push("=");
    flag.push(value);
    flag
}

/// `--LONG` of the argument with id `id` of `command`.
fn long(command: &clap::Command, id: &str) -> OsString {
    let long = command
        .get_arguments()
        .find(|arg| arg.get_id() == id)
        .and_then(|arg| arg.get_long())
        .unwrap_or_else(|| panic!("`kbench {}` has no flag {id}", command.get_name()));
    OsString::from(format!("--{long}"))
}
