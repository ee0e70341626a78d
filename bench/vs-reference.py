#!/usr/bin/env python3
"""kbench against the reference tools, side by side in one run on this machine.

For each shared metric: the reference tool is invoked ROUNDS times and
kbench runs the matching test in ROUNDS rounds (fresh invocations); the table
shows each one's median over the invocations, its run-to-run CV (SD of the
per-invocation values / mean) and the wall time spent. Called by
bench/vs-reference.sh, which installs the tools first.
"""

import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

ROUNDS = int(os.environ.get("ROUNDS", "5"))
# kbench's time budget per test and round, in seconds (MAX_TIME=3 gives it
# about the wall time the reference tools take).
MAX_TIME = os.environ.get("MAX_TIME", "1")
KBENCH = os.environ.get("KBENCH", "target/release/kbench")


def run(cmd):
    """Runs a command, returns (stdout+stderr text, seconds)."""
    start = time.perf_counter()
    out = subprocess.run(cmd, shell=True, capture_output=True, text=True)
    took = time.perf_counter() - start
    if out.returncode != 0:
        raise RuntimeError(f"{cmd} failed: {out.stderr[-500:]}")
    return out.stdout + out.stderr, took


def number(pattern, text):
    m = re.search(pattern, text, re.M)
    if not m:
        raise RuntimeError(f"no match for {pattern!r} in:\n{text[-800:]}")
    return float(m.group(1))


def stressng(stressor, extra=""):
    """bogo ops/s (real time) from stress-ng --metrics-brief."""
    def measure():
        text, _ = run(f"stress-ng --{stressor} 1 {extra} --timeout 3 --metrics-brief")
        # "stress-ng: info:  [pid] fork  12345  3.00  0.50  2.40  4115.00  4256.99"
        line = [l for l in text.splitlines() if re.search(rf"\] +{re.escape(stressor)} +\d", l)][0]
        return float(line.split()[-2])
    return measure


# (label, kbench test, kbench unit -> reference unit conversion, reference
#  description, reference measuring function returning the reference unit,
#  what differs between the two). Labels ending in "*" compare different
#  operations (stress-ng's bogo ops): their ratio is not a like-for-like check.
CASES = [
    ("syscall getppid, ns", "syscall-null", lambda v: v,
     "perf bench syscall basic",
     lambda: number(r"([\d.]+) usecs/op", run("perf bench syscall basic")[0]) * 1000,
     "same loop body: syscall(SYS_getppid)"),
    ("pipe round trip (1 CPU), us", "pipe-lat[placement=same]", lambda v: v,
     "taskset -c 0 perf bench sched pipe",
     lambda: number(r"([\d.]+) usecs/op", run("taskset -c 0 perf bench sched pipe -l 200000")[0]),
     "same: two processes, 1-byte round trips over two pipes, both on one CPU"),
    ("pipe round trip (2 CPUs), us", "pipe-lat[placement=cross]", lambda v: v,
     "perf bench sched pipe (unpinned)",
     lambda: number(r"([\d.]+) usecs/op", run("perf bench sched pipe -l 50000")[0]),
     "perf does not pin: the scheduler decides whether the two tasks share a CPU"),
    ("messaging 4 groups, sockets, s", "messaging[groups=4,ipc=socket,mode=process]", lambda v: v,
     "perf bench sched messaging -g 4 -l 100",
     lambda: number(r"Total time: ([\d.]+)", run("perf bench sched messaging -g 4 -l 100")[0]),
     "same workload; perf's time includes creating the tasks"),
    ("messaging 4 groups, pipes, s", "messaging[groups=4,ipc=pipe,mode=process]", lambda v: v,
     "hackbench -g 4 -l 100 --pipe",
     lambda: number(r"Time: ([\d.]+)", run("hackbench -g 4 -l 100 --pipe")[0]),
     "same workload (rt-tests hackbench)"),
    ("futex, private, 1 task, ops/s", "futex3[mode=thread,tasks=1]", lambda v: v,
     "perf bench futex hash -t 1 -r 2",
     lambda: number(r"Averaged ([\d.]+) operations/sec", run("perf bench futex hash -t 1 -r 2")[0]),
     "kbench: FUTEX_WAKE with no waiter; perf: FUTEX_WAIT on a changed value (EAGAIN), 1024 futexes; both the hashed fast path"),
    ("fork + exit + wait, ops/s", "fork-exit", lambda v: 1e6 / v,
     "stress-ng --fork 1 --metrics-brief", stressng("fork"),
     "stress-ng forks in a loop, children exit at once; kbench us per fork converted to forks/s"),
    ("mmap, ops/s *", "mmap1[mode=process,tasks=1]", lambda v: v,
     "stress-ng --mmap 1 --metrics-brief", stressng("mmap", "--mmap-bytes 128m"),
     "stress-ng's op also touches, mprotects and msyncs pages; kbench's mmap1 maps and unmaps 128 MiB untouched"),
    ("madvise, ops/s *", "madvise", lambda v: v,
     "stress-ng --madvise 1 --metrics-brief", stressng("madvise"),
     "stress-ng's op maps a region and advises every page; kbench's op is one madvise call"),
    ("vm-splice, transfers/s *", "vm-splice", lambda v: v / (64 * 1024 / 1e6),
     "stress-ng --vm-splice 1 --metrics-brief (ops/s)", stressng("vm-splice"),
     "kbench MB/s converted to 64 KiB transfers/s; stress-ng's op is one vmsplice+splice of its buffer"),
]


