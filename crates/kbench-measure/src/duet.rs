//! What a duet needs and says, shared by `kbench run --variant --duet` and
//! `kbench vm compare --duet`: both sides run at once, each on a CPU of
//! its own, so that they see the same interference and pair block by block
//! (Bulej et al., "Duet Benchmarking", ICPE 2020). Also the random seed of
//! a comparison's block order.

use crate::error::{MeasureError, Result, invalid};
use crate::launcher::ProcessLauncher;
use crate::variant::Variant;
use kbench_model::TestKey;
use std::ffi::OsString;
use std::path::Path;

/// What `--duet` of variants needs: two variants that leave the CPUs and
/// sysctl values to it, two CPUs, and tests that run in one task.
pub fn check_variants(variants: &[Variant], tests: &[TestKey]) -> Result<()> {
    if variants.len() != 2 {
        invalid!(
            "--duet runs two variants at once (the baseline and one other), but {} are given",
            variants.len()
        );
    }
    for v in variants {
        if v.cpus.is_some() {
            invalid!(
                "variant '{}': --duet chooses the CPUs itself; drop its cpus: setting",
                v.name
            );
        }
        if !v.sysctl.is_empty() {
            invalid!(
                "variant '{}': sysctl values are system-wide, so two variants running at once \
                 cannot each have their own; run without --duet",
                v.name
            );
        }
    }
    check_machine(tests)
}

/// What any duet needs: two CPUs, and tests that run in one task.
pub fn check_machine(tests: &[TestKey]) -> Result<()> {
    let cpus = crate::placement::online_cpus();
    if cpus < 2 {
        invalid!("--duet runs each side on a CPU of its own, but this machine has {cpus} CPU");
    }
    if let Some(test) = tests
        .iter()
        .find(|t| !kbench_bench::runs_in_one_task(&t.benchmark))
    {
        invalid!(
            "--duet measures only single-task built-in tests (the syscall, file and memory \
             families), but {test} runs more tasks or is external; run it without --duet"
        );
    }
    Ok(())
}

/// The launchers of a duet: each of the two variants pinned to CPU 0 and
/// to CPU 1 (which side gets which is drawn per block).
pub fn launchers(
    variants: &[Variant],
    exe: &Path,
    env: &[(&str, OsString)],
) -> Result<[[ProcessLauncher; 2]; 2]> {
    let pinned = |v: &Variant, cpu: usize| {
        let mut pinned = v.clone();
        pinned.cpus = Some(cpu.to_string());
        pinned.launcher(exe, env)
    };
    Ok([
        [pinned(&variants[0], 0)?, pinned(&variants[0], 1)?],
        [pinned(&variants[1], 0)?, pinned(&variants[1], 1)?],
    ])
}

/// The note a variant's runs carry when they are one side of a duet.
pub fn note(variants: &[Variant], variant: &Variant, duet: bool) -> Vec<String> {
    let other = variants.iter().find(|v| v.name != variant.name);
    match other {
        Some(other) if duet => vec![format!(
            "duet: measured at the same time as '{}', each on a CPU of its own",
            other.name
        )],
        _ => vec![],
    }
}

/// A random seed for the order of a comparison's blocks.
pub fn random_seed() -> Result<u64> {
    let id = kbench_model::random_id().map_err(MeasureError::os("choosing a seed"))?;
    Ok(u64::from_str_radix(&id[..16], 16).expect("random_id is hex"))
}
