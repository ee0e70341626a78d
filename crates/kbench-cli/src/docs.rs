//! Flags of `kbench completions` and `kbench man`: the shell scripts and
//! man pages generated from these very definitions.

use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args)]
#[command(
    after_help = "Install (per user):\n  kbench completions bash > ~/.local/share/bash-completion/completions/kbench\n  kbench completions zsh > ~/.zfunc/_kbench      # with fpath+=~/.zfunc before compinit\n  kbench completions fish > ~/.config/fish/completions/kbench.fish"
)]
pub struct CompletionsArgs {
    /// The shell to complete in
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  kbench man > kbench.1 && man -l kbench.1\n  kbench man --dir ~/.local/share/man/man1      # then: man kbench-run"
)]
pub struct ManArgs {
    /// Write one page per command (kbench.1, kbench-run.1, kbench-set-edit.1, ...) into DIR,
    /// created if missing, instead of kbench.1 alone on stdout
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}
