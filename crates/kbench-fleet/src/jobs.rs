//! `kbench job`: submitting a job to the lab's queue, and reading the
//! queue back.

use crate::FleetError;
use crate::api::{Api, message, retry};
use kbench_store::{Job, JobSpec};

/// Queues `spec` on the server: the job as queued. Sent once, never
/// retried: a lost answer after the job was queued would queue it twice.
pub fn submit(api: &Api, spec: &JobSpec) -> Result<Job, FleetError> {
    let response = api
        .post_json("/jobs", spec)
        .map_err(|cause| FleetError::Io {
            doing: format!("cannot reach the kbench server at {}", api.url),
            cause,
        })?;
    if response.status != 201 {
        return Err(FleetError::Refused(format!(
            "the server at {} did not queue the job ({}: {})",
            api.url,
            response.status,
            message(&response)
        )));
    }
    serde_json::from_str(&response.body).map_err(FleetError::answer(format!(
        "{}: POST /api/v1/jobs answered no Job",
        api.url
    )))
}

/// The server's job list, as it sent it (a kbench.jobs/1 document).
#[derive(Debug, Clone)]
pub struct JobList {
    pub document: serde_json::Value,
    url: String,
}

impl JobList {
    /// The jobs of the list, newest first.
    pub fn jobs(&self) -> Result<Vec<Job>, FleetError> {
        serde_json::from_value(self.document["jobs"].clone()).map_err(FleetError::answer(format!(
            "{}: GET /api/v1/jobs answered no kbench.jobs/1",
            self.url
        )))
    }
}

/// The server's jobs (three attempts while it cannot be reached).
pub fn list(api: &Api) -> Result<JobList, FleetError> {
    let response =
        retry(|| api.get("/jobs"), |attempts, _, _| attempts < 3).map_err(|gave_up| {
            FleetError::Unreachable(format!(
                "cannot reach the kbench server at {}: {gave_up}",
                api.url
            ))
        })?;
    if response.status != 200 {
        return Err(FleetError::Refused(format!(
            "the server at {} answered {} to GET /api/v1/jobs: {}",
            api.url,
            response.status,
            message(&response)
        )));
    }
    let document = serde_json::from_str(&response.body).map_err(FleetError::answer(format!(
        "{}: GET /api/v1/jobs answered no JSON",
        api.url
    )))?;
    Ok(JobList {
        document,
        url: api.url.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{self, FakeServer};
    use kbench_store::JobState;

    fn queued() -> Job {
        test_support::job(4, JobState::Queued)
    }

    #[test]
    fn a_job_is_submitted_once_and_listed_back() {
        let server = FakeServer::start();
        let job = serde_json::to_string(&queued()).unwrap();
        server.answer("POST /api/v1/jobs", 503, "{}").answer(
            "GET /api/v1/jobs",
            200,
            &format!(r#"{{"jobs": [{job}]}}"#),
        );
        let api = Api::new(&server.url, Some("secret")).unwrap();
        let error = submit(&api, &queued().spec).unwrap_err().to_string();
        assert_eq!(
            error,
            format!(
                "the server at {} did not queue the job (503: {{}})",
                server.url
            )
        );
        assert_eq!(server.seen().len(), 1, "a submission is never retried");
        let sent: JobSpec = serde_json::from_str(&server.seen()[0].body).unwrap();
        assert_eq!(sent, queued().spec);
        let list = list(&api).unwrap();
        assert_eq!(list.jobs().unwrap(), [queued()]);
    }

    #[test]
    fn a_list_that_is_no_job_list_says_so() {
        let server = FakeServer::start();
        server.answer("GET /api/v1/jobs", 200, r#"{"jobs": 3}"#);
        let api = Api::new(&server.url, None).unwrap();
        let error = list(&api).unwrap().jobs().unwrap_err().to_string();
        assert!(
            error.starts_with(&format!(
                "{}: GET /api/v1/jobs answered no kbench.jobs/1: invalid type",
                server.url
            )),
            "{error}"
        );
    }
}
