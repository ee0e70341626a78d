//! kbench-report reads results as `kbench_model::results` and sees no
//! database (docs/architecture.md): no store crate in its manifest.

#[test]
fn report_depends_on_no_database_crate() {
    let manifest = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml"))
        .expect("kbench-report's Cargo.toml");
    let dependencies: Vec<&str> = manifest
        .lines()
        .map(str::trim)
        .filter(|line| !line.starts_with('#') && !line.starts_with('['))
        .filter_map(|line| line.split(['=', '.', ' ']).next())
        .filter(|name| !name.is_empty())
        .collect();
    for forbidden in ["kbench-store", "rusqlite", "postgres"] {
        assert!(
            !dependencies.contains(&forbidden),
            "kbench-report depends on {forbidden}: {dependencies:?}"
        );
    }
    assert!(dependencies.contains(&"kbench-model"), "{dependencies:?}");
}
