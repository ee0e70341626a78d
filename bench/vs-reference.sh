#!/usr/bin/env bash
# kbench against the reference tools (perf bench, hackbench, stress-ng;
# lmbench3 with LMBENCH=DIR and will-it-scale with WILL_IT_SCALE=DIR), side
# by side on this machine: REPEATS alternating invocations of each (default
# 5), and the ratio kbench / reference with its 95 % CI (bench/vs-reference.py
# says how). ONLY=REGEX keeps the pairs whose label matches; RAW=FILE writes
# every measured value there as JSON. Installs the
# tools from Debian's packages when run as root.
#
# Usage: bench/vs-reference.sh
#        REPEATS=10 MAX_TIME=3 LMBENCH=~/lmbench/bin WILL_IT_SCALE=~/will-it-scale bench/vs-reference.sh
#        ONLY='lmbench|will-it-scale' LMBENCH=... WILL_IT_SCALE=... bench/vs-reference.sh
set -euo pipefail
cd "$(dirname "$0")/.."
need=()
command -v perf >/dev/null || need+=(linux-perf)
command -v stress-ng >/dev/null || need+=(stress-ng)
command -v hackbench >/dev/null || need+=(rt-tests)
command -v sysbench >/dev/null || need+=(sysbench)
if [ ${#need[@]} -gt 0 ]; then
    if [ "$(id -u)" != 0 ]; then
        echo "missing ${need[*]}: run as root, or apt-get install ${need[*]}" >&2
        exit 1
    fi
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
cargo build --release -q
exec python3 bench/vs-reference.py
