//! The repository side of a bisection, through the `git` command: checks
//! of the user's repository (read only), the commits between the endpoints,
//! and a separate worktree to build in.
//!
//! The user's checkout, index and branches are never touched: the only
//! write is the worktree's own entry under `.git/worktrees/`, which
//! [`Worktree`] removes again when dropped (and a later run removes when a
//! killed one left it behind).

use super::error::{BisectError, Result, invalid};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// One commit of the range.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Commit {
    pub hash: String,
    pub subject: String,
    /// Its parents' hashes, the first parent first.
    #[serde(default)]
    pub parents: Vec<String>,
}

impl Commit {
    /// More than one parent: a merge.
    pub fn is_merge(&self) -> bool {
        self.parents.len() > 1
    }

    /// The first 12 hex digits.
    pub fn short(&self) -> &str {
        &self.hash[..self.hash.len().min(12)]
    }

    /// The identifier its samples are stored under: short hash and subject,
    /// within the store's 128-character limit.
    pub fn identifier(&self) -> String {
        let subject: String = self
            .subject
            .chars()
            .filter(|c| !c.is_control())
            .take(kbench_model::MAX_NAME_CHARS - 13)
            .collect();
        let subject = subject.trim();
        if subject.is_empty() {
            self.short().to_string()
        } else {
            format!("{} {subject}", self.short())
        }
    }
}

/// A repository given by the user.
#[derive(Debug, Clone)]
pub struct Repo {
    /// The top of its work tree.
    pub root: PathBuf,
}

/// `git -C dir` with the user's hooks off (a post-checkout hook must not
/// run on kbench's checkouts) and no automatic garbage collection.
fn git(dir: &Path) -> Command {
    let mut command = Command::new("git");
    command
        .arg("-C")
        .arg(dir)
        .args(["-c", "core.hooksPath=/dev/null", "-c", "gc.auto=0"])
        .stdin(Stdio::null())
        .env("GIT_TERMINAL_PROMPT", "0")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE");
    command
}

fn output(mut command: Command, doing: &str) -> Result<Output> {
    tracing::info!("running {command:?}");
    command.output().map_err(BisectError::os(format!(
        "{doing}: cannot run git (is it installed and on PATH?)"
    )))
}

