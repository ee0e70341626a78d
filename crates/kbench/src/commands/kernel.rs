//! `kbench kernel`: fetch Debian's cloud kernels into the cache and list
//! the cached ones, for `kbench vm`.

use super::context::print_json;
use crate::cli::{FetchArgs, KernelCommand, KernelListArgs};
use kbench_vm::kernel_fetch::{CachedKernel, FetchStep, KernelSpec};
use std::process::ExitCode;

pub fn kernel(command: KernelCommand) -> anyhow::Result<ExitCode> {
    match command {
        KernelCommand::Fetch(args) => fetch(args),
        KernelCommand::List(args) => list(args),
        KernelCommand::Config(args) => {
            println!("{}", args.write()?.display());
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn fetch(args: FetchArgs) -> anyhow::Result<ExitCode> {
    let specs = KernelSpec::parse_all(&args.kernels).map_err(anyhow::Error::msg)?;
    let steps = crate::progress::Steps::new(specs.len() as u64 * FetchStep::TOTAL);
    let fetched = args
        .cache
        .cache()
        .fetch_all(&specs, args.arch(), &mut |at, text| steps.step(at, text));
    steps.finish();
    let fetched = fetched?;
    print!("{}", CachedKernel::listing(&fetched));
    Ok(ExitCode::SUCCESS)
}

fn list(args: KernelListArgs) -> anyhow::Result<ExitCode> {
    let cache = args.cache.cache();
    let kernels = cache.list()?;
    if args.json {
        print_json(&kernels)?;
    } else if kernels.is_empty() {
        eprintln!("{}", cache.none_note());
    } else {
        print!("{}", CachedKernel::listing(&kernels));
    }
    Ok(ExitCode::SUCCESS)
}
