//! Memory bandwidth (lmbench bw_mem): sequential passes over a buffer larger
//! than the last-level cache.

use crate::sys::memory::available_memory;
use crate::{
    BenchError, BenchInfo, Direction, Interval, OptionKind, OptionSpec, Options, Unit, Workload,
};
use std::hint::black_box;
use std::io;
use std::time::Instant;

const MIB: usize = 1024 * 1024;

/// The largest buffer mem-bw accepts, in MiB.
const MAX_SIZE_MIB: u64 = 1 << 20;

pub const BENCHES: &[BenchInfo] = &[BenchInfo {
    id: "mem-bw",
    unit: Unit::MegabytesPerSec,
    direction: Direction::Higher,
    summary: "one sequential pass over a buffer larger than the LLC: rd sums its u64 words, \
              wr stores every word, cp copies it to a second buffer (bytes copied counted once)",
    options: &[
        OptionSpec {
            name: "op",
            kind: OptionKind::Choice(&["rd", "wr", "cp"]),
            default: || "rd".to_string(),
            help: "rd: sum the u64 words; wr: store every word; cp: copy_from_slice into a second buffer of the same size",
        },
        OptionSpec {
            name: "size",
            kind: OptionKind::Whole {
                min: 1,
                max: MAX_SIZE_MIB,
            },
            default: || "64".to_string(),
            help: "buffer size in MiB (each of the two for cp); default 64, above common LLC sizes",
        },
    ],
    one_task: true,
    in_measuring_task: true,
    prepare: |o| Ok(Box::new(MemBw::new(o)?)),
}];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Read,
    Write,
    Copy,
}

/// One iteration is one pass over `src`; the work is `src`'s size in bytes,
/// also for `cp`, which reads as many bytes again as it writes (lmbench
/// bw_mem counts a copy's bytes once, too).
struct MemBw {
    op: Op,
    src: Vec<u64>,
    /// The destination of `cp`; empty otherwise.
    dst: Vec<u64>,
    /// Passes so far: the value `wr` stores changes every pass.
    passes: u64,
}

/// A buffer of `words` words, allocated and written (every page touched)
/// here, so that no page fault lands in a timed pass.
fn touched_buffer(words: usize, fill: u64) -> Result<Vec<u64>, BenchError> {
    let mut buf = Vec::new();
    buf.try_reserve_exact(words).map_err(|e| BenchError::Os {
        what: format!("mem-bw: allocating {} MiB", words * 8 / MIB),
        error: io::Error::new(io::ErrorKind::OutOfMemory, e.to_string()),
    })?;
    buf.resize(words, fill);
    Ok(buf)
}

impl MemBw {
    fn new(options: &Options) -> Result<MemBw, BenchError> {
        let op = match options.choice("op") {
            "rd" => Op::Read,
            "wr" => Op::Write,
            _ => Op::Copy,
        };
        let size_mib = options.number("size");
        let buffers = if op == Op::Copy { 2 } else { 1 };
        let needed = size_mib * MIB as u64 * buffers;
        // Leave a quarter of the available memory alone (no OOM killer).
        let available = available_memory().unwrap_or(u64::MAX);
        if needed > available / 4 * 3 {
            return Err(BenchError::Skip(format!(
                "mem-bw needs {} MiB, only {} MiB of memory is available",
                needed / MIB as u64,
                available / MIB as u64
            )));
        }
        let words = usize::try_from(size_mib)
            .ok()
            .and_then(|mib| mib.checked_mul(MIB / size_of::<u64>()))
            .ok_or_else(|| BenchError::InvalidOption {
                option: "size".to_string(),
                reason: format!("{size_mib} MiB does not fit in the address space"),
            })?;
        let src = touched_buffer(words, 0x0101_0101_0101_0101)?;
        let dst = if op == Op::Copy {
            touched_buffer(words, 0)?
        } else {
            Vec::new()
        };
        Ok(MemBw {
            op,
            src,
            dst,
            passes: 0,
        })
    }

