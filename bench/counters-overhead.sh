#!/bin/sh
# What recording the perf counters costs the measured numbers, side by side:
# each trial measures SUITE with two variants in the same interleaved blocks,
# `on` (counters recorded, the default) and `off` (counters:off), and the
# table gives per test the median change of `off` against `on` over the
# trials (negative = faster without counters for lower-is-better tests) and
# how many trials called it a change. Monitors stay on in both.
#
#   TRIALS=3 SUITE=quick bench/counters-overhead.sh [KBENCH]
set -eu
KBENCH=${1:-target/release/kbench}
TRIALS=${TRIALS:-3}
SUITE=${SUITE:-quick}
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
i=1
while [ "$i" -le "$TRIALS" ]; do
    echo "trial $i of $TRIALS: $KBENCH run $SUITE --variant on --variant off=counters:off" >&2
    "$KBENCH" run "$SUITE" --variant on --variant off=counters:off \
        --db "$DIR/$i.db" >"$DIR/$i.log" 2>&1
    "$KBENCH" compare default --db "$DIR/$i.db" --format json >"$DIR/$i.json"
    i=$((i + 1))
done
python3 - "$DIR" "$TRIALS" <<'EOF'
import json, statistics, sys
directory, trials = sys.argv[1], int(sys.argv[2])
changes, called = {}, {}
for i in range(1, trials + 1):
    report = json.load(open(f"{directory}/{i}.json"))
    for metric in report["metrics"]:
        comparison = metric["results"][1]["comparison"]
        if not comparison:
            continue
        test = metric["test"]
        changes.setdefault(test, []).append(comparison["change_pct"]["point"])
        if comparison["verdict"] in ("regression", "improvement"):
            called[test] = called.get(test, 0) + 1
print(f"| test | median change without counters, % | called changed |")
print("|---|---|---|")
for test, values in changes.items():
    print(f"| {test} | {statistics.median(values):+.2f} | {called.get(test, 0)} of {len(values)} |")
EOF
