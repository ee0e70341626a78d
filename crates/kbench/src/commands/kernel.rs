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
    }
}

fn fetch(args: FetchArgs) -> anyhow::Result<ExitCode> {
    let specs = KernelSpec::parse_all(&args.kernels).map_err(anyhow::Error::msg)?;
    let cache = args.cache.cache();
    let mut fetched = Vec::new();
    let steps = crate::progress::Steps::new(specs.len() as u64 * FetchStep::TOTAL);
    for (done, spec) in (0u64..).zip(&specs) {
        let kernel = cache.fetch(spec, &mut |step| {
            steps.step(done * FetchStep::TOTAL + step.number(), step.to_string())
        })?;
        fetched.push(kernel);
    }
    steps.finish();
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