    fn bytes(&self) -> u64 {
        (self.src.len() * size_of::<u64>()) as u64
    }
}

impl Workload for MemBw {
    fn run(&mut self, iterations: u64) -> Result<Interval, BenchError> {
        let start = Instant::now();
        match self.op {
            Op::Read => {
                for _ in 0..iterations {
                    let sum = black_box(&self.src)
                        .iter()
                        .fold(0u64, |s, &w| s.wrapping_add(w));
                    black_box(sum);
                }
            }
            Op::Write => {
                for _ in 0..iterations {
                    // A value unknown at compile time: plain stores, not a
                    // memset the compiler could pick for a constant byte.
                    let value = black_box(self.passes);
                    self.src.fill(value);
                    black_box(&mut self.src);
                    self.passes += 1;
                }
            }
            Op::Copy => {
                for _ in 0..iterations {
                    self.dst.copy_from_slice(black_box(&self.src));
                    black_box(&mut self.dst);
                }
            }
        }
        Ok(Interval::since(start, (iterations * self.bytes()) as f64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::TestKey;
    use crate::testing::{self, key};

    /// One pass over the buffer (bytes copied counted once for cp) in MB/s.
    fn plausible(options: &[(&str, &str)]) {
        testing::assert_plausible("mem-bw", options, 100.0, 1e6);
    }

    #[test]
    fn read_is_plausible() {
        plausible(&[]);
    }

    #[test]
    fn write_is_plausible() {
        plausible(&[("op", "wr")]);
    }

    #[test]
    fn copy_is_plausible() {
        plausible(&[("op", "cp")]);
    }

    #[test]
    fn defaults_and_work() {
        let info = crate::find("mem-bw").unwrap();
        let (canonical, opts) = info.resolve(&TestKey::new("mem-bw")).unwrap();
        assert_eq!(canonical.test_name(), "mem-bw[op=rd,size=64]");
        let (_, small) = info
            .resolve(&key("mem-bw", &[("op", "cp"), ("size", "2")]))
            .unwrap();
        let mut w = MemBw::new(&small).unwrap();
        assert_eq!(w.dst.len(), w.src.len());
        let interval = w.run(3).unwrap();
        assert_eq!(
            interval.work,
            (3 * 2 * MIB) as f64,
            "a copy counts its bytes once"
        );
        assert_eq!(w.dst, w.src);
        let mut w = MemBw::new(&opts).unwrap();
        assert_eq!(w.run(1).unwrap().work, (64 * MIB) as f64);
    }

    #[test]
    fn write_stores_every_word() {
        let info = crate::find("mem-bw").unwrap();
        let (_, opts) = info
            .resolve(&key("mem-bw", &[("op", "wr"), ("size", "1")]))
            .unwrap();
        let mut w = MemBw::new(&opts).unwrap();
        w.run(2).unwrap();
        assert!(w.src.iter().all(|&word| word == 1));
    }

    fn invalid(options: &[(&str, &str)]) -> String {
        testing::invalid("mem-bw", options)
    }

    #[test]
    fn rejects_invalid_options() {
        assert_eq!(invalid(&[("op", "xyz")]), "op");
        assert_eq!(invalid(&[("size", "0")]), "size");
        assert_eq!(invalid(&[("size", "lots")]), "size");
        assert_eq!(
            invalid(&[("size", &(MAX_SIZE_MIB + 1).to_string())]),
            "size"
        );
        assert_eq!(invalid(&[("placement", "same")]), "placement");
    }

    #[test]
    fn skips_when_memory_is_short() {
        let info = crate::find("mem-bw").unwrap();
        let (_, opts) = info
            .resolve(&key("mem-bw", &[("size", &MAX_SIZE_MIB.to_string())]))
            .unwrap();
        match MemBw::new(&opts) {
            Err(BenchError::Skip(reason)) => assert!(reason.contains("MiB"), "{reason}"),
            Err(other) => panic!("{other}"),
            Ok(_) => panic!("allocated 1 TiB"),
        }
    }
}
