//! stress-ng / aim9 / hackbench / sysbench style benchmarks (as Phoronix and
//! 004): the kernel paths those suites exercise, measured with kbench's
//! timing rules (setup before timing, calibrated intervals, real syscalls).
//!
//! - [`vm`]: `madvise`, `vm-splice`, `memfd` (stress-ng stressors).
//! - [`calls`]: `poll`, `get` (stress-ng stressors).
//! - [`aim9`]: `brk-test`, `page-test` (aim9 tests). The brk loops run in a
//!   dedicated child process: see [`aim9`] for why. aim9's `exec-test` is
//!   the `fork-exec` loop of [`crate::shared::spawn`], counted as loads per
//!   second.
//! - [`hackbench`]: `messaging` (hackbench), one iteration is a whole run.
//! - [`mutex`]: `mutex-contend` (sysbench `mutex` style).
//!
//! Every workload releases what it made (children, threads, mappings,
//! descriptors, temporary files) when dropped, also after a failed `run`.

mod aim9;
mod calls;
mod hackbench;
mod mutex;
mod vm;
mod xorshift;

use crate::shared::mode::MODES;
use crate::shared::spawn::prepare_exit0;
use crate::{BenchInfo, Direction, OptionKind, OptionSpec, Unit};

pub const BENCHES: &[BenchInfo] = &[
    BenchInfo {
        id: "madvise",
        unit: Unit::Rate("ops/s"),
        direction: Direction::Higher,
        summary: "one madvise(2) of a random page of a 4 MiB MAP_SHARED read-only file mapping, \
                  random advice of NORMAL/RANDOM/SEQUENTIAL/WILLNEED/DONTNEED (fixed seed)",
        options: &[],
        one_task: false,
        in_measuring_task: true,
        prepare: |_| Ok(Box::new(vm::Madvise::new()?)),
    },
    BenchInfo {
        id: "vm-splice",
        unit: Unit::MegabytesPerSec,
        direction: Direction::Higher,
        summary: "vmsplice 64 KiB of a page-aligned user buffer into a 64 KiB pipe, splice it to /dev/null",
        options: &[],
        one_task: false,
        in_measuring_task: true,
        prepare: |_| Ok(Box::new(vm::VmSplice::new()?)),
    },
    BenchInfo {
        id: "memfd",
        unit: Unit::Rate("ops/s"),
        direction: Direction::Higher,
        summary: "memfd_create + ftruncate 64 KiB + mmap MAP_SHARED + write a byte per page + munmap + close",
        options: &[],
        one_task: false,
        in_measuring_task: true,
        prepare: |_| Ok(Box::new(vm::Memfd::new()?)),
    },
    BenchInfo {
        id: "poll",
        unit: Unit::Rate("ops/s"),
        direction: Direction::Higher,
        summary: "zero-timeout poll, ppoll and select (one op each) over the read ends of 5 pipes, 3 of them readable",
        options: &[],
        one_task: false,
        in_measuring_task: true,
        prepare: |_| Ok(Box::new(calls::Poll::new()?)),
    },
    BenchInfo {
        id: "get",
        unit: Unit::Rate("ops/s"),
        direction: Direction::Higher,
        summary: "a fixed mix of 16 get* system calls (getpid .. getrusage(RUSAGE_THREAD), uname), one op each",
        options: &[],
        one_task: false,
        in_measuring_task: true,
        prepare: |_| Ok(Box::new(calls::Get::new())),
    },
    BenchInfo {
        id: "brk-test",
        unit: Unit::Rate("calls/s"),
        direction: Direction::Higher,
        summary: "aim9 brk_test in a child process: brk shrinks 16 pages (64 KiB), then 16 brk grows of one page",
        options: &[],
        one_task: false,
        in_measuring_task: false,
        prepare: |_| Ok(Box::new(aim9::Brk::new(false)?)),
    },
    BenchInfo {
        id: "page-test",
        unit: Unit::Rate("pages/s"),
        direction: Direction::Higher,
        summary: "aim9 page_test in a child process: as brk-test, writing a byte to each new page (THP off)",
        options: &[],
        one_task: false,
        in_measuring_task: false,
        prepare: |_| Ok(Box::new(aim9::Brk::new(true)?)),
    },
    BenchInfo {
        id: "exec-test",
        unit: Unit::Rate("loads/s"),
        direction: Direction::Higher,
        summary: "aim9 exec_test: fork(); the child execve()s a minimal static ELF calling exit_group(0); waitpid()",
        options: &[],
        one_task: false,
        in_measuring_task: true,
        prepare: |_| prepare_exit0("exec-test"),
    },
    BenchInfo {
        id: "messaging",
        unit: Unit::Seconds,
        direction: Direction::Lower,
        summary: "hackbench: G groups of 20 senders and 20 receivers; each sender writes 100 messages of \
                  100 bytes to each receiver of its group; time from the start signal until all are reaped",
        options: &[
            OptionSpec {
                name: "groups",
                kind: OptionKind::Whole {
                    min: 1,
                    max: hackbench::MAX_GROUPS,
                },
                default: || "4".to_string(),
                help: "groups of 20 senders + 20 receivers (at most 4000 tasks); hackbench's default is 10",
            },
            OptionSpec {
                name: "ipc",
                kind: OptionKind::Choice(hackbench::IPCS),
                default: || "pipe".to_string(),
                help: "pipe: one pipe per receiver; socket: one AF_UNIX stream socketpair per receiver",
            },
            OptionSpec {
                name: "mode",
                kind: MODES,
                default: || "process".to_string(),
                help: "process: every sender and receiver is a forked process; thread: a thread",
            },
        ],
        one_task: false,
        in_measuring_task: false,
        prepare: |o| Ok(Box::new(hackbench::Messaging::new(o)?)),
    },
    BenchInfo {
        id: "mutex-contend",
        unit: Unit::Rate("ops/s"),
        direction: Direction::Higher,
        summary: "N threads share a fixed number of ops, sysbench-mutex style: pthread_mutex_lock, bump a \
                  shared counter, unlock, then a 100-step spin",
        options: &[OptionSpec {
            name: "threads",
            kind: OptionKind::Whole {
                min: 1,
                max: mutex::MAX_THREADS,
            },
            default: || "2".to_string(),
            help: "threads contending for the one mutex (the measuring thread is one of them)",
        }],
        one_task: false,
        in_measuring_task: false,
        prepare: |o| Ok(Box::new(mutex::MutexContend::new(o)?)),
    },
];

