//! Two-task workloads, the measuring thread and one partner process over a
//! [`Link`]: the 1-byte round trip to an echoing partner (pipe-lat,
//! unix-lat, tcp-lat) and the stream of 64 KiB blocks from a writing partner
//! (pipe-bw, unix-bw, tcp-bw). The ipc family runs them over pipes and
//! socketpairs, the net family over loopback TCP.

use crate::shared::placement::Pinning;
use crate::sys::fd::{self, raw};
use crate::sys::partner::Partner;
use crate::{BenchError, Interval, Options, Workload};
use std::hint::black_box;
use std::os::fd::{OwnedFd, RawFd};
use std::time::Instant;

/// The transfer block of the bandwidth benchmarks (lmbench's 64 KiB).
const BLOCK: usize = 64 * 1024;

/// What a [`Link`] of the ipc family is made of.
#[derive(Clone, Copy)]
pub(crate) enum Channel {
    /// Two pipes, one each way.
    Pipes,
    /// One AF_UNIX stream socketpair.
    Socket,
}

/// Connected descriptors: the measuring side's `(tx, rx)` and the partner's
/// `(rx, tx)`. With a socket, tx and rx of a side are one descriptor.
pub(crate) struct Link {
    mine: Vec<OwnedFd>,
    my_tx: RawFd,
    my_rx: RawFd,
    theirs: Vec<OwnedFd>,
    their_tx: RawFd,
    their_rx: RawFd,
}

impl Link {
    /// A new pipe pair or socketpair.
    fn new(channel: Channel) -> Result<Link, BenchError> {
        match channel {
            Channel::Pipes => {
                let (down_rx, down_tx) = fd::pipe()?;
                let (up_rx, up_tx) = fd::pipe()?;
                Ok(Link {
                    my_tx: raw(&down_tx),
                    my_rx: raw(&up_rx),
                    their_tx: raw(&up_tx),
                    their_rx: raw(&down_rx),
                    mine: vec![down_tx, up_rx],
                    theirs: vec![up_tx, down_rx],
                })
            }
            Channel::Socket => {
                let (a, b) = fd::socketpair()?;
                Ok(Link::sockets(a, b))
            }
        }
    }

    /// Two connected sockets: ours and the partner's.
    pub(crate) fn sockets(mine: OwnedFd, theirs: OwnedFd) -> Link {
        Link {
            my_tx: raw(&mine),
            my_rx: raw(&mine),
            their_tx: raw(&theirs),
            their_rx: raw(&theirs),
            mine: vec![mine],
            theirs: vec![theirs],
        }
    }
}

/// pipe-lat / unix-lat (and net's tcp-lat): the measuring side writes one
/// byte, the partner echoes it back; one iteration is one round trip.
pub(crate) struct RoundTrip {
    id: &'static str,
    pub(crate) tx: RawFd,
    rx: RawFd,
    // Field order is drop order: our ends close first (the partner sees
    // EOF), then the partner is killed and reaped, then we are unpinned.
    _ends: Vec<OwnedFd>,
    pub(crate) _partner: Partner,
    _pinning: Pinning,
}

impl RoundTrip {
    /// The round trip over a new `channel`, placed as `options` say.
    pub(crate) fn new(
        id: &'static str,
        channel: Channel,
        options: &Options,
    ) -> Result<RoundTrip, BenchError> {
        let pinning = Pinning::new(options)?;
        RoundTrip::over(id, Link::new(channel)?, pinning)
    }

    /// Forks the echo partner on `link` and pins it. It exits by itself on
    /// EOF, when our ends close.
    pub(crate) fn over(
        id: &'static str,
        link: Link,
        pinning: Pinning,
    ) -> Result<RoundTrip, BenchError> {
        let (rx, tx) = (link.their_rx, link.their_tx);
        let partner = Partner::spawn(&[rx, tx], || {
            let mut byte = 0u8;
            while fd::child_read_byte(rx, &mut byte) && fd::child_write_all(tx, &[byte]) {}
        })?;
        // The partner's ends stay open only in the partner.
        drop(link.theirs);
        pinning.pin_partner(partner.pid())?;
        Ok(RoundTrip {
            id,
            tx: link.my_tx,
            rx: link.my_rx,
            _ends: link.mine,
            _partner: partner,
            _pinning: pinning,
        })
    }
}

