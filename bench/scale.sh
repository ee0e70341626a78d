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
#   SCALE_DASH=1 bench/scale.sh        also the dashboard and API rows on a
#                                      10 M-sample set in PostgreSQL (below;
#                                      slow: the import alone takes minutes)
#   SCALE_DASH=only bench/scale.sh     only those rows
#   SCALE_KBENCH=/path/to/kbench ...   measure that binary (an older build,
#                                      for "before" figures) instead of
#                                      building this tree's
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
#   dashboard rows         (SCALE_DASH) issue 17's dashboard set: 10,000
#                          metrics x 100 identifiers x 10 samples = 10 M
#                          (215 MB, set "scale-dash"), imported once into
#                          PostgreSQL (its own row), then `kbench serve` on
#                          127.0.0.1 (a free port; reading needs no token)
#                          and SCALE_DASH_GETS (5) GETs with curl of each
#                          page and endpoint: the overview /, the set page
#                          /sets/scale-dash, the comparison page of v0 and
#                          v99, the API's set listing and its comparison of
#                          v0 and v99. median s is the median of the GETs'
#                          total times; peak RSS is the server's peak
#                          (VmHWM) after that row's GETs, so it only grows
#                          down the rows.
#   change points          the kbench-stats example changepoint_speed
#                          (10,000 series x 500 points, 2 threads): its own
#                          median of 3 runs, no store; accuracy: change
#                          points found against series with a step
set -euo pipefail
cd "$(dirname "$0")/.."

runs=${SCALE_RUNS:-3}
stores=${SCALE_STORES:-sqlite postgres}
big=${SCALE_BIG:-0}
dash=${SCALE_DASH:-0}
gets=${SCALE_DASH_GETS:-5}
[ -x /usr/bin/time ] || { echo "scale.sh: /usr/bin/time is missing; install it with: apt-get install time" >&2; exit 1; }
for store in $stores; do
    case $store in
    sqlite | postgres) ;;
    *) echo "scale.sh: unknown store '$store' in SCALE_STORES (sqlite, postgres)" >&2; exit 1 ;;
    esac
done
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "scale.sh: SCALE_RUNS must be a positive number, not '$runs'" >&2; exit 1; }
[[ $gets =~ ^[1-9][0-9]*$ ]] || { echo "scale.sh: SCALE_DASH_GETS must be a positive number, not '$gets'" >&2; exit 1; }
case $dash in
0 | 1) ;;
only) stores=postgres ;;
*) echo "scale.sh: SCALE_DASH must be 0, 1 or only, not '$dash'" >&2; exit 1 ;;
esac
if [ "$dash" != 0 ]; then
    command -v curl >/dev/null || { echo "scale.sh: curl is missing; install it with: apt-get install curl" >&2; exit 1; }
fi

if [ -z "${SCALE_KBENCH:-}" ]; then cargo build --release -q; fi
if [ "$dash" != only ]; then cargo build --release -q -p kbench-stats --example changepoint_speed; fi
kbench=${SCALE_KBENCH:-$PWD/target/release/kbench}
[ -x "$kbench" ] || { echo "scale.sh: SCALE_KBENCH '$kbench' is not an executable" >&2; exit 1; }
helper=(python3 "$PWD/bench/scale.py")

work=$(mktemp -d)
server_pid=
cleanup() {
    if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; fi
    if declare -F kbench_pg_stop >/dev/null; then kbench_pg_stop; fi
    rm -rf "$work"
}
trap cleanup EXIT
load_before=$(cut -d' ' -f1-3 /proc/loadavg)

echo "scale.sh: generating the sets in $work" >&2
if [ "$dash" != only ]; then
    "${helper[@]}" generate "$work/set.json" "$work/truth.json"
fi
if [ "$dash" != 0 ]; then
    "${helper[@]}" generate "$work/dash.json" "$work/dash-truth.json" --dash
fi
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

