//! The README a new user reads first: short, its counts the registry's, its
//! two-kernel quick start working as pasted, the test command CI runs, and
//! every relative link in it and in docs/ pointing at a file (and heading)
//! that exists.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The README's length limit: a page read in five minutes.
const README_MAX_LINES: usize = 400;

/// The comment that marks the quick start's runnable block: the ```sh fence
/// right after it holds `kbench` commands and comments, nothing else.
const QUICK_START_MARKER: &str = "<!-- quickstart: two-kernels -->";

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// README.md and every page of docs/.
fn documents() -> Vec<PathBuf> {
    let mut pages: Vec<PathBuf> = std::fs::read_dir(workspace().join("docs"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "md"))
        .collect();
    pages.sort();
    pages.insert(0, workspace().join("README.md"));
    pages
}

fn name(path: &Path) -> String {
    path.strip_prefix(workspace())
        .unwrap_or(path)
        .display()
        .to_string()
}

#[test]
fn readme_is_at_most_400_lines() {
    let lines = read(&workspace().join("README.md")).lines().count();
    assert!(
        lines <= README_MAX_LINES,
        "README.md has {lines} lines, more than {README_MAX_LINES}: move the detail into docs/"
    );
}

/// The README's test command is the one .ci/run runs.
#[test]
fn readme_test_command_is_what_ci_runs() {
    let readme = read(&workspace().join("README.md"));
    let command = readme
        .lines()
        .find_map(|line| line.strip_prefix("cargo test "))
        .map(|rest| format!("cargo test {}", rest.split('#').next().unwrap().trim()))
        .expect("README.md gives no `cargo test` command");
    let ci = read(&workspace().join(".ci/run"));
    assert!(
        ci.lines().any(|line| line.trim() == command),
        ".ci/run does not run the README's test command `{command}`"
    );
}

/// Counts a page states: "50 benchmarks", "17 built-in profiles", "the
/// `quick` suite (17 tests", each with where it was found. Words are read
/// across line breaks.
#[derive(Default)]
struct Stated {
    benchmarks: Vec<(usize, String)>,
    profiles: Vec<(usize, String)>,
    suite_tests: Vec<(String, usize, String)>,
}

fn stated_counts(pages: &[PathBuf]) -> Stated {
    let mut stated = Stated::default();
    for page in pages {
        let text = read(page);
        let words: Vec<&str> = text.split_whitespace().collect();
        let number = |word: &str| word.trim_start_matches('(').parse::<usize>().ok();
        for (i, word) in words.iter().enumerate() {
            let Some(n) = number(word) else { continue };
            let mut end = (i + 2).min(words.len());
            if words.get(i + 1) == Some(&"built-in") {
                end = (i + 3).min(words.len());
            }
            let noun = words[end - 1].trim_end_matches(|c: char| !c.is_alphanumeric());
            let at = format!("{}: \"{}\"", name(page), words[i..end].join(" "));
            match noun {
                "benchmarks" => stated.benchmarks.push((n, at)),
                "profiles" => stated.profiles.push((n, at)),
                _ => {}
            }
        }
        // "the `quick` suite (17 tests"
        for window in words.windows(4) {
            let [suite, "suite", count, tests] = window else {
                continue;
            };
            let (Some(suite), Some(n)) = (
                suite.strip_prefix('`').and_then(|s| s.strip_suffix('`')),
                count.strip_prefix('(').and_then(|c| c.parse().ok()),
            ) else {
                continue;
            };
            if tests.starts_with("tests") {
                let at = format!("{}: \"{}\"", name(page), window.join(" "));
                stated.suite_tests.push((suite.to_string(), n, at));
            }
        }
    }
    stated
}

/// Wherever the README and the reference pages state how many benchmarks,
/// profiles or tests of a suite there are, `kbench list --json` agrees.
/// docs/performance.md is left out: its counts are those of dated
/// measurements.
#[test]
fn counts_agree_with_the_registry() {
    let (_dir, db) = common::temp_db();
    let out = common::kbench(&db)
        .env_remove("KBENCH_PROFILES")
        .args(["list", "--json"])
        .output()
        .unwrap();
    common::assert_success(&out, "kbench list --json: ");
    let list = common::json(&out.stdout);
    let benchmarks = list["benchmarks"].as_array().unwrap().len();
    let profiles = list["profiles"].as_array().unwrap().len();
    let suites: BTreeMap<String, usize> = list["suites"]
        .as_array()
        .unwrap()
        .iter()
        .map(|suite| {
            let tests = suite["tests"].as_array().unwrap().len();
            (suite["name"].as_str().unwrap().to_string(), tests)
        })
        .collect();

    let readme = stated_counts(&[workspace().join("README.md")]);
    assert!(
        !readme.benchmarks.is_empty() && !readme.profiles.is_empty(),
        "README.md should say how many benchmarks and profiles kbench has (\"N benchmarks\", \"N profiles\")"
    );
    let pages: Vec<PathBuf> = documents()
        .into_iter()
        .filter(|page| !page.ends_with("docs/performance.md"))
        .collect();
    let stated = stated_counts(&pages);
    let mut wrong = vec![];
    for (n, at) in &stated.benchmarks {
        if *n != benchmarks {
            wrong.push(format!("{at}: kbench list has {benchmarks} benchmarks"));
        }
    }
    for (n, at) in &stated.profiles {
        if *n != profiles {
            wrong.push(format!("{at}: kbench list has {profiles} profiles"));
        }
    }
    for (suite, n, at) in &stated.suite_tests {
        match suites.get(suite) {
            Some(tests) if tests == n => {}
            Some(tests) => wrong.push(format!("{at}: kbench list has {tests} tests in it")),
            None => wrong.push(format!("{at}: kbench list has no suite '{suite}'")),
        }
    }
    assert!(
        wrong.is_empty(),
        "counts that drifted:\n{}",
        wrong.join("\n")
    );
}

