//! The workspace keeps the shape docs/architecture.md draws: every crate
//! sits in its table, depends only on crates of lower layers, has no import
//! cycle between its files or between sibling modules, the layers that
//! must not see a database do not, and the binary stays flags plus glue.
//! Read from the sources and manifests, so a change that breaks the shape
//! fails here, naming the crate, files or dependency.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Lines the binary crate's sources may hold (issue 13: flags plus glue; the
/// flags moved to kbench-cli, so the glue alone). 1,600 held every command
/// up to `kbench lava`, whose three subcommands' glue (commands/lava.rs,
/// about 85 lines: the job, an import with its upload, a submission
/// followed by its progress line) raised it.
const BINARY_LINE_BUDGET: usize = 1700;

/// Crates that never see a database, even through their dependencies.
const DATABASE_FREE: &[&str] = &[
    "kbench-model",
    "kbench-stats",
    "kbench-analysis",
    "kbench-report",
];
const DATABASE_CRATES: &[&str] = &["rusqlite", "postgres"];

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The crates under crates/, by name.
fn crates() -> BTreeMap<String, PathBuf> {
    let dir = workspace().join("crates");
    std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.join("Cargo.toml").exists())
        .map(|path| {
            (
                path.file_name().unwrap().to_string_lossy().into_owned(),
                path,
            )
        })
        .collect()
}

/// The layer of each crate, from docs/architecture.md's table
/// (`| 3 | \`kbench-catalog\` | ... |`).
fn layers() -> BTreeMap<String, u32> {
    let doc = read(&workspace().join("docs/architecture.md"));
    doc.lines()
        .filter_map(|line| {
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            let layer = cells.get(1)?.parse().ok()?;
            let name = cells.get(2)?.strip_prefix('`')?.strip_suffix('`')?;
            Some((name.to_string(), layer))
        })
        .collect()
}

/// The names of a manifest's dependencies of every kind (normal, dev,
/// build).
fn dependencies(manifest: &str) -> BTreeSet<String> {
    let mut in_dependencies = false;
    let mut names = BTreeSet::new();
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_dependencies = line.ends_with("dependencies]");
            continue;
        }
        if !in_dependencies || line.is_empty() || line.starts_with('#') {
            continue;
        }
        let name = line.split(['=', '.', ' ']).next().unwrap_or_default();
        names.insert(name.to_string());
    }
    names
}

