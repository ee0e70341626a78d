//! `kbench agent`: the measuring process `run` starts (under the wrapper).

use kbench_lab::agent::{AgentJob, run_job};
use std::process::ExitCode;

pub fn agent(job: &str) -> anyhow::Result<ExitCode> {
    let job: AgentJob = serde_json::from_str(job)?;
    let stdout = std::io::stdout();
    run_job(&job, &mut stdout.lock())?;
    Ok(ExitCode::SUCCESS)
}
