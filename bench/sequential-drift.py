#!/usr/bin/env python3
"""Why one identifier at a time misses small steps: three checks over the
databases a `KEEP=1 MODES=sequential bench/sensitivity.sh` run left.

usage: bench/sequential-drift.py KBENCH DIR

1. Drift with distance: the rms difference of unchanged metrics between
   identifiers 1 to 4 invocations apart (base, same, slow, deep1, deep4 run
   in that order).
2. The control loop as a covariate: Welch on round means, then on round
   means adjusted by the control loop (ANCOVA with a slope fitted within
   runs, and fixed slopes 0.5, 1, 1.5). Nominal |z| > 1.96 per metric.
3. A drift allowance: d per identifier added to the SE, decided as compare
   does (BH q < 0.05 and the CI beyond the 1 % threshold).
"""
import glob, json, math, statistics as st, subprocess, sys
from statistics import NormalDist

KBENCH, DIR = sys.argv[1], sys.argv[2]
ORDER = ["base", "same", "slow", "deep1", "deep4"]
# What really changed (bench/sensitivity.sh): seccomp slows the syscalls,
# a deeper TMPDIR slows open-close's path walk.
TRUTH = {"base": set(), "same": set(), "slow": {"syscall-null", "syscall-stat", "open-close"},
         "deep1": {"open-close"}, "deep4": {"open-close"}}


def load():
    """Per trial: identifier -> test -> {round: log of the round mean}."""
    trials = []
    for db in sorted(glob.glob(DIR + "/sequential-*.db")):
        out = subprocess.run([KBENCH, "--db", db, "export", "s"], capture_output=True, text=True)
        ids = {}
        for ident in json.loads(out.stdout)["identifiers"]:
            per = {}
            for run in ident["runs"]:
                for test, samples in run["samples"].items():
                    for s in samples:
                        per.setdefault(test, {}).setdefault(s["round"], []).append(s["value"])
            ids[ident["name"]] = {t: {r: math.log(st.mean(v)) for r, v in rr.items()}
                                  for t, rr in per.items()}
        trials.append(ids)
    return trials


def welch(a, b):
    return st.mean(b) - st.mean(a), math.sqrt(st.variance(a) / len(a) + st.variance(b) / len(b))


def ancova(ya, xa, yb, xb):
    """The change adjusted by the covariate, slope fitted within runs."""
    mxa, mxb, mya, myb = map(st.mean, (xa, xb, ya, yb))
    sxx = sum((x - mxa) ** 2 for x in xa) + sum((x - mxb) ** 2 for x in xb)
    sxy = (sum((x - mxa) * (y - mya) for x, y in zip(xa, ya))
           + sum((x - mxb) * (y - myb) for x, y in zip(xb, yb)))
    beta = sxy / sxx
    res = ([y - mya - beta * (x - mxa) for x, y in zip(xa, ya)]
           + [y - myb - beta * (x - mxb) for x, y in zip(xb, yb)])
    s2 = sum(r * r for r in res) / (len(ya) + len(yb) - 3)
    dx = mxb - mxa
    return (myb - mya) - beta * dx, math.sqrt(s2 * (1 / len(ya) + 1 / len(yb) + dx * dx / sxx))


def bh(ps):
    order = sorted(range(len(ps)), key=lambda i: ps[i])
    q, prev = [0.0] * len(ps), 1.0
    for rank in range(len(ps) - 1, -1, -1):
        i = order[rank]
        prev = min(prev, ps[i] * len(ps) / (rank + 1))
        q[i] = prev
    return q


def metrics(ids):
    return [t for t in ids["base"] if "monitor" not in t]


def tally(label, calls):
    """calls: (name, test, called, diff) -> false alarms and detections."""
    false = [c for n, t, c, _ in calls if t not in TRUTH[n] and not (n == "slow" and t.startswith("pipe"))]
    found = {}
    for n, t, c, d in calls:
        if t in TRUTH[n]:
            hit = found.setdefault(f"{n}/{t}", [0, 0])
            hit[0] += c and d > 0
            hit[1] += 1
    print(f"  {label}: false alarms {sum(false)}/{len(false)};",
          " ".join(f"{k} {a}/{b}" for k, (a, b) in sorted(found.items())))


trials = load()
present = [n for n in ORDER if all(n in ids for ids in trials)]
print(f"{DIR}: {len(trials)} trials")
print("1. rms difference of unchanged syscall metrics by invocations apart")
for test in ("syscall-null", "syscall-stat"):
    by_gap = {}
    quiet = [n for n in present if test not in TRUTH[n]]
    for ids in trials:
        for i, a in enumerate(quiet):
            for b in quiet[i + 1:]:
                mean = lambda n: st.mean(ids[n][test].values())
                gap = ORDER.index(b) - ORDER.index(a)
                by_gap.setdefault(gap, []).append(100 * (mean(b) - mean(a)))
    print(f"  {test}:", ", ".join(f"{g} apart {math.sqrt(st.mean(x * x for x in v)):.1f} %"
                                 for g, v in sorted(by_gap.items())))

print("2. the control loop as a covariate (nominal, per metric)")
for label, slope in (("plain", 0.0), ("ANCOVA", None), ("slope 0.5", 0.5), ("slope 1", 1.0),
                     ("slope 1.5", 1.5)):
    calls = []
    for ids in trials:
        for n in present[1:]:
            for t in metrics(ids):
                a, b = ids["base"][t], ids[n][t]
                ca, cb = ids["base"][t + ":monitor.control"], ids[n][t + ":monitor.control"]
                ra, rb = [r for r in a if r in ca], [r for r in b if r in cb]
                ya, yb = [a[r] for r in ra], [b[r] for r in rb]
                xa, xb = [math.log(ca[r]) for r in ra], [math.log(cb[r]) for r in rb]
                if slope is None:
                    d, se = ancova(ya, xa, yb, xb)
                else:
                    d, se = welch([y - slope * x for y, x in zip(ya, xa)],
                                  [y - slope * x for y, x in zip(yb, xb)])
                calls.append((n, t, abs(d) > 1.96 * se, d))
    tally(label, calls)

print("3. a drift allowance per identifier, decided as compare does (pipe-lat left out)")
normal = NormalDist()
for drift in (0.0, 0.01, 0.02, 0.03):
    calls = []
    for ids in trials:
        for n in present[1:]:
            tests = [t for t in metrics(ids) if not t.startswith("pipe")]
            rows = []
            for t in tests:
                d, se = welch(list(ids["base"][t].values()), list(ids[n][t].values()))
                se = math.sqrt(se * se + 2 * drift * drift)
                rows.append((t, d, se, 2 * (1 - normal.cdf(abs(d) / se))))
            for (t, d, se, _), q in zip(rows, bh([r[3] for r in rows])):
                calls.append((n, t, q < 0.05 and abs(d) - 1.96 * se > 0.01, d))
    tally(f"{100 * drift:.0f} %", calls)
