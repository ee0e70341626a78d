#!/usr/bin/env bash
# bench/sensitivity.sh: how often kbench finds real kernel-side slowdowns,
# and how often it calls identical runs changed, on this machine, as users
# run it. Each trial measures five identifiers on the running kernel:
#   base   TMPDIR=$W/t
#   same   the same again (A/A: any verdict of change is a false alarm)
#   slow   under a 1-instruction seccomp filter (bench/seccomp-slow 1): every
#          syscall pays the filter; mem-bw makes no syscalls and must not move
#   deep1  TMPDIR one directory deeper: open-close walks one more component
#   deep4  TMPDIR four directories deeper
# in one of these modes:
#   sequential  one identifier after another (`kbench run --as`), defaults
#   variant     one interleaved run (`kbench run --variant ...`), defaults
# with no load, or with one busy CPU (a spinning shell loop). It prints, per
# mode and load: false alarms over the metrics that did not really change,
# detections per (slowdown, metric) that did, the median change measured,
# and the wall time per identifier. Real runs, nothing simulated.
#
# Usage: bench/sensitivity.sh   (env: KEEP=1 keeps the work dir, TRIALS=5 MODES="sequential variant"
#        LOADS="none cpu1" TESTS="..." KBENCH=target/release/kbench)
set -euo pipefail
cd "$(dirname "$0")/.."
KBENCH=${KBENCH:-target/release/kbench}
TRIALS=${TRIALS:-5}
MODES=${MODES:-"sequential variant"}
LOADS=${LOADS:-"none cpu1"}
TESTS=${TESTS:-"syscall-null syscall-stat open-close pipe-lat mem-bw[op=rd]"}
SLOW="$PWD/bench/seccomp-slow"
[ -x "$KBENCH" ] || cargo build --release
W=$(mktemp -d /tmp/kbench-sensitivity.XXXXXX)
LOAD_PID=
cleanup() { [ -n "$LOAD_PID" ] && kill "$LOAD_PID" 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$W"; }
trap cleanup EXIT
mkdir -p "$W/t/a/b/c/d" "$W/out"
read -r -a tests <<<"$TESTS"
names=(base same slow deep1 deep4)
declare -A tmp=([base]=$W/t [same]=$W/t [slow]=$W/t [deep1]=$W/t/a [deep4]=$W/t/a/b/c/d)
declare -A wrap=([slow]="$SLOW 1")

start_load() {
  case $1 in
    none) LOAD_PID= ;;
    cpu1) sh -c 'while :; do :; done' & LOAD_PID=$! ;;
    *) echo "unknown load $1" >&2; exit 2 ;;
  esac
}
stop_load() { [ -n "$LOAD_PID" ] && kill "$LOAD_PID" && wait "$LOAD_PID" 2>/dev/null || true; LOAD_PID=; }

trial() { # mode load n -> $W/out/MODE-LOAD-N.json and .time
  local mode=$1 load=$2 n=$3 db="$W/$1-$2-$3.db" began ended
  began=$(date +%s.%N)
  case $mode in
    sequential)
      for name in "${names[@]}"; do
        args=(run "${tests[@]}" --into s --as "$name")
        [ -n "${wrap[$name]:-}" ] && args+=(--wrap "${wrap[$name]}")
        TMPDIR=${tmp[$name]} "$KBENCH" --db "$db" "${args[@]}" >/dev/null 2>&1
      done ;;
    variant)
      args=(run "${tests[@]}" --into s)
      for name in "${names[@]}"; do
        spec="$name=env:TMPDIR=${tmp[$name]}"
        [ -n "${wrap[$name]:-}" ] && spec+=";wrap:${wrap[$name]}"
        args+=(--variant "$spec")
      done
      "$KBENCH" --db "$db" "${args[@]}" >/dev/null 2>&1 ;;
    *) echo "unknown mode $mode" >&2; exit 2 ;;
  esac
  ended=$(date +%s.%N)
  "$KBENCH" --db "$db" compare s --format json >"$W/out/$mode-$load-$n.json"
  echo "$began $ended ${#names[@]}" >"$W/out/$mode-$load-$n.time"
}

for load in $LOADS; do
  start_load "$load"
  for n in $(seq 1 "$TRIALS"); do
    for mode in $MODES; do
      echo "trial $n/$TRIALS, $mode, load $load" >&2
      trial "$mode" "$load" "$n"
    done
  done
  stop_load
done

python3 - "$W/out" <<'EOF'
import glob, json, os, statistics, sys
out = sys.argv[1]
# What really slowed: seccomp slows every syscall (mem-bw makes none); a
# deeper TMPDIR slows the path walk of open-close only.
syscalls = ("syscall-null", "syscall-stat", "open-close", "pipe-lat")
def really_slower(variant, test):
    if variant == "slow":
        return test.startswith(syscalls)
    if variant in ("deep1", "deep4"):
        return test.startswith("open-close")
    return False
rows = {}
for path in sorted(glob.glob(f"{out}/*.json")):
    mode, load, _ = os.path.basename(path)[:-5].rsplit("-", 2)
    report = json.load(open(path))
    began, ended, ids = open(path[:-5] + ".time").read().split()
    row = rows.setdefault((mode, load), {"aa": [0, 0], "found": {}, "secs": []})
    row["secs"].append((float(ended) - float(began)) / int(ids))
    for metric in report["metrics"]:
        for result in metric["results"][1:]:
            c = result.get("comparison")
            if c is None:
                continue
            verdict, change = c["verdict"], c["change_pct"]["point"]
            if really_slower(result["identifier"], metric["test"]):
                key = (result["identifier"], metric["test"])
                row["found"].setdefault(key, []).append((verdict == "regression", change))
            else:
                row["aa"][1] += 1
                row["aa"][0] += verdict in ("regression", "improvement")
for (mode, load), row in sorted(rows.items()):
    trials = len(row["secs"])
    alarms, total = row["aa"]
    print(f"\n== {mode}, load {load}: {trials} trials, "
          f"{statistics.median(row['secs']):.0f} s per identifier (median)")
    print(f"  false alarms: {alarms} of {total} unchanged metrics "
          f"({100 * alarms / max(total, 1):.1f} %)")
    for (variant, test), hits in sorted(row["found"].items()):
        found = sum(h for h, _ in hits)
        change = statistics.median(c for _, c in hits)
        print(f"  {variant:6} {test:26} found {found}/{len(hits)}  "
              f"(median change {change:+.1f} %)")
EOF
