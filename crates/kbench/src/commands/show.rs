//! `kbench show`: a result set, or the list of result sets.

use crate::cli::ShowArgs;
use kbench_analysis::counters::{self, CounterDocument};
use kbench_analysis::show::{self, SetList, ShowDocument};
use kbench_report::format::{Style, text_or_json};
use kbench_report::printed;
use kbench_store::Database;
use std::process::ExitCode;

pub fn show(args: ShowArgs, store: &mut dyn Database) -> anyhow::Result<ExitCode> {
    let Some(set) = args.set else {
        let list = SetList::new(store.result_sets()?);
        print!(
            "{}",
            text_or_json::<SetList>(args.json).render(&list, Style::default())
        );
        return Ok(ExitCode::SUCCESS);
    };
    let data = store.load_part(&set, &show::part(&args.counters))?;
    if let Some(name) = &args.format {
        // A compare format (all identifiers, the first as baseline):
        // `table` is the lmbench matrix.
        print!(
            "{}",
            printed::whole(&data, None, vec![], store.calibrations()?, name)?
        );
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(identifier) = &args.counters {
        let doc = counters::document(&data, identifier.as_deref())?;
        print!(
            "{}",
            text_or_json::<CounterDocument>(args.json).render(&doc, Style::default())
        );
        return Ok(ExitCode::SUCCESS);
    }
    let renderer = text_or_json::<ShowDocument>(args.json);
    print!(
        "{}",
        renderer.render(&show::document(&data), Style::default())
    );
    Ok(ExitCode::SUCCESS)
}
