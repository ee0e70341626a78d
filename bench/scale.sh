#!/usr/bin/env bash
# Lab-sized data (issue 17): how long kbench takes, and how much memory it
# needs, on a generated set of 2,000 metrics x 100 identifiers (v0..v99, in
# version order) x 10 samples = 2 M samples, 43 MB of kbench.samples/1.
# Every tenth metric steps by +5 % at a version the generator draws
# (seeded, so the same set every time; bench/scale.py says how).
#
# Usage:
#   bench/scale.sh                     SQLite and PostgreSQL, 3 runs each
#   SCALE_RUNS=5 bench/scale.sh        5 runs of each operation
#   SCALE_BIG=1 bench/scale.sh         also import a 3.6 M-sample, 283 MB file
#                                      (slow: about a minute per run)
#   SCALE_STORES=sqlite bench/scale.sh only one store (sqlite, postgres)
#
# PostgreSQL is a throwaway server on 127.0.0.1 (.ci/postgres.sh), started
# when Debian's `postgresql` package is installed and skipped, saying so,
# when it is not. Needs /usr/bin/time (apt-get install time) and python3.
#
# Prints a markdown table, one row per operation and store:
#   median s     the median wall time of SCALE_RUNS runs, from start to exit
#   peak RSS MB  the largest maximum resident set size of kbench's process
#                over those runs (PostgreSQL's server is not counted)
#   accuracy     what the operation found against the planted steps
#   goal         issue 17's goal for the row
# The rows:
#   import                 `kbench import` of the 43 MB set into a fresh
#                          database (a new SQLite file, a new PostgreSQL
#                          database) each run
#   import, big file       the same for the 283 MB file (SCALE_BIG=1)
#   history                `kbench history scale` (text to /dev/null);
#                          accuracy from one more run with --format json:
#                          stepped metrics with a change point at their
#                          step out of 200, and change points anywhere else
#   compare v0 v99         `kbench compare scale --baseline v0 v99` (2 of
#                          the 100 identifiers); accuracy from --format json:
#                          stepped metrics judged a regression or
#                          improvement out of 200, unstepped ones judged so
#   change points          the kbench-stats example changepoint_speed
#                          (10,000 series x 500 points, 2 threads): its own
#                          median of 3 runs, no store; accuracy: change
#                          points found against series with a step
set -euo pipefail
cd "$(dirname "$0")/.."

runs=${SCALE_RUNS:-3}
stores=${SCALE_STORES:-sqlite postgres}
big=${SCALE_BIG:-0}
[ -x /usr/bin/time ] || { echo "scale.sh: /usr/bin/time is missing; install it with: apt-get install time" >&2; exit 1; }
for store in $stores; do
    case $store in
    sqlite | postgres) ;;
    *) echo "scale.sh: unknown store '$store' in SCALE_STORES (sqlite, postgres)" >&2; exit 1 ;;
    esac
done
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "scale.sh: SCALE_RUNS must be a positive number, not '$runs'" >&2; exit 1; }

cargo build --release -q
cargo build --release -q -p kbench-stats --example changepoint_speed
kbench=$PWD/target/release/kbench
helper=(python3 "$PWD/bench/scale.py")

work=$(mktemp -d)
cleanup() {
    if declare -F kbench_pg_stop >/dev/null; then kbench_pg_stop; fi
    rm -rf "$work"
}
trap cleanup EXIT
load_before=$(cut -d' ' -f1-3 /proc/loadavg)

echo "scale.sh: generating the sets in $work" >&2
"${helper[@]}" generate "$work/set.json" "$work/truth.json"
if [ "$big" = 1 ]; then
    "${helper[@]}" generate "$work/big.json" "$work/big-truth.json" --big
fi

rows=$work/rows
: >"$rows"
# row OPERATION STORE TIMES-FILE ACCURACY GOAL: one line of the table.
row() {
    local median rss _
    read -r median rss _ < <("${helper[@]}" summary "$3")
    printf '| %s | %s | %s | %s | %s | %s |\n' "$1" "$2" "$median" "$rss" "$4" "$5" >>"$rows"
}

# An empty database NAME for STORE, dropping the one of the run before:
# prints a SQLite path or a PostgreSQL URL.
fresh_db() {
    if [ "$1" = sqlite ]; then
        rm -f "$work/$2".db*
        echo "$work/$2.db"
    else
        local pg=(-h 127.0.0.1 -p "$pg_port" -U "$pg_user")
        kbench_pg_as env PGOPTIONS="-c client_min_messages=warning" \
            "$KBENCH_PG_BIN/dropdb" "${pg[@]}" --if-exists "$2" >&2
        kbench_pg_as "$KBENCH_PG_BIN/createdb" "${pg[@]}" "$2" >&2
        echo "${KBENCH_TEST_POSTGRES_URL%/*}/$2"
    fi
}

