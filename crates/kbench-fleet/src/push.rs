//! `kbench push`: a local result set sent to the server as one
//! kbench.samples/1 document with a push id; retried on connection errors
//! and 503 with the same id, so the server stores it once.

use crate::FleetError;
use crate::api::{Api, message, retry};
use crate::client::encode_segment;
use kbench_store::{ResultSetData, exchange};

/// Pushes `data` into the server's result set `into` as push `push_id`,
/// in at most `tries` attempts (saying on stderr why it tries again). The
/// server's answer when it stored the document (or had it already).
pub fn push(
    api: &Api,
    into: &str,
    data: &ResultSetData,
    push_id: &str,
    tries: u32,
) -> Result<String, FleetError> {
    let body = serde_json::to_vec(&exchange::export(data)).map_err(FleetError::Encode)?;
    let path = format!("/result-sets/{}/samples", encode_segment(into));
    let headers = [
        ("Idempotency-Key", push_id),
        ("Content-Type", "application/json"),
    ];
    let response = retry(
        || api.send("POST", &path, &headers, &body),
        |attempt, failure, wait| {
            if attempt >= tries {
                return false;
            }
            eprintln!(
                "kbench push: {}: {failure}; retrying in {} ms with the same push id ({attempt}/{tries})",
                api.url,
                wait.as_millis(),
            );
            true
        },
    )
    .map_err(|gave_up| FleetError::Unreachable(format!("cannot reach {}: {gave_up}", api.url)))?;
    let answer = message(&response);
    match response.status {
        200 | 201 => Ok(answer),
        status => Err(FleetError::Refused(format!(
            "the server answered {status}: {answer}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::FakeServer;

    const SAMPLES: &str = "POST /api/v1/result-sets/lab%20a/samples";

    fn data() -> ResultSetData {
        ResultSetData {
            name: "local".into(),
            title: None,
            description: None,
            tests: vec![],
            identifiers: vec![],
        }
    }

    #[test]
    fn a_push_is_retried_with_its_document_until_the_server_stores_it() {
        let server = FakeServer::start();
        server
            .answer(SAMPLES, 503, r#"{"error": "the database is away"}"#)
            .answer(SAMPLES, 201, r#"{"message": "stored 0 samples"}"#);
        let api = Api::new(&server.url, Some("secret")).unwrap();
        let answer = push(&api, "lab a", &data(), "p1", 3).unwrap();
        assert_eq!(answer, "stored 0 samples");
        let seen = server.seen();
        assert_eq!(seen.len(), 2);
        assert_eq!(seen[0].body, seen[1].body, "the same document again");
        let document: serde_json::Value = serde_json::from_str(&seen[0].body).unwrap();
        assert_eq!(document["result_set"], "local");
    }

    #[test]
    fn a_push_gives_up_after_its_tries_and_reports_a_refusal() {
        let server = FakeServer::start();
        server
            .answer(SAMPLES, 503, "{}")
            .answer(SAMPLES, 503, "{}")
            .answer(SAMPLES, 409, r#"{"error": "identifier a exists"}"#);
        let api = Api::new(&server.url, Some("secret")).unwrap();
        let error = push(&api, "lab a", &data(), "p1", 2).unwrap_err();
        assert!(matches!(error, FleetError::Unreachable(_)), "{error}");
        let error = push(&api, "lab a", &data(), "p1", 2).unwrap_err();
        assert_eq!(
            error.to_string(),
            "the server answered 409: identifier a exists"
        );
    }
}
