#!/usr/bin/env python3
"""kbench against the reference tools, side by side on this machine.

Each pair is measured in REPEATS alternating invocations (reference, kbench,
kbench, reference, ...: the order flips every repeat, so drift and order hit
both alike). An invocation of kbench is one fresh `kbench run TEST --rounds
1`, and its value the mean of its samples. The ratio kbench / reference and
its 95 % CI come from kbench's own comparison: the values are imported as
two identifiers with one round per repeat, and `kbench compare` gives the
ratio of geometric means with Welch's CI on the logs. "within 10 %" is then
a statement with a CI:
- yes: the whole CI lies in 0.9-1.1;
- no: the whole CI lies outside it;
- undecided: anything else.

Called by bench/vs-reference.sh, which installs Debian's tools first. Two
reference suites are not packaged by Debian; build them yourself and name
their directories:
- LMBENCH=DIR: lmbench3's lat_syscall, lat_sig and lat_proc. They run with
  ENOUGH=50000 (microseconds per timed interval) unless ENOUGH is set:
  without it, lmbench's calibration on a busy machine can settle on 1 s
  intervals and one invocation then takes most of a minute.
- WILL_IT_SCALE=DIR: will-it-scale's getppid1, signal1, futex1 and pipe1
  `_processes` binaries, each run with one task (`-t 1 -s 3`: six warm-up
  seconds, then the mean of three).
"""

import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

REPEATS = int(os.environ.get("REPEATS", "5"))
# kbench's time budget per test and invocation, in seconds.
MAX_TIME = os.environ.get("MAX_TIME", "1")
KBENCH = os.environ.get("KBENCH", "target/release/kbench")
LMBENCH = os.environ.get("LMBENCH")
WILL_IT_SCALE = os.environ.get("WILL_IT_SCALE")
# A file for every measured value, per pair and tool in measurement order.
RAW = os.environ.get("RAW")


def run(cmd):
    """Runs a shell command, returns its stdout and stderr as one text."""
    out = subprocess.run(cmd, shell=True, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"{cmd} failed: {out.stderr[-500:]}")
    return out.stdout + out.stderr


def number(pattern, text):
    m = re.search(pattern, text, re.M)
    if not m:
        raise RuntimeError(f"no match for {pattern!r} in:\n{text[-800:]}")
    return float(m.group(1))


def stressng(stressor, extra=""):
    """bogo ops/s (real time) from stress-ng --metrics-brief."""
    def measure():
        text = run(f"stress-ng --{stressor} 1 {extra} --timeout 3 --metrics-brief")
        line = [l for l in text.splitlines() if re.search(rf"\] +{re.escape(stressor)} +\d", l)][0]
        return float(line.split()[-2])
    return measure


def lmbench(tool, args, label):
    """Microseconds from an lmbench3 tool's "label: X microseconds" line, in ns."""
    def measure():
        enough = os.environ.get("ENOUGH", "50000")
        text = run(f"ENOUGH={enough} {LMBENCH}/{tool} {args}")
        return number(rf"{re.escape(label)}: ([\d.]+) microseconds", text) * 1000
    return measure


def will_it_scale(test):
    """ops/s of one will-it-scale task: its "average:" line after three
    measured seconds."""
    def measure():
        text = run(f"{WILL_IT_SCALE}/{test}_processes -t 1 -s 3")
        return number(r"^average:(\d+)", text)
    return measure


def one(test, convert=lambda v: v):
    """kbench's value of one invocation: `test`'s mean, converted."""
    return [test], lambda means: convert(means[test])


