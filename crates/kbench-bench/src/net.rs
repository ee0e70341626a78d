//! Loopback network benchmarks (lmbench family): UDP and TCP round trips,
//! TCP connection setup and TCP bandwidth, each against a partner process
//! over 127.0.0.1 on ephemeral ports (bound to port 0).
//!
//! As in the ipc family (tcp-lat and tcp-bw are the two-task [`RoundTrip`]
//! and [`Stream`] of pipe-lat and pipe-bw, over TCP), sockets are made and
//! connected and the [`Partner`] is forked in `prepare`; `run` times only
//! the loop, and dropping the workload closes the sockets and kills and
//! reaps the partner.
//!
//! A partner blocked on a UDP socket or a listener sees no EOF when the
//! measuring process dies, so those sockets get a receive timeout
//! ([`PARTNER_POLL`]): on each timeout the partner checks that its parent is
//! still the measuring process and exits when it was orphaned.

use crate::shared::pair::{Link, RoundTrip, Stream};
use crate::shared::placement::{PLACEMENT, Pinning};
use crate::sys::fd::{child_write_all, raw, read_exact, write_all};
use crate::sys::partner::Partner;
use crate::sys::{check, errno, os_error};
use crate::{BenchError, BenchInfo, Direction, Interval, Options, Unit, Workload};
use std::hint::black_box;
use std::io;
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::os::fd::{AsRawFd, FromRawFd, IntoRawFd, OwnedFd, RawFd};
use std::time::{Duration, Instant};

/// How long a partner waits in recv/accept before checking that the
/// measuring process is still its parent.
const PARTNER_POLL: Duration = Duration::from_secs(1);

/// How long the measuring side waits for a UDP echo before giving up (a
/// lost datagram would otherwise hang the run).
const ECHO_TIMEOUT: Duration = Duration::from_secs(5);

/// The listen backlog of tcp-connect (the kernel clamps it to
/// net.core.somaxconn, 4096 by default since Linux 5.4).
const BACKLOG: libc::c_int = 4096;

pub const BENCHES: &[BenchInfo] = &[
    BenchInfo {
        id: "udp-lat",
        unit: Unit::Micros,
        direction: Direction::Lower,
        summary: "4-byte round trip over connected loopback UDP sockets to an echoing partner process",
        options: &[PLACEMENT],
        one_task: false,
        in_measuring_task: true,
        prepare: |o| Ok(Box::new(UdpLat::new(o, std::process::id(), PARTNER_POLL)?)),
    },
    BenchInfo {
        id: "tcp-lat",
        unit: Unit::Micros,
        direction: Direction::Lower,
        summary: "1-byte round trip over a loopback TCP connection (TCP_NODELAY) to an echoing partner process",
        options: &[PLACEMENT],
        one_task: false,
        in_measuring_task: true,
        prepare: |o| Ok(Box::new(tcp_lat(o)?)),
    },
    BenchInfo {
        id: "tcp-connect",
        unit: Unit::Micros,
        direction: Direction::Lower,
        summary: "socket + connect + abortive close (SO_LINGER 0: RST, no TIME_WAIT) to a loopback listener \
                  whose partner process accepts and closes",
        options: &[],
        one_task: false,
        in_measuring_task: true,
        prepare: |_| Ok(Box::new(Connect::new(std::process::id(), PARTNER_POLL)?)),
    },
    BenchInfo {
        id: "tcp-bw",
        unit: Unit::MegabytesPerSec,
        direction: Direction::Higher,
        summary: "64 KiB blocks read from a loopback TCP connection fed by a writer process",
        options: &[PLACEMENT],
        one_task: false,
        in_measuring_task: true,
        prepare: |o| Ok(Box::new(tcp_bw(o)?)),
    },
];

// ------------------------------------------------------------------ helpers

/// 127.0.0.1, port 0: the kernel picks a free ephemeral port.
fn loopback() -> SocketAddr {
    SocketAddr::from((Ipv4Addr::LOCALHOST, 0))
}