#[cfg(test)]
mod tests {
    use crate::testing::{self, assert_no_children, assert_temp_dir_gone, canonical, invalid};

    /// The values are plausible and the workload left no child behind.
    fn assert_plausible(id: &str, options: &[(&str, &str)], low: f64, high: f64) {
        testing::assert_plausible(id, options, low, high);
        assert_no_children();
    }

    #[test]
    fn madvise_is_plausible_and_cleans_up() {
        assert_plausible("madvise", &[], 1e3, 1e9);
        assert_temp_dir_gone();
    }

    #[test]
    fn vm_splice_is_plausible() {
        assert_plausible("vm-splice", &[], 10.0, 1e6);
    }

    #[test]
    fn memfd_is_plausible() {
        assert_plausible("memfd", &[], 100.0, 1e8);
    }

    #[test]
    fn poll_is_plausible() {
        assert_plausible("poll", &[], 1e4, 1e9);
    }

    #[test]
    fn get_is_plausible() {
        assert_plausible("get", &[], 1e4, 1e10);
    }

    #[test]
    fn brk_test_is_plausible() {
        assert_plausible("brk-test", &[], 1e3, 1e9);
    }

    #[test]
    fn page_test_is_plausible() {
        assert_plausible("page-test", &[], 1e3, 1e9);
    }

    #[test]
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    fn exec_test_is_plausible_and_cleans_up() {
        assert_plausible("exec-test", &[], 10.0, 1e6);
        assert_temp_dir_gone();
    }

    #[test]
    fn messaging_is_plausible() {
        for ipc in ["pipe", "socket"] {
            for mode in ["process", "thread"] {
                let options = [("groups", "1"), ("ipc", ipc), ("mode", mode)];
                assert_plausible("messaging", &options, 1e-4, 30.0);
            }
        }
    }

    #[test]
    fn mutex_contend_is_plausible() {
        for threads in ["1", "2", "4"] {
            assert_plausible("mutex-contend", &[("threads", threads)], 1e3, 1e10);
        }
    }

    #[test]
    fn defaults_and_canonical_keys() {
        assert_eq!(
            canonical("messaging"),
            "messaging[groups=4,ipc=pipe,mode=process]"
        );
        assert_eq!(canonical("mutex-contend"), "mutex-contend[threads=2]");
        for id in [
            "madvise",
            "vm-splice",
            "memfd",
            "poll",
            "get",
            "brk-test",
            "page-test",
            "exec-test",
        ] {
            assert_eq!(canonical(id), id);
        }
    }

    #[test]
    fn rejects_invalid_options() {
        assert_eq!(invalid("messaging", &[("groups", "0")]), "groups");
        assert_eq!(invalid("messaging", &[("groups", "101")]), "groups");
        assert_eq!(invalid("messaging", &[("groups", "x")]), "groups");
        assert_eq!(invalid("messaging", &[("ipc", "xyz")]), "ipc");
        assert_eq!(invalid("messaging", &[("mode", "xyz")]), "mode");
        assert_eq!(invalid("messaging", &[("loops", "5")]), "loops");
        assert_eq!(invalid("mutex-contend", &[("threads", "0")]), "threads");
        assert_eq!(invalid("mutex-contend", &[("threads", "1025")]), "threads");
        assert_eq!(invalid("mutex-contend", &[("threads", "-1")]), "threads");
        assert_eq!(invalid("madvise", &[("size", "4")]), "size");
        assert_eq!(invalid("get", &[("threads", "2")]), "threads");
    }
}
