//! lmbench `lat_proc`: process creation latencies, in microseconds per
//! loop body, lower is better.
//!
//! Every loop body is `fork()` + something in the child + `waitpid()` in the
//! parent, and checks that the child exited with status 0: the workload of
//! [`crate::shared::spawn`], which aim9's `exec-test` shares.

use crate::shared::spawn::{Child, Spawn, prepare_exit0};
use crate::sys::exec::{Exec, trial};
use crate::{BenchError, BenchInfo, Direction, Options, Unit, Workload};
use std::path::Path;

pub const BENCHES: &[BenchInfo] = &[
    BenchInfo {
        id: "fork-exit",
        unit: Unit::Micros,
        direction: Direction::Lower,
        summary: "fork(); the child calls _exit(0); the parent waitpid()s it",
        options: &[],
        one_task: false,
        in_measuring_task: true,
        prepare: prepare_fork_exit,
    },
    BenchInfo {
        id: "fork-exec",
        unit: Unit::Micros,
        direction: Direction::Lower,
        summary: "fork(); the child execve()s a minimal static ELF that calls exit_group(0); waitpid()",
        options: &[],
        one_task: false,
        in_measuring_task: true,
        prepare: prepare_fork_exec,
    },
    BenchInfo {
        id: "fork-sh",
        unit: Unit::Micros,
        direction: Direction::Lower,
        summary: "fork(); the child execve()s /bin/sh -c true (env PATH=/usr/bin:/bin only); waitpid()",
        options: &[],
        one_task: false,
        in_measuring_task: true,
        prepare: prepare_fork_sh,
    },
];

fn prepare_fork_exit(_: &Options) -> Result<Box<dyn Workload>, BenchError> {
    Ok(Spawn::boxed("fork-exit", Child::Exit, None))
}

fn prepare_fork_exec(_: &Options) -> Result<Box<dyn Workload>, BenchError> {
    prepare_exit0("fork-exec")
}

fn prepare_fork_sh(_: &Options) -> Result<Box<dyn Workload>, BenchError> {
    let sh = Path::new("/bin/sh");
    if !sh.exists() {
        return Err(BenchError::Skip("/bin/sh is missing".into()));
    }
    // `true` is a shell builtin; a fixed environment keeps the shell's start
    // the same whatever the runner's environment holds.
    let exec = Exec::new(sh, &["sh", "-c", "true"], &["PATH=/usr/bin:/bin"]);
    trial(&exec, "fork-sh")?;
    Ok(Spawn::boxed("fork-sh", Child::Exec(exec), None))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{assert_calibrated, assert_no_children, prepare};

    /// The values are plausible and the workload left no child behind.
    fn assert_plausible(id: &str, low: f64, high: f64) {
        assert_calibrated(id, low, high);
        assert_no_children();
    }

    #[test]
    fn fork_exit() {
        assert_plausible("fork-exit", 5.0, 50_000.0);
    }

    #[test]
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    fn fork_exec_cleans_up() {
        assert_plausible("fork-exec", 10.0, 100_000.0);
        crate::testing::assert_temp_dir_gone();
    }

    #[test]
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    fn fork_exec_skips() {
        assert!(matches!(
            prepare("fork-exec", &[]),
            Err(BenchError::Skip(_))
        ));
    }

    #[test]
    fn fork_sh() {
        if !Path::new("/bin/sh").exists() {
            assert!(matches!(prepare("fork-sh", &[]), Err(BenchError::Skip(_))));
            return;
        }
        assert_plausible("fork-sh", 20.0, 500_000.0);
    }
}
