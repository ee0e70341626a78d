//! Talking to `kbench serve` (docs/api.md): the server's URL and token,
//! timeouts, retrying what is worth retrying (a connection failure, 503
//! while the database is away, 502/504 from a proxy) with doubling waits,
//! and the server's error messages. `kbench push`, the live upload of
//! `kbench run --server`, `kbench job` and `kbench worker` all go through
//! here.

use crate::FleetError;
use crate::client::{self, Response, Timeouts, Trust};
use kbench_store::Scope;
use serde::Serialize;
use std::fmt;
use std::io;
use std::time::Duration;

/// A kbench server and the API token to write with.
#[derive(Debug, Clone)]
pub struct Api {
    /// The URL as the user gave it, for messages.
    pub url: String,
    addr: String,
    base: String,
    /// The CAs an `https://` server's certificate must be signed by.
    trust: Option<Trust>,
    token: Option<String>,
    timeouts: Timeouts,
}

impl Api {
    /// `url` is `http[s]://HOST[:PORT][/BASE]` (https trusts the CAs of
    /// `$KBENCH_CA_CERT`, else the system's); `token` is needed for writes.
    pub fn new(url: &str, token: Option<&str>) -> Result<Api, FleetError> {
        let (addr, base) = client::parse_base(url)?;
        let trust = match client::is_https(url) {
            true => Some(Trust::from_env()?),
            false => None,
        };
        Ok(Api {
            url: url.trim_end_matches('/').to_string(),
            addr,
            base,
            trust,
            token: token.map(str::to_string),
            timeouts: Timeouts::default(),
        })
    }

    /// Shorter timeouts than the default (made for large pushes), for the
    /// small requests of a live upload or a worker: a server that stopped
    /// answering is noticed and retried within a minute.
    pub fn with_short_timeouts(mut self) -> Api {
        self.timeouts = Timeouts {
            connect: Duration::from_secs(10),
            io: Duration::from_secs(60),
        };
        self
    }

    /// The token, to hand to a child process (in its environment).
    pub fn token(&self) -> Option<&str> {
        self.token.as_deref()
    }

    /// The API path of `rest` (`/jobs` -> `/BASE/api/v1/jobs`).
    pub fn path(&self, rest: &str) -> String {
        format!("{}/api/v1{rest}", self.base)
    }

    /// One attempt of a request to the API path `rest`, with the token.
    pub fn send(
        &self,
        method: &str,
        rest: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> io::Result<Response> {
        let authorization = self.token.as_ref().map(|t| format!("Bearer {t}"));
        let mut all: Vec<(&str, &str)> = headers.to_vec();
        if let Some(value) = &authorization {
            all.push(("Authorization", value));
        }
        client::request_over(
            &self.addr,
            self.trust.as_ref(),
            method,
            &self.path(rest),
            &all,
            body,
            self.timeouts,
        )
    }

    /// One attempt of `GET rest`.
    pub fn get(&self, rest: &str) -> io::Result<Response> {
        self.send("GET", rest, &[], b"")
    }

    /// One attempt of `POST rest` with `value` as the JSON body.
    pub fn post_json(&self, rest: &str, value: &impl Serialize) -> io::Result<Response> {
        let body = serde_json::to_vec(value).map_err(io::Error::other)?;
        self.send("POST", rest, &[("Content-Type", "application/json")], &body)
    }

    /// Checks the server and the token (`GET /token`) before anything is
    /// measured or leased: the token's name, or an error that says whether
    /// the server is unreachable, not a kbench server, refused the token,
    /// or the token lacks the scope `needs` for `doing` ("uploading a run").
    pub fn check_token(&self, needs: Scope, doing: &str) -> Result<String, FleetError> {
        if self.token.is_none() {
            return Err(FleetError::Setup(format!(
                "no API token for {}: give one with --token or KBENCH_TOKEN \
                 (`kbench token create` on the server's database makes one)",
                self.url
            )));
        }
        let response =
            retry(|| self.get("/token"), |attempts, _, _| attempts < 3).map_err(|gave_up| {
                FleetError::Unreachable(format!(
                    "cannot reach the kbench server at {} ({gave_up}); is `kbench serve` running \
                     there, and is the URL right?",
                    self.url
                ))
            })?;
        match response.status {
            200 => {
                let answer: TokenAnswer =
                    serde_json::from_str(&response.body).map_err(FleetError::answer(format!(
                        "{}: GET /api/v1/token answered no token's name and scopes",
                        self.url
                    )))?;
                if !(answer.scopes.contains(&needs) || answer.scopes.contains(&Scope::Admin)) {
                    return Err(FleetError::Refused(format!(
                        "token '{}' has the scopes {} on {}; {doing} needs '{}'. Use a token with \
                         it (`kbench token create --name NAME --scope {}` on the server's database)",
                        answer.name,
                        Scope::list_text(&answer.scopes),
                        self.url,
                        needs.as_str(),
                        needs.as_str()
                    )));
                }
                Ok(answer.name)
            }
            401 => Err(FleetError::Refused(format!(
                "the server at {} refused the API token ({}); give a valid one with --token or \
                 KBENCH_TOKEN (`kbench token create` on the server's database makes one)",
                self.url,
                message(&response)
            ))),
            404 => Err(FleetError::Refused(format!(
                "{} answered 404 to GET /api/v1/token: it is not a kbench server, or an older one \
                 without the shared lab's API",
                self.url
            ))),
            status => Err(FleetError::Refused(format!(
                "the server at {} answered {status} to GET /api/v1/token: {}",
                self.url,
                message(&response)
            ))),
        }
    }
}

/// What `GET /api/v1/token` answers.
#[derive(Debug, serde::Deserialize)]
struct TokenAnswer {
    name: String,
    scopes: Vec<Scope>,
}

/// Why an attempt got no final answer; worth another attempt.
#[derive(Debug)]
pub enum Failure {
    /// No answer: refused, reset, timed out.
    Connection(io::Error),
    /// 503 (the server's database is away) or 502/504 (a proxy's).
    Unavailable(Response),
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Connection(error) => write!(f, "{error}"),
            Failure::Unavailable(response) => {
                write!(f, "answered {}: {}", response.status, message(response))
            }
        }
    }
}

