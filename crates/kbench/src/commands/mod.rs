//! One module per subcommand; each turns parsed arguments into library calls.

mod agent;
mod bisect;
mod calibrate;
mod campaign;
mod compare;
mod config;
mod context;
pub(crate) use context::EXIT_ERROR;
mod docs;
mod exchange;
mod history;
mod install;
mod job;
mod kernel;
mod lava;
mod list;
mod push;
mod rootfs;
mod run;
mod serve;
mod set;
mod show;
mod sysinfo;
mod token;
mod variants;
mod vm;
mod worker;

use crate::cli::config::Settings;
use crate::cli::{Cli, Command, ConfigCommand};
use context::Db;
use std::process::ExitCode;

/// Runs the command; `settings` are the config file's and environment's.
pub fn dispatch(cli: Cli, settings: &Settings) -> anyhow::Result<ExitCode> {
    let db = Db(cli.db.clone());
    let profiles = cli.profile_dirs.clone();
    match cli.command {
        Command::Run(args) => run::run(args, &profiles, &db),
        Command::Show(args) => show::show(args, db.open_existing()?.as_mut()),
        Command::Compare(args) => compare::compare(args, &db),
        Command::Import(args) => exchange::import(args, db.open()?.as_mut()),
        Command::Export(args) => exchange::export(args, db.open_existing()?.as_mut()),
        Command::Set(command) => set::set(command, db.open_existing()?.as_mut()),
        Command::Calibrate(args) => calibrate::calibrate(args, &db, &profiles),
        Command::History(args) => history::history(args, &db),
        Command::Bisect(args) => bisect::bisect(args, &db),
        Command::Campaign(command) => campaign::campaign(command, &db),
        Command::Vm(command) => vm::vm(command, &db, &profiles),
        Command::Kernel(command) => kernel::kernel(command),
        Command::Lava(command) => lava::lava(command, &db, &profiles),
        Command::Rootfs(command) => rootfs::rootfs(command, &profiles),
        Command::Serve(args) => serve::serve(args, &db, &profiles),
        Command::Token(command) => token::token(command, &db),
        Command::Push(args) => push::push(args, &db),
        Command::Job(command) => job::job(command, &profiles),
        Command::Worker(args) => worker::worker(args, &profiles),
        Command::Install(args) => install::install(args, &profiles),
        Command::List(args) => list::list(args.json, &profiles),
        Command::Sysinfo(args) => sysinfo::sysinfo(args.json),
        Command::Completions(args) => docs::completions(args.shell),
        Command::Man(args) => docs::man(args.dir.as_deref()),
        Command::Config(ConfigCommand::Show(args)) => config::show(settings, args.json),
        Command::Agent(args) => agent::agent(&args.job),
    }
}
