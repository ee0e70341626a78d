#!/usr/bin/env bash
# syscall-null against `perf bench syscall basic`, side by side in one run on
# this machine: both time getppid() in a loop. Prints kbench's median and CV
# over its samples, and perf's median and CV over 5 invocations.
#
# Usage: bench/vs-perf.sh            (needs `perf`: apt-get install linux-perf)
set -euo pipefail
cd "$(dirname "$0")/.."
command -v perf >/dev/null || { echo "perf not found: apt-get install linux-perf" >&2; exit 1; }
command -v python3 >/dev/null || { echo "python3 not found" >&2; exit 1; }
cargo build --release -q
db=$(mktemp -d)/vs-perf.db
trap 'rm -rf "$(dirname "$db")"' EXIT

perf_ns=()
for _ in 1 2 3 4 5; do
    perf_ns+=("$(perf bench syscall basic 2>/dev/null | awk '/usecs\/op/ {print $1 * 1000}')")
done
KBENCH_DB=$db target/release/kbench run syscall-null --as vs-perf --into vs-perf --json 2>/dev/null >"$db.json"

python3 - "$db.json" "${perf_ns[@]}" <<'PY'
import json, statistics, sys
doc = json.load(open(sys.argv[1]))
s = doc["show"]["tests"][0]["results"][0]["summary"]
perf = [float(x) for x in sys.argv[2:]]
pm = statistics.median(perf)
pcv = statistics.stdev(perf) / statistics.mean(perf)
print(f"{'metric':<14} {'kbench median':>14} {'kbench CV':>10} {'perf median':>12} {'perf CV':>8} {'kbench/perf':>12}")
print(f"{'getppid (ns)':<14} {s['median']:>14.1f} {s['cv']*100:>9.2f}% {pm:>12.1f} {pcv*100:>7.2f}% {s['median']/pm:>12.3f}")
PY