# (label, (kbench tests, kbench value from their means in the reference's
#  unit), reference, its measuring function, what differs). Labels ending in
#  "*" compare different operations (stress-ng's bogo ops): their ratio is
#  no like-for-like check.
CASES = [
    ("syscall getppid, ns", one("syscall-null"), "perf bench syscall basic",
     lambda: number(r"([\d.]+) usecs/op", run("perf bench syscall basic")) * 1000,
     "same loop body: syscall(SYS_getppid)"),
    ("pipe round trip (1 CPU), us", one("pipe-lat[placement=same]"),
     "taskset -c 0 perf bench sched pipe",
     lambda: number(r"([\d.]+) usecs/op", run("taskset -c 0 perf bench sched pipe -l 200000")),
     "same: two processes, 1-byte round trips over two pipes, both on one CPU"),
    ("pipe round trip (2 CPUs), us", one("pipe-lat[placement=cross]"),
     "perf bench sched pipe (unpinned)",
     lambda: number(r"([\d.]+) usecs/op", run("perf bench sched pipe -l 50000")),
     "perf does not pin: the scheduler decides whether the two tasks share a CPU"),
    ("messaging 4 groups, sockets, s", one("messaging[groups=4,ipc=socket,mode=process]"),
     "perf bench sched messaging -g 4 -l 100",
     lambda: number(r"Total time: ([\d.]+)", run("perf bench sched messaging -g 4 -l 100")),
     "same workload; perf's time includes creating the tasks"),
    ("messaging 4 groups, pipes, s", one("messaging[groups=4,ipc=pipe,mode=process]"),
     "hackbench -g 4 -l 100 --pipe",
     lambda: number(r"Time: ([\d.]+)", run("hackbench -g 4 -l 100 --pipe")),
     "same workload (rt-tests hackbench)"),
    ("futex, private, 1 task, ops/s", one("futex3[mode=thread,tasks=1]"),
     "perf bench futex hash -t 1 -r 2",
     lambda: number(r"Averaged ([\d.]+) operations/sec", run("perf bench futex hash -t 1 -r 2")),
     "kbench: FUTEX_WAKE with no waiter; perf: FUTEX_WAIT on a changed value (EAGAIN), "
     "1024 futexes; both the hashed fast path"),
    ("fork + exit + wait, ops/s", one("fork-exit", lambda v: 1e6 / v),
     "stress-ng --fork 1 --metrics-brief", stressng("fork"),
     "stress-ng forks in a loop, children exit at once; kbench us per fork converted to forks/s"),
    ("memcpy 64 MiB, MB/s", one("mem-bw[op=cp,size=64]"),
     "perf bench mem memcpy -s 64MB -l 10",
     lambda: number(r"([\d.]+) GB/sec", run("perf bench mem memcpy -s 64MB -l 10 -f default"))
     * 2**30 / 1e6,
     "both copy a 64 MiB buffer (beyond the LLC) with memcpy; perf's GB are 2^30 bytes, "
     "converted to MB/s (10^6 bytes)"),
    ("memset 64 MiB, MB/s", one("mem-bw[op=wr,size=64]"),
     "perf bench mem memset -s 64MB -l 10",
     lambda: number(r"([\d.]+) GB/sec", run("perf bench mem memset -s 64MB -l 10 -f default"))
     * 2**30 / 1e6,
     "kbench stores every u64 word in a Rust loop; perf calls memset (rep stosb on x86)"),
    ("mutex, 2 threads, locks/s *", one("mutex-contend[threads=2]"),
     "sysbench mutex --threads=2 --mutex-locks=1000000",
     lambda: 2 * 1_000_000 / number(r"total time:\s+([\d.]+)s",
                                run("sysbench mutex --threads=2 --mutex-num=1 --mutex-locks=1000000 "
                                    "--mutex-loops=100 run")),
     "sysbench's rate is its lock/unlock pairs over its total time, one global mutex, --mutex-loops=100 of spinning; kbench's op is one "
     "lock/unlock plus a 100-step spin"),
    ("mmap, ops/s *", one("mmap1[mode=process,tasks=1]"),
     "stress-ng --mmap 1 --metrics-brief", stressng("mmap", "--mmap-bytes 128m"),
     "stress-ng's op also touches, mprotects and msyncs pages; kbench's mmap1 maps and unmaps "
     "128 MiB untouched"),
    ("madvise, ops/s *", one("madvise"),
     "stress-ng --madvise 1 --metrics-brief", stressng("madvise"),
     "stress-ng's op maps a region and advises every page; kbench's op is one madvise call"),
    ("vm-splice, transfers/s *", one("vm-splice", lambda v: v / (64 * 1024 / 1e6)),
     "stress-ng --vm-splice 1 --metrics-brief (ops/s)", stressng("vm-splice"),
     "kbench MB/s converted to 64 KiB transfers/s; stress-ng's op is one vmsplice+splice of "
     "its buffer"),
]

