//! A minimal HTTP/1.1 client over `std::net::TcpStream`, for every call
//! to the lab server (and the server's tests): `http://`, or `https://`
//! through rustls with the CAs of a [`Trust`] (the certificate must name
//! the URL's host); one request per connection (`Connection: close`), the
//! response read to its end.

pub use crate::trust::Trust;
pub use kbench_model::lab::encode_segment;

use crate::FleetError;

use rustls::pki_types::ServerName;
use std::io::{self, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

/// How long a request may wait: for the connection, and for each read or
/// write on it (a server that stops answering is then an `Err`, worth
/// retrying, instead of a client that hangs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    pub connect: Duration,
    pub io: Duration,
}

impl Default for Timeouts {
    /// Generous: a large push may take the server a while to store.
    fn default() -> Timeouts {
        Timeouts {
            connect: Duration::from_secs(30),
            io: Duration::from_secs(300),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    pub status: u16,
    pub body: String,
}

/// Whether `url` is an `https://` one (the scheme in any case).
pub fn is_https(url: &str) -> bool {
    url.get(..8)
        .is_some_and(|scheme| scheme.eq_ignore_ascii_case("https://"))
}

/// `http://HOST[:PORT][/BASE]` or `https://...` split into the address
/// (port 80 or 443 unless given) and the base path. A URL with a user name
/// or password is refused first, before any message could show it.
pub fn parse_base(url: &str) -> Result<(String, String), FleetError> {
    refuse_userinfo(url)?;
    let (rest, port) = match url.split_once("://") {
        Some((scheme, rest)) if scheme.eq_ignore_ascii_case("http") => (rest, 80),
        Some((scheme, rest)) if scheme.eq_ignore_ascii_case("https") => (rest, 443),
        _ => {
            return Err(FleetError::Setup(format!(
                "{url}: the lab server's URL is http://HOST[:PORT] or https://HOST[:PORT] \
                 (push, run --server, job, worker)"
            )));
        }
    };
    let (host, path) = match rest.find('/') {
        Some(i) => (&rest[..i], rest[i..].trim_end_matches('/')),
        None => (rest, ""),
    };
    if host.is_empty() {
        return Err(FleetError::Setup(format!("{url}: no host")));
    }
    let host = if host.contains(':') && !host.ends_with(']') {
        host.to_string()
    } else {
        format!("{host}:{port}")
    };
    Ok((host, path.to_string()))
}

/// Refuses `SCHEME://USER:PASSWORD@HOST...`: the password would be taken
/// for part of the host and shown in messages. The message shows the URL
/// with `***` for the user and password.
fn refuse_userinfo(url: &str) -> Result<(), FleetError> {
    let (scheme, rest) = url.split_once("://").map_or(("", url), |(s, r)| (s, r));
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let Some(at) = rest[..end].rfind('@') else {
        return Ok(());
    };
    let shown = if scheme.is_empty() {
        format!("***@{}", &rest[at + 1..])
    } else {
        format!("{scheme}://***@{}", &rest[at + 1..])
    };
    Err(FleetError::Setup(format!(
        "{shown}: the server URL holds a user name or password (the part before '@'); \
         put the token in --token or KBENCH_TOKEN, not in the URL"
    )))
}

/// Sends one request to `addr` (`host:port`) and reads the whole answer,
/// with the default [`Timeouts`]. An `Err` is a connection failure (worth
/// retrying); any HTTP status is an `Ok`.
pub fn request(
    addr: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> io::Result<Response> {
    request_with_timeouts(addr, method, path, headers, body, Timeouts::default())
}

/// [`request`] with the given timeouts.
pub fn request_with_timeouts(
    addr: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
    timeouts: Timeouts,
) -> io::Result<Response> {
    request_over(addr, None, method, path, headers, body, timeouts)
}

/// [`request_with_timeouts`] over TLS when `trust` is given (an
/// `https://` server, whose certificate `trust` must vouch for).
pub fn request_over(
    addr: &str,
    trust: Option<&Trust>,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
    timeouts: Timeouts,
) -> io::Result<Response> {
    let stream = connect(addr, timeouts.connect)?;
    stream.set_read_timeout(Some(timeouts.io))?;
    stream.set_write_timeout(Some(timeouts.io))?;
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    match trust {
        None => exchange(stream, head.as_bytes(), body),
        Some(trust) => {
            let host = addr
                .rsplit_once(':')
                .map_or(addr, |(host, _)| host)
                .trim_start_matches('[')
                .trim_end_matches(']');
            let name = ServerName::try_from(host.to_string())
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, format!("{host}: {e}")))?;
            let tls = rustls::ClientConnection::new(trust.config.clone(), name)
                .map_err(io::Error::other)?;
            exchange(rustls::StreamOwned::new(tls, stream), head.as_bytes(), body).map_err(|e| {
                match e.get_ref().and_then(|inner| inner.downcast_ref::<rustls::Error>()) {
                    Some(tls_error) => io::Error::new(
                        e.kind(),
                        format!(
                            "TLS with {addr} failed ({tls_error}); its certificate must be signed by a CA in {}",
                            trust.source.display()
                        ),
                    ),
                    None => e,
                }
            })
        }
    }
}

/// Sends `head` and `body` on `stream` and reads the whole answer.
fn exchange(mut stream: impl Read + Write, head: &[u8], body: &[u8]) -> io::Result<Response> {
    // The server may answer (413, 401) and close before reading the whole
    // body: a failed write still leaves its answer to read.
    let sent = stream
        .write_all(head)
        .and_then(|()| stream.write_all(body))
        .and_then(|()| stream.flush());
    let mut raw = Vec::new();
    let read = stream.read_to_end(&mut raw);
    if raw.is_empty() {
        sent?;
        read?;
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "the server closed the connection without an answer",
        ));
    }
    parse_response(&raw)
}

