//! `kbench show`: a result set, or the list of result sets.

use super::context::print_json;
use crate::cli::ShowArgs;
use kbench_report::comparison::{self, CompareRequest};
use kbench_report::counters;
use kbench_report::format::{self, Json, Render, Style, Text};
use kbench_report::show::{self, ShowDocument};
use kbench_store::Results;
use serde::Serialize;
use std::process::ExitCode;

pub fn show(args: ShowArgs, store: &mut dyn Results) -> anyhow::Result<ExitCode> {
    let Some(set) = args.set else {
        return list_sets(store, args.json);
    };
    let data = store.load_part(&set, &show::part(&args.counters))?;
    if let Some(name) = &args.format {
        return show_in_format(&data, name);
    }
    if let Some(identifier) = &args.counters {
        let doc = counters::document(&data, identifier.as_deref())?;
        let renderer: &dyn Render<_> = if args.json { &Json } else { &Text };
        print!("{}", renderer.render(&doc, Style::default()));
        return Ok(ExitCode::SUCCESS);
    }
    let name = if args.json { "json" } else { "text" };
    let renderer = format::find::<ShowDocument>(name).expect("a format of show");
    print!(
        "{}",
        renderer.render(&show::document(&data), Style::default())
    );
    Ok(ExitCode::SUCCESS)
}

/// The result set through a compare format (all identifiers, the first as
/// baseline): `table` is the lmbench matrix.
fn show_in_format(data: &kbench_store::ResultSetData, name: &str) -> anyhow::Result<ExitCode> {
    let formatter = format::by_name(name).expect("clap checked the format");
    let request = CompareRequest {
        baseline: None,
        identifiers: vec![],
        threshold: 0.01,
        metric_filter: None,
    };
    let report = comparison::build(data, &request)?;
    print!("{}", formatter.render(&report, Style::default()));
    Ok(ExitCode::SUCCESS)
}

#[derive(Serialize)]
struct SetList {
    schema: &'static str,
    result_sets: Vec<kbench_store::ResultSetSummary>,
}

fn list_sets(store: &mut dyn Results, json: bool) -> anyhow::Result<ExitCode> {
    let result_sets = store.result_sets()?;
    if json {
        print_json(&SetList {
            schema: "kbench.sets/1",
            result_sets,
        })?;
    } else if result_sets.is_empty() {
        println!("No result sets yet; `kbench run` makes one.");
    } else {
        for s in result_sets {
            println!(
                "{:<24} {} identifier(s): {}; {} test(s), {} sample(s)",
                s.name,
                s.identifiers.len(),
                s.identifiers.join(", "),
                s.tests,
                s.samples
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
