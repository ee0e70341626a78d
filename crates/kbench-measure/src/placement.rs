//! Where an agent runs: the cgroup v2 it joins and the CPUs it is pinned
//! to, which a launcher asks for through the environment ([`CGROUP_ENV`],
//! [`CPUS_ENV`]) and the agent applies to itself first thing; and the
//! CPUs of this machine.

use crate::error::{MeasureError, Result, invalid};
use std::path::{Path, PathBuf};

/// The agent joins this cgroup (a path under /sys/fs/cgroup) first thing.
pub const CGROUP_ENV: &str = "KBENCH_CGROUP";
/// The agent pins itself to this CPU list first thing.
pub const CPUS_ENV: &str = "KBENCH_CPUS";

const CGROUP_ROOT: &str = "/sys/fs/cgroup";

/// The cgroup.procs file of a cgroup v2 path, which must exist.
pub(crate) fn cgroup_procs(cgroup: &str) -> Result<PathBuf> {
    if !Path::new(CGROUP_ROOT).join("cgroup.controllers").is_file() {
        invalid!("this machine has no cgroup v2 hierarchy at {CGROUP_ROOT}");
    }
    let relative = cgroup.trim_start_matches('/');
    if relative.split('/').any(|part| part == "..") {
        invalid!("cgroup path '{cgroup}' may not contain '..'");
    }
    let procs = Path::new(CGROUP_ROOT).join(relative).join("cgroup.procs");
    if !procs.is_file() {
        invalid!(
            "cgroup '{cgroup}' does not exist ({} missing); create it first (mkdir)",
            procs.display()
        );
    }
    Ok(procs)
}

/// `0`, `0-3`, `0,2-3` as CPU numbers.
pub fn parse_cpu_list(list: &str) -> Result<Vec<usize>> {
    let mut cpus = vec![];
    for part in list.split(',').map(str::trim) {
        let number = |s: &str| {
            s.trim().parse::<usize>().map_err(|e| {
                MeasureError::Invalid(format!(
                    "'{s}' in CPU list '{list}' is not a CPU number: {e}"
                ))
            })
        };
        match part.split_once('-') {
            Some((low, high)) => {
                let (low, high) = (number(low)?, number(high)?);
                if low > high {
                    invalid!("CPU range '{part}' in '{list}' runs backwards");
                }
                cpus.extend(low..=high);
            }
            None => cpus.push(number(part)?),
        }
    }
    Ok(cpus)
}

/// CPUs online (numbered from 0).
pub fn online_cpus() -> usize {
    // SAFETY: sysconf has no preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    usize::try_from(n).unwrap_or(1).max(1)
}

/// The CPUs this process may run on (its affinity), in order.
pub fn allowed_cpus() -> Vec<usize> {
    // SAFETY: a zeroed cpu_set_t is valid to fill; sched_getaffinity gets
    // its pointer and size, and CPU_ISSET reads within it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return (0..online_cpus()).collect();
        }
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&cpu| libc::CPU_ISSET(cpu, &set))
            .collect()
    }
}

/// Applies the placement a launcher asked for ([`CGROUP_ENV`],
/// [`CPUS_ENV`]) to the calling process: the agent does this before it
/// takes its snapshot or measures anything.
pub fn apply_placement_from_env() -> Result<()> {
    if let Ok(cgroup) = std::env::var(CGROUP_ENV) {
        let procs = cgroup_procs(&cgroup)?;
        std::fs::write(&procs, std::process::id().to_string())
            .map_err(MeasureError::os(format!("joining cgroup {cgroup}")))?;
    }
    if let Ok(cpus) = std::env::var(CPUS_ENV) {
        pin_to(&cpu_set(&parse_cpu_list(&cpus)?))
            .map_err(MeasureError::os(format!("pinning to CPUs {cpus}")))?;
    }
    Ok(())
}

/// The CPU set holding `cpus`.
pub fn cpu_set(cpus: &[usize]) -> libc::cpu_set_t {
    // SAFETY: a zeroed cpu_set_t is the empty set; CPU_SET gets a valid
    // pointer.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &cpu in cpus {
            libc::CPU_SET(cpu, &mut set);
        }
        set
    }
}

/// Pins the calling process to `set`. Only calls sched_setaffinity, which is
/// async-signal-safe, so it may also run between fork and exec.
pub fn pin_to(set: &libc::cpu_set_t) -> std::io::Result<()> {
    // SAFETY: sched_setaffinity gets a valid pointer and its size.
    if unsafe { libc::sched_setaffinity(0, size_of::<libc::cpu_set_t>(), set) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists() {
        assert_eq!(parse_cpu_list("0,2-4").unwrap(), vec![0, 2, 3, 4]);
        assert!(parse_cpu_list("3-1").is_err());
        assert!(parse_cpu_list("x").is_err());
    }
}
