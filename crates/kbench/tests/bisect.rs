//! End-to-end tests of `kbench bisect` on a generated git repository: 33
//! commits of a small C program whose hot loop does more work from one
//! known commit on (3 % to find it through this machine's noise, 30 % to
//! test the mechanics); each run times the loop (CPU time, best of 3) and
//! prints `loop_ms: VALUE`, with the noise of real timing. Also: the user's
//! repository is left exactly as it was, an interrupted (killed) bisection
//! continues, and bad input gets clear errors.

mod common;

use common::{assert_success, json, kbench, temp_db};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Commits after the first (good) one; the last is bad.
const COMMITS: usize = 32;
/// The commit (counting the good one as 0) where the loop gets slower.
const CULPRIT: usize = 21;

const PROGRAM: &str = r#"#include <stdio.h>
#include <time.h>
#include "work.h"

static volatile unsigned long sink;

int main(void) {
    double best = 1e30;
    for (int r = 0; r < 3; r++) {
        struct timespec a, b;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
        unsigned long x = VERSION;
        for (long i = 0; i < WORK; i++)
            x = x * 6364136223846793005UL + 1442695040888963407UL;
        sink = x;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
        double ms = (b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6;
        if (ms < best)
            best = ms;
    }
    printf("warming done\nloop_ms: %.5f ms\niterations: %ld\n", best, (long)WORK);
    return 0;
}
"#;

const BUILD: &str = "cc -O2 -o prog prog.c";
const RUN: &str = "./prog";

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args([
            "-c",
            "user.name=kbench test",
            "-c",
            "user.email=test@kbench.invalid",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .output()
        .unwrap();
    assert_success(&out, &format!("git {args:?}: "));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A repository whose loop does `work(i)` iterations at commit i; returns
/// the hashes, oldest (good) first.
fn repository(dir: &Path, work: impl Fn(usize) -> u64) -> Vec<String> {
    std::fs::create_dir_all(dir).unwrap();
    git(dir, &["init", "-q", "-b", "main"]);
    std::fs::write(dir.join("prog.c"), PROGRAM).unwrap();
    std::fs::write(dir.join(".gitignore"), "prog\n").unwrap();
    let mut hashes = Vec::new();
    for i in 0..=COMMITS {
        std::fs::write(
            dir.join("work.h"),
            format!("#define VERSION {i}\n#define WORK {}L\n", work(i)),
        )
        .unwrap();
        git(dir, &["add", "-A"]);
        git(
            dir,
            &["commit", "-q", "-m", &format!("step {i}: tune the loop")],
        );
        hashes.push(git(dir, &["rev-parse", "HEAD"]).trim().to_string());
    }
    // A hook that would leave a file in the user's checkout if kbench's
    // checkouts ran it.
    let hook = dir.join(".git/hooks/post-checkout");
    std::fs::write(
        &hook,
        "#!/bin/sh\necho ran >> \"$(git rev-parse --git-common-dir)/../hook-ran\"\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    hashes
}

/// A loop that does 30 % more work from [`CULPRIT`] on: for the tests of
/// the bisection's mechanics (skips, resuming, the worktrees, the stored
/// result set), where the step should not be what is tested.
fn slower_at_culprit(i: usize) -> u64 {
    if i >= CULPRIT { 1_950_000 } else { 1_500_000 }
}

/// A loop that does 3 % more work from [`CULPRIT`] on: below this
/// machine's noise, whose vCPUs run in a slow mode (+9 % userspace, +16 %
/// syscalls) in spells of 10-20 s. Unblocked, a 12 % step was misplaced
/// here in 4 of 4 runs (2026-12-01); the blocked bisection must find 3 %.
fn slower_by_3_pct(i: usize) -> u64 {
    if i >= CULPRIT { 1_545_000 } else { 1_500_000 }
}

/// Everything of the user's repository that bisect must not change.
fn repo_state(dir: &Path) -> String {
    [
        git(dir, &["status", "--porcelain", "--untracked-files=all"]),
        git(dir, &["rev-parse", "HEAD"]),
        git(dir, &["symbolic-ref", "HEAD"]),
        git(dir, &["for-each-ref"]),
        git(dir, &["worktree", "list", "--porcelain"]),
        git(dir, &["stash", "list"]),
        std::fs::read_to_string(dir.join("work.h")).unwrap(),
    ]
    .join("\n---\n")
}

fn bisect_args<'a>(repo: &'a Path, good: &'a str, bad: &'a str) -> Vec<String> {
    vec![
        "bisect".into(),
        "--repo".into(),
        repo.display().to_string(),
        "--good".into(),
        good.into(),
        "--bad".into(),
        bad.into(),
        "--build".into(),
        BUILD.into(),
        "--run".into(),
        RUN.into(),
        "--metric".into(),
        "loop_ms".into(),
        "--lower-is-better".into(),
        "--into".into(),
        "bisect-loop".into(),
    ]
}

struct Fixture {
    _dir: tempfile::TempDir,
    db: PathBuf,
    repo: PathBuf,
    hashes: Vec<String>,
}

fn fixture(work: impl Fn(usize) -> u64) -> Fixture {
    let (dir, db) = temp_db();
    let repo = dir.path().join("repo");
    let hashes = repository(&repo, work);
    Fixture {
        _dir: dir,
        db,
        repo,
        hashes,
    }
}

fn ok_json(db: &Path, args: &[String], envs: &[(&str, &str)]) -> Value {
    let out = kbench(db)
        .args(args)
        .arg("--json")
        .envs(envs.iter().copied())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "kbench {args:?} failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    // Stderr is a pipe: the search's bar is hidden, its steps plain lines.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains('\u{1b}'), "an escape code: {stderr:?}");
    json(&out.stdout)
}

/// The bisections that time the loop run one at a time: two at once on
/// 2 cores would time each other.
static MEASURING: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn finds_the_commit_that_slowed_the_loop_in_fewer_measurements() {
    let _alone = MEASURING.lock().unwrap_or_else(|e| e.into_inner());
    let f = fixture(slower_at_culprit);
    let before = repo_state(&f.repo);
    let args = bisect_args(&f.repo, &f.hashes[0], "main");
    let report = ok_json(&f.db, &args, &[]);
    assert_eq!(report["schema"], "kbench.bisect/3");
    assert_eq!(report["first_bad"]["hash"], f.hashes[CULPRIT], "{report:#}");
    assert_eq!(report["parent"]["hash"], f.hashes[CULPRIT - 1]);
    assert_eq!(report["candidates"].as_array().unwrap().len(), 1);
    assert_eq!(report["confirmed"], true, "{report:#}");
    assert_eq!(report["reference"]["verdict"], "regression");
    let change = report["change"]["change_pct"]["point"].as_f64().unwrap();
    assert!((18.0..45.0).contains(&change), "{change}");
    let samples = report["measurements"].as_u64().unwrap();
    assert_eq!(report["samples"].as_u64().unwrap(), samples);
    let every = report["every_commit_measurements"].as_u64().unwrap();
    println!(
        "bisect: {samples} runs on {} of {} commits (every commit at the starting count: {every}); \
         change {change:+.2} %",
        report["commits_measured"],
        COMMITS + 1
    );
    assert!(samples < every, "{samples} >= {every}");
    assert!(report["commits_measured"].as_u64().unwrap() < (COMMITS + 1) as u64 / 2);
    assert!(!report["log"].as_array().unwrap().is_empty());
    assert_eq!(repo_state(&f.repo), before, "the user's repository changed");

    // The samples are an ordinary result set: compare and history read them.
    let parent = report["parent"]["identifier"].as_str().unwrap();
    let culprit = report["first_bad"]["identifier"].as_str().unwrap();
    let compare = common::json_of(
        &f.db,
        &[
            "compare",
            "bisect-loop",
            "--baseline",
            parent,
            culprit,
            "--format",
            "json",
        ],
    );
    assert_eq!(
        compare["metrics"][0]["results"][1]["comparison"]["verdict"],
        "regression"
    );
    // The measured commits in commit order, as a version series.
    let stored = common::json_of(&f.db, &["show", "bisect-loop", "--json"]);
    let names: Vec<String> = stored["identifiers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            i["name"]
                .as_str()
                .unwrap_or_else(|| i.as_str().unwrap())
                .to_string()
        })
        .collect();
    let mut ordered: Vec<(usize, String)> = names
        .into_iter()
        .map(|name| {
            let index = f
                .hashes
                .iter()
                .position(|h| name.starts_with(&h[..12]))
                .unwrap();
            (index, name)
        })
        .collect();
    ordered.sort();
    let order: Vec<String> = ordered.iter().map(|(_, n)| n.clone()).collect();
    let history = common::json_of(
        &f.db,
        &[
            "history",
            "bisect-loop",
            "--order",
            &order.join(","),
            "--format",
            "json",
        ],
    );
    // History reads the bisection's commits as a version series. With a
    // handful of versions its noise comes from the series itself (few
    // degrees of freedom), so under load it may find no change at all; a
    // change it does find must be the culprit's regression.
    assert_eq!(
        history["identifiers"].as_array().unwrap().len(),
        order.len()
    );
    let changes = history["metrics"][0]["changes"].as_array().unwrap();
    assert!(
        changes
            .iter()
            .all(|c| c["identifier"] == culprit && c["verdict"] == "regression"),
        "{history:#}"
    );
}

/// The 3 % step, with the default start of 8 blocks doubling up to a cap
/// of 512 (the default is 128). The ratio of two runs of the loop varies
/// by 5 % here while others build (load 9), so a decision can take 64
/// blocks or more. A search step noise misleads (once in 3 fresh-CI runs
/// before rechecks existed: the culprit one commit late, NOT confirmed) is
/// what the recheck mends. 10 of 10 found by hand at the default cap, 5
/// quiet and 5 under one busy CPU, in 2 to 24 s each; in 1 of 2 CI runs
/// the endpoints were still apart by less than their CI at 128 blocks
/// (+2.33 % [-0.06, +4.54]), which four times the blocks halves.
#[test]
fn finds_a_3_pct_step_through_the_machines_noise() {
    let _alone = MEASURING.lock().unwrap_or_else(|e| e.into_inner());
    let f = fixture(slower_by_3_pct);
    let before = repo_state(&f.repo);
    // The generated step is 3 % of the loop, about 2.5 % of the whole run
    // (process start included): with the default 1 % threshold the
    // endpoints' CI must clear 1 %, which a loaded CI machine sometimes
    // misses at the 128-block cap ([+1.00, +3.90] once). A user bisecting a
    // 3 % step sets the practical threshold below it, as here.
    let mut args = bisect_args(&f.repo, &f.hashes[0], "main");
    args.extend(["--threshold", "0.5", "--max-blocks", "512"].map(String::from));
    let started = std::time::Instant::now();
    let report = ok_json(&f.db, &args, &[]);
    let log: Vec<String> = report["log"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            format!(
                "{} {} {}: {}",
                e["phase"], e["identifier"], e["event"], e["detail"]
            )
        })
        .collect();
    println!(
        "3 % step: {} blocks, {} runs, {:.1} s; first bad {}; change {}; undecided {}\n{}",
        report["blocks"],
        report["measurements"],
        started.elapsed().as_secs_f64(),
        report["first_bad"]["identifier"],
        report["change"]["change_pct"],
        report["undecided"],
        log.join("\n")
    );
    assert_eq!(report["first_bad"]["hash"], f.hashes[CULPRIT], "{report:#}");
    assert_eq!(report["parent"]["hash"], f.hashes[CULPRIT - 1]);
    assert_eq!(report["reference"]["verdict"], "regression");
    assert_eq!(report["confirmed"], true, "{report:#}");
    assert_eq!(report["change"]["verdict"], "regression");
    assert_eq!(
        report["change"]["analysis"],
        report["reference"]["analysis"]
    );
    assert_eq!(repo_state(&f.repo), before, "the user's repository changed");
}

#[test]
fn a_killed_bisection_continues_and_leaves_the_repository_alone() {
    let _alone = MEASURING.lock().unwrap_or_else(|e| e.into_inner());
    let f = fixture(slower_at_culprit);
    let before = repo_state(&f.repo);
    let count = f.repo.parent().unwrap().join("runs");
    // The run command kills kbench (its parent) with SIGKILL at run 25.
    let run = "./prog; n=$(cat \"$COUNT\" 2>/dev/null || echo 0); n=$((n+1)); echo $n > \"$COUNT\"; \
               if [ \"$n\" = \"$KILL_AT\" ]; then kill -9 $PPID; sleep 1; fi";
    let mut args = bisect_args(&f.repo, &f.hashes[0], &f.hashes[COMMITS]);
    let at = args.iter().position(|a| a == RUN).unwrap();
    args[at] = run.to_string();
    let count = count.display().to_string();
    let out = kbench(&f.db)
        .args(&args)
        .env("COUNT", &count)
        .env("KILL_AT", "25")
        .output()
        .unwrap();
    assert!(!out.status.success(), "the first run was not killed");
    // Killed: its worktree is still registered in the repository.
    assert_ne!(repo_state(&f.repo), before);
    let report = ok_json(&f.db, &args, &[("COUNT", &count), ("KILL_AT", "never")]);
    assert_eq!(report["resumed"], true);
    assert_eq!(report["first_bad"]["hash"], f.hashes[CULPRIT], "{report:#}");
    let (all, now) = (
        report["measurements"].as_u64().unwrap(),
        report["measurements_now"].as_u64().unwrap(),
    );
    assert!(now + 20 <= all, "measured {now} of {all} again");
    assert_eq!(repo_state(&f.repo), before, "the user's repository changed");
    // Finished: the same command measures nothing and says the same.
    let again = ok_json(&f.db, &args, &[("COUNT", &count), ("KILL_AT", "never")]);
    assert_eq!(again["measurements_now"], 0);
    assert_eq!(again["first_bad"], report["first_bad"]);
}

/// Runs a bisection that must fail; returns its stderr. The repository
/// must be as it was.
fn fails(f: &Fixture, args: &[String]) -> String {
    let before = repo_state(&f.repo);
    let out = kbench(&f.db).args(args).output().unwrap();
    assert!(!out.status.success(), "kbench {args:?} succeeded");
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(repo_state(&f.repo), before, "the user's repository changed");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn with(mut args: Vec<String>, option: &str, value: &str) -> Vec<String> {
    let at = args.iter().position(|a| a == option).unwrap();
    args[at + 1] = value.to_string();
    args
}

#[test]
fn bad_input_gets_clear_errors_and_leaves_the_repository_alone() {
    let f = fixture(slower_at_culprit);
    let (good, bad) = (f.hashes[0].as_str(), f.hashes[COMMITS].as_str());
    let args = bisect_args(&f.repo, good, bad);

    let error = fails(&f, &bisect_args(&f.repo, bad, good));
    assert!(error.contains("is not an ancestor of --bad"), "{error}");
    assert!(error.contains("swap --good and --bad"), "{error}");

    let error = fails(&f, &with(args.clone(), "--good", "no-such-tag"));
    assert!(
        error.contains("--good 'no-such-tag' names no commit"),
        "{error}"
    );

    let error = fails(
        &f,
        &with(
            args.clone(),
            "--build",
            "echo 'prog.c:1: error' >&2; exit 2",
        ),
    );
    assert!(error.contains("the good commit"), "{error}");
    assert!(
        error.contains("fails to build") && error.contains("prog.c:1: error"),
        "{error}"
    );

    // A build that needs a program not installed names it.
    let error = fails(
        &f,
        &with(args.clone(), "--build", "kbench-test-compiler -O2 prog.c"),
    );
    assert!(
        error.contains("it needs `kbench-test-compiler`, which is not installed"),
        "{error}"
    );

    // --kernel-config: a base config that does not exist, before anything
    // is built; and it builds the kernel itself, so it takes no --build.
    let mut kernel_args = args[..7].to_vec();
    kernel_args.extend(
        [
            "--kernel-config",
            "/no/such/.config",
            "--bench",
            "syscall-null",
        ]
        .map(String::from),
    );
    let error = fails(&f, &kernel_args);
    assert!(
        error.contains("--kernel-config /no/such/.config: no such file"),
        "{error}"
    );
    let error = fails(
        &f,
        &[kernel_args.clone(), vec!["--build".into(), "make".into()]].concat(),
    );
    assert!(error.contains("cannot be used with"), "{error}");

    let error = fails(&f, &with(args.clone(), "--metric", "ops_per_sec"));
    assert!(
        error.contains("no metric 'ops_per_sec'") && error.contains("loop_ms, iterations"),
        "{error}"
    );

    // Both endpoints print the same number: no spread, so no test can tell
    // them apart (CANNOT DECIDE, issue 19), up to the sample cap: nothing
    // to bisect.
    let error = fails(&f, &with(args.clone(), "--run", "echo 'loop_ms: 5'"));
    assert!(
        error.contains("the endpoints could not be told apart"),
        "{error}"
    );
    assert!(
        error.contains("+0.00 %") && error.contains("CANNOT DECIDE"),
        "{error}"
    );

    let missing = f.repo.parent().unwrap().join("nowhere");
    let error = fails(
        &f,
        &with(args.clone(), "--repo", &missing.display().to_string()),
    );
    assert!(error.contains("does not exist"), "{error}");
    let plain = f.repo.parent().unwrap().join("plain");
    std::fs::create_dir_all(&plain).unwrap();
    let error = fails(
        &f,
        &with(args.clone(), "--repo", &plain.display().to_string()),
    );
    assert!(error.contains("is not a git repository"), "{error}");

    let error = fails(&f, &with(args.clone(), "--bad", good));
    assert!(error.contains("the same commit"), "{error}");

    // Uncommitted changes: refused, and still there afterwards.
    std::fs::write(f.repo.join("work.h"), "#define WORK 1L\n").unwrap();
    let error = fails(&f, &args);
    assert!(
        error.contains("uncommitted changes") && error.contains("work.h"),
        "{error}"
    );
    assert_eq!(
        std::fs::read_to_string(f.repo.join("work.h")).unwrap(),
        "#define WORK 1L\n"
    );
}

#[test]
fn a_build_that_fails_in_the_middle_is_skipped() {
    let _alone = MEASURING.lock().unwrap_or_else(|e| e.into_inner());
    // Commits 16 (the first the search tries) and 17 do not compile.
    let f = fixture(slower_at_culprit);
    let mut args = bisect_args(&f.repo, &f.hashes[0], &f.hashes[COMMITS]);
    let build = "if grep -q 'VERSION 1[67]$' work.h; then echo 'work.h: syntax error' >&2; exit 1; fi; \
                 cc -O2 -o prog prog.c";
    args = with(args, "--build", build);
    let report = ok_json(&f.db, &args, &[]);
    assert_eq!(report["first_bad"]["hash"], f.hashes[CULPRIT], "{report:#}");
    assert_eq!(report["candidates"].as_array().unwrap().len(), 1);
    let skipped = report["skipped"].as_array().unwrap();
    assert!(
        skipped.iter().any(|s| s["commit"]["hash"] == f.hashes[16]),
        "{report:#}"
    );
    for s in skipped {
        assert!(
            s["reason"].as_str().unwrap().contains("syntax error"),
            "{s}"
        );
    }
}

/// A range made of merges, as v6.9..v6.10 is: the main line only merges
/// topic branches, and the culprit is the third commit of the second
/// topic. Bisect descends into the merged branch and names that commit,
/// not the merge that brought it (`git bisect` does the same).
#[test]
fn the_culprit_on_a_merged_branch_is_found_not_its_merge() {
    let _alone = MEASURING.lock().unwrap_or_else(|e| e.into_inner());
    let f = fixture(|_| 1_500_000);
    // The fixture's hook would run on this test's own checkouts.
    std::fs::remove_file(f.repo.join(".git/hooks/post-checkout")).unwrap();
    let good = f.hashes[COMMITS].clone();
    let mut culprit = String::new();
    for topic in 0..3 {
        let branch = format!("topic{topic}");
        git(&f.repo, &["checkout", "-q", "-b", &branch, &good]);
        for step in 0..4 {
            // Topic 1's third commit makes the loop 30 % longer; each
            // topic edits its own file, so the merges do not conflict.
            if topic == 1 && step == 2 {
                std::fs::write(
                    f.repo.join("work.h"),
                    format!("#define VERSION {COMMITS}\n#define WORK 1950000L\n"),
                )
                .unwrap();
            }
            std::fs::write(
                f.repo.join(format!("notes-{topic}.txt")),
                format!("{step}\n"),
            )
            .unwrap();
            git(&f.repo, &["add", "-A"]);
            let subject = format!("topic {topic}, change {step}");
            git(&f.repo, &["commit", "-q", "-m", &subject]);
            if topic == 1 && step == 2 {
                culprit = git(&f.repo, &["rev-parse", "HEAD"]).trim().to_string();
            }
        }
        git(&f.repo, &["checkout", "-q", "main"]);
        git(
            &f.repo,
            &[
                "merge",
                "-q",
                "--no-ff",
                "-m",
                &format!("Merge {branch}"),
                &branch,
            ],
        );
    }
    let args = with(
        bisect_args(&f.repo, &good, "main"),
        "--into",
        "bisect-merges",
    );
    let report = ok_json(&f.db, &args, &[]);
    assert_eq!(report["first_bad"]["hash"], culprit, "{report:#}");
    assert_eq!(report["commits"], 15, "12 topic commits and 3 merges");
    let parent = git(&f.repo, &["rev-parse", &format!("{culprit}^")]);
    assert_eq!(report["parent"]["hash"], parent.trim());
    assert_eq!(report["confirmed"], true, "{report:#}");
}
