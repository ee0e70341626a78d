#!/usr/bin/env bash
# kbench against the reference tools (perf bench, hackbench, stress-ng),
# side by side in one run on this machine: median, run-to-run CV and wall
# time of each over ROUNDS invocations (default 5). Installs the tools from
# Debian's packages when run as root.
#
# Usage: bench/vs-reference.sh            ROUNDS=10 MAX_TIME=3 bench/vs-reference.sh
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
