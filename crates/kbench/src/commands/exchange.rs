//! `kbench import` and `kbench export`: raw samples in and out as
//! kbench.samples/1 JSON.

use super::context::print_json;
use crate::cli::{ExportArgs, ImportArgs};
use anyhow::Context;
use kbench_store::{Exchange, Results, exchange};
use std::io::Read;
use std::process::ExitCode;

pub fn import(args: ImportArgs, store: &mut dyn Exchange) -> anyhow::Result<ExitCode> {
    let source = args.file.display().to_string();
    let text = if source == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .context("reading samples from stdin")?;
        text
    } else {
        std::fs::read_to_string(&args.file).with_context(|| format!("cannot read {source}"))?
    };
    let data = exchange::parse(&text, args.into.as_deref())
        .map_err(|e| anyhow::anyhow!("{source}: {e}; nothing was imported"))?;
    store.import(&data)?;
    let samples = data.sample_count();
    eprintln!(
        "Imported {} identifier(s), {} test(s), {samples} sample(s) into result set '{}'.",
        data.identifiers.len(),
        data.tests.len(),
        data.name
    );
    Ok(ExitCode::SUCCESS)
}

pub fn export(args: ExportArgs, store: &mut dyn Results) -> anyhow::Result<ExitCode> {
    let data = store.load(&args.set)?;
    print_json(&exchange::export(&data))?;
    Ok(ExitCode::SUCCESS)
}