if LMBENCH:
    CASES += [
        ("lmbench null syscall, ns", one("syscall-null"), "lat_syscall null",
         lmbench("lat_syscall", "null", "Simple syscall"), "both getppid"),
        ("lmbench stat /dev/null, ns", one("syscall-stat"), "lat_syscall stat /dev/null",
         lmbench("lat_syscall", "stat /dev/null", "Simple stat"),
         "both newfstatat(AT_FDCWD, \"/dev/null\"): glibc's stat() issues it"),
        ("lmbench write /dev/null, ns", one("syscall-write"), "lat_syscall write",
         lmbench("lat_syscall", "write", "Simple write"), "both write(2) of 1 byte"),
        ("lmbench signal catch, ns",
         (["sig-catch", "sig-send"], lambda m: m["sig-catch"] - m["sig-send"]),
         "lat_sig catch", lmbench("lat_sig", "catch", "Signal handler overhead"),
         "lmbench subtracts its send loop (kill(getpid(), 0)) from its send-and-catch loop: "
         "kbench's value here is sig-catch minus sig-send"),
        ("lmbench fork + exit, us", one("fork-exit"), "lat_proc fork",
         lambda: lmbench("lat_proc", "fork", "Process fork+exit")() / 1000,
         "both fork a child that exits at once and wait for it"),
    ]

if WILL_IT_SCALE:
    CASES += [
        (f"will-it-scale {test}, 1 task, ops/s", one(f"{test}[mode=process,tasks=1]"),
         f"{test}_processes -t 1", will_it_scale(test), difference)
        for test, difference in [
            ("getppid1", "both syscall(SYS_getppid) in a loop"),
            ("signal1", "both raise(SIGUSR1) caught by an empty handler"),
            ("futex1", "both FUTEX_WAKE with no waiter on the task's own word"),
            ("pipe1", "both write 1 byte to the task's own pipe and read it back"),
        ]
    ]


ONLY = os.environ.get("ONLY")
if ONLY:
    CASES = [case for case in CASES if re.search(ONLY, case[0])]
    if not CASES:
        sys.exit(f"ONLY={ONLY!r} matches no pair's label")


def kbench_once(tests, db, case, repeat):
    """One fresh `kbench run` of `tests`: each test's mean over its samples."""
    env = dict(os.environ, KBENCH_DB=db)
    into = f"case{case}-r{repeat}"
    subprocess.run([KBENCH, "run", *tests, "--as", "kbench", "--into", into, "--rounds", "1",
                    "--max-time", MAX_TIME, "--no-counters", "--monitor", "none"],
                   env=env, check=True, capture_output=True)
    doc = json.loads(subprocess.run([KBENCH, "export", into], env=env, check=True,
                                    capture_output=True, text=True).stdout)
    values = {}
    for run_ in doc["identifiers"][0]["runs"]:
        for test, samples in run_["samples"].items():
            values.setdefault(test, []).extend(s["value"] for s in samples)
    return {test: statistics.mean(values[test]) for test in tests}


