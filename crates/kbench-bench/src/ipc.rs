//! IPC benchmarks (lmbench family): pipe and AF_UNIX latency and bandwidth
//! against a partner process, and lat_ctx-style context switches around a
//! ring of processes.
//!
//! Every partner is forked in `prepare` and reaped when the workload is
//! dropped (see [`crate::sys::partner`]); `run` times only the loop. The
//! latency and bandwidth loops are the two-task workloads of
//! [`crate::shared::pair`], run here over pipes and socketpairs.

use crate::shared::pair::{Channel, RoundTrip, Stream};
use crate::shared::placement::{self, PLACEMENT, Pinning};
use crate::sys::fd::{self, raw};
use crate::sys::partner::Partner;
use crate::{
    BenchError, BenchInfo, Direction, Interval, OptionKind, OptionSpec, Options, Unit, Workload,
};
use std::hint::black_box;
use std::os::fd::{OwnedFd, RawFd};
use std::time::Instant;

/// ctxsw's placement: `same` by default, on every machine. Unpinned, the
/// ring's processes wander between CPUs and every cross-CPU wakeup (~35 us on
/// a VM) lands in the number, which then flips between two levels.
const RING_PLACEMENT: OptionSpec = OptionSpec {
    name: placement::OPTION,
    kind: placement::KIND,
    default: || "same".to_string(),
    help: placement::RING_HELP,
};

const PROCS: OptionSpec = OptionSpec {
    name: "procs",
    kind: OptionKind::Whole { min: 2, max: 64 },
    default: || "2".to_string(),
    help: "processes in the ring (the measuring process is one of them)",
};

const SIZE_KIB: OptionSpec = OptionSpec {
    name: "size",
    kind: OptionKind::Whole { min: 0, max: 4096 },
    default: || "0".to_string(),
    help: "KiB of its own buffer each process sums per hop",
};

pub const BENCHES: &[BenchInfo] = &[
    BenchInfo {
        id: "pipe-lat",
        unit: Unit::Micros,
        direction: Direction::Lower,
        summary: "1-byte round trip through two pipes to an echoing partner process",
        options: &[PLACEMENT],
        one_task: false,
        in_measuring_task: true,
        prepare: |o| Ok(Box::new(RoundTrip::new("pipe-lat", Channel::Pipes, o)?)),
    },
    BenchInfo {
        id: "unix-lat",
        unit: Unit::Micros,
        direction: Direction::Lower,
        summary: "1-byte round trip over an AF_UNIX stream socketpair to an echoing partner process",
        options: &[PLACEMENT],
        one_task: false,
        in_measuring_task: true,
        prepare: |o| Ok(Box::new(RoundTrip::new("unix-lat", Channel::Socket, o)?)),
    },
    BenchInfo {
        id: "ctxsw",
        unit: Unit::Micros,
        direction: Direction::Lower,
        summary: "one hop of a 1-byte token around a pipe ring of N processes (default: all pinned to one CPU), \
                  each summing K KiB; includes the pipe read+write (nothing subtracted)",
        options: &[RING_PLACEMENT, PROCS, SIZE_KIB],
        one_task: false,
        in_measuring_task: true,
        prepare: |o| Ok(Box::new(Ring::new(o)?)),
    },
    BenchInfo {
        id: "pipe-bw",
        unit: Unit::MegabytesPerSec,
        direction: Direction::Higher,
        summary: "64 KiB blocks read from a pipe fed by a writer process",
        options: &[PLACEMENT],
        one_task: false,
        in_measuring_task: true,
        prepare: |o| Ok(Box::new(Stream::new("pipe-bw", Channel::Pipes, o)?)),
    },
    BenchInfo {
        id: "unix-bw",
        unit: Unit::MegabytesPerSec,
        direction: Direction::Higher,
        summary: "64 KiB blocks read from an AF_UNIX stream socketpair fed by a writer process",
        options: &[PLACEMENT],
        one_task: false,
        in_measuring_task: true,
        prepare: |o| Ok(Box::new(Stream::new("unix-bw", Channel::Socket, o)?)),
    },
];

/// ctxsw (lmbench lat_ctx): processes 0..N in a ring of pipes, pipe i going
/// from process i to process i+1 (mod N); the measuring process is process
/// 0. Each process, on receiving the token, sums its own `size` KiB and
/// passes the token on. One iteration is one trip around the ring (N hops);
/// the work is the hops, so the value is the time per hop, pipe read and
/// write included. `placement=same` (the default) pins every process to one
/// CPU, lmbench's uniprocessor context switch without cross-CPU wakeups;
/// `cross` spreads them round-robin over the allowed CPUs; `free` pins
/// nothing (lmbench does not pin).
struct Ring {
    first_tx: RawFd,
    last_rx: RawFd,
    procs: u64,
    words: usize,
    // Every process's buffer, process i's at `words * i`: allocated and
    // written (so no page is the shared zero page) before the fork.
    buffers: Vec<u64>,
    // Drop order: our ends, then the partners, then the measuring thread's
    // old CPU mask.
    _ends: Vec<OwnedFd>,
    _partners: Vec<Partner>,
    _pinning: Pinning,
}