def kbench_rounds(tests, db):
    """Per-round means of each test, from kbench's own raw samples."""
    env = dict(os.environ, KBENCH_DB=db)
    start = time.perf_counter()
    subprocess.run([KBENCH, "run", *tests, "--as", "ref", "--into", "ref",
                    "--rounds", str(ROUNDS), "--max-time", MAX_TIME],
                   env=env, check=True, capture_output=True)
    took = time.perf_counter() - start
    doc = json.loads(subprocess.run([KBENCH, "export", "ref"], env=env, check=True,
                                    capture_output=True, text=True).stdout)
    per_test = {}
    for run_ in doc["identifiers"][0]["runs"]:
        for test, samples in run_["samples"].items():
            rounds = per_test.setdefault(test, {})
            for s in samples:
                rounds.setdefault(s["round"], []).append(s["value"])
    means = {t: [statistics.mean(v) for _, v in sorted(r.items())] for t, r in per_test.items()}
    return means, took


def cv(values):
    return statistics.stdev(values) / statistics.mean(values) if len(values) > 1 else float("nan")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "ref.db")
        means, kbench_wall = kbench_rounds([c[1] for c in CASES], db)
    kbench_per_test = kbench_wall / len(CASES)
    print(f"# kbench vs reference tools, {time.strftime('%Y-%m-%d')}, {ROUNDS} invocations each, "
          f"kbench --max-time {MAX_TIME}")
    print(f"# machine: {os.uname().nodename} {os.uname().release}, {os.cpu_count()} CPUs")
    print("| metric | kbench median | kbench CV | reference | reference median | reference CV | kbench / ref | wall s kbench / ref |")
    print("|---|---|---|---|---|---|---|---|")
    notes = []
    for label, test, convert, ref_name, ref_measure, difference in CASES:
        key = [k for k in means if k.split(":")[0] == test or k == test]
        if not key:
            print(f"| {label} | (not measured) | | {ref_name} | | | | |")
            continue
        ours = [convert(v) for v in means[key[0]]]
        start = time.perf_counter()
        try:
            theirs = [ref_measure() for _ in range(ROUNDS)]
        except (RuntimeError, IndexError, FileNotFoundError) as e:
            print(f"| {label} | {statistics.median(ours):.4g} | {cv(ours) * 100:.2f} % | {ref_name} | failed: {str(e)[:60]} | | | |")
            continue
        ref_wall = time.perf_counter() - start
        ratio = statistics.median(ours) / statistics.median(theirs)
        ratio_text = "-" if label.endswith("*") else f"{ratio:.3f}"
        print(f"| {label} | {statistics.median(ours):.4g} | {cv(ours) * 100:.2f} % | {ref_name} | "
              f"{statistics.median(theirs):.4g} | {cv(theirs) * 100:.2f} % | {ratio_text} | "
              f"{kbench_per_test:.1f} / {ref_wall:.1f} |")
        notes.append(f"- {label}: {difference}")
    print()
    print("\n".join(notes))


if __name__ == "__main__":
    sys.exit(main())