def ratio_cis(pairs, db):
    """kbench / reference with its 95 % CI per case, from `kbench compare`
    over the repeats (one round each) imported as two identifiers."""
    measured = [i for i, (theirs, ours) in enumerate(pairs) if theirs and ours]
    tests = [{"test": f"case{i}", "unit": "x", "direction": "lower"} for i in measured]
    def side(index):
        return {f"case{i}": [{"value": v, "round": r} for r, v in enumerate(pairs[i][index])]
                for i in measured}
    doc = {"schema": "kbench.samples/1", "result_set": "vs", "tests": tests,
           "identifiers": [{"name": "reference", "samples": side(0)},
                           {"name": "kbench", "samples": side(1)}]}
    env = dict(os.environ, KBENCH_DB=db)
    path = os.path.join(os.path.dirname(db), "vs.json")
    with open(path, "w") as f:
        json.dump(doc, f)
    subprocess.run([KBENCH, "import", path], env=env, check=True, capture_output=True)
    report = json.loads(subprocess.run([KBENCH, "compare", "vs", "--format", "json"], env=env,
                                       check=True, capture_output=True, text=True).stdout)
    cis = {}
    for metric in report["metrics"]:
        change = (metric["results"][1]["comparison"] or {}).get("change_pct")
        if change and change["ci_low"] is not None and change["ci_high"] is not None:
            cis[metric["test"]] = tuple(1 + change[k] / 100 for k in ("point", "ci_low", "ci_high"))
    return cis


def within(ci):
    _, low, high = ci
    if 0.9 <= low and high <= 1.1:
        return "yes"
    if high < 0.9 or low > 1.1:
        return "no"
    return "undecided"


def main():
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "kbench.db")
        for case, (label, (tests, combine), ref_name, ref_measure, _) in enumerate(CASES):
            ours, theirs = [], []
            print(f"{label}: {REPEATS} alternating repeats", file=sys.stderr)
            try:
                for repeat in range(REPEATS):
                    steps = [lambda: theirs.append(ref_measure()),
                             lambda: ours.append(combine(kbench_once(tests, db, case, repeat)))]
                    for step in steps if repeat % 2 == 0 else reversed(steps):
                        step()
                if min(ours + theirs) <= 0:
                    raise RuntimeError(f"a value is not positive: {ours} {theirs}")
            except (RuntimeError, IndexError, FileNotFoundError,
                    subprocess.CalledProcessError) as e:
                print(f"  {ref_name} failed: {e}", file=sys.stderr)
                ours, theirs = [], []
            results.append((theirs, ours))
        cis = ratio_cis(results, os.path.join(tmp, "vs.db"))
    if RAW:
        with open(RAW, "w") as f:
            json.dump([{"pair": label, "reference": theirs, "kbench": ours}
                       for (label, *_), (theirs, ours) in zip(CASES, results)], f, indent=1)
    print(f"# kbench vs reference tools, {time.strftime('%Y-%m-%d')}, {REPEATS} alternating "
          f"repeats each, kbench --max-time {MAX_TIME}")
    print(f"# machine: {os.uname().release}, {os.cpu_count()} CPUs, "
          f"{cpu_model()}")
    print("| metric | kbench median | reference | reference median | kbench / ref [95 % CI] | within 10 % |")
    print("|---|---|---|---|---|---|")
    notes = []
    for i, (label, _, ref_name, _, difference) in enumerate(CASES):
        theirs, ours = results[i]
        if not ours:
            print(f"| {label} | | {ref_name} | failed | | |")
            continue
        ci = cis.get(f"case{i}")
        like = not label.endswith("*")
        ratio = f"{ci[0]:.3f} [{ci[1]:.3f}, {ci[2]:.3f}]" if ci and like else "-"
        verdict = within(ci) if ci and like else "-"
        print(f"| {label} | {statistics.median(ours):.4g} | {ref_name} | "
              f"{statistics.median(theirs):.4g} | {ratio} | {verdict} |")
        notes.append(f"- {label}: {difference}")
    print()
    print("\n".join(notes))


def cpu_model():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return "unknown CPU"


if __name__ == "__main__":
    sys.exit(main())