/// Binding to 127.0.0.1 fails where there is no usable loopback interface
/// (e.g. a VM guest or namespace with `lo` down): skip, do not fail.
fn bind_error(error: io::Error) -> BenchError {
    match error.raw_os_error() {
        Some(libc::EADDRNOTAVAIL | libc::ENETUNREACH | libc::ENETDOWN | libc::EAFNOSUPPORT) => {
            BenchError::Skip(format!("127.0.0.1 is not usable here: {error}"))
        }
        _ => BenchError::Os {
            what: "bind 127.0.0.1:0".to_string(),
            error,
        },
    }
}

/// Sets an int-sized (or struct) socket option.
fn set_option<T>(
    fd: RawFd,
    level: libc::c_int,
    name: libc::c_int,
    value: &T,
    what: &str,
) -> Result<(), BenchError> {
    // SAFETY: `value` points to a live T of exactly the size passed.
    let r = unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            (value as *const T).cast(),
            size_of::<T>() as libc::socklen_t,
        )
    };
    check(r, what).map(|_| ())
}

/// The receive timeout of a socket; for a listener it bounds `accept`.
fn set_receive_timeout(fd: RawFd, timeout: Duration) -> Result<(), BenchError> {
    let tv = libc::timeval {
        tv_sec: timeout.as_secs() as libc::time_t,
        tv_usec: timeout.subsec_micros() as libc::suseconds_t,
    };
    set_option(
        fd,
        libc::SOL_SOCKET,
        libc::SO_RCVTIMEO,
        &tv,
        "setsockopt(SO_RCVTIMEO)",
    )
}

/// Child side, after a failed recv or accept: true to try again (interrupted,
/// an aborted connection, or a timeout while `parent` is still our parent).
fn keep_waiting(parent: libc::pid_t) -> bool {
    match errno() {
        libc::EINTR | libc::ECONNABORTED => true,
        // EWOULDBLOCK is EAGAIN on Linux.
        libc::EAGAIN => {
            // SAFETY: getppid has no preconditions and is async-signal-safe.
            let ppid = unsafe { libc::getppid() };
            ppid == parent
        }
        _ => false,
    }
}

/// A connected loopback TCP pair as (client, server side of the listener).
fn tcp_pair(nodelay: bool) -> Result<(TcpStream, TcpStream), BenchError> {
    let listener = TcpListener::bind(loopback()).map_err(bind_error)?;
    let addr = listener.local_addr().map_err(os_error("getsockname"))?;
    let client = TcpStream::connect(addr).map_err(os_error("connect to 127.0.0.1"))?;
    let (server, _) = listener.accept().map_err(os_error("accept"))?;
    if nodelay {
        client
            .set_nodelay(true)
            .map_err(os_error("setsockopt(TCP_NODELAY)"))?;
        server
            .set_nodelay(true)
            .map_err(os_error("setsockopt(TCP_NODELAY)"))?;
    }
    Ok((client, server))
}

fn pid_of(id: u32) -> libc::pid_t {
    id as libc::pid_t
}

// ------------------------------------------------------------------ udp-lat

/// udp-lat (lmbench lat_udp): the measuring side writes a 4-byte sequence
/// number on a UDP socket connected to the partner's, the partner echoes
/// the datagram; one iteration is one round trip, the echo is checked.
struct UdpLat {
    fd: RawFd,
    seq: u32,
    // Drop order: our socket closes, the partner is reaped, we are unpinned.
    _socket: OwnedFd,
    _partner: Partner,
    _pinning: Pinning,
}

