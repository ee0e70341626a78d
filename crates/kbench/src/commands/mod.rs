//! One module per subcommand; each turns parsed arguments into library calls.

mod agent;
pub mod bisect;
mod compare;
mod exchange;
pub mod history;
pub mod install;
pub mod job;
pub mod kernel;
mod list;
pub mod push;
mod run;
pub mod serve;
mod show;
mod sysinfo;
pub mod token;
mod variants;
pub mod vm;
pub mod worker;

use crate::cli::{Cli, Command};
use kbench_store::{Database, Location};
use std::ffi::OsString;
use std::process::ExitCode;

pub fn dispatch(cli: Cli) -> anyhow::Result<ExitCode> {
    let db = Db(cli.db.clone());
    let profiles = cli.profile_dirs.clone();
    match cli.command {
        Command::Run(args) => run::run(args, &profiles, db.open()?.as_mut()),
        Command::Show(args) => show::show(args, db.open_existing()?.as_mut()),
        Command::Compare(args) => Ok(compare::compare(args, &db)),
        Command::Import(args) => exchange::import(args, db.open()?.as_mut()),
        Command::Export(args) => exchange::export(args, db.open_existing()?.as_mut()),
        Command::History(args) => history::history(args, &db),
        Command::Bisect(args) => bisect::bisect(args, &db),
        Command::Vm(command) => vm::vm(command, &db),
        Command::Kernel(command) => kernel::kernel(command, &db),
        Command::Serve(args) => serve::serve(args, &db, &profiles),
        Command::Token(command) => token::token(command, &db),
        Command::Push(args) => push::push(args, &db),
        Command::Job(command) => job::job(command, &profiles),
        Command::Worker(args) => worker::worker(args, &profiles),
        Command::Install(args) => install::install(args, &profiles),
        Command::List(args) => list::list(args.json, &profiles),
        Command::Sysinfo(args) => sysinfo::sysinfo(args.json),
        Command::Agent(args) => agent::agent(&args.job),
    }
}

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
fn print_json(value: &impl serde::Serialize) -> anyhow::Result<()> {
    println!("{}", serde_json::to_string_pretty(value)?);
    Ok(())
}