/// The last failure when [`retry`] gave up, and after how many attempts.
#[derive(Debug)]
pub struct GaveUp {
    pub attempts: u32,
    pub last: Failure,
}

impl fmt::Display for GaveUp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} after {} attempt(s)", self.last, self.attempts)
    }
}

/// Doubling waits between attempts: 200 ms, 400 ms, ... at most 5 s.
#[derive(Debug, Clone)]
pub struct Backoff {
    next: Duration,
}

impl Default for Backoff {
    fn default() -> Backoff {
        Backoff {
            next: Duration::from_millis(200),
        }
    }
}

impl Backoff {
    /// The wait before the next attempt (and doubles the one after).
    pub fn next_wait(&mut self) -> Duration {
        let wait = self.next;
        self.next = (self.next * 2).min(Duration::from_secs(5));
        wait
    }
}

/// A final answer (any status but 502/503/504), or why to try again.
pub fn classify(result: io::Result<Response>) -> Result<Response, Failure> {
    match result {
        Err(error) => Err(Failure::Connection(error)),
        Ok(response) if matches!(response.status, 502..=504) => Err(Failure::Unavailable(response)),
        Ok(response) => Ok(response),
    }
}

/// Repeats `attempt` until it gets a final answer. After each failure,
/// `again(attempts so far, failure, wait)` says whether to sleep `wait`
/// ([`Backoff`]) and try again, or give up. Every request retried this
/// way must be idempotent (a push id, a live batch's sample indexes).
pub fn retry(
    mut attempt: impl FnMut() -> io::Result<Response>,
    mut again: impl FnMut(u32, &Failure, Duration) -> bool,
) -> Result<Response, GaveUp> {
    let mut backoff = Backoff::default();
    let mut attempts = 0;
    loop {
        attempts += 1;
        match classify(attempt()) {
            Ok(response) => return Ok(response),
            Err(failure) => {
                let wait = backoff.next_wait();
                if !again(attempts, &failure, wait) {
                    return Err(GaveUp {
                        attempts,
                        last: failure,
                    });
                }
                std::thread::sleep(wait);
            }
        }
    }
}

/// The server's message in an answer (`{"error": ...}` or
/// `{"message": ...}`), else its body.
pub fn message(response: &Response) -> String {
    let answer: serde_json::Value = serde_json::from_str(&response.body).unwrap_or_default();
    answer
        .get("error")
        .or_else(|| answer.get("message"))
        .and_then(|m| m.as_str())
        .unwrap_or(response.body.trim())
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(status: u16) -> io::Result<Response> {
        Ok(Response {
            status,
            body: format!("{{\"error\": \"status {status}\"}}"),
        })
    }

    #[test]
    fn retries_connection_failures_and_503_but_not_other_statuses() {
        let mut answers = vec![
            answer(409),
            answer(503),
            Err(io::Error::from(io::ErrorKind::ConnectionRefused)),
        ];
        let mut seen = vec![];
        let response = retry(
            || answers.pop().unwrap(),
            |attempts, failure, _| {
                seen.push((attempts, failure.to_string()));
                true
            },
        )
        .unwrap();
        assert_eq!(response.status, 409);
        assert_eq!(seen.len(), 2);
        assert_eq!(seen[1], (2, "answered 503: status 503".to_string()));
        let gave_up = retry(|| answer(503), |attempts, _, _| attempts < 2).unwrap_err();
        assert_eq!(gave_up.attempts, 2);
        assert_eq!(
            gave_up.to_string(),
            "answered 503: status 503 after 2 attempt(s)"
        );
    }

    #[test]
    fn only_proxies_and_an_away_database_are_worth_another_attempt() {
        for status in [502, 503, 504] {
            assert!(
                matches!(classify(answer(status)), Err(Failure::Unavailable(_))),
                "{status}"
            );
        }
        for status in [200, 400, 401, 409, 500] {
            assert_eq!(classify(answer(status)).unwrap().status, status);
        }
        let refused = io::Error::from(io::ErrorKind::ConnectionRefused);
        assert!(matches!(
            classify(Err(refused)),
            Err(Failure::Connection(_))
        ));
    }

    #[test]
    fn messages_come_from_the_answer_or_its_body() {
        let answer = |body: &str| Response {
            status: 400,
            body: body.into(),
        };
        assert_eq!(message(&answer(r#"{"error": "bad name"}"#)), "bad name");
        assert_eq!(message(&answer(r#"{"message": "stored"}"#)), "stored");
        assert_eq!(message(&answer(" plain text\n")), "plain text");
    }

    #[test]
    fn waits_double_up_to_five_seconds() {
        let mut backoff = Backoff::default();
        let waits: Vec<u128> = (0..7).map(|_| backoff.next_wait().as_millis()).collect();
        assert_eq!(waits, [200, 400, 800, 1600, 3200, 5000, 5000]);
    }
}
