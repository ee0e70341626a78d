//! `kbench import` and `kbench export`: raw samples in and out, as
//! kbench.samples/1 JSON or other tools' result files (kbench-formats).

use crate::cli::{ExportArgs, ImportArgs};
use kbench_formats::ImportRequest;
use kbench_store::{Exchange, Results};
use std::process::ExitCode;

pub fn import(args: ImportArgs, store: &mut dyn Exchange) -> anyhow::Result<ExitCode> {
    let (path, into, identifier) = (&args.file, args.into.as_deref(), args.identifier.as_deref());
    let request = ImportRequest {
        path,
        from: &args.from,
        into,
        identifier,
    };
    eprintln!("{}", kbench_formats::import(&request, store)?);
    Ok(ExitCode::SUCCESS)
}

pub fn export(args: ExportArgs, store: &mut dyn Results) -> anyhow::Result<ExitCode> {
    let data = store.load(&args.set)?;
    print!(
        "{}",
        kbench_formats::export(&data, &args.format, crate::cli::VERSION)?
    );
    Ok(ExitCode::SUCCESS)
}
