//! Result sets as their authors arrange them, through the binary: title
//! and description, renaming, ordering and removing identifiers (other
//! identifiers' samples untouched, bad input refused with nothing
//! changed), factors and `compare --by`, and the hardware lines of the
//! system snapshot.

mod common;

use common::{json, json_of, kbench, output, run_short, succeeds, temp_db};
use serde_json::{Value, json};
use std::path::Path;

/// An identifier of [`document`]: name, factors (name, level), base value.
type Cell<'a> = (&'a str, &'a [(&'a str, &'a str)], f64);

/// A kbench.samples/1 document: each identifier 6 rounds of 3 samples of
/// test "t" (ns) close to its base value.
fn document(identifiers: &[Cell]) -> String {
    let entries: Vec<Value> = identifiers
        .iter()
        .map(|(name, factors, base)| {
            let samples: Vec<Value> = (0..6u32)
                .flat_map(|round| {
                    (0..3u8).map(move |i| {
                        let jitter = f64::from(round) * 0.05 + f64::from(i) * 0.02;
                        json!({"value": base * (1.0 + jitter / 100.0), "round": round,
                               "at_ms": 1_000 + i64::from(round) * 10 + i64::from(i)})
                    })
                })
                .collect();
            let factors: serde_json::Map<String, Value> = factors
                .iter()
                .map(|(k, v)| (k.to_string(), json!(v)))
                .collect();
            json!({"name": name, "factors": factors, "samples": {"t": samples}})
        })
        .collect();
    json!({
        "schema": "kbench.samples/1",
        "result_set": "s",
        "tests": [{"test": "t", "unit": "ns", "direction": "lower"}],
        "identifiers": entries,
    })
    .to_string()
}

fn import(db: &Path, dir: &Path, text: &str, into: &str) {
    let file = dir.join(format!("{into}.json"));
    std::fs::write(&file, text).unwrap();
    succeeds(db, &["import", file.to_str().unwrap(), "--into", into]);
}

fn export(db: &Path, set: &str) -> Value {
    json_of(db, &["export", set])
}

