//! `kbench agent`: the measuring process `run` starts (under the wrapper).

use super::context::EXIT_INTERRUPTED;
use kbench_measure::agent::{AgentJob, run_job, stop_on_signals};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

pub fn agent(job: &str) -> anyhow::Result<ExitCode> {
    let job: AgentJob = serde_json::from_str(job)?;
    let stop = Arc::new(AtomicBool::new(false));
    stop_on_signals(&stop)?;
    // The kbench that stores the samples died (killed with its worker, or
    // by hand): stop as on SIGTERM instead of measuring for no one.
    // SAFETY: prctl with PR_SET_PDEATHSIG only sets a flag of this process.
    unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) };
    // A variant's cgroup and CPUs, before the snapshot records them.
    kbench_measure::placement::apply_placement_from_env()?;
    // An interleaved block's place in the ring of turns.
    let mut turns = kbench_measure::turns::Turns::from_env()?;
    let stdout = std::io::stdout();
    match run_job(&job, &mut stdout.lock(), turns.as_mut(), &stop) {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {
            Ok(ExitCode::from(EXIT_INTERRUPTED))
        }
        Err(e) => Err(e.into()),
    }
}