impl UdpLat {
    /// `parent` is the process the partner must stay a child of (ours;
    /// tests pass another to see an orphan exit), `poll` its recv timeout.
    fn new(options: &Options, parent: u32, poll: Duration) -> Result<UdpLat, BenchError> {
        let pinning = Pinning::new(options)?;
        let mine = UdpSocket::bind(loopback()).map_err(bind_error)?;
        let theirs = UdpSocket::bind(loopback()).map_err(bind_error)?;
        let my_addr = mine.local_addr().map_err(os_error("getsockname"))?;
        let their_addr = theirs.local_addr().map_err(os_error("getsockname"))?;
        mine.connect(their_addr)
            .map_err(os_error("connect UDP socket"))?;
        theirs
            .connect(my_addr)
            .map_err(os_error("connect UDP socket"))?;
        mine.set_read_timeout(Some(ECHO_TIMEOUT))
            .map_err(os_error("setsockopt(SO_RCVTIMEO)"))?;
        set_receive_timeout(theirs.as_raw_fd(), poll)?;
        let (fd, parent) = (theirs.as_raw_fd(), pid_of(parent));
        let partner = Partner::spawn(&[fd], || udp_echo(fd, parent))?;
        drop(theirs);
        pinning.pin_partner(partner.pid())?;
        let socket = OwnedFd::from(mine);
        Ok(UdpLat {
            fd: raw(&socket),
            seq: 0,
            _socket: socket,
            _partner: partner,
            _pinning: pinning,
        })
    }
}

/// Child side: echoes every datagram back until an error, or until the
/// measuring process is gone.
fn udp_echo(fd: RawFd, parent: libc::pid_t) {
    let mut buf = [0u8; 64];
    loop {
        // SAFETY: `buf` is valid for writes of its length.
        let n = unsafe { libc::recv(fd, buf.as_mut_ptr().cast(), buf.len(), 0) };
        if n < 0 {
            if keep_waiting(parent) {
                continue;
            }
            return;
        }
        if !child_write_all(fd, &buf[..n as usize]) {
            return;
        }
    }
}

impl Workload for UdpLat {
    fn run(&mut self, iterations: u64) -> Result<Interval, BenchError> {
        let mut back = [0u8; 4];
        let start = Instant::now();
        for _ in 0..iterations {
            self.seq = self.seq.wrapping_add(1);
            let out = self.seq.to_ne_bytes();
            write_all(self.fd, &out, "udp-lat")?;
            read_exact(self.fd, &mut back, "udp-lat")?;
            if back != out {
                return Err(BenchError::Os {
                    what: "udp-lat: echo".to_string(),
                    error: io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!("sent {out:?}, got {back:?} back"),
                    ),
                });
            }
        }
        let interval = Interval::since(start, iterations as f64);
        black_box(back);
        Ok(interval)
    }
}

// ------------------------------------------------------------------ tcp-lat

/// tcp-lat (lmbench lat_tcp): ipc's round trip, one byte each way over a
/// TCP_NODELAY connection.
fn tcp_lat(options: &Options) -> Result<RoundTrip, BenchError> {
    let pinning = Pinning::new(options)?;
    let (client, server) = tcp_pair(true)?;
    let link = Link::sockets(client.into(), server.into());
    RoundTrip::over("tcp-lat", link, pinning)
}

// -------------------------------------------------------------- tcp-connect

/// tcp-connect (lmbench lat_connect): one iteration is socket + connect +
/// close of a client socket to a loopback listener; a partner process
/// accepts and closes each connection.
///
/// The client closes abortively (SO_LINGER on, linger time 0): close sends a
/// RST instead of a FIN, so neither side enters TIME_WAIT and long runs do
/// not run out of ephemeral ports (a graceful close would leave one
/// TIME_WAIT socket, holding a port for 60 s, per iteration). The setsockopt
/// is part of the timed loop, as lmbench's SO_REUSEADDR is part of its.
///
/// The accept queue is checked empty before every interval (untimed), so an
/// interval starts with no backlog from the last and never comes near the
/// listen backlog, whose overflow would drop SYNs (a 1 s retransmit).
struct Connect {
    addr: libc::sockaddr_in,
    /// Our copy of the listener, to read its accept queue length.
    listener: OwnedFd,
    _partner: Partner,
}

/// SO_LINGER on with a zero timeout: close aborts with a RST.
const ABORT: libc::linger = libc::linger {
    l_onoff: 1,
    l_linger: 0,
};

