//! HTTPS on loopback: a CA and a server certificate made with openssl in
//! the test, a push over TLS through a relay that records every byte on
//! the wire (the token and the document never appear in it), a plain-http
//! client that gets nothing from the HTTPS server, and a client that does
//! not trust the server's CA and is refused with a message saying so.

mod common;

use common::{create_token, document, json, samples_path};
use kbench_fleet::client::{self, Timeouts, Trust};
use kbench_server::Config;
use kbench_server::tls::TlsFiles;
use kbench_store::Location;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;

fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("openssl runs (the test makes its certificates with it)");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A CA named `name` in `dir` (`{name}.pem`, `{name}.key`).
fn make_ca(dir: &Path, name: &str) -> PathBuf {
    let (cert, key) = (format!("{name}.pem"), format!("{name}.key"));
    openssl(
        dir,
        &[
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
            "-days",
            "2",
            "-subj",
            &format!("/CN={name}"),
            "-keyout",
            &key,
            "-out",
            &cert,
        ],
    );
    dir.join(cert)
}

/// The server's certificate for 127.0.0.1 and localhost, signed by `ca`.
fn make_server_cert(dir: &Path, ca: &str) -> TlsFiles {
    openssl(
        dir,
        &[
            "req",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
            "-subj",
            "/CN=kbench-lab",
            "-keyout",
            "server.key",
            "-out",
            "server.csr",
        ],
    );
    std::fs::write(
        dir.join("server.ext"),
        "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n",
    )
    .unwrap();
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            &format!("{ca}.pem"),
            "-CAkey",
            &format!("{ca}.key"),
            "-CAcreateserial",
            "-days",
            "2",
            "-extfile",
            "server.ext",
            "-out",
            "server.pem",
        ],
    );
    TlsFiles {
        cert: dir.join("server.pem"),
        key: dir.join("server.key"),
    }
}

/// A relay on loopback to `target` that records what the client sends.
fn recording_relay(target: String) -> (String, Arc<Mutex<Vec<u8>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = seen.clone();
    std::thread::spawn(move || {
        for client in listener.incoming() {
            let Ok(mut client) = client else { return };
            let mut server = TcpStream::connect(&target).unwrap();
            let (mut from_server, mut to_client) =
                (server.try_clone().unwrap(), client.try_clone().unwrap());
            std::thread::spawn(move || {
                let _ = std::io::copy(&mut from_server, &mut to_client);
                let _ = to_client.shutdown(std::net::Shutdown::Write);
            });
            let record = record.clone();
            std::thread::spawn(move || {
                let mut buf = [0u8; 16384];
                while let Ok(n) = client.read(&mut buf) {
                    if n == 0 || server.write_all(&buf[..n]).is_err() {
                        break;
                    }
                    record.lock().unwrap().extend_from_slice(&buf[..n]);
                }
                let _ = server.shutdown(std::net::Shutdown::Write);
            });
        }
    });
    (addr, seen)
}

const QUICK: Timeouts = Timeouts {
    connect: Duration::from_secs(5),
    io: Duration::from_secs(20),
};

#[test]
fn pushes_cross_the_wire_encrypted_and_plain_http_gets_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let ca = make_ca(dir.path(), "lab-ca");
    let files = make_server_cert(dir.path(), "lab-ca");
    let location = Location::Sqlite(dir.path().join("results.db"));
    let token = create_token(&location, "runner-1");
    let server = kbench_server::spawn(
        "127.0.0.1:0",
        Config {
            tls: Some(files),
            ..common::config(location)
        },
    )
    .unwrap();
    let trust = Trust::from_file(&ca).unwrap();
    let (relay, seen) = recording_relay(server.addr.to_string());

    let bearer = format!("Bearer {token}");
    let headers = [
        ("Authorization", bearer.as_str()),
        ("Idempotency-Key", "tls-1"),
    ];
    let body = document(&["6.17"]);
    let pushed = client::request_over(
        &relay,
        Some(&trust),
        "POST",
        &samples_path("secure"),
        &headers,
        &body,
        QUICK,
    )
    .unwrap();
    assert_eq!(pushed.status, 201, "{pushed:?}");
    let sets = client::request_over(
        &relay,
        Some(&trust),
        "GET",
        "/api/v1/result-sets",
        &[],
        b"",
        QUICK,
    )
    .unwrap();
    assert_eq!(json(&sets)["result_sets"][0]["samples"], 8, "{sets:?}");

    let wire = seen.lock().unwrap().clone();
    assert!(
        wire.len() > body.len(),
        "the relay saw the push ({} bytes)",
        wire.len()
    );
    for secret in [token.as_bytes(), b"Bearer", b"kbench.samples/1", b"POST"] {
        assert!(
            !wire.windows(secret.len()).any(|w| w == secret),
            "{:?} crossed the wire in clear",
            String::from_utf8_lossy(secret)
        );
    }

    // A plain-http client is not answered, let alone given anything.
    let addr = server.addr.to_string();
    let plain = client::request_with_timeouts(&addr, "GET", "/api/v1/result-sets", &[], b"", QUICK);
    let plain = plain.expect_err("plain http got an answer").to_string();
    assert!(plain.contains("give its URL as https://"), "{plain}");

    // A client that does not trust the lab's CA is refused, and told why.
    let other = Trust::from_file(&make_ca(dir.path(), "other-ca")).unwrap();
    let refused = client::request_over(
        &addr,
        Some(&other),
        "GET",
        "/api/v1/result-sets",
        &[],
        b"",
        QUICK,
    )
    .unwrap_err()
    .to_string();
    assert!(
        refused.contains("TLS with") && refused.contains("other-ca.pem"),
        "{refused}"
    );
    server.stop().unwrap();
}

#[test]
fn bad_certificate_files_are_refused_before_listening() {
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("junk.pem");
    std::fs::write(&junk, "not a certificate\n").unwrap();
    let location = Location::Sqlite(dir.path().join("results.db"));
    let config = Config {
        tls: Some(TlsFiles {
            cert: junk.clone(),
            key: junk.clone(),
        }),
        ..common::config(location)
    };
    let err = kbench_server::spawn("127.0.0.1:0", config)
        .err()
        .unwrap()
        .to_string();
    assert!(
        err.contains("--tls-cert") && err.contains("junk.pem"),
        "{err}"
    );
    assert!(Trust::from_file(&junk).is_err());
}