/// An identifier's entry of an export, without its name.
fn entry(export: &Value, name: &str) -> Value {
    let mut found = export["identifiers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["name"] == name)
        .unwrap_or_else(|| panic!("no identifier {name} in {export}"))
        .clone();
    found.as_object_mut().unwrap().remove("name");
    found
}

fn names(export: &Value) -> Vec<String> {
    export["identifiers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["name"].as_str().unwrap().to_string())
        .collect()
}

fn stderr_of(db: &Path, args: &[&str]) -> String {
    let out = output(db, args);
    assert!(!out.status.success(), "kbench {args:?} should fail");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn title_and_description_go_through_export_import_and_reports() {
    let (dir, db) = temp_db();
    import(
        &db,
        dir.path(),
        &document(&[("a", &[], 100.0), ("b", &[], 101.0)]),
        "s",
    );
    succeeds(
        &db,
        &[
            "set",
            "edit",
            "s",
            "--title",
            "PLU on 6.18",
            "--description",
            "Two kernels.\nOne box.",
        ],
    );
    let exported = export(&db, "s");
    assert_eq!(exported["title"], "PLU on 6.18");
    assert_eq!(exported["description"], "Two kernels.\nOne box.");
    import(&db, dir.path(), &exported.to_string(), "copy");
    let shown = json_of(&db, &["show", "copy", "--json"]);
    assert_eq!(shown["title"], "PLU on 6.18");
    assert_eq!(shown["description"], "Two kernels.\nOne box.");
    let text = String::from_utf8(output(&db, &["show", "copy"]).stdout).unwrap();
    assert!(
        text.starts_with("PLU on 6.18\nTwo kernels.\nOne box.\n"),
        "{text}"
    );
    let bars =
        String::from_utf8(output(&db, &["compare", "copy", "--color", "never"]).stdout).unwrap();
    assert!(bars.starts_with("PLU on 6.18\n"), "{bars}");
    let html = dir.path().join("c.html");
    succeeds(
        &db,
        &[
            "compare",
            "copy",
            "--format",
            "html",
            "-o",
            html.to_str().unwrap(),
        ],
    );
    let page = std::fs::read_to_string(html).unwrap();
    assert!(page.contains("<h1>PLU on 6.18</h1>"), "no title heading");
    // An empty text clears.
    succeeds(&db, &["set", "edit", "copy", "--description", ""]);
    assert!(export(&db, "copy").get("description").is_none());
    let listing = json_of(&db, &["show", "--json"]);
    assert_eq!(listing["result_sets"][1]["title"], "PLU on 6.18");
}

#[test]
fn rename_order_and_remove_keep_other_identifiers_samples() {
    let (dir, db) = temp_db();
    let doc = document(&[("a", &[], 100.0), ("b", &[], 101.0), ("c", &[], 102.0)]);
    import(&db, dir.path(), &doc, "s");
    let before = export(&db, "s");

    succeeds(&db, &["set", "rename", "s", "b", "b2"]);
    let renamed = export(&db, "s");
    assert_eq!(names(&renamed), ["a", "b2", "c"]);
    for (old, new) in [("a", "a"), ("b", "b2"), ("c", "c")] {
        assert_eq!(entry(&renamed, new), entry(&before, old), "{old}");
    }

    succeeds(&db, &["set", "order", "s", "c", "a"]);
    let ordered = export(&db, "s");
    assert_eq!(names(&ordered), ["c", "a", "b2"]);
    for name in ["a", "b2", "c"] {
        assert_eq!(entry(&ordered, name), entry(&renamed, name), "{name}");
    }
    // Reports follow the order: the first is compare's baseline.
    let compared = json_of(&db, &["compare", "s", "--format", "json"]);
    assert_eq!(compared["baseline"], "c");

    let refused = stderr_of(&db, &["set", "remove", "s", "b2"]);
    assert!(refused.contains("needs --yes"), "{refused}");
    assert_eq!(export(&db, "s"), ordered);
    let out = output(&db, &["set", "remove", "s", "b2", "--yes"]);
    assert!(out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("1 run(s), 18 sample(s)"), "{said}");
    let removed = export(&db, "s");
    assert_eq!(names(&removed), ["c", "a"]);
    for name in ["a", "c"] {
        assert_eq!(entry(&removed, name), entry(&before, name), "{name}");
    }
}

#[test]
fn bad_edits_are_refused_with_the_store_unchanged() {
    let (dir, db) = temp_db();
    let doc = document(&[("stock", &[], 100.0), ("patched", &[], 101.0)]);
    import(&db, dir.path(), &doc, "s");
    let before = export(&db, "s");
    let cases: &[(&[&str], &str)] = &[
        (
            &["set", "rename", "nope", "stock", "x"],
            "no result set \"nope\"",
        ),
        (
            &["set", "rename", "s", "stok", "x"],
            "did you mean \"stock\"?",
        ),
        (
            &["set", "rename", "s", "stock", "patched"],
            "already has an identifier",
        ),
        (
            &["set", "rename", "s", "stock", "a\u{1b}[31m"],
            "control character",
        ),
        (&["set", "rename", "s", "stock", " "], "name is empty"),
        (&["set", "order", "s", "patched", "patched"], "named twice"),
        (
            &["set", "order", "s", "patched", "patchd"],
            "did you mean \"patched\"?",
        ),
        (
            &["set", "remove", "s", "stok", "--yes"],
            "did you mean \"stock\"?",
        ),
        (&["set", "edit", "s"], "nothing to change"),
        (&["set", "edit", "s", "--title", "two\nlines"], "title"),
        (
            &[
                "set",
                "edit",
                "s",
                "--identifier",
                "stock",
                "--factor",
                "kernel",
            ],
            "NAME=LEVEL",
        ),
        (
            &[
                "set",
                "edit",
                "s",
                "--identifier",
                "stock",
                "--factor",
                "k=a b",
            ],
            "level of factor k",
        ),
        (
            &[
                "set",
                "edit",
                "s",
                "--identifier",
                "stock",
                "--unset-factor",
                "k",
            ],
            "no factor \"k\"",
        ),
    ];
    for (args, needle) in cases {
        let err = stderr_of(&db, args);
        assert!(
            err.contains(needle),
            "kbench {args:?}: {needle:?} not in {err}"
        );
        assert_eq!(export(&db, "s"), before, "kbench {args:?} changed the set");
    }
}

#[test]
fn compare_by_kernel_finds_the_patch_in_each_cgroup_level() {
    let (dir, db) = temp_db();
    // Patched is 30 % slower in and out of the cgroup (one run each: more
    // than the default drift between runs explains); "other" has no
    // factors.
    let doc = document(&[
        ("stock", &[("kernel", "stock"), ("cgroup", "no")], 100.0),
        ("patched", &[("kernel", "patched"), ("cgroup", "no")], 130.0),
        ("stock-cg", &[("kernel", "stock"), ("cgroup", "yes")], 130.0),
        (
            "patched-cg",
            &[("kernel", "patched"), ("cgroup", "yes")],
            169.0,
        ),
        ("other", &[], 100.0),
    ]);
    import(&db, dir.path(), &doc, "s");
    let report = json_of(&db, &["compare", "s", "--by", "kernel", "--format", "json"]);
    assert_eq!(report["schema"], "kbench.factors/1");
    assert_eq!(report["baseline_level"], "stock");
    let groups = report["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 2);
    for (group, cgroup, baseline) in [(&groups[0], "no", "stock"), (&groups[1], "yes", "stock-cg")]
    {
        assert_eq!(group["within"]["cgroup"], cgroup);
        assert_eq!(group["comparison"]["baseline"], baseline);
        let result = &group["comparison"]["metrics"][0]["results"][1];
        let comparison = &result["comparison"];
        assert_eq!(comparison["verdict"], "regression", "{group}");
        let change = comparison["change_pct"]["point"].as_f64().unwrap();
        assert!((change - 30.0).abs() < 0.5, "change {change} %");
    }
    assert!(
        report["notes"][0].as_str().unwrap().contains("other"),
        "{}",
        report["notes"]
    );
    // The gate fails on it; from the patched side it is an improvement.
    let gate = output(
        &db,
        &["compare", "s", "--by", "kernel", "--fail-on-regression"],
    );
    assert_eq!(gate.status.code(), Some(1));
    let text = String::from_utf8_lossy(&gate.stdout);
    assert!(text.contains("cgroup=yes: kernel stock ('stock-cg') -> patched ('patched-cg')"));
    let flipped = json_of(
        &db,
        &[
            "compare",
            "s",
            "--by",
            "kernel",
            "--baseline-level",
            "patched",
            "--format",
            "json",
        ],
    );
    let verdict =
        &flipped["groups"][0]["comparison"]["metrics"][0]["results"][1]["comparison"]["verdict"];
    assert_eq!(verdict, "improvement");
    // Factors set afterwards count the same; bad requests are refused.
    succeeds(
        &db,
        &[
            "set",
            "edit",
            "s",
            "--identifier",
            "other",
            "--factor",
            "kernel=stock",
        ],
    );
    let report = json_of(&db, &["compare", "s", "--by", "kernel", "--format", "json"]);
    assert!(
        report["notes"][0]
            .as_str()
            .unwrap()
            .contains("'other' (kernel=stock)")
    );
    let err = stderr_of(&db, &["compare", "s", "--by", "kernal"]);
    assert!(err.contains("its factors: cgroup, kernel"), "{err}");
    let err = stderr_of(&db, &["compare", "s", "--by", "kernel", "--format", "csv"]);
    assert!(err.contains("--format csv does not lay out"), "{err}");
}

#[test]
fn run_stores_its_factors() {
    let (_dir, db) = temp_db();
    run_short(
        &db,
        &[
            "run",
            "syscall-null",
            "--as",
            "x",
            "--into",
            "r",
            "--factor",
            "kernel=stock",
        ],
    );
    let shown = json_of(&db, &["show", "r", "--json"]);
    assert_eq!(
        shown["identifiers"][0]["factors"],
        json!({"kernel": "stock"})
    );
    let out = output(
        &db,
        &[
            "run",
            "syscall-null",
            "--into",
            "r",
            "--variant",
            "a",
            "--factor",
            "k=v",
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(2),
        "--factor with --variant is a usage error"
    );
}

/// The drivers behind /sys/class/net/*/device/driver, read here
/// independently of kbench.
fn network_drivers() -> Vec<String> {
    let mut drivers: Vec<String> = std::fs::read_dir("/sys/class/net")
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_name() != "lo")
        .filter_map(|e| std::fs::read_link(e.path().join("device/driver")).ok())
        .map(|link| link.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    drivers.sort();
    drivers.dedup();
    drivers
}

#[test]
fn the_snapshot_names_this_machines_network_driver() {
    let expected = network_drivers();
    let out = kbench("unused.db")
        .args(["sysinfo", "--json"])
        .output()
        .unwrap();
    let snapshot = json(&out.stdout);
    match snapshot.get("network") {
        Some(drivers) => assert_eq!(drivers, &json!(expected)),
        None => assert!(expected.is_empty(), "kbench found none of {expected:?}"),
    }
    let text =
        String::from_utf8(kbench("unused.db").arg("sysinfo").output().unwrap().stdout).unwrap();
    if let Some(first) = expected.first() {
        assert!(text.contains(first.as_str()), "{text}");
    }
}