/// Sums a buffer so the compiler must read it all.
fn touch(words: &[u64]) {
    black_box(words.iter().fold(0u64, |sum, &w| sum.wrapping_add(w)));
}

impl Ring {
    fn new(options: &Options) -> Result<Ring, BenchError> {
        let procs = options.number("procs") as usize;
        let kib = options.number("size") as usize;
        let words = kib * 1024 / size_of::<u64>();
        let pinning = Pinning::spread(options)?;
        let buffers: Vec<u64> = (0..procs * words).map(|i| i as u64 | 1).collect();
        let mut pipes = Vec::with_capacity(procs);
        for _ in 0..procs {
            pipes.push(fd::pipe()?);
        }
        let mut partners = Vec::with_capacity(procs - 1);
        for i in 1..procs {
            let rx = raw(&pipes[i - 1].0);
            let tx = raw(&pipes[i].1);
            let mine = &buffers[i * words..(i + 1) * words];
            let partner = Partner::spawn(&[rx, tx], || {
                let mut byte = 0u8;
                while fd::child_read_byte(rx, &mut byte) {
                    touch(mine);
                    if !fd::child_write_all(tx, &[byte]) {
                        break;
                    }
                }
            })?;
            // Pushed first, so it is reaped even if pinning fails.
            partners.push(partner);
            pinning.pin_process(i, partners[i - 1].pid())?;
        }
        // Keep only our two ends: the rest live in the partners alone, so a
        // closed end cascades EOF around the ring.
        let last = pipes.len() - 1;
        let mut ends = Vec::with_capacity(2);
        for (i, (rx, tx)) in pipes.into_iter().enumerate() {
            if i == 0 {
                ends.push(tx);
            }
            if i == last {
                ends.push(rx);
            }
        }
        Ok(Ring {
            first_tx: raw(&ends[0]),
            last_rx: raw(&ends[1]),
            procs: procs as u64,
            words,
            buffers,
            _ends: ends,
            _partners: partners,
            _pinning: pinning,
        })
    }
}

