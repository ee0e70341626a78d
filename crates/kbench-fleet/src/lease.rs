//! The job lease a worker runs its child under, handed down in the child's
//! environment ([`LEASE_ENV`]), and carried by every live batch of the
//! child's upload ([`LiveBatch::lease`]), which the server then stores
//! only while this worker holds the job.
//!
//! [`LiveBatch::lease`]: kbench_store::LiveBatch::lease

use crate::FleetError;
use kbench_store::JobLease;

/// The job lease a worker runs its child under, as `JOB:WORKER` (e.g.
/// `12:lab-box-1`), set in the child's environment (an environment
/// variable rather than an option: every child gets it, `kbench run`,
/// `kbench vm run` or `kbench kernel fetch`, and users never type it).
pub const LEASE_ENV: &str = "KBENCH_JOB_LEASE";

/// The lease in [`LEASE_ENV`], `None` when it is unset (not under a worker).
pub fn lease_from_env() -> Result<Option<JobLease>, FleetError> {
    std::env::var_os(LEASE_ENV)
        .map(|text| parse_lease(&text.to_string_lossy()))
        .transpose()
}

/// The value of [`LEASE_ENV`] for `lease`.
pub(crate) fn lease_text(lease: &JobLease) -> String {
    format!("{}:{}", lease.job, lease.worker)
}

fn parse_lease(text: &str) -> Result<JobLease, FleetError> {
    text.split_once(':')
        .and_then(|(job, worker)| {
            Some(JobLease {
                job: job.parse().ok()?,
                worker: Some(worker).filter(|w| !w.is_empty())?.to_string(),
            })
        })
        .ok_or_else(|| {
            FleetError::Setup(format!(
                "{LEASE_ENV} is {text:?}, not JOB:WORKER (e.g. 12:lab-box-1); `kbench worker` \
                 sets it for the jobs it runs: unset it to upload a run of your own"
            ))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lease_is_job_colon_worker() {
        let lease = parse_lease("12:lab:box").unwrap();
        assert_eq!((lease.job, lease.worker.as_str()), (12, "lab:box"));
        assert_eq!(parse_lease(&lease_text(&lease)).unwrap(), lease);
        for bad in ["", "12", "12:", "x:w1", ":w1"] {
            let err = parse_lease(bad).unwrap_err().to_string();
            assert!(err.contains("not JOB:WORKER"), "{bad:?}: {err}");
        }
    }
}