impl Workload for RoundTrip {
    fn run(&mut self, iterations: u64) -> Result<Interval, BenchError> {
        let mut byte = [b'x'];
        let start = Instant::now();
        for _ in 0..iterations {
            fd::write_all(self.tx, &byte, self.id)?;
            fd::read_exact(self.rx, &mut byte, self.id)?;
        }
        let interval = Interval::since(start, iterations as f64);
        black_box(byte);
        Ok(interval)
    }
}

/// pipe-bw / unix-bw (and net's tcp-bw): a writer process writes 64 KiB
/// chunks as fast as it can; one iteration reads one whole 64 KiB block
/// (however many reads that takes); the work is the bytes read.
pub(crate) struct Stream {
    id: &'static str,
    pub(crate) rx: RawFd,
    buf: Vec<u8>,
    _ends: Vec<OwnedFd>,
    pub(crate) _partner: Partner,
    _pinning: Pinning,
}

impl Stream {
    /// The stream over a new `channel`, placed as `options` say.
    pub(crate) fn new(
        id: &'static str,
        channel: Channel,
        options: &Options,
    ) -> Result<Stream, BenchError> {
        let pinning = Pinning::new(options)?;
        Stream::over(id, Link::new(channel)?, pinning)
    }

    /// Forks the writer partner on `link` and pins it. It exits by itself
    /// (EPIPE, ECONNRESET) when our ends close.
    pub(crate) fn over(
        id: &'static str,
        link: Link,
        pinning: Pinning,
    ) -> Result<Stream, BenchError> {
        // The writer's chunk is allocated and touched here: the child may
        // not allocate.
        let chunk = vec![b'k'; BLOCK];
        let tx = link.their_tx;
        let partner = Partner::spawn(&[tx], || while fd::child_write_all(tx, &chunk) {})?;
        drop(chunk);
        drop(link.theirs);
        pinning.pin_partner(partner.pid())?;
        Ok(Stream {
            id,
            rx: link.my_rx,
            buf: vec![0; BLOCK],
            _ends: link.mine,
            _partner: partner,
            _pinning: pinning,
        })
    }
}

impl Workload for Stream {
    fn run(&mut self, iterations: u64) -> Result<Interval, BenchError> {
        let start = Instant::now();
        for _ in 0..iterations {
            fd::read_exact(self.rx, &mut self.buf, self.id)?;
        }
        let interval = Interval::since(start, (iterations * BLOCK as u64) as f64);
        black_box(&self.buf);
        Ok(interval)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shared::placement::PLACEMENT;
    use crate::testing::{assert_gone, children, exited, options};
    use std::time::Duration;

    #[test]
    fn dropping_reaps_the_partner() {
        let free = options(&[("placement", "free")], &[PLACEMENT]);
        for channel in [Channel::Pipes, Channel::Socket] {
            let mut w = RoundTrip::new("pipe-lat", channel, &free).unwrap();
            w.run(10).unwrap();
            let pid = w._partner.pid();
            assert!(children().contains(&pid));
            drop(w);
            assert_gone(&[pid]);

            let mut w = Stream::new("pipe-bw", channel, &free).unwrap();
            w.run(3).unwrap();
            let pid = w._partner.pid();
            drop(w);
            assert_gone(&[pid]);
        }
    }

    /// A partner whose peer closes its ends exits by itself with status 0,
    /// as it would if the measuring process died.
    #[test]
    fn partners_exit_on_eof() {
        let free = options(&[("placement", "free")], &[PLACEMENT]);
        for channel in [Channel::Pipes, Channel::Socket] {
            let mut w = RoundTrip::new("pipe-lat", channel, &free).unwrap();
            w.run(10).unwrap();
            w._ends.clear();
            assert!(
                exited(w._partner.wait_exit(Duration::from_secs(5))),
                "echo partner"
            );

            let mut w = Stream::new("pipe-bw", channel, &free).unwrap();
            w.run(3).unwrap();
            w._ends.clear();
            assert!(
                exited(w._partner.wait_exit(Duration::from_secs(5))),
                "writer partner"
            );
        }
    }
}
