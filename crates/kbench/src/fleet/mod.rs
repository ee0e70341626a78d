//! The client side of the shared lab (`kbench serve`, docs/api.md): the
//! API client with its retries ([`api`]), the live upload of a run as it
//! goes on ([`mirror`], batched by [`batch`]), and the worker that runs
//! the lab's jobs ([`worker`]).

pub mod api;
pub mod batch;
pub mod mirror;
pub mod worker;

use crate::cli::UploadArgs;
use api::Api;
use kbench_store::{JobLease, Scope};

/// Where `--upload` sends the runs, and for which lab job.
#[derive(Debug, Clone)]
pub struct Upload {
    pub api: Api,
    /// The job lease of the worker that started this process (read from
    /// [`worker::LEASE_ENV`]), carried by every batch: the server refuses
    /// them once the job went to another worker.
    pub lease: Option<JobLease>,
}

/// The server `--upload` names, its token checked (`GET /api/v1/token`)
/// before anything is measured; `None` without `--upload`.
pub fn upload_target(args: &UploadArgs) -> anyhow::Result<Option<Upload>> {
    let Some(url) = &args.upload else {
        return Ok(None);
    };
    let lease = worker::lease_from_env()?;
    let api = Api::new(url, args.token.as_deref())?.with_short_timeouts();
    // A lab job's run is its worker's to upload; any other is a push.
    let name = match &lease {
        Some(_) => api.check_token(Scope::Work, "uploading a job's run")?,
        None => api.check_token(Scope::Push, "uploading a run (--upload)")?,
    };
    let job = lease.as_ref().map_or(String::new(), |lease| {
        format!(" for job {} of worker '{}'", lease.job, lease.worker)
    });
    eprintln!(
        "Uploading to {} as token '{name}'{job}; the local database keeps every sample too.",
        api.url
    );
    Ok(Some(Upload { api, lease }))
}