impl Connect {
    fn new(parent: u32, poll: Duration) -> Result<Connect, BenchError> {
        let listener = TcpListener::bind(loopback()).map_err(bind_error)?;
        let port = listener
            .local_addr()
            .map_err(os_error("getsockname"))?
            .port();
        let fd = listener.as_raw_fd();
        // SAFETY: fd is our bound, listening socket; listening again only
        // raises the backlog (std listens with a smaller one).
        check(unsafe { libc::listen(fd, BACKLOG) }, "listen")?;
        set_receive_timeout(fd, poll)?;
        let parent = pid_of(parent);
        let partner = Partner::spawn(&[fd], || {
            loop {
                // SAFETY: null address pointers: the peer address is not wanted.
                let conn = unsafe {
                    libc::accept4(
                        fd,
                        std::ptr::null_mut(),
                        std::ptr::null_mut(),
                        libc::SOCK_CLOEXEC,
                    )
                };
                if conn < 0 {
                    if keep_waiting(parent) {
                        continue;
                    }
                    return;
                }
                // SAFETY: conn was just accepted and is closed once.
                unsafe { libc::close(conn) };
            }
        })?;
        // SAFETY: an all-zero sockaddr_in is valid; the fields are set below.
        let mut addr: libc::sockaddr_in = unsafe { std::mem::zeroed() };
        addr.sin_family = libc::AF_INET as libc::sa_family_t;
        addr.sin_port = port.to_be();
        addr.sin_addr.s_addr = u32::from(Ipv4Addr::LOCALHOST).to_be();
        Ok(Connect {
            addr,
            listener: OwnedFd::from(listener),
            _partner: partner,
        })
    }

    /// Connections accepted by the kernel but not yet by the partner.
    fn queued(&self) -> Result<u32, BenchError> {
        // SAFETY: tcp_info is a plain C struct; all zeroes is valid.
        let mut info: libc::tcp_info = unsafe { std::mem::zeroed() };
        let mut len = size_of::<libc::tcp_info>() as libc::socklen_t;
        // SAFETY: `info` is writable for `len` bytes, `len` is a valid socklen_t.
        let r = unsafe {
            libc::getsockopt(
                raw(&self.listener),
                libc::IPPROTO_TCP,
                libc::TCP_INFO,
                (&raw mut info).cast(),
                &mut len,
            )
        };
        check(r, "getsockopt(TCP_INFO) of the listener")?;
        // For a listener the kernel reports the accept queue length here.
        Ok(info.tcpi_unacked)
    }

    /// Waits (untimed) until the partner has accepted every connection.
    fn drain(&self) -> Result<(), BenchError> {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let queued = self.queued()?;
            if queued == 0 {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(BenchError::Os {
                    what: "tcp-connect".to_string(),
                    error: io::Error::new(
                        io::ErrorKind::TimedOut,
                        format!("the partner left {queued} connections unaccepted for 5 s"),
                    ),
                });
            }
            std::thread::sleep(Duration::from_micros(200));
        }
    }

    /// One connection: socket, SO_LINGER 0, connect, close.
    fn connect_once(&self) -> Result<(), BenchError> {
        // SAFETY: socket has no memory preconditions.
        let fd = check(
            unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) },
            "tcp-connect: socket",
        )?;
        // SAFETY: fd was just created and is owned by nobody else; it is
        // closed on every error path by the OwnedFd.
        let socket = unsafe { OwnedFd::from_raw_fd(fd) };
        set_option(
            fd,
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            &ABORT,
            "tcp-connect: setsockopt(SO_LINGER)",
        )?;
        // SAFETY: `addr` is a valid sockaddr_in of the size passed.
        let r = unsafe {
            libc::connect(
                fd,
                (&raw const self.addr).cast(),
                size_of::<libc::sockaddr_in>() as libc::socklen_t,
            )
        };
        check(r, "tcp-connect: connect")?;
        // SAFETY: the descriptor is ours and closed exactly once, here.
        let r = unsafe { libc::close(socket.into_raw_fd()) };
        black_box(check(r, "tcp-connect: close")?);
        Ok(())
    }
}

