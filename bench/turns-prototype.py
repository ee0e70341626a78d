#!/usr/bin/env python3
"""bench/turns-prototype.py [BLOCKS]: the SD of a block's log ratio between
two identical processes, measured four ways (one after the other or taking
turns; pinned to CPU 0 or free), BLOCKS blocks of 20 samples each. Builds
bench/turns-prototype.c with cc. Run it with and without a busy CPU
(`sh -c 'while :; do :; done' &`); docs/sensitivity.md has its figures."""
import math, os, statistics, subprocess, sys, tempfile

here = os.path.dirname(os.path.abspath(__file__))
exe = os.path.join(tempfile.mkdtemp(), "turns-prototype")
subprocess.run(["cc", "-O2", "-o", exe, os.path.join(here, "turns-prototype.c")], check=True)

def means(n, pin, turn, samples=20):
    out = subprocess.run([exe, str(n), str(samples), str(pin), str(turn)],
                         capture_output=True, text=True, check=True).stdout
    values = {}
    for line in out.splitlines():
        process, _, _, ns = line.split()
        values.setdefault(int(process), []).append(float(ns))
    return [statistics.mean(values[p]) for p in sorted(values)]

def block(pin, turn):
    if turn:
        a, b = means(2, pin, 1)
    else:  # one process, then another
        (a,), (b,) = means(1, pin, 0), means(1, pin, 0)
    return math.log(a / b)

blocks = int(sys.argv[1]) if len(sys.argv) > 1 else 40
for pin, where in ((0, "both pinned to CPU 0"), (-1, "free to move")):
    for turn, how in ((1, "taking turns"), (0, "one after the other")):
        ratios = [block(pin, turn) for _ in range(blocks)]
        print(f"{how:20} {where:21} SD of the block log ratio "
              f"{100 * statistics.stdev(ratios):5.2f} %")