/// The ```sh block after [`QUICK_START_MARKER`] in the README.
fn quick_start() -> String {
    let readme = read(&workspace().join("README.md"));
    let after = readme
        .split_once(QUICK_START_MARKER)
        .unwrap_or_else(|| panic!("README.md has no {QUICK_START_MARKER}"))
        .1;
    let block = after
        .trim_start()
        .strip_prefix("```sh\n")
        .unwrap_or_else(|| panic!("no ```sh block right after {QUICK_START_MARKER}"));
    block.split_once("```").unwrap().0.to_string()
}

/// The quick start for two kernels, pasted into a shell as it stands: the
/// runs under each kernel and the comparisons, the reboots left to the
/// comments. Only the environment differs: a temp database, no config,
/// and short sampling, so it takes seconds.
#[test]
fn two_kernel_quick_start_runs_as_pasted() {
    let block = quick_start();
    for line in block.lines() {
        let line = line.trim();
        assert!(
            line.is_empty() || line.starts_with('#') || line.starts_with("kbench "),
            "the quick start should hold kbench commands and comments only: {line}"
        );
    }
    assert!(
        block.contains("# reboot into kernel B") && block.contains("# reboot into kernel A"),
        "the quick start should say where to reboot into each kernel:\n{block}"
    );

    let (dir, db) = common::temp_db();
    let binary = Path::new(env!("CARGO_BIN_EXE_kbench")).parent().unwrap();
    let path = std::env::join_paths(
        std::iter::once(binary.to_path_buf())
            .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
    )
    .unwrap();
    let out = std::process::Command::new("sh")
        .args(["-e", "-c", &block])
        .current_dir(dir.path())
        .env("PATH", path)
        .env("KBENCH_DB", &db)
        .env("XDG_CONFIG_HOME", "/nonexistent/kbench-tests")
        .env("KBENCH_MAX_TIME", "0.01")
        .env("KBENCH_TARGET_CI", "99")
        .env_remove("KBENCH_CONFIG")
        .env_remove("KBENCH_SERVER")
        .env_remove("KBENCH_THRESHOLD")
        .env_remove("KBENCH_PROFILES")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the quick start failed ({}):\n{block}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );

    let sets = common::json_of(&db, &["show", "--json"]);
    let identifiers: Vec<&str> = sets["result_sets"][0]["identifiers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|identifier| identifier.as_str().unwrap())
        .collect();
    assert_eq!(identifiers, ["A", "B"], "{sets}");
}

/// GitHub's anchor of a heading: lower case, spaces to `-`, punctuation
/// other than `-` and `_` dropped.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// Lines outside fenced code blocks, with their line numbers.
fn prose(text: &str) -> Vec<(usize, &str)> {
    let mut fenced = false;
    let mut lines = vec![];
    for (index, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced {
            lines.push((index + 1, line));
        }
    }
    lines
}

/// The anchors of a page's headings, repeats numbered as GitHub does
/// (`-1`, `-2`).
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut anchors = BTreeSet::new();
    for (_, line) in prose(text) {
        let Some(heading) = line.strip_prefix('#') else {
            continue;
        };
        let heading = heading.trim_start_matches('#');
        if !heading.starts_with(' ') {
            continue;
        }
        let base = slug(heading);
        let count = seen.entry(base.clone()).or_default();
        anchors.insert(match *count {
            0 => base.clone(),
            n => format!("{base}-{n}"),
        });
        *count += 1;
    }
    anchors
}

/// The targets of a line's markdown links, `[text](target)`, outside
/// inline code.
fn link_targets(line: &str) -> Vec<&str> {
    let mut targets = vec![];
    // Odd pieces between backticks are inline code.
    for piece in line.split('`').step_by(2) {
        let mut rest = piece;
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let Some(end) = after.find(')') else { break };
            targets.push(&after[..end]);
            rest = &after[end..];
        }
    }
    targets
}

#[test]
fn relative_links_resolve() {
    let mut broken = vec![];
    for page in documents() {
        let text = read(&page);
        for (line_number, line) in prose(&text) {
            for target in link_targets(line) {
                if target.contains("://") || target.starts_with("mailto:") {
                    continue;
                }
                let (file, anchor) = target.split_once('#').unwrap_or((target, ""));
                let resolved = if file.is_empty() {
                    page.clone()
                } else {
                    page.parent().unwrap().join(file)
                };
                let at = format!("{}:{line_number}: {target}", name(&page));
                if !resolved.exists() {
                    broken.push(format!("{at}: no such file"));
                } else if !anchor.is_empty()
                    && resolved.extension().is_some_and(|e| e == "md")
                    && !anchors(&read(&resolved)).contains(anchor)
                {
                    broken.push(format!("{at}: no such heading"));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}