impl Workload for Connect {
    fn run(&mut self, iterations: u64) -> Result<Interval, BenchError> {
        self.drain()?;
        let start = Instant::now();
        for _ in 0..iterations {
            self.connect_once()?;
        }
        Ok(Interval::since(start, iterations as f64))
    }
}

// ------------------------------------------------------------------- tcp-bw

/// tcp-bw (lmbench bw_tcp): ipc's stream of 64 KiB blocks over a loopback
/// TCP connection. Socket buffers keep the kernel's defaults (autotuned).
fn tcp_bw(options: &Options) -> Result<Stream, BenchError> {
    let pinning = Pinning::new(options)?;
    let (client, server) = tcp_pair(false)?;
    Stream::over(
        "tcp-bw",
        Link::sockets(client.into(), server.into()),
        pinning,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{
        assert_gone, assert_plausible, canonical, children, exited, invalid, key, options, serial,
        two_cpus,
    };
    use std::fs::File;

    /// Latency bounds in us: 1 us to 100 ms per round trip.
    const LAT: (f64, f64) = (1.0, 100_000.0);
    /// Bandwidth bounds in MB/s.
    const BW: (f64, f64) = (1.0, 1e6);

    /// Bounds are generous: other test families load the CPUs meanwhile,
    /// and a pinned partner may wait milliseconds for its CPU.
    fn plausible(id: &str, options: &[(&str, &str)], (low, high): (f64, f64)) {
        assert_plausible(id, options, low, high);
    }

    #[test]
    fn udp_lat_is_plausible() {
        plausible("udp-lat", &[], LAT);
        plausible("udp-lat", &[("placement", "same")], LAT);
    }

    #[test]
    fn tcp_lat_is_plausible() {
        plausible("tcp-lat", &[], LAT);
        plausible("tcp-lat", &[("placement", "same")], LAT);
        plausible("tcp-lat", &[("placement", "free")], LAT);
    }

    #[test]
    fn tcp_connect_is_plausible() {
        plausible("tcp-connect", &[], LAT);
    }

    #[test]
    fn tcp_bw_is_plausible() {
        plausible("tcp-bw", &[], BW);
        plausible("tcp-bw", &[("placement", "same")], BW);
    }

    #[test]
    fn defaults_and_canonical_keys() {
        let expected = if two_cpus() { "cross" } else { "same" };
        for id in ["udp-lat", "tcp-lat", "tcp-bw"] {
            assert_eq!(canonical(id), format!("{id}[placement={expected}]"));
        }
        assert_eq!(canonical("tcp-connect"), "tcp-connect");
    }

    #[test]
    fn rejects_invalid_options() {
        for id in ["udp-lat", "tcp-lat", "tcp-bw"] {
            assert_eq!(invalid(id, &[("placement", "xyz")]), "placement");
            assert_eq!(invalid(id, &[("placement", "")]), "placement");
            assert_eq!(invalid(id, &[("size", "1")]), "size");
        }
        assert_eq!(
            invalid("tcp-connect", &[("placement", "same")]),
            "placement"
        );
    }

    #[test]
    fn cross_needs_two_cpus() {
        if two_cpus() {
            return;
        }
        for id in ["udp-lat", "tcp-lat", "tcp-bw"] {
            let info = crate::find(id).unwrap();
            let (_, o) = info.resolve(&key(id, &[("placement", "cross")])).unwrap();
            assert!(matches!(info.prepare(&o), Err(BenchError::Skip(_))), "{id}");
        }
    }

    fn free() -> Options {
        options(&[("placement", "free")], &[PLACEMENT])
    }

    #[test]
    fn dropping_reaps_every_partner() {
        let mut w = UdpLat::new(&free(), std::process::id(), PARTNER_POLL).unwrap();
        w.run(10).unwrap();
        let udp = w._partner.pid();
        assert!(children().contains(&udp));
        drop(w);

        let mut w = tcp_lat(&free()).unwrap();
        w.run(10).unwrap();
        let tcp = w._partner.pid();
        drop(w);

        let mut w = Connect::new(std::process::id(), PARTNER_POLL).unwrap();
        w.run(10).unwrap();
        let connect = w._partner.pid();
        drop(w);

        let mut w = tcp_bw(&free()).unwrap();
        w.run(3).unwrap();
        let bw = w._partner.pid();
        drop(w);
        assert_gone(&[udp, tcp, connect, bw]);
    }

    /// Closes the workload's socket `fd` for real (unread data and all, as
    /// dropping does) while keeping the descriptor number valid: /dev/null
    /// is duplicated onto it, for the workload's OwnedFd to close later.
    fn shut(fd: RawFd) {
        let null = File::open("/dev/null").unwrap();
        // SAFETY: both descriptors are open; dup2 atomically closes the
        // socket behind `fd` and makes `fd` refer to /dev/null.
        assert_eq!(unsafe { libc::dup2(null.as_raw_fd(), fd) }, fd);
    }

    /// Partners on a connection exit by themselves when our end closes.
    #[test]
    fn tcp_partners_exit_on_close() {
        let mut w = tcp_lat(&free()).unwrap();
        w.run(10).unwrap();
        shut(w.tx);
        assert!(
            exited(w._partner.wait_exit(Duration::from_secs(5))),
            "echo partner"
        );

        let mut w = tcp_bw(&free()).unwrap();
        w.run(3).unwrap();
        shut(w.rx);
        assert!(
            exited(w._partner.wait_exit(Duration::from_secs(5))),
            "writer partner"
        );
    }

    /// Partners blocked in recv or accept exit by themselves once they are
    /// no longer children of the process they serve (here: one that never
    /// was their parent).
    #[test]
    fn orphaned_partners_exit() {
        let not_our_parent = i32::MAX as u32;
        let poll = Duration::from_millis(20);
        let mut w = UdpLat::new(&free(), not_our_parent, poll).unwrap();
        assert!(
            exited(w._partner.wait_exit(Duration::from_secs(5))),
            "udp echo"
        );
        let mut w = Connect::new(not_our_parent, poll).unwrap();
        assert!(
            exited(w._partner.wait_exit(Duration::from_secs(5))),
            "acceptor"
        );

        // With the right parent they wait through the timeouts.
        let mut w = UdpLat::new(&free(), std::process::id(), poll).unwrap();
        std::thread::sleep(poll * 5);
        w.run(10).unwrap();
        let mut w = Connect::new(std::process::id(), poll).unwrap();
        std::thread::sleep(poll * 5);
        w.run(10).unwrap();
    }

    /// Sockets of this network namespace in TIME_WAIT with `port` at either
    /// end, from /proc/net/tcp.
    fn time_wait(port: u16) -> usize {
        let text = std::fs::read_to_string("/proc/net/tcp").unwrap();
        let port = format!(":{port:04X}");
        text.lines()
            .skip(1)
            .filter(|line| {
                let fields: Vec<&str> = line.split_whitespace().collect();
                fields.len() > 3
                    && fields[3] == "06"
                    && (fields[1].ends_with(&port) || fields[2].ends_with(&port))
            })
            .count()
    }

    /// The abortive close leaves no TIME_WAIT socket behind, so long runs
    /// cannot exhaust the ephemeral ports.
    #[test]
    fn connect_leaves_no_time_wait() {
        let _serial = serial();
        let mut w = Connect::new(std::process::id(), PARTNER_POLL).unwrap();
        let port = u16::from_be(w.addr.sin_port);
        for _ in 0..4 {
            w.run(500).unwrap();
        }
        w.drain().unwrap();
        assert_eq!(w.queued().unwrap(), 0);
        assert_eq!(time_wait(port), 0, "TIME_WAIT sockets on port {port}");
    }
}
