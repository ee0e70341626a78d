//! `kbench show`: a result set, or the list of result sets.

use super::context::print_json;
use crate::cli::ShowArgs;
use kbench_report::counters;
use kbench_report::format::{self, Json, Render, Style, Text};
use kbench_report::printed;
use kbench_report::show::{self, SetList, ShowDocument};
use kbench_store::Results;
use std::process::ExitCode;

pub fn show(args: ShowArgs, store: &mut dyn Results) -> anyhow::Result<ExitCode> {
    let Some(set) = args.set else {
        let list = SetList::new(store.result_sets()?);
        match args.json {
            true => print_json(&list)?,
            false => print!("{}", list.text()),
        }
        return Ok(ExitCode::SUCCESS);
    };
    let data = store.load_part(&set, &show::part(&args.counters))?;
    if let Some(name) = &args.format {
        // A compare format (all identifiers, the first as baseline):
        // `table` is the lmbench matrix.
        print!("{}", printed::whole(&data, None, vec![], name)?);
        return Ok(ExitCode::SUCCESS);
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
