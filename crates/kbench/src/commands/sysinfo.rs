//! `kbench sysinfo`: the snapshot every run records, for this system now.

use super::context::print_json;
use kbench_measure::snapshot;
use std::path::Path;
use std::process::ExitCode;

pub fn sysinfo(json: bool) -> anyhow::Result<ExitCode> {
    let snapshot = snapshot(Path::new("."));
    if json {
        print_json(&snapshot)?;
    } else {
        for (label, value) in snapshot.facts() {
            println!("{label:<28} {value}");
        }
    }
    Ok(ExitCode::SUCCESS)
}
