//! kbench: a kernel performance regression lab in one binary.
//!
//! This crate is the command line only: kbench-cli parses the flags,
//! `commands` hands them to the libraries (docs/architecture.md has their
//! layers) and prints what they return, `progress` draws runs' progress
//! bars, `logs` sets up logging and `-q`. The logic is the libraries'.

use kbench_cli as cli;
mod commands;
mod logs;
mod progress;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    kbench_sysinfo::set_kbench_version(cli::VERSION);
    // Inside a `kbench vm` guest this binary is /init: run the guest side.
    if kbench_vm::guest::is_guest() {
        kbench_vm::guest::main();
    }
    // The config file's values become the flags' environment variables
    // (where the user set none), before clap reads them.
    let settings = match cli::config::load() {
        Ok(settings) => settings,
        Err(error) => {
            eprintln!("kbench: error: {error}");
            return ExitCode::from(commands::EXIT_ERROR);
        }
    };
    let cli = cli::Cli::parse();
    // `serve`'s access log shows without flags.
    let serving = matches!(cli.command, cli::Command::Serve(_));
    logs::init(
        cli.quiet,
        cli.verbose,
        if serving { "info" } else { "warn" },
    );
    match commands::dispatch(cli, &settings) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("kbench: error: {error:#}");
            ExitCode::from(commands::EXIT_ERROR)
        }
    }
}
