//! A minimal HTTP/1.1 client over `std::net::TcpStream` for `kbench push`
//! and the tests: plain `http://` only (the lab's server is on loopback or
//! a trusted network, like its PostgreSQL), one request per connection
//! (`Connection: close`), the response read to its end. No TLS and no
//! extra dependency; an `https://` URL is refused with a message.

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

/// `http://HOST[:PORT][/BASE]` split into the address and the base path.
/// A URL with a user name or password is refused first, before any
/// message could show it.
pub fn parse_base(url: &str) -> Result<(String, String), String> {
    refuse_userinfo(url)?;
    let Some(rest) = url.strip_prefix("http://") else {
        return Err(format!(
            "{url}: kbench speaks plain http:// to its lab server (no TLS: push, run --upload, job, worker); reach a remote server through an SSH tunnel"
        ));
    };
    let (host, path) = match rest.find('/') {
        Some(i) => (&rest[..i], rest[i..].trim_end_matches('/')),
        None => (rest, ""),
    };
    if host.is_empty() {
        return Err(format!("{url}: no host"));
    }
    let host = if host.contains(':') && !host.ends_with(']') {
        host.to_string()
    } else {
        format!("{host}:80")
    };
    Ok((host, path.to_string()))
}

/// Refuses `SCHEME://USER:PASSWORD@HOST...`: the password would be taken
/// for part of the host and shown in messages. The message shows the URL
/// with `***` for the user and password.
fn refuse_userinfo(url: &str) -> Result<(), String> {
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
    Err(format!(
        "{shown}: the server URL holds a user name or password (the part before '@'); \
         put the token in --token or KBENCH_TOKEN, not in the URL"
    ))
}

/// Percent-encodes one path segment (everything but RFC 3986 unreserved).
pub fn encode_segment(text: &str) -> String {
    let mut out = String::new();
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.' | b'~') {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
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
    let mut stream = connect(addr, timeouts.connect)?;
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
    // The server may answer (413, 401) and close before reading the whole
    // body: a failed write still leaves its answer to read.
    let sent = stream
        .write_all(head.as_bytes())
        .and_then(|()| stream.write_all(body));
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
    fn urls_and_segments() {
        assert_eq!(
            parse_base("http://127.0.0.1:8080/").unwrap(),
            ("127.0.0.1:8080".into(), "".into())
        );
        assert_eq!(
            parse_base("http://lab/kb").unwrap(),
            ("lab:80".into(), "/kb".into())
        );
        assert!(parse_base("https://lab").is_err());
        for url in [
            "http://user:s3cret@lab:8080/kb",
            "http://s3cret@lab",
            "https://user:s3cret@lab",
            "user:s3cret@lab:8080",
            "http://a@b:s3cret@lab/x@y",
        ] {
            let err = parse_base(url).unwrap_err();
            assert!(!err.contains("s3cret"), "{err}");
            assert!(
                err.contains("***@lab") && err.contains("KBENCH_TOKEN"),
                "{err}"
            );
        }
        // An '@' in the path is no user name.
        assert!(parse_base("http://lab/a@b").is_ok());
        assert_eq!(encode_segment("a b/<'>"), "a%20b%2F%3C%27%3E");
        assert_eq!(dechunk(b"3\r\nabc\r\n0\r\n\r\n").unwrap(), b"abc");
    }
}
