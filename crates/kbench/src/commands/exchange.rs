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
    crate::logs::note(kbench_formats::import(&request, store)?);
    Ok(ExitCode::SUCCESS)
}

pub fn export(args: ExportArgs, store: &mut dyn Results) -> anyhow::Result<ExitCode> {
    let request = kbench_formats::ExportRequest {
        set: &args.set,
        format: &args.format,
        identifiers: &args.identifier,
        kbench_version: crate::cli::VERSION,
    };
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    kbench_formats::export(store, &request, &mut out)?;
    Ok(ExitCode::SUCCESS)
}