# The GETs of one dashboard row: "$gets" of URL PATH, each appended to
# TIMES as "seconds peak_rss_kb" (the server's VmHWM after it); fails on
# an answer that is not 200.
dash_gets() {
    local out=$1 path=$2 answer code seconds hwm
    for _ in $(seq "$gets"); do
        answer=$(curl -sS --max-time 600 -o "$work/answer" -w '%{http_code} %{time_total}' "$base$path")
        read -r code seconds <<<"$answer"
        [ "$code" = 200 ] || { echo "scale.sh: GET $path answered $code: $(head -c 500 "$work/answer")" >&2; exit 1; }
        hwm=$(sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$server_pid/status")
        echo "$seconds $hwm" >>"$out"
    done
}

# Issue 17's dashboard rows on a fresh PostgreSQL database.
measure_dash() {
    local db
    echo "scale.sh: dashboard: importing 10 M samples into PostgreSQL" >&2
    db=$(fresh_db postgres scale_dash)
    "${helper[@]}" measure "$work/dash-import" -- "$kbench" --db "$db" import "$work/dash.json"
    row "import (215 MB, 10 M samples), dashboard set" PostgreSQL "$work/dash-import" "" ""

    "$kbench" serve --db "$db" --listen 127.0.0.1:0 2>"$work/serve.err" &
    server_pid=$!
    base=
    for _ in $(seq 300); do
        base=$(sed -n 's|.*listening on \(http://[^ ]*\) .*|\1|p' "$work/serve.err")
        [ -n "$base" ] && break
        kill -0 "$server_pid" 2>/dev/null || { echo "scale.sh: kbench serve exited: $(cat "$work/serve.err")" >&2; exit 1; }
        sleep 0.1
    done
    [ -n "$base" ] || { echo "scale.sh: kbench serve did not start in 30 s: $(cat "$work/serve.err")" >&2; exit 1; }
    echo "scale.sh: dashboard: kbench serve at $base, $gets GETs of each page" >&2
    local two="baseline=v0&identifiers=v99"
    local pages=(
        "overview page /|/"
        "set page /sets/scale-dash|/sets/scale-dash"
        "comparison page v0 v99|/sets/scale-dash/compare?$two"
        "API set listing|/api/v1/result-sets"
        "API compare v0 v99|/api/v1/result-sets/scale-dash/compare?$two"
    )
    local page n=0
    for page in "${pages[@]}"; do
        n=$((n + 1))
        dash_gets "$work/dash-get-$n" "${page#*|}"
        row "${page%%|*}" "PostgreSQL, kbench serve" "$work/dash-get-$n" "" "< 1 s"
    done
    kill "$server_pid"
    wait "$server_pid" || true
    server_pid=
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
        if [ "$dash" != only ]; then measure_store postgres; fi
        if [ "$dash" != 0 ]; then measure_dash; fi
        ;;
    esac
done

if [ "$dash" != only ]; then
    echo "scale.sh: change points x 1 (the example runs 3 times itself)" >&2
    /usr/bin/time -v -o "$work/cp.time" target/release/examples/changepoint_speed 2 >"$work/cp.out"
    cp_median=$(sed -n 's/.*median \([0-9.]*\) s.*/\1/p' "$work/cp.out")
    cp_rss=$(sed -n 's/.*Maximum resident set size (kbytes): \([0-9]*\)/\1/p' "$work/cp.time")
    cp_accuracy=$(sed -n 's/.*; \([0-9]*\) change points found (\([0-9]*\) series have a step).*/\1 change points, \2 stepped series/p' "$work/cp.out")
    printf '| change points, 10,000 series x 500 points (2 threads) | (no store) | %s | %s | %s | < 3 s, no more change points than stepped series |\n' \
        "$cp_median" "$((cp_rss / 1024))" "$cp_accuracy" >>"$rows"
fi

commit=$(git rev-parse --short HEAD)
git diff --quiet HEAD -- crates Cargo.toml Cargo.lock || commit="$commit + uncommitted changes"
[ -z "${SCALE_KBENCH:-}" ] || commit="binary $SCALE_KBENCH (not this tree's $commit)"
echo "Measured $(date -u +%Y-%m-%d) on $("${helper[@]}" machine), kbench commit $commit;"
echo "load average $load_before before, $(cut -d' ' -f1-3 /proc/loadavg) after. Median of $runs runs ($gets GETs for the dashboard rows)."
echo
echo "| operation | store | median s | peak RSS MB | accuracy | goal (issue 17) |"
echo "|---|---|---|---|---|---|"
cat "$rows"
