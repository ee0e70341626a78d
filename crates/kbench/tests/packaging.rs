//! Which build this is, and what an installed kbench brings along: the git
//! commit in `--version` and in every stored run's snapshot, shell
//! completions and man pages that cover every command, and a binary that
//! needs no source tree.

mod common;

// The real flag definitions, walked to know every subcommand and flag the
// completions and man pages must cover.
use kbench_cli as cli;

use clap::CommandFactory;
use common::{assert_success, json_of, kbench, run_short, temp_db};
use std::path::Path;
use std::process::Command;

/// Every visible subcommand, as its path of names (["set", "edit"]), with
/// its long flags (globals included).
fn commands() -> Vec<(Vec<String>, Vec<String>)> {
    fn walk(command: &clap::Command, path: &[String], out: &mut Vec<(Vec<String>, Vec<String>)>) {
        // Not clap's own `help` subcommands, nor the hidden `agent`.
        let visible = |s: &&clap::Command| !s.is_hide_set() && s.get_name() != "help";
        for sub in command.get_subcommands().filter(visible) {
            let mut path = path.to_vec();
            path.push(sub.get_name().to_string());
            let flags = sub
                .get_arguments()
                .filter(|a| !a.is_hide_set())
                .filter_map(|a| a.get_long().map(|l| format!("--{l}")))
                .collect();
            out.push((path.clone(), flags));
            walk(sub, &path, out);
        }
    }
    let mut command = cli::Cli::command();
    command.build();
    let mut out = vec![];
    walk(&command, &[], &mut out);
    out
}

/// `git -C crate_dir ARGS`'s trimmed stdout, `None` when git fails.
fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(env!("CARGO_MANIFEST_DIR"))
        .args(args)
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// `kbench --version`'s text after "kbench ".
fn version() -> String {
    let out = kbench("unused.db").arg("--version").output().unwrap();
    assert_success(&out, "kbench --version: ");
    let text = String::from_utf8(out.stdout).unwrap();
    text.trim().strip_prefix("kbench ").unwrap().to_string()
}

