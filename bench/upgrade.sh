#!/usr/bin/env bash
# How long the first open of an older store takes (its schema migrated),
# and that it answers as before. An older kbench (KBENCH_OLD, a binary built
# from an earlier commit) imports bench/scale.sh's 43 MB set (2 M samples)
# into a fresh SQLite file and a fresh PostgreSQL database; this tree's
# kbench then opens each (`kbench show`, timed with /usr/bin/time), and
# `kbench compare scale --baseline v0 v99 --format json` of both binaries
# must print the same bytes.
#
# Usage: KBENCH_OLD=/path/to/old/kbench bench/upgrade.sh
# Needs /usr/bin/time and python3; the PostgreSQL half needs Debian's
# `postgresql` (a throwaway server on 127.0.0.1, .ci/postgres.sh) and is
# skipped, saying so, without it.
set -euo pipefail
cd "$(dirname "$0")/.."
old=${KBENCH_OLD:?set KBENCH_OLD to an older kbench binary}
[ -x /usr/bin/time ] || { echo "upgrade.sh: /usr/bin/time is missing; apt-get install time" >&2; exit 1; }
cargo build --release --quiet -p kbench
new=$PWD/target/release/kbench
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 bench/scale.py generate "$work/set.json" "$work/truth.json"

# Imports with the old binary, opens with the new, compares both answers.
upgrade() {
    local name=$1 db=$2
    "$old" --db "$db" import "$work/set.json" 2>/dev/null
    "$old" --db "$db" compare scale --baseline v0 v99 --format json >"$work/before.json"
    /usr/bin/time -f "$name: first open by this kbench (migration) %e s, peak RSS %M KB" \
        "$new" --db "$db" show >/dev/null
    "$new" --db "$db" compare scale --baseline v0 v99 --format json >"$work/after.json"
    if cmp -s "$work/before.json" "$work/after.json"; then
        echo "$name: compare prints the same bytes before and after"
    else
        echo "$name: compare differs after the upgrade" >&2
        exit 1
    fi
}

upgrade SQLite "$work/results.db"
if . .ci/postgres.sh >/dev/null 2>&1; then
    # postgres.sh's EXIT trap stops the server; the work files go too.
    trap 'kbench_pg_stop; rm -rf "$work"' EXIT
    upgrade PostgreSQL "$KBENCH_TEST_POSTGRES_URL"
else
    echo "PostgreSQL: skipped (apt-get install postgresql)"
fi
