//! The server under slow and crowded clients: connections that send a
//! head slowly, stay idle or send a body slowly are closed by the
//! server's timeouts while other clients are served; connections beyond
//! `max_connections` wait for a slot; 200 clients pushing
//! at once on PostgreSQL are all stored (no 503) through at most
//! `db_connections` database connections; errors never name the
//! database. (The drain at SIGTERM is tested on the real `kbench serve`
//! in crates/kbench/tests/drain.rs.)

mod common;

use common::{Lab, document, json, samples_path};
use kbench_fleet::client;
use kbench_server::Limits;
use kbench_store::Location;
use kbench_store::testing::{ThrowawayDatabase, postgres_server};
use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::time::{Duration, Instant};

/// Short timeouts, so that the test is quick.
const SHORT: Limits = Limits {
    header_timeout: Duration::from_secs(1),
    body_timeout: Duration::from_secs(1),
    ..Limits::DEFAULT
};

/// How long a slow client may wait to be closed: far beyond the
/// timeouts above, far below "never".
const PATIENCE: Duration = Duration::from_secs(20);

#[derive(Debug, Clone, Copy)]
enum Slow {
    /// Sends a request head a byte every 100 ms, never ending it.
    Header,
    /// Connects and sends nothing.
    Silent,
    /// Sends one whole request, reads its answer, then stays idle.
    KeptAlive,
    /// Sends a push's head and part of its body, then a byte every 100 ms.
    Body,
}

/// What a slow client saw: whether the server closed the connection
/// within [`PATIENCE`], and the answer it got before, if any.
#[derive(Debug)]
struct Seen {
    closed: bool,
    answer: String,
}

/// Plays `slow` on a new connection until the server closes it or
/// [`PATIENCE`] runs out.
fn slow_client(addr: &str, token: &str, slow: Slow) -> Seen {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    let mut answer = Vec::new();
    let (start, drip): (String, &[u8]) = match slow {
        Slow::Header => (
            "GET /api/v1/result-sets HTTP/1.1\r\nHost: lab\r\nX-Slow: ".into(),
            b"a",
        ),
        Slow::Silent => (String::new(), b""),
        Slow::KeptAlive => (
            "GET /api/v1/result-sets HTTP/1.1\r\nHost: lab\r\n\r\n".into(),
            b"",
        ),
        Slow::Body => (
            format!(
                "POST {} HTTP/1.1\r\nHost: lab\r\nAuthorization: Bearer {token}\r\n\
                 Idempotency-Key: slow\r\nContent-Length: 100000\r\n\r\n{{\"schema\"",
                samples_path("slow")
            ),
            b" ",
        ),
    };
    stream.write_all(start.as_bytes()).unwrap();
    let deadline = Instant::now() + PATIENCE;
    let mut buf = [0u8; 4096];
    while Instant::now() < deadline {
        match stream.read(&mut buf) {
            Ok(0) => {
                return Seen {
                    closed: true,
                    answer: String::from_utf8_lossy(&answer).into_owned(),
                };
            }
            Ok(n) => answer.extend_from_slice(&buf[..n]),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                if !drip.is_empty() && stream.write_all(drip).is_err() {
                    break;
                }
            }
            // Reset by the server: closed too.
            Err(_) => break,
        }
    }
    Seen {
        closed: Instant::now() < deadline,
        answer: String::from_utf8_lossy(&answer).into_owned(),
    }
}

#[test]
fn sixty_slow_connections_are_closed_by_the_timeouts_while_others_are_served() {
    let dir = tempfile::tempdir().unwrap();
    let lab = Lab::start_with(
        Location::Sqlite(dir.path().join("results.db")),
        kbench_server::DEFAULT_MAX_BODY,
        SHORT,
    );
    let plan: Vec<Slow> = [
        (Slow::Header, 40),
        (Slow::Silent, 5),
        (Slow::KeptAlive, 5),
        (Slow::Body, 10),
    ]
    .iter()
    .flat_map(|&(slow, n)| std::iter::repeat_n(slow, n))
    .collect();
    let (seen, pushed, listed) = std::thread::scope(|scope| {
        let clients: Vec<_> = plan
            .iter()
            .map(|&slow| {
                let lab = &lab;
                scope.spawn(move || (slow, slow_client(&lab.addr, &lab.token, slow)))
            })
            .collect();
        // Served while the slow ones hold their connections.
        std::thread::sleep(Duration::from_millis(300));
        let pushed = lab.push("fast", "fast-1", &document(&["6.17"]));
        let listed = lab.get("/api/v1/result-sets");
        let seen: Vec<_> = clients.into_iter().map(|c| c.join().unwrap()).collect();
        (seen, pushed, listed)
    });
    assert_eq!(pushed.status, 201, "{pushed:?}");
    assert_eq!(listed.status, 200, "{listed:?}");
    assert_eq!(
        json(&listed)["result_sets"][0]["name"],
        "fast",
        "{listed:?}"
    );
    for (slow, seen) in &seen {
        assert!(seen.closed, "a {slow:?} connection stayed open: {seen:?}");
        match slow {
            Slow::KeptAlive => assert!(seen.answer.starts_with("HTTP/1.1 200"), "{seen:?}"),
            Slow::Body => assert!(
                seen.answer.starts_with("HTTP/1.1 408") && seen.answer.contains("--body-timeout"),
                "{seen:?}"
            ),
            _ => {}
        }
    }
    assert_eq!(lab.samples("slow"), 0, "nothing of a cut body is stored");
}