#[test]
fn version_names_the_git_commit_it_was_built_from() {
    if !common::have_programs(&["git"], "apt-get install git") {
        return;
    }
    let expected = match git(&["rev-parse", "--short=12", "HEAD"]) {
        Some(hash) => {
            let changes = git(&["status", "--porcelain", "--untracked-files=no"]).unwrap();
            let dirty = if changes.is_empty() { "" } else { "-dirty" };
            format!("{hash}{dirty}")
        }
        None => "unknown".to_string(),
    };
    assert_eq!(
        version(),
        format!("{} ({expected})", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn a_stored_run_records_the_build() {
    let (_dir, db) = temp_db();
    run_short(&db, &["run", "syscall-null", "--into", "b", "--as", "x"]);
    let version = version();
    let doc = json_of(&db, &["show", "b", "--json"]);
    let info = &doc["identifiers"][0]["runs"][0]["info"];
    assert_eq!(
        info["snapshot"]["kbench_version"],
        version.as_str(),
        "{info}"
    );
    assert_eq!(info["tool_version"], version.as_str(), "{info}");
    // Reports call it out where identifiers' builds differ (as every fact);
    // sysinfo lists it.
    let out = kbench(&db).arg("sysinfo").output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let line = text
        .lines()
        .find(|l| l.starts_with("kbench "))
        .unwrap_or_default();
    assert!(line.ends_with(&format!(" {version}")), "sysinfo: {text}");
}

/// What bash's completion offers for `kbench WORDS... <TAB>` (the last
/// word being the prefix typed).
fn bash_completes(script: &Path, words: &[String]) -> Vec<String> {
    let words: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let program = format!(
        "source {}; COMP_WORDS=(kbench {}); COMP_CWORD={}; _kbench kbench \"${{COMP_WORDS[COMP_CWORD]}}\" \"${{COMP_WORDS[COMP_CWORD-1]}}\"; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        script.display(),
        words.join(" "),
        words.len()
    );
    let out = Command::new("bash")
        .args(["-c", &program])
        .output()
        .unwrap();
    assert_success(&out, "bash completion: ");
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn bash_completion_offers_every_subcommand_and_flag() {
    if !common::have_programs(&["bash"], "apt-get install bash") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("kbench.bash");
    let out = kbench("unused.db")
        .args(["completions", "bash"])
        .output()
        .unwrap();
    assert_success(&out, "kbench completions bash: ");
    std::fs::write(&script, &out.stdout).unwrap();
    for (path, flags) in commands() {
        let parent = &path[..path.len() - 1];
        let mut words = parent.to_vec();
        words.push(String::new());
        let offered = bash_completes(&script, &words);
        let name = path.last().unwrap();
        assert!(
            offered.contains(name),
            "`kbench {} <TAB>` lacks {name}: {offered:?}",
            parent.join(" ")
        );
        let mut words = path.clone();
        words.push("--".to_string());
        let offered = bash_completes(&script, &words);
        for flag in &flags {
            assert!(
                offered.contains(flag),
                "`kbench {} --<TAB>` lacks {flag}: {offered:?}",
                path.join(" ")
            );
        }
    }
}

#[test]
fn every_shell_names_every_subcommand() {
    let commands = commands();
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let out = kbench("unused.db")
            .args(["completions", shell])
            .output()
            .unwrap();
        assert_success(&out, &format!("kbench completions {shell}: "));
        let script = String::from_utf8(out.stdout).unwrap();
        for (path, _) in &commands {
            let name = path.last().unwrap();
            assert!(
                script.contains(name.as_str()),
                "{shell} completion lacks {name}"
            );
        }
    }
    let out = kbench("unused.db")
        .args(["completions", "tcsh"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("possible values"));
}

/// A man page's text with troff's escaped hyphens plain.
fn page(path: &Path) -> String {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .replace("\\-", "-")
}

#[test]
fn man_pages_cover_every_subcommand_and_flag() {
    let out = kbench("unused.db").arg("man").output().unwrap();
    assert_success(&out, "kbench man: ");
    let top = String::from_utf8(out.stdout).unwrap().replace("\\-", "-");
    assert!(
        top.starts_with(".ie") && top.contains(".TH kbench 1"),
        "{top}"
    );
    assert!(top.contains(&version()), "kbench.1 lacks the version");
    let commands = commands();
    assert!(
        commands.iter().any(|(path, _)| path == &["set", "edit"]),
        "{commands:?}"
    );
    for (path, _) in commands.iter().filter(|(path, _)| path.len() == 1) {
        assert!(
            top.contains(&format!("kbench-{}(1)", path[0])),
            "kbench.1 lacks {path:?}"
        );
    }

    let dir = tempfile::tempdir().unwrap();
    let pages = dir.path().join("new/man1");
    let out = kbench("unused.db")
        .args(["man", "--dir"])
        .arg(&pages)
        .output()
        .unwrap();
    assert_success(&out, "kbench man --dir: ");
    for (path, flags) in &commands {
        let text = page(&pages.join(format!("kbench-{}.1", path.join("-"))));
        for flag in flags {
            assert!(
                text.contains(flag.as_str()),
                "kbench-{}.1 lacks {flag}",
                path.join("-")
            );
        }
    }
    assert!(
        !pages.join("kbench-agent.1").exists(),
        "the internal agent has no page"
    );
}

/// An installed kbench has no source tree: listing and a short run, from an
/// empty directory, touch no file of the workspace (suites and profiles are
/// built in), as `strace` sees every path they and their agents open.
#[test]
fn a_run_needs_no_source_tree() {
    if !common::have_programs(&["strace"], "apt-get install strace") {
        return;
    }
    let empty = tempfile::tempdir().unwrap();
    let db = empty.path().join("results.db");
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap();
    let binary = assert_cmd::cargo::cargo_bin("kbench");
    let binary_dir = binary.parent().unwrap().canonicalize().unwrap();
    for args in [
        &["list"][..],
        &["run", "syscall-null", "--max-time", "0.2", "--rounds", "1"],
    ] {
        let trace = empty.path().join("trace");
        let out = Command::new("strace")
            .args(["-f", "-qq", "-e", "trace=%file", "-o"])
            .arg(&trace)
            .arg(&binary)
            .args(args)
            .current_dir(empty.path())
            .env("KBENCH_DB", &db)
            .env_remove("KBENCH_PROFILES")
            .output()
            .unwrap();
        assert_success(&out, &format!("kbench {args:?} under strace: "));
        let trace = std::fs::read_to_string(&trace).unwrap();
        let touched: Vec<&str> = trace
            .lines()
            .filter(|line| {
                line.split('"').skip(1).step_by(2).any(|path| {
                    Path::new(path).starts_with(&workspace)
                        && !Path::new(path).starts_with(&binary_dir)
                })
            })
            .collect();
        assert!(
            touched.is_empty(),
            "kbench {args:?} opened the source tree:\n{}",
            touched.join("\n")
        );
    }
}