impl Workload for Ring {
    fn run(&mut self, iterations: u64) -> Result<Interval, BenchError> {
        let mine = &self.buffers[..self.words];
        let mut byte = [b't'];
        let start = Instant::now();
        for _ in 0..iterations {
            fd::write_all(self.first_tx, &byte, "ctxsw")?;
            fd::read_exact(self.last_rx, &mut byte, "ctxsw")?;
            touch(mine);
        }
        Ok(Interval::since(start, (iterations * self.procs) as f64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{
        assert_gone, assert_plausible, canonical, exited, invalid, key, options, serial, two_cpus,
    };
    use std::time::Duration;

    #[test]
    fn pipe_lat_is_plausible() {
        assert_plausible("pipe-lat", &[], 1.0, 10_000.0);
        for placement in ["same", "free"] {
            assert_plausible("pipe-lat", &[("placement", placement)], 1.0, 10_000.0);
        }
    }

    #[test]
    fn unix_lat_is_plausible() {
        assert_plausible("unix-lat", &[], 1.0, 10_000.0);
        assert_plausible("unix-lat", &[("placement", "same")], 1.0, 10_000.0);
    }

    #[test]
    fn ctxsw_is_plausible() {
        assert_plausible("ctxsw", &[], 0.1, 10_000.0);
        assert_plausible("ctxsw", &[("procs", "8"), ("size", "64")], 0.1, 10_000.0);
        assert_plausible("ctxsw", &[("placement", "free")], 0.1, 100_000.0);
        if two_cpus() {
            let cross = [("placement", "cross"), ("procs", "3")];
            assert_plausible("ctxsw", &cross, 0.1, 100_000.0);
        }
    }

    #[test]
    fn pipe_bw_is_plausible() {
        assert_plausible("pipe-bw", &[], 10.0, 1e6);
    }

    #[test]
    fn unix_bw_is_plausible() {
        assert_plausible("unix-bw", &[], 10.0, 1e6);
    }

    #[test]
    fn defaults_and_canonical_keys() {
        assert_eq!(
            canonical("ctxsw"),
            "ctxsw[placement=same,procs=2,size=0]",
            "same on every machine"
        );
        let expected = if two_cpus() { "cross" } else { "same" };
        for id in ["pipe-lat", "unix-lat", "pipe-bw", "unix-bw"] {
            assert_eq!(canonical(id), format!("{id}[placement={expected}]"));
        }
    }

    #[test]
    fn rejects_invalid_options() {
        assert_eq!(invalid("ctxsw", &[("procs", "0")]), "procs");
        assert_eq!(invalid("ctxsw", &[("procs", "1")]), "procs");
        assert_eq!(invalid("ctxsw", &[("procs", "65")]), "procs");
        assert_eq!(invalid("ctxsw", &[("size", "4097")]), "size");
        assert_eq!(invalid("ctxsw", &[("size", "-1")]), "size");
        assert_eq!(invalid("ctxsw", &[("placement", "xyz")]), "placement");
        for id in ["pipe-lat", "unix-lat", "pipe-bw", "unix-bw"] {
            assert_eq!(invalid(id, &[("placement", "abc")]), "placement");
            assert_eq!(invalid(id, &[("procs", "2")]), "procs");
        }
    }

    #[test]
    fn cross_needs_two_cpus() {
        if two_cpus() {
            return;
        }
        let info = crate::find("pipe-lat").unwrap();
        let (_, o) = info
            .resolve(&key("pipe-lat", &[("placement", "cross")]))
            .unwrap();
        match info.prepare(&o) {
            Err(BenchError::Skip(reason)) => {
                assert_eq!(reason, "needs 2 CPUs for placement=cross, have 1")
            }
            Err(other) => panic!("{other}"),
            Ok(_) => panic!("cross ran on 1 CPU"),
        }
    }

    /// The CPUs `pid` (0: this thread) may run on.
    fn mask(pid: libc::pid_t) -> Vec<usize> {
        let mut set = [0u64; 16];
        // SAFETY: `set` is 128 writable bytes, as the size says.
        let r = unsafe { libc::sched_getaffinity(pid, size_of_val(&set), set.as_mut_ptr().cast()) };
        assert_eq!(r, 0);
        (0..1024)
            .filter(|&cpu| set[cpu / 64] & (1 << (cpu % 64)) != 0)
            .collect()
    }

    #[test]
    fn ring_placement_pins_every_process() {
        let _serial = serial();
        let specs = &[RING_PLACEMENT, PROCS, SIZE_KIB];
        let allowed = mask(0);
        let mut ring = Ring::new(&options(&[("procs", "4")], specs)).unwrap();
        ring.run(10).unwrap();
        let mine = mask(0);
        assert_eq!(mine, vec![allowed[0]], "same: the measuring thread");
        for p in &ring._partners {
            assert_eq!(mask(p.pid()), mine, "same: partner {}", p.pid());
        }
        drop(ring);
        assert_eq!(mask(0), allowed, "unpinned on drop");

        let cross = options(&[("placement", "cross"), ("procs", "5")], specs);
        if !two_cpus() {
            assert!(matches!(Ring::new(&cross), Err(BenchError::Skip(_))));
            return;
        }
        let mut ring = Ring::new(&cross).unwrap();
        ring.run(10).unwrap();
        assert_eq!(mask(0), vec![allowed[0]]);
        for (i, p) in ring._partners.iter().enumerate() {
            let k = i + 1;
            assert_eq!(
                mask(p.pid()),
                vec![allowed[k % allowed.len()]],
                "cross: process {k}"
            );
        }
        drop(ring);
        assert_eq!(mask(0), allowed);

        let mut ring = Ring::new(&options(&[("placement", "free")], specs)).unwrap();
        ring.run(10).unwrap();
        assert_eq!(mask(0), allowed, "free pins nothing");
        assert_eq!(mask(ring._partners[0].pid()), allowed);
    }

    /// The pipe-lat and pipe-bw partners: [`crate::shared::pair`]'s tests.
    #[test]
    fn dropping_reaps_every_partner() {
        let mut ring = Ring::new(&options(
            &[("procs", "5"), ("size", "4")],
            &[RING_PLACEMENT, PROCS, SIZE_KIB],
        ))
        .unwrap();
        ring.run(10).unwrap();
        let pids: Vec<_> = ring._partners.iter().map(Partner::pid).collect();
        assert_eq!(pids.len(), 4);
        drop(ring);
        assert_gone(&pids);
    }

    /// A ring partner whose peer closes its ends exits by itself with
    /// status 0, as it would if the measuring process died (the pipe-lat
    /// and pipe-bw partners: [`crate::shared::pair`]'s tests).
    #[test]
    fn partners_exit_on_eof() {
        let mut ring = Ring::new(&options(
            &[("procs", "4"), ("size", "0")],
            &[RING_PLACEMENT, PROCS, SIZE_KIB],
        ))
        .unwrap();
        ring.run(10).unwrap();
        ring._ends.clear();
        for p in &mut ring._partners {
            assert!(exited(p.wait_exit(Duration::from_secs(5))), "ring partner");
        }
    }

    #[test]
    fn pinning_is_undone_on_drop() {
        if !two_cpus() {
            return;
        }
        let _serial = serial();
        let cpus = || mask(0).len();
        let before = cpus();
        let w = RoundTrip::new(
            "pipe-lat",
            Channel::Pipes,
            &options(&[("placement", "cross")], &[PLACEMENT]),
        )
        .unwrap();
        assert_eq!(cpus(), 1);
        drop(w);
        assert_eq!(cpus(), before);
    }
}