measure_store() {
    local store=$1 name db
    name=$([ "$store" = sqlite ] && echo SQLite || echo PostgreSQL)
    echo "scale.sh: $name: import x $runs" >&2
    for _ in $(seq "$runs"); do
        db=$(fresh_db "$store" scale)
        "${helper[@]}" measure "$work/$store-import" -- "$kbench" --db "$db" import "$work/set.json"
    done
    row "import (43 MB, 2 M samples)" "$name" "$work/$store-import" "" "< 3 s, < 150 MB"

    if [ "$big" = 1 ]; then
        echo "scale.sh: $name: import of the big file x $runs" >&2
        local big_db
        for _ in $(seq "$runs"); do
            big_db=$(fresh_db "$store" scale_big)
            "${helper[@]}" measure "$work/$store-big" -- "$kbench" --db "$big_db" import "$work/big.json"
        done
        row "import (283 MB, 3.6 M samples)" "$name" "$work/$store-big" "" "< 150 MB"
    fi

    echo "scale.sh: $name: history x $runs" >&2
    for _ in $(seq "$runs"); do
        "${helper[@]}" measure "$work/$store-history" -- "$kbench" --db "$db" history scale
    done
    "$kbench" --db "$db" history scale --format json -o "$work/history.json"
    row "history" "$name" "$work/$store-history" \
        "$("${helper[@]}" history-accuracy "$work/truth.json" "$work/history.json")" \
        "< 2 s; 200/200 steps, 0-2 false"

    echo "scale.sh: $name: compare x $runs" >&2
    for _ in $(seq "$runs"); do
        "${helper[@]}" measure "$work/$store-compare" -- "$kbench" --db "$db" compare scale --baseline v0 v99
    done
    "$kbench" --db "$db" compare scale --baseline v0 v99 --format json >"$work/compare.json"
    row "compare --baseline v0 v99" "$name" "$work/$store-compare" \
        "$("${helper[@]}" compare-accuracy "$work/truth.json" "$work/compare.json")" "< 0.3 s"
}

for store in $stores; do
    case $store in
    sqlite) measure_store sqlite ;;
    postgres)
        if ! compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null; then
            echo "scale.sh: PostgreSQL is not installed (apt-get install postgresql): skipping its rows" >&2
            printf '| (PostgreSQL rows skipped: no server installed) | | | | | |\n' >>"$rows"
            continue
        fi
        # Sourced: starts the server and exports KBENCH_TEST_POSTGRES_URL
        # (postgres://USER@127.0.0.1:PORT/kbench_test); cleanup() stops it.
        . .ci/postgres.sh
        trap cleanup EXIT
        pg_user=${KBENCH_TEST_POSTGRES_URL#postgres://}
        pg_user=${pg_user%%@*}
        pg_port=${KBENCH_TEST_POSTGRES_URL##*:}
        pg_port=${pg_port%%/*}
        measure_store postgres
        ;;
    esac
done

echo "scale.sh: change points x 1 (the example runs 3 times itself)" >&2
/usr/bin/time -v -o "$work/cp.time" target/release/examples/changepoint_speed 2 >"$work/cp.out"
cp_median=$(sed -n 's/.*median \([0-9.]*\) s.*/\1/p' "$work/cp.out")
cp_rss=$(sed -n 's/.*Maximum resident set size (kbytes): \([0-9]*\)/\1/p' "$work/cp.time")
cp_accuracy=$(sed -n 's/.*; \([0-9]*\) change points found (\([0-9]*\) series have a step).*/\1 change points, \2 stepped series/p' "$work/cp.out")
printf '| change points, 10,000 series x 500 points (2 threads) | (no store) | %s | %s | %s | < 3 s, no more change points than stepped series |\n' \
    "$cp_median" "$((cp_rss / 1024))" "$cp_accuracy" >>"$rows"

commit=$(git rev-parse --short HEAD)
git diff --quiet HEAD -- crates Cargo.toml Cargo.lock || commit="$commit + uncommitted changes"
echo "Measured $(date -u +%Y-%m-%d) on $("${helper[@]}" machine), kbench commit $commit;"
echo "load average $load_before before, $(cut -d' ' -f1-3 /proc/loadavg) after. Median of $runs runs."
echo
echo "| operation | store | median s | peak RSS MB | accuracy | goal (issue 17) |"
echo "|---|---|---|---|---|---|"
cat "$rows"