/// Stdout of a git command that must succeed.
fn run(command: Command, doing: &str) -> Result<String> {
    let out = output(command, doing)?;
    if !out.status.success() {
        return Err(BisectError::Git(format!(
            "{doing}: git failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

impl Repo {
    /// The repository at `path`: it must exist and be a git work tree.
    pub fn open(path: &Path) -> Result<Repo> {
        if !path.exists() {
            invalid!(
                "the repository {} does not exist; give --repo the path of a git checkout",
                path.display()
            );
        }
        let out = output(
            {
                let mut c = git(path);
                c.args(["rev-parse", "--show-toplevel"]);
                c
            },
            "opening the repository",
        )?;
        if !out.status.success() {
            invalid!(
                "{} is not a git repository ({}); give --repo the path of a git checkout",
                path.display(),
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        let root = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        Ok(Repo { root })
    }

    fn git(&self) -> Command {
        git(&self.root)
    }

    /// Tracked files with uncommitted changes (`git status --porcelain`,
    /// untracked files left out: build output often is).
    pub fn uncommitted(&self) -> Result<Vec<String>> {
        let mut c = self.git();
        c.args(["status", "--porcelain", "--untracked-files=no"]);
        Ok(run(c, "checking the repository for uncommitted changes")?
            .lines()
            .map(str::to_string)
            .collect())
    }

    /// The full hash of a revision naming a commit.
    pub fn resolve(&self, rev: &str, option: &str) -> Result<String> {
        let mut c = self.git();
        c.args(["rev-parse", "--verify", "--quiet", "--end-of-options"])
            .arg(format!("{rev}^{{commit}}"));
        let out = output(c, "resolving a revision")?;
        if !out.status.success() {
            invalid!(
                "{option} '{rev}' names no commit in {}; give a commit hash, tag or branch",
                self.root.display()
            );
        }
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    }

    /// Whether `ancestor` is an ancestor of (or equal to) `of`.
    pub fn is_ancestor(&self, ancestor: &str, of: &str) -> Result<bool> {
        let mut c = self.git();
        c.args(["merge-base", "--is-ancestor", ancestor, of]);
        let out = output(c, "checking ancestry")?;
        match out.status.code() {
            Some(0) => Ok(true),
            Some(1) => Ok(false),
            _ => Err(BisectError::Git(format!(
                "checking ancestry: git failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ))),
        }
    }

    /// `git show --stat` of a commit: what it changed, file by file (a
    /// merge's against its first parent).
    pub fn diffstat(&self, hash: &str) -> Result<String> {
        let mut c = self.git();
        c.args([
            "show",
            "--stat",
            "--first-parent",
            "--format=",
            "--no-color",
            hash,
        ]);
        Ok(run(c, "reading the culprit's diffstat")?
            .trim_end()
            .to_string())
    }

    /// One commit's subject and parents.
    pub fn commit(&self, hash: &str) -> Result<Commit> {
        let mut c = self.git();
        c.args(["show", "-s", "--format=%H%x00%P%x00%s", hash]);
        let text = run(c, "reading a commit")?;
        parse_commits(&text)
            .into_iter()
            .next()
            .ok_or_else(|| BisectError::Git("git printed no commit".to_string()))
    }

    /// The commits after `good` up to and including `bad` (`good..bad`:
    /// the merged branches' commits too), parents before children
    /// ([`super::graph::Graph`] searches them as a graph).
    pub fn range(&self, good: &str, bad: &str) -> Result<Vec<Commit>> {
        let mut c = self.git();
        c.args([
            "log",
            "--topo-order",
            "--reverse",
            "--format=%H%x00%P%x00%s",
            &format!("{good}..{bad}"),
        ]);
        Ok(parse_commits(&run(c, "listing the commits to bisect")?))
    }
}

fn parse_commits(text: &str) -> Vec<Commit> {
    text.lines()
        .filter_map(|line| {
            let mut parts = line.splitn(3, '\0');
            let hash = parts.next()?.trim().to_string();
            let parents = parts.next()?;
            let subject = parts.next().unwrap_or("").to_string();
            (!hash.is_empty()).then(|| Commit {
                hash,
                subject,
                parents: parents.split_whitespace().map(str::to_string).collect(),
            })
        })
        .collect()
}

/// A detached worktree of the repository in a directory of its own,
/// removed (with its entry in the repository) when dropped.
#[derive(Debug)]
pub struct Worktree {
    repo: Repo,
    path: PathBuf,
    /// The commit checked out, once one is.
    head: Option<String>,
}

impl Worktree {
    /// Adds a worktree at `path` (which must not exist) with `commit`
    /// checked out.
    pub fn add(repo: &Repo, path: &Path, commit: &str) -> Result<Worktree> {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(BisectError::os(format!("creating {}", parent.display())))?;
        }
        let mut c = repo.git();
        c.args(["worktree", "add", "--detach", "--quiet"])
            .arg(path)
            .arg(commit);
        run(c, "creating the bisection worktree")?;
        Ok(Worktree {
            repo: repo.clone(),
            path: path.to_path_buf(),
            head: Some(commit.to_string()),
        })
    }

    /// Removes a worktree a killed run left at `path`, if it is there.
    pub fn remove_stale(repo: &Repo, path: &Path) {
        let mut c = repo.git();
        c.args(["worktree", "remove", "--force", "--force"])
            .arg(path)
            .stderr(Stdio::null());
        let _ = c.output();
        let _ = std::fs::remove_dir_all(path);
        let mut c = repo.git();
        c.args(["worktree", "prune"]);
        let _ = c.output();
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Checks out `commit` (detached, discarding changes a build made to
    /// tracked files; untracked build output stays for incremental builds).
    pub fn checkout(&mut self, commit: &str) -> Result<()> {
        if self.head.as_deref() == Some(commit) {
            return Ok(());
        }
        let mut c = git(&self.path);
        c.args(["checkout", "--detach", "--force", "--quiet", commit]);
        run(c, "checking out a commit in the bisection worktree")?;
        self.head = Some(commit.to_string());
        Ok(())
    }
}

impl Drop for Worktree {
    fn drop(&mut self) {
        Worktree::remove_stale(&self.repo, &self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_log_lines() {
        let text = "aaaa\0pppp\0first: a subject\nbbbb\0p1 p2\0Merge x\ncccc\0p\0\n";
        let commits = parse_commits(text);
        assert_eq!(commits.len(), 3);
        assert_eq!(commits[0].subject, "first: a subject");
        assert!(!commits[0].is_merge() && commits[1].is_merge());
        assert_eq!(commits[1].parents, ["p1", "p2"]);
        assert_eq!(commits[2].identifier(), "cccc");
    }

    #[test]
    fn identifiers_fit_the_store() {
        let commit = Commit {
            hash: "0123456789abcdef0123".into(),
            subject: "x".repeat(300),
            parents: vec![],
        };
        let id = commit.identifier();
        assert!(id.starts_with("0123456789ab x"));
        assert!(kbench_model::validate_name("identifier", &id).is_ok());
    }
}
