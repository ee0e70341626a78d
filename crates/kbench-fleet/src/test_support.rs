//! What the unit tests share: a lab server stand-in ([`FakeServer`]) and
//! a job.

use kbench_store::{Job, JobSpec, JobState};
use std::collections::{HashMap, VecDeque};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

/// Job `id` in `state`: `quick` as 6.18 into lab, two rounds.
pub fn job(id: i64, state: JobState) -> Job {
    Job {
        id,
        spec: JobSpec {
            set: "lab".into(),
            identifier: "6.18".into(),
            names: vec!["quick".into()],
            kernel: None,
            rounds: 2,
            max_time: None,
            tags: vec![],
        },
        state,
        attempts: 1,
        worker: Some("w1".into()),
        token: Some("lab".into()),
        lease_expires_at_ms: None,
        submitted_at_ms: 0,
        started_at_ms: None,
        finished_at_ms: None,
        message: None,
    }
}

/// A request as the fake server read it.
#[derive(Debug, Clone, PartialEq)]
pub struct Seen {
    /// `METHOD /path?query`.
    pub route: String,
    pub body: String,
}

type Answers = HashMap<String, VecDeque<(u16, String)>>;

/// A lab server stand-in on 127.0.0.1: it answers each request with the
/// next answer queued for its route (method and path without the query),
/// 500 when none is left, and records what it was sent.
pub struct FakeServer {
    pub url: String,
    answers: Arc<Mutex<Answers>>,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl FakeServer {
    pub fn start() -> FakeServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let answers = Arc::new(Mutex::new(Answers::new()));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (to_answer, to_record) = (answers.clone(), seen.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { return };
                let Some(request) = read_request(&mut stream) else {
                    continue;
                };
                let route = request.route.split('?').next().unwrap_or("").to_string();
                let (status, body) = to_answer
                    .lock()
                    .unwrap()
                    .get_mut(&route)
                    .and_then(VecDeque::pop_front)
                    .unwrap_or((500, format!("{{\"error\": \"no answer for {route}\"}}")));
                to_record.lock().unwrap().push(request);
                let _ = write!(
                    stream,
                    "HTTP/1.1 {status} X\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            }
        });
        FakeServer { url, answers, seen }
    }

    /// Queues an answer to `route` (`POST /api/v1/jobs/lease`).
    pub fn answer(&self, route: &str, status: u16, body: &str) -> &FakeServer {
        self.answers
            .lock()
            .unwrap()
            .entry(route.to_string())
            .or_default()
            .push_back((status, body.to_string()));
        self
    }

    /// The requests so far, in order.
    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

fn read_request(stream: &mut std::net::TcpStream) -> Option<Seen> {
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let mut parts = line.split_whitespace();
    let route = format!("{} {}", parts.next()?, parts.next()?);
    let mut length = 0;
    loop {
        let mut header = String::new();
        reader.read_line(&mut header).ok()?;
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().ok()?;
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some(Seen {
        route,
        body: String::from_utf8_lossy(&body).into_owned(),
    })
}
