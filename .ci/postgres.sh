#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for kbench's tests: initdb in a temp dir,
# listening on 127.0.0.1 only at a free port, trust authentication (only
# this machine can reach it), one database `kbench_test`. Needs Debian's
# `postgresql` package (apt-get install postgresql).
#
# Two ways to use it:
#   bash .ci/postgres.sh cargo test --release -p kbench-store
#       runs the command with KBENCH_TEST_POSTGRES_URL set, then stops the
#       cluster and removes its directory; exits with the command's status.
#   . .ci/postgres.sh
#       (sourced, as .ci/run does) starts the cluster, exports
#       KBENCH_TEST_POSTGRES_URL and stops and removes it when the sourcing
#       shell exits (an EXIT trap).
# As root the server runs as the `postgres` user (PostgreSQL refuses to run
# as root); as anyone else, as that user.

kbench_pg_fail() {
    echo "postgres.sh: $*" >&2
    return 1
}

kbench_pg_stop() {
    if [ -n "${KBENCH_PG_DIR:-}" ] && [ -d "$KBENCH_PG_DIR" ]; then
        kbench_pg_as "$KBENCH_PG_BIN/pg_ctl" -D "$KBENCH_PG_DIR/data" -m fast -w stop >/dev/null 2>&1 || true
        rm -rf "$KBENCH_PG_DIR"
    fi
    KBENCH_PG_DIR=
}

# Runs a command as the cluster's owner, from a directory it can enter.
kbench_pg_as() {
    if [ "$(id -u)" = 0 ]; then
        (cd "$KBENCH_PG_DIR" && runuser -u postgres -- "$@")
    else
        (cd "$KBENCH_PG_DIR" && "$@")
    fi
}

# A TCP port on 127.0.0.1 that nothing answers on (the server start retries
# with another when one is taken in between).
kbench_pg_free_port() {
    local port
    for _ in $(seq 50); do
        port=$((20000 + RANDOM % 40000))
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
            echo "$port"
            return 0
        fi
    done
    kbench_pg_fail "found no free port on 127.0.0.1"
}

kbench_pg_start() {
    KBENCH_PG_BIN=$( (ls -d /usr/lib/postgresql/*/bin 2>/dev/null || true) | sort -V | tail -n 1)
    if [ -z "$KBENCH_PG_BIN" ] || [ ! -x "$KBENCH_PG_BIN/initdb" ]; then
        kbench_pg_fail "no PostgreSQL server found under /usr/lib/postgresql; install it with: apt-get install postgresql"
        return 1
    fi
    local user=postgres
    if [ "$(id -u)" = 0 ]; then
        id postgres >/dev/null 2>&1 || { kbench_pg_fail "there is no postgres user; reinstall the postgresql package"; return 1; }
    else
        user=$(id -un)
    fi
    if [ "$(id -u)" = 0 ]; then
        # In /tmp: the postgres user must be able to reach it.
        KBENCH_PG_DIR=$(mktemp -d /tmp/kbench-pg.XXXXXX) || return 1
        chown postgres: "$KBENCH_PG_DIR"
    else
        KBENCH_PG_DIR=$(mktemp -d "${TMPDIR:-/tmp}/kbench-pg.XXXXXX") || return 1
    fi
    if ! kbench_pg_as "$KBENCH_PG_BIN/initdb" -D "$KBENCH_PG_DIR/data" -U "$user" \
        --auth=trust --encoding=UTF8 --locale=C --no-instructions >"$KBENCH_PG_DIR/initdb.log" 2>&1; then
        cat "$KBENCH_PG_DIR/initdb.log" >&2
        kbench_pg_stop
        kbench_pg_fail "initdb failed"
        return 1
    fi
    local port started=
    for _ in 1 2 3 4 5; do
        port=$(kbench_pg_free_port) || break
        if kbench_pg_as "$KBENCH_PG_BIN/pg_ctl" -D "$KBENCH_PG_DIR/data" -l "$KBENCH_PG_DIR/server.log" -w -t 60 \
            -o "-c listen_addresses=127.0.0.1 -p $port -k $KBENCH_PG_DIR" start >/dev/null; then
            started=1
            break
        fi
    done
    if [ -z "$started" ]; then
        cat "$KBENCH_PG_DIR/server.log" >&2 || true
        kbench_pg_stop
        kbench_pg_fail "the server did not start"
        return 1
    fi
    if ! kbench_pg_as "$KBENCH_PG_BIN/createdb" -h 127.0.0.1 -p "$port" -U "$user" kbench_test; then
        kbench_pg_stop
        kbench_pg_fail "createdb failed"
        return 1
    fi
    export KBENCH_TEST_POSTGRES_URL="postgres://$user@127.0.0.1:$port/kbench_test"
    echo "postgres.sh: PostgreSQL $("$KBENCH_PG_BIN/postgres" --version | awk '{print $3}') at $KBENCH_TEST_POSTGRES_URL (data in $KBENCH_PG_DIR)" >&2
}

if [ "${BASH_SOURCE[0]}" != "$0" ]; then
    # Sourced: start, and stop when the sourcing shell exits.
    kbench_pg_start || return 1
    trap kbench_pg_stop EXIT
else
    set -uo pipefail
    if [ $# -eq 0 ]; then
        echo "usage: bash .ci/postgres.sh COMMAND [ARGS...]   (or source it)" >&2
        exit 2
    fi
    kbench_pg_start || exit 1
    trap kbench_pg_stop EXIT INT TERM
    "$@"
    exit $?
fi
