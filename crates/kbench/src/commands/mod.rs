//! One module per subcommand; each turns parsed arguments into library calls.

mod agent;
pub mod bisect;
mod compare;
mod exchange;
pub mod history;
pub mod install;
pub mod kernel;
mod list;
mod run;
mod show;
mod sysinfo;
pub mod vm;

use crate::cli::{Cli, Command};
use kbench_store::SqliteStore;
use std::path::PathBuf;
use std::process::ExitCode;

pub fn dispatch(cli: Cli) -> anyhow::Result<ExitCode> {
    let db = cli.db.clone();
    let profiles = cli.profile_dirs.clone();
    match cli.command {
        Command::Run(args) => run::run(args, &profiles, open_store(db)?),
        Command::Show(args) => show::show(args, open_store(db)?),
        Command::Compare(args) => Ok(compare::compare(args, db)),
        Command::Import(args) => exchange::import(args, open_store(db)?),
        Command::Export(args) => exchange::export(args, open_store(db)?),
        Command::History(args) => history::history(args, db),
        Command::Bisect(args) => bisect::bisect(args, db),
        Command::Vm(command) => vm::vm(command, db),
        Command::Kernel(command) => kernel::kernel(command, db),
        Command::Install(args) => install::install(args, &profiles),
        Command::List(args) => list::list(args.json, &profiles),
        Command::Sysinfo(args) => sysinfo::sysinfo(args.json),
        Command::Agent(args) => agent::agent(&args.job),
    }
}

/// Opens the result database named by --db / KBENCH_DB, or the default one.
fn open_store(db: Option<PathBuf>) -> anyhow::Result<SqliteStore> {
    let path = db.unwrap_or_else(SqliteStore::default_path);
    Ok(SqliteStore::open(&path)?)
}

/// Prints a value as pretty JSON on stdout.
fn print_json(value: &impl serde::Serialize) -> anyhow::Result<()> {
    println!("{}", serde_json::to_string_pretty(value)?);
    Ok(())
}