#[test]
fn connections_beyond_the_cap_wait_for_a_free_slot() {
    let dir = tempfile::tempdir().unwrap();
    let lab = Lab::start_with(
        Location::Sqlite(dir.path().join("results.db")),
        kbench_server::DEFAULT_MAX_BODY,
        Limits {
            max_connections: 2,
            ..Limits::DEFAULT
        },
    );
    let held: Vec<TcpStream> = (0..2)
        .map(|_| TcpStream::connect(&lab.addr).unwrap())
        .collect();
    let mut waiting = TcpStream::connect(&lab.addr).unwrap();
    waiting
        .write_all(b"GET /api/v1/result-sets HTTP/1.1\r\nHost: lab\r\nConnection: close\r\n\r\n")
        .unwrap();
    waiting
        .set_read_timeout(Some(Duration::from_secs(1)))
        .unwrap();
    let mut first = [0u8; 1];
    let early = waiting.read(&mut first);
    assert!(
        early
            .as_ref()
            .is_err_and(|e| matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut)),
        "a third connection was served beside two held ones: {early:?}"
    );
    drop(held);
    waiting.set_read_timeout(Some(PATIENCE)).unwrap();
    let mut answer = String::new();
    waiting.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
}

#[test]
fn two_hundred_clients_pushing_on_postgres_get_no_503_through_a_bounded_pool() {
    const CLIENTS: usize = 200;
    const DB_CONNECTIONS: usize = 8;
    let Some(server) = postgres_server() else {
        eprintln!(
            "SKIPPED: 200 clients on PostgreSQL need KBENCH_TEST_POSTGRES_URL (.ci/postgres.sh)"
        );
        return;
    };
    let db = ThrowawayDatabase::create(&server, "crowd");
    let lab = Lab::start_with(
        Location::parse(&db.url).unwrap(),
        kbench_server::DEFAULT_MAX_BODY,
        Limits {
            db_connections: DB_CONNECTIONS,
            ..Limits::DEFAULT
        },
    );
    let done = AtomicBool::new(false);
    let most = AtomicI64::new(0);
    let answers: Vec<client::Response> = std::thread::scope(|scope| {
        let watcher = scope.spawn(|| {
            while !done.load(Ordering::Relaxed) {
                most.fetch_max(db.connections(), Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(20));
            }
        });
        let clients: Vec<_> = (0..CLIENTS)
            .map(|n| {
                let lab = &lab;
                scope.spawn(move || {
                    let id = format!("client-{n}");
                    lab.push("crowd", &id, &document(&[id.as_str()]))
                })
            })
            .collect();
        let answers = clients.into_iter().map(|c| c.join().unwrap()).collect();
        done.store(true, Ordering::Relaxed);
        watcher.join().unwrap();
        answers
    });
    let refused: Vec<_> = answers.iter().filter(|a| a.status != 201).collect();
    assert!(
        refused.is_empty(),
        "{} of {CLIENTS} pushes were refused: {:?}",
        refused.len(),
        refused.first()
    );
    let most = most.load(Ordering::Relaxed);
    assert!(
        (1..=DB_CONNECTIONS as i64).contains(&most),
        "the server had {most} connections to PostgreSQL at once; at most {DB_CONNECTIONS} allowed"
    );
    assert_eq!(lab.samples("crowd"), (CLIENTS * 8) as u64);
}

#[test]
fn error_answers_do_not_name_the_database() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("secret-place").join("results.db");
    let lab = Lab::start(
        Location::Sqlite(path.clone()),
        kbench_server::DEFAULT_MAX_BODY,
    );
    lab.push("present", "p-1", &document(&["6.17"]));
    let missing = lab.get("/api/v1/result-sets/absent/compare");
    assert_eq!(missing.status, 404, "{missing:?}");
    let shown = path.display().to_string();
    assert!(
        !missing.body.contains(&shown) && !missing.body.contains("secret-place"),
        "{missing:?}"
    );
    assert!(missing.body.contains("the lab's database"), "{missing:?}");
}
