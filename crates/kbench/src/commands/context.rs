//! What the commands share: the database they open, JSON on stdout, the
//! exit status of an interrupted run, and an upload's outcome.

use crate::cli::UploadArgs;
use kbench_fleet::upload::{Upload, Uploaded};
use kbench_measure::runner::RunSummary;
use kbench_store::{Database, Location};
use std::ffi::OsString;
use std::process::ExitCode;

/// The result database named by --db / KBENCH_DB (a SQLite path or a
/// postgres:// URL), or the default file; read only by the commands that
/// use it, so a bad value does not stop `kbench list`.
#[derive(Debug, Clone, Default)]
pub struct Db(pub Option<OsString>);

impl Db {
    pub fn location(&self) -> anyhow::Result<Location> {
        Ok(Location::resolve(self.0.as_deref())?)
    }

    /// Opens the store (SQLite or PostgreSQL), creating or migrating it.
    pub fn open(&self) -> anyhow::Result<Box<dyn Database>> {
        Ok(self.location()?.open()?)
    }

    /// Opens a store that exists already, for the commands that only read
    /// (show, compare, export, history, push): a missing file is an error
    /// saying how to make one, and nothing is created.
    pub fn open_existing(&self) -> anyhow::Result<Box<dyn Database>> {
        Ok(self.location()?.open_existing()?)
    }
}

/// Prints a value as pretty JSON on stdout.
pub(crate) fn print_json(value: &impl serde::Serialize) -> anyhow::Result<()> {
    println!("{}", serde_json::to_string_pretty(value)?);
    Ok(())
}

/// Exit status of `--fail-on-regression` when a metric is a REGRESSION.
pub(crate) const EXIT_REGRESSION: u8 = 1;

/// Exit status of every error, usage or not: nothing more was done.
pub(crate) const EXIT_ERROR: u8 = 2;

/// Exit status when a test FAILED while measuring; what was measured is
/// stored.
pub(crate) const EXIT_TEST_FAILED: u8 = 3;

/// Exit status after Ctrl-C, as shells report a SIGINT death.
pub(crate) const EXIT_INTERRUPTED: u8 = 130;

/// The exit status of a command that ended, interrupted or not.
pub(crate) fn ended(interrupted: bool) -> ExitCode {
    match interrupted {
        true => ExitCode::from(EXIT_INTERRUPTED),
        false => ExitCode::SUCCESS,
    }
}

/// The exit status of a run that ended: interrupted, a test FAILED, or
/// neither.
pub(crate) fn ran(summary: &RunSummary) -> ExitCode {
    match summary.any_failed() && !summary.interrupted {
        true => ExitCode::from(EXIT_TEST_FAILED),
        false => ended(summary.interrupted),
    }
}

/// The server `--server` names, its token checked before anything is
/// measured (and said, unless `-q`); `None` without `--server`.
pub(crate) fn upload_target(args: &UploadArgs) -> anyhow::Result<Option<Upload>> {
    let connect = |url: &String| Upload::connect(url, args.token.as_deref());
    let upload = args.upload.as_ref().map(connect).transpose()?;
    if let Some(upload) = &upload {
        crate::logs::note(upload.opening());
    }
    Ok(upload)
}

/// Tells how the upload (if any) went, after the command's own ending:
/// an upload that fell short fails a command that would have succeeded.
pub(crate) fn with_upload(
    ended: anyhow::Result<ExitCode>,
    uploaded: Option<&Uploaded>,
) -> anyhow::Result<ExitCode> {
    let complete = uploaded.is_none_or(|uploaded| uploaded.tell(crate::logs::quiet()));
    match ended? {
        code if code == ExitCode::SUCCESS && !complete => Ok(ExitCode::from(EXIT_ERROR)),
        code => Ok(code),
    }
}
