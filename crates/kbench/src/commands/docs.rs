//! `kbench completions` and `kbench man`: generated from the clap
//! definitions, so they name every command and flag there is.

use crate::cli::Cli;
use anyhow::Context;
use clap::CommandFactory;
use clap_complete::{Generator, Shell};
use std::path::Path;
use std::process::ExitCode;

/// The script for `shell` on stdout; a write error (a closed pipe) is an
/// error, not clap_complete's panic.
pub fn completions(shell: Shell) -> anyhow::Result<ExitCode> {
    let mut command = Cli::command().bin_name("kbench");
    command.build();
    shell.try_generate(&command, &mut std::io::stdout())?;
    Ok(ExitCode::SUCCESS)
}

/// kbench.1 on stdout, or with `dir` a page per command there (git's way:
/// `man kbench-run` shows `run`'s flags, which kbench.1 only lists).
pub fn man(dir: Option<&Path>) -> anyhow::Result<ExitCode> {
    match dir {
        Some(dir) => std::fs::create_dir_all(dir)
            .and_then(|()| clap_mangen::generate_to(Cli::command(), dir))
            .with_context(|| format!("writing man pages into {}", dir.display()))?,
        None => clap_mangen::Man::new(Cli::command()).render(&mut std::io::stdout())?,
    }
    Ok(ExitCode::SUCCESS)
}
