//! LAVA's REST API (v0.2), as a LAVA server answers it (lava-server
//! 2023.01, `lava_rest_app`): submit a job definition, follow the job's
//! state, and fetch its log once it has finished. Requests carry the
//! user's token as `Authorization: Token KEY` (LAVA's
//! `LavaTokenAuthentication`); LAVA's refusals (401, 403, 400 with its
//! `message` or `detail`) are said as LAVA said them.

use crate::error::{LavaError, Result, refuse};
use kbench_fleet::client::{self, Response, Timeouts, Trust};
use serde::Deserialize;
use std::time::{Duration, Instant};

/// A LAVA server.
#[derive(Debug)]
pub struct Lava {
    /// The URL as the user gave it, for messages.
    pub url: String,
    addr: String,
    base: String,
    trust: Option<Trust>,
    token: Option<String>,
}

/// A job's state, as `GET /api/v0.2/jobs/ID/` gives it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct JobState {
    pub id: u64,
    /// Submitted, Scheduling, Scheduled, Running, Canceling, Finished.
    pub state: String,
    /// Unknown, Complete, Incomplete, Canceled.
    pub health: String,
    #[serde(default)]
    pub failure_comment: Option<String>,
}

impl JobState {
    pub fn finished(&self) -> bool {
        self.state == "Finished"
    }

    /// How a finished job that did not complete ended, in LAVA's words;
    /// `None` for a Complete one.
    pub fn ending(&self) -> Option<String> {
        if self.health == "Complete" {
            return None;
        }
        let comment = self
            .failure_comment
            .as_deref()
            .unwrap_or("no failure comment");
        Some(format!(
            "LAVA job {} ended {}: {comment}",
            self.id, self.health
        ))
    }
}

/// The line a followed job's progress shows.
pub fn progress_line(job: &JobState, waited: Duration) -> String {
    format!(
        "LAVA job {}: {}{} after {} s",
        job.id,
        job.state,
        if job.finished() {
            format!(", {}", job.health)
        } else {
            String::new()
        },
        waited.as_secs()
    )
}

#[derive(Deserialize)]
struct Submitted {
    job_ids: Vec<u64>,
}

impl Lava {
    /// `url` is the server's `http[s]://HOST[:PORT][/BASE]` (https trusts
    /// the CAs of `$KBENCH_CA_CERT`, else the system's).
    pub fn new(url: &str, token: Option<&str>) -> Result<Lava> {
        let (addr, base) =
            client::parse_base(url).map_err(|e| LavaError::Invalid(e.to_string()))?;
        let trust = match client::is_https(url) {
            true => Some(Trust::from_env().map_err(|e| LavaError::Invalid(e.to_string()))?),
            false => None,
        };
        Ok(Lava {
            url: url.trim_end_matches('/').to_string(),
            addr,
            base,
            trust,
            token: token.map(str::to_string),
        })
    }

    /// The job's page on the server, for people.
    pub fn job_url(&self, id: u64) -> String {
        format!("{}/scheduler/job/{id}", self.url)
    }

    /// Submits a job definition (YAML); the ids of the jobs it made (one,
    /// or one per role of a multinode job).
    pub fn submit(&self, definition: &str) -> Result<Vec<u64>> {
        if self.token.is_none() {
            refuse!(
                "submitting to LAVA needs an API token: give --token (or KBENCH_LAVA_TOKEN), made \
                 in LAVA's web interface under API > Tokens"
            );
        }
        let body = serde_json::json!({ "definition": definition }).to_string();
        let answer = self.send("POST", "/jobs/", body.as_bytes(), "submitting the job")?;
        let submitted: Submitted = parse(&answer, "LAVA's answer to the submission")?;
        Ok(submitted.job_ids)
    }

    /// The job's state now.
    pub fn job(&self, id: u64) -> Result<JobState> {
        let answer = self.send(
            "GET",
            &format!("/jobs/{id}/"),
            b"",
            &format!("reading job {id}"),
        )?;
        parse(&answer, &format!("LAVA's job {id}"))
    }

    /// The job's whole log (LAVA's output.yaml).
    pub fn logs(&self, id: u64) -> Result<String> {
        let doing = format!("fetching job {id}'s log");
        Ok(self
            .send("GET", &format!("/jobs/{id}/logs/"), b"", &doing)?
            .body)
    }

    /// Polls the job every `every` until it has finished; `progress`
    /// hears each state read.
    pub fn follow(
        &self,
        id: u64,
        every: Duration,
        progress: &mut dyn FnMut(&JobState, Duration),
    ) -> Result<JobState> {
        let started = Instant::now();
        loop {
            let state = self.job(id)?;
            progress(&state, started.elapsed());
            if state.finished() {
                return Ok(state);
            }
            std::thread::sleep(every);
        }
    }

    /// Follows the job to its end ([`Lava::follow`]), then reads its log.
    pub fn finished(
        &self,
        id: u64,
        every: Duration,
        progress: &mut dyn FnMut(&JobState, Duration),
    ) -> Result<(JobState, crate::log::LavaLog)> {
        let end = self.follow(id, every, progress)?;
        Ok((end, crate::log::read(&self.logs(id)?)))
    }

    /// One request to the API path `rest` (under `/api/v0.2`); an answer
    /// other than 2xx is LAVA's refusal, said with what was being done.
    fn send(&self, method: &str, rest: &str, body: &[u8], doing: &str) -> Result<Response> {
        let authorization = self.token.as_ref().map(|t| format!("Token {t}"));
        let mut headers = vec![("Content-Type", "application/json")];
        if let Some(value) = &authorization {
            headers.push(("Authorization", value));
        }
        let path = format!("{}/api/v0.2{rest}", self.base);
        let answer = client::request_over(
            &self.addr,
            self.trust.as_ref(),
            method,
            &path,
            &headers,
            body,
            Timeouts::default(),
        )
        .map_err(|e| {
            LavaError::Invalid(format!("{doing}: LAVA at {} did not answer: {e}", self.url))
        })?;
        match answer.status {
            200..=299 => Ok(answer),
            401 => refuse!(
                "{doing}: LAVA at {} refused the token (401: {}); check --token",
                self.url,
                said(&answer)
            ),
            403 => refuse!(
                "{doing}: the token may not do this on LAVA at {} (403: {}); nothing was stored. \
                 Use a token of a user with the permission",
                self.url,
                said(&answer)
            ),
            404 => refuse!("{doing}: LAVA at {} has no such job (404)", self.url),
            status => refuse!(
                "{doing}: LAVA at {} answered {status}: {}",
                self.url,
                said(&answer)
            ),
        }
    }
}

/// LAVA's words in an answer: its `message` (a refused submission), its
/// `detail` (Django REST framework's refusals), else the body.
fn said(answer: &Response) -> String {
    let value: serde_json::Value = serde_json::from_str(&answer.body).unwrap_or_default();
    value
        .get("message")
        .or_else(|| value.get("detail"))
        .and_then(|m| m.as_str())
        .map_or_else(|| answer.body.trim().to_string(), str::to_string)
}

fn parse<T: serde::de::DeserializeOwned>(answer: &Response, what: &str) -> Result<T> {
    serde_json::from_str(&answer.body).map_err(|e| {
        LavaError::Invalid(format!(
            "{what} is not what LAVA's API v0.2 answers ({e}): {}",
            answer.body
        ))
    })
}