/// Connects to the first address of `addr` that answers within `timeout`.
fn connect(addr: &str, timeout: Duration) -> io::Result<TcpStream> {
    let mut last = None;
    for resolved in addr.to_socket_addrs()? {
        match TcpStream::connect_timeout(&resolved, timeout) {
            Ok(stream) => return Ok(stream),
            Err(error) => last = Some(error),
        }
    }
    Err(last.unwrap_or_else(|| {
        io::Error::new(io::ErrorKind::NotFound, format!("{addr}: no address found"))
    }))
}

fn parse_response(raw: &[u8]) -> io::Result<Response> {
    let bad = |what: &str| io::Error::new(io::ErrorKind::InvalidData, what.to_string());
    // Content type 21 (alert), version 3.x: an HTTPS server's refusal.
    if raw.starts_with(&[0x15, 0x03]) {
        return Err(bad(
            "the server answered in TLS: it serves https, give its URL as https://",
        ));
    }
    let end = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| bad("an HTTP answer without the end of its header"))?;
    let head = String::from_utf8_lossy(&raw[..end]);
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| bad("an HTTP answer without a status"))?;
    let chunked = head.lines().any(|line| {
        line.to_ascii_lowercase().starts_with("transfer-encoding:")
            && line.to_ascii_lowercase().contains("chunked")
    });
    let mut body = raw[end + 4..].to_vec();
    if chunked {
        body = dechunk(&body).ok_or_else(|| bad("a broken chunked body"))?;
    }
    Ok(Response {
        status,
        body: String::from_utf8_lossy(&body).into_owned(),
    })
}

fn dechunk(mut data: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let line_end = data.windows(2).position(|w| w == b"\r\n")?;
        let size_text = std::str::from_utf8(&data[..line_end]).ok()?;
        let size = usize::from_str_radix(size_text.split(';').next()?.trim(), 16).ok()?;
        data = &data[line_end + 2..];
        if size == 0 {
            return Some(out);
        }
        out.extend_from_slice(data.get(..size)?);
        data = data.get(size + 2..)?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_and_chunked_bodies() {
        assert_eq!(
            parse_base("http://127.0.0.1:8080/").unwrap(),
            ("127.0.0.1:8080".into(), "".into())
        );
        assert_eq!(
            parse_base("http://lab/kb").unwrap(),
            ("lab:80".into(), "/kb".into())
        );
        for url in [
            "http://user:s3cret@lab:8080/kb",
            "http://s3cret@lab",
            "https://user:s3cret@lab",
            "user:s3cret@lab:8080",
            "http://a@b:s3cret@lab/x@y",
        ] {
            let err = parse_base(url).unwrap_err().to_string();
            assert!(!err.contains("s3cret"), "{err}");
            assert!(
                err.contains("***@lab") && err.contains("KBENCH_TOKEN"),
                "{err}"
            );
        }
        // An '@' in the path is no user name.
        assert!(parse_base("http://lab/a@b").is_ok());
        assert_eq!(
            parse_base("HTTPS://lab/kb/").unwrap(),
            ("lab:443".into(), "/kb".into())
        );
        assert!(is_https("HTTPS://lab") && !is_https("http://lab"));
        assert!(parse_base("ftp://lab").is_err());
        assert_eq!(dechunk(b"3\r\nabc\r\n0\r\n\r\n").unwrap(), b"abc");
    }
}
