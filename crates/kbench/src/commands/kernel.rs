//! `kbench kernel`: fetch Debian's cloud kernels into the cache and list
//! the cached ones, for `kbench vm`.

use kbench_vm::kernel_fetch::{CachedKernel, KernelCache, KernelSpec};
use std::path::PathBuf;
use std::process::ExitCode;

/// Fetch and list kernels for `kbench vm`
#[derive(Debug, clap::Subcommand)]
pub enum KernelCommand {
    /// Download Debian cloud kernels (linux-image-*-cloud-amd64) with apt into the cache
    #[command(
        after_help = "Examples:\n  kbench kernel fetch debian:6.1 debian:6.12   \
# the newest 6.1 and 6.12 cloud kernels apt knows\n  kbench kernel fetch debian:6.1.0-57          \
# one build\n\nPrints RELEASE and the full path of its vmlinuz per kernel; a kernel already \
cached is not downloaded again."
    )]
    Fetch(FetchArgs),
    /// List cached kernels: release and the full path of its vmlinuz
    List(ListArgs),
}

#[derive(Debug, clap::Args)]
pub struct FetchArgs {
    /// Kernels as debian:VERSION, e.g. debian:6.1 debian:6.12
    #[arg(value_name = "KERNEL", required = true)]
    pub kernels: Vec<String>,

    #[command(flatten)]
    pub cache: CacheArg,
}

#[derive(Debug, clap::Args)]
pub struct ListArgs {
    #[command(flatten)]
    pub cache: CacheArg,

    /// Print JSON on stdout (an array of {release, vmlinuz, config, source})
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, clap::Args)]
pub struct CacheArg {
    /// Kernel cache directory (default: $XDG_CACHE_HOME/kbench/kernels)
    #[arg(long = "kernel-cache", value_name = "DIR", env = "KBENCH_KERNEL_CACHE")]
    pub dir: Option<PathBuf>,
}

impl CacheArg {
    pub fn cache(&self) -> KernelCache {
        KernelCache::new(self.dir.clone().unwrap_or_else(KernelCache::default_dir))
    }
}

pub fn kernel(command: KernelCommand, _db: &super::Db) -> anyhow::Result<ExitCode> {
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
    for spec in &specs {
        let kernel = cache.fetch(spec, &mut |message| eprintln!("{message}"))?;
        fetched.push(kernel);
    }
    print_kernels(&fetched);
    Ok(ExitCode::SUCCESS)
}

fn list(args: ListArgs) -> anyhow::Result<ExitCode> {
    let cache = args.cache.cache();
    let kernels = cache.list()?;
    if args.json {
        super::print_json(&kernels)?;
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
