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
    // Read every spec first: a typo in the second fails before any download.
    let specs = args
        .kernels
        .iter()
        .map(|text| KernelSpec::parse(text).map_err(anyhow::Error::msg))
        .collect::<anyhow::Result<Vec<_>>>()?;
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
    print_kernels(&fetched);
    Ok(ExitCode::SUCCESS)
}

fn list(args: KernelListArgs) -> anyhow::Result<ExitCode> {
    let cache = args.cache.cache();
    let kernels = cache.list()?;
    if args.json {
        print_json(&kernels)?;
    } else if kernels.is_empty() {
        eprintln!(
            "No kernels in {}; fetch some with `kbench kernel fetch debian:6.1 debian:6.12`.",
            cache.dir.display()
        );
    } else {
        print_kernels(&kernels);
    }
    Ok(ExitCode::SUCCESS)
}

/// One line per kernel: release, then the full path of its vmlinuz.
fn print_kernels(kernels: &[CachedKernel]) {
    let width = kernels.iter().map(|k| k.release.len()).max().unwrap_or(0);
    for kernel in kernels {
        println!("{:width$}  {}", kernel.release, kernel.vmlinuz.display());
    }
}
