#!/usr/bin/env bash
# How long `kbench compare` takes on a large result set: 1,000 metrics x
# 5 identifiers x 30 samples (3 rounds of 10), imported from generated data.
# Prints the median wall time of 5 runs of each format, end to end (open the
# database, load, compare with FDR, render).
#
# Usage: bench/compare-speed.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export KBENCH_DB=$work/results.db

python3 - "$work/big.json" <<'PY'
import json, random, sys
random.seed(1)
tests = [{"test": f"metric-{m:04d}", "unit": "us", "direction": "lower" if m % 2 else "higher"} for m in range(1000)]
identifiers = []
for i in range(5):
    samples = {}
    for m in range(1000):
        base = 10 + m
        shift = 1.03 if (i == 4 and m % 50 == 0) else 1.0
        samples[f"metric-{m:04d}"] = [
            {"value": base * shift * random.gauss(1, 0.01), "round": k // 10, "at_ms": 1000 + k}
            for k in range(30)
        ]
    identifiers.append({"name": f"v{i}", "samples": samples})
json.dump({"schema": "kbench.samples/1", "result_set": "big", "tests": tests, "identifiers": identifiers},
          open(sys.argv[1], "w"))
PY
target/release/kbench import "$work/big.json" 2>/dev/null

python3 - <<'PY'
import statistics, subprocess, time
for fmt in ["json", "regressions", "bars"]:
    times = []
    for _ in range(5):
        t = time.perf_counter()
        subprocess.run(["target/release/kbench", "compare", "big", "--format", fmt],
                       stdout=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - t)
    print(f"compare --format {fmt:<12} 1000 metrics x 5 identifiers x 30 samples: "
          f"median {statistics.median(times):.3f} s (min {min(times):.3f}, max {max(times):.3f})")
PY
