//! `kbench serve` stops on SIGTERM within its drain deadline although
//! clients hold half-sent requests (a head without its end, a push
//! without the rest of its body): it stops accepting, waits
//! `--drain-timeout` for them, cuts them and exits cleanly.

mod common;

use common::{Server, create_token, temp_db};
use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// Sends `text` on a new connection to `addr` and leaves it unfinished.
fn half_sent(addr: &str, text: &str) -> TcpStream {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.write_all(text.as_bytes()).unwrap();
    stream
}

/// Whether the server closed `stream` (end of file or reset) within `limit`.
fn closed_within(stream: &mut TcpStream, limit: Duration) -> bool {
    stream
        .set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    let deadline = Instant::now() + limit;
    let mut buf = [0u8; 1024];
    while Instant::now() < deadline {
        match stream.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => {}
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(_) => return true,
        }
    }
    false
}

#[test]
fn sigterm_completes_within_the_drain_deadline_while_requests_are_half_sent() {
    let (_dir, db) = temp_db();
    let token = create_token(&db, "runner-1");
    // Timeouts far beyond the drain deadline: the drain must cut them.
    let mut server = Server::start_with(
        &db,
        "127.0.0.1:0",
        &[
            "--drain-timeout",
            "2",
            "--header-timeout",
            "300",
            "--body-timeout",
            "300",
        ],
    );
    let mut head = half_sent(
        &server.addr,
        "GET /api/v1/result-sets HTTP/1.1\r\nHost: lab\r\n",
    );
    let mut body = half_sent(
        &server.addr,
        &format!(
            "POST /api/v1/result-sets/plu/samples HTTP/1.1\r\nHost: lab\r\n\
             Authorization: Bearer {token}\r\nIdempotency-Key: half\r\n\
             Content-Length: 5000\r\n\r\n{{\"schema\": "
        ),
    );
    // Both are in: the server answers another client meanwhile.
    assert_eq!(
        server.get("/api/v1/result-sets")["result_sets"],
        serde_json::json!([])
    );

    let addr = server.addr.clone();
    let stopped = server.stop_within(Duration::from_secs(30));
    let status = stopped
        .expect("the server was running")
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(status.success(), "kbench serve exited with {status}");
    assert!(closed_within(&mut head, Duration::from_secs(1)));
    assert!(closed_within(&mut body, Duration::from_secs(1)));
    assert!(
        TcpStream::connect(&addr).is_err(),
        "nothing listens after the stop"
    );
}