#[test]
fn every_crate_depends_only_on_lower_layers() {
    let layers = layers();
    let crates = crates();
    let listed: BTreeSet<&String> = layers.keys().collect();
    let present: BTreeSet<&String> = crates.keys().collect();
    assert_eq!(
        listed, present,
        "docs/architecture.md's table and crates/ must name the same crates"
    );
    let mut wrong = Vec::new();
    for (name, dir) in &crates {
        for dependency in dependencies(&read(&dir.join("Cargo.toml"))) {
            if let Some(&below) = layers.get(&dependency)
                && below >= layers[name]
            {
                wrong.push(format!(
                    "{name} (layer {}) depends on {dependency} (layer {below})",
                    layers[name]
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Crates that use the analysis but never its presentation (issue 32:
/// measuring and bisecting need models, not renderers).
const PRESENTATION_FREE: &[&str] = &["kbench-measure", "kbench-bisect"];

/// Every crate `start` builds with (dependencies of its dependencies
/// included; dev-dependencies left out: tests may open stores), each with
/// the workspace crate that brings it in.
fn reached(start: &str) -> Vec<(String, String)> {
    let crates = crates();
    let mut seen = BTreeSet::new();
    let mut reached = Vec::new();
    let mut todo = vec![start.to_string()];
    while let Some(name) = todo.pop() {
        if !seen.insert(name.clone()) {
            continue;
        }
        let Some(dir) = crates.get(&name) else {
            continue;
        };
        let manifest = read(&dir.join("Cargo.toml"));
        let normal = manifest
            .split("[dev-dependencies]")
            .next()
            .unwrap_or_default();
        for dependency in dependencies(normal) {
            reached.push((dependency.clone(), name.clone()));
            todo.push(dependency);
        }
    }
    reached
}

#[test]
fn database_free_crates_reach_no_database_crate() {
    for start in DATABASE_FREE {
        for (dependency, through) in reached(start) {
            assert!(
                !DATABASE_CRATES.contains(&dependency.as_str()),
                "{start} reaches {dependency} through {through}"
            );
        }
    }
}

#[test]
fn measuring_and_bisecting_reach_no_renderer() {
    for start in PRESENTATION_FREE {
        for (dependency, through) in reached(start) {
            assert_ne!(
                dependency, "kbench-report",
                "{start} reaches kbench-report through {through}: use kbench-analysis' models"
            );
        }
    }
}

#[test]
fn the_binary_is_flags_plus_glue() {
    let lines: usize = rust_files(&workspace().join("crates/kbench/src"))
        .iter()
        .map(|file| read(file).lines().count())
        .sum();
    assert!(
        lines < BINARY_LINE_BUDGET,
        "crates/kbench/src holds {lines} lines, the budget is {BINARY_LINE_BUDGET}: \
         move what is not flags or glue into a library"
    );
}

#[test]
fn no_crate_has_an_import_cycle() {
    let mut cycles = Vec::new();
    for (name, dir) in crates() {
        let graph = ModuleGraph::read(&dir.join("src"));
        for cycle in find_cycles(&graph.file_edges()) {
            cycles.push(format!("{name}: files {}", show(&cycle)));
        }
        for cycle in find_cycles(&graph.sibling_edges()) {
            cycles.push(format!("{name}: modules {}", show(&cycle)));
        }
    }
    assert!(cycles.is_empty(), "import cycles:\n{}", cycles.join("\n"));
}

#[test]
fn the_cycle_finder_sees_cycles() {
    let graph = ModuleGraph::parse(&[
        (module("a"), "use crate::b::Thing;\nuse super::c;"),
        (module("b"), "use crate::{c::{self, More}, d};"),
        (module("c"), "fn f() { crate::a::g() }"),
        (
            module("d"),
            "#[cfg(test)]\nmod tests { use crate::a; }\n// crate::a::h",
        ),
        (module("e::f"), "use super::g::Thing;"),
        (module("e::g"), "use crate::e::f;"),
    ]);
    let files = graph.file_edges();
    assert_eq!(files[&module("b")], [module("c"), module("d")].into());
    assert!(
        files[&module("d")].is_empty(),
        "tests and comments are not imports"
    );
    let mut cycles = find_cycles(&files);
    assert_eq!(cycles.len(), 2, "{cycles:?}");
    cycles.iter_mut().for_each(|c| c.sort());
    assert!(
        cycles.contains(&vec![module("a"), module("b"), module("c")]),
        "{cycles:?}"
    );
    assert!(
        cycles.contains(&vec![module("e::f"), module("e::g")]),
        "{cycles:?}"
    );
    assert_eq!(find_cycles(&graph.sibling_edges()).len(), 2);
    let acyclic = ModuleGraph::parse(&[(module("a"), "use crate::b;"), (module("b"), "")]);
    assert!(find_cycles(&acyclic.file_edges()).is_empty());
    // A parent names its children by relative paths too.
    let nested = ModuleGraph::parse(&[
        (
            module("p"),
            "use q::Thing;\nfn f() { r::g(); other::q::h() }",
        ),
        (module("p::q"), "use super::Shared;"),
        (module("p::r"), ""),
    ]);
    let edges = nested.file_edges();
    assert_eq!(edges[&module("p")], [module("p::q"), module("p::r")].into());
    assert_eq!(find_cycles(&edges), [vec![module("p"), module("p::q")]]);
}

type ModulePath = Vec<String>;
type Edges = BTreeMap<ModulePath, BTreeSet<ModulePath>>;

fn module(path: &str) -> ModulePath {
    path.split("::").map(str::to_string).collect()
}

fn show(cycle: &[ModulePath]) -> String {
    let mut names: Vec<String> = cycle.iter().map(|m| m.join("::")).collect();
    names.sort();
    names.join(", ")
}

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    files
}

/// A crate's file modules and the code outside their tests.
struct ModuleGraph {
    code: BTreeMap<ModulePath, String>,
}

impl ModuleGraph {
    fn read(src: &Path) -> ModuleGraph {
        let files: Vec<(ModulePath, String)> = rust_files(src)
            .into_iter()
            .map(|file| {
                let relative = file.strip_prefix(src).unwrap().with_extension("");
                let mut path: ModulePath = relative
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect();
                if matches!(
                    path.last().map(String::as_str),
                    Some("lib" | "main" | "mod")
                ) {
                    path.pop();
                }
                (path, read(&file))
            })
            .collect();
        let borrowed: Vec<(ModulePath, &str)> =
            files.iter().map(|(p, c)| (p.clone(), c.as_str())).collect();
        ModuleGraph::parse(&borrowed)
    }

    /// Modules declared `#[cfg(test)] mod x;` (and what is under them) are
    /// tests, left out; so is every `#[cfg(test)]` item and every comment.
    fn parse(files: &[(ModulePath, &str)]) -> ModuleGraph {
        let mut code: BTreeMap<ModulePath, String> = files
            .iter()
            .map(|(path, text)| (path.clone(), without_tests(&without_comments(text))))
            .collect();
        let mut test_modules = Vec::new();
        for (path, text) in files {
            for name in test_module_files(&without_comments(text)) {
                let mut child = path.clone();
                child.push(name);
                test_modules.push(child);
            }
        }
        code.retain(|path, _| !test_modules.iter().any(|t| path.starts_with(t)));
        ModuleGraph { code }
    }

    /// From each file module to the file modules its paths name.
    fn file_edges(&self) -> Edges {
        let mut edges = Edges::new();
        for (module, code) in &self.code {
            if module.is_empty() {
                // The crate root is the crate's face: its `pub use` and
                // `mod` lines are not imports.
                continue;
            }
            let children: BTreeSet<String> = self
                .code
                .keys()
                .filter(|path| path.len() == module.len() + 1 && path.starts_with(module))
                .map(|path| path[module.len()].clone())
                .collect();
            let targets = edges.entry(module.clone()).or_default();
            for path in referenced_paths(module, &children, code) {
                if let Some(target) = self.owner(&path)
                    && target != *module
                {
                    targets.insert(target);
                }
            }
        }
        edges
    }

    /// Between sibling modules (each with everything under it): `a::x`
    /// naming `b::y` is an edge from `a` to `b`.
    fn sibling_edges(&self) -> Edges {
        let mut edges = Edges::new();
        for (from, targets) in self.file_edges() {
            for to in targets {
                let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
                if common < from.len() && common < to.len() {
                    edges
                        .entry(from[..=common].to_vec())
                        .or_default()
                        .insert(to[..=common].to_vec());
                }
            }
        }
        edges
    }

    /// The file module holding the item at `path`: its longest prefix that
    /// is a file (the root holds nothing it is checked for).
    fn owner(&self, path: &[String]) -> Option<ModulePath> {
        (1..=path.len())
            .rev()
            .map(|n| path[..n].to_vec())
            .find(|prefix| self.code.contains_key(prefix))
    }
}

/// Every path in `code` of `module` that names a module of the crate:
/// `crate::...`, `super::...` and `child::...` for a child module of
/// `module`, made absolute; `{a, b::c}` groups give one path each.
fn referenced_paths(module: &[String], children: &BTreeSet<String>, code: &str) -> Vec<ModulePath> {
    let is_ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let bytes = code.as_bytes();
    let mut paths = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        if !is_ident(bytes[at]) {
            at += 1;
            continue;
        }
        let start = at;
        while at < bytes.len() && is_ident(bytes[at]) {
            at += 1;
        }
        let continues_a_path = code[..start].ends_with("::") || code[..start].ends_with('$');
        if continues_a_path || !code[at..].starts_with("::") {
            continue;
        }
        let (mut base, mut tail) = match &code[start..at] {
            "crate" => (Vec::new(), &code[at + 2..]),
            "super" => (
                module[..module.len().saturating_sub(1)].to_vec(),
                &code[at + 2..],
            ),
            child if children.contains(child) => (module.to_vec(), &code[start..]),
            _ => continue,
        };
        while let Some(rest) = tail.strip_prefix("super::") {
            base.pop();
            tail = rest;
        }
        collect_group(&base, tail, &mut paths);
        at = code.len() - tail.len() + path_length(tail);
    }
    paths
}

/// How long the path at the start of `text` is: names, `::` and braced
/// groups.
fn path_length(text: &str) -> usize {
    let mut depth = 0usize;
    for (i, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth > 0 => depth -= 1,
            c if c.is_ascii_alphanumeric() || c == '_' || c == ':' => {}
            c if depth > 0 && (c == ',' || c.is_whitespace() || c == '*') => {}
            _ if depth > 0 => {}
            _ => return i,
        }
    }
    text.len()
}

/// Reads `a::b::{c, d::{e}}` (or `a::b`) after `base`, pushing one path per
/// leaf.
fn collect_group(base: &[String], text: &str, paths: &mut Vec<ModulePath>) {
    let mut path = base.to_vec();
    let mut rest = text;
    loop {
        if let Some(inner) = rest.strip_prefix('{') {
            for item in split_group(inner) {
                collect_group(&path, item.trim(), paths);
            }
            return;
        }
        let ident_end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        let ident = &rest[..ident_end];
        if !ident.is_empty() && ident != "self" {
            path.push(ident.to_string());
        }
        match rest[ident_end..].strip_prefix("::") {
            Some(after) => rest = after,
            None => break,
        }
    }
    if !path.is_empty() {
        paths.push(path);
    }
}

/// The items of a `{...}` group (its text after the `{`), split on the
/// commas at its own depth.
fn split_group(inner: &str) -> Vec<&str> {
    let mut items = Vec::new();
    let mut depth = 0;
    let mut start = 0;
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                items.push(&inner[start..i]);
                return items;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items
}

/// `code` with `//` comments (doc comments included) removed.
fn without_comments(code: &str) -> String {
    code.lines()
        .map(|line| match line.find("//") {
            Some(at) if !line[..at].contains('"') => &line[..at],
            _ => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `code` without the items under `#[cfg(test)]`.
fn without_tests(code: &str) -> String {
    const MARK: &str = "#[cfg(test)]";
    let mut kept = String::new();
    let mut rest = code;
    while let Some(at) = rest.find(MARK) {
        kept.push_str(&rest[..at]);
        rest = skip_item(&rest[at + MARK.len()..]);
    }
    kept.push_str(rest);
    kept
}

/// What follows the item at the start of `code`: up to its `;`, or past
/// its braced body, whichever comes first.
fn skip_item(code: &str) -> &str {
    let mut depth = 0usize;
    for (i, c) in code.char_indices() {
        match c {
            ';' if depth == 0 => return &code[i + 1..],
            '{' => depth += 1,
            '}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return &code[i + 1..];
                }
            }
            _ => {}
        }
    }
    ""
}

/// The names of `#[cfg(test)] mod name;` declarations: test files.
fn test_module_files(code: &str) -> Vec<String> {
    code.split("#[cfg(test)]")
        .skip(1)
        .filter_map(|after| {
            let item = after.trim_start();
            let declaration = item.strip_prefix("pub(crate) ").unwrap_or(item);
            let name = declaration.strip_prefix("mod ")?.split(';').next()?;
            (!name.contains('{')).then(|| name.trim().to_string())
        })
        .collect()
}

/// The import cycles of `edges`: each group of modules that reach one
/// another (Tarjan's strongly connected components of more than one).
fn find_cycles(edges: &Edges) -> Vec<Vec<ModulePath>> {
    struct Search<'a> {
        edges: &'a Edges,
        index: BTreeMap<ModulePath, usize>,
        low: BTreeMap<ModulePath, usize>,
        stack: Vec<ModulePath>,
        cycles: Vec<Vec<ModulePath>>,
    }
    impl Search<'_> {
        fn visit(&mut self, node: &ModulePath) {
            let n = self.index.len();
            self.index.insert(node.clone(), n);
            self.low.insert(node.clone(), n);
            self.stack.push(node.clone());
            for next in self.edges.get(node).into_iter().flatten() {
                if !self.index.contains_key(next) {
                    self.visit(next);
                    let low = self.low[node].min(self.low[next]);
                    self.low.insert(node.clone(), low);
                } else if self.stack.contains(next) {
                    let low = self.low[node].min(self.index[next]);
                    self.low.insert(node.clone(), low);
                }
            }
            if self.low[node] == self.index[node] {
                let from = self.stack.iter().position(|n| n == node).unwrap();
                let group = self.stack.split_off(from);
                if group.len() > 1 {
                    self.cycles.push(group);
                }
            }
        }
    }
    let mut search = Search {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        cycles: Vec::new(),
    };
    for node in edges.keys() {
        if !search.index.contains_key(node) {
            search.visit(node);
        }
    }
    search.cycles
}
