#!/usr/bin/env bash
# bench/bisect-kernel.sh: `kbench bisect` on a real Linux tree, end to end,
# as a kernel developer runs it. Debian's linux-source-6.1 becomes a git
# repository; on top of it go COMMITS commits: neutral ones (documentation,
# a comment in code the build compiles, which moves line numbers, a comment
# in a driver the build leaves out, a new file) and one culprit that makes
# getppid(2) do extra work (a volatile counter incremented N times).
# kbench bisect builds each
# commit it tests itself (--kernel-config tiny: out of tree, ccache), boots
# it under qemu (TCG here) and measures syscall-null (getppid) in blocks.
#
# For each culprit size and seed (the seed places the culprit and picks the
# neutral commits) it prints one line: whether bisect named the planted
# culprit, the culprit's measured effect against its parent with its 95 %
# CI, the A/A rebuild's, the wall time, builds, boots and ccache's hits;
# and appends the same as JSON to $WORK/summary.jsonl.
#
# Usage: bench/bisect-kernel.sh [--commits N] [--sizes "big small"]
#          [--seeds "1 2 3"] [--blocks N] [--max-blocks N] [--align-functions]
#          [--source TREE] [--work DIR]
#   --commits  commits on top of the base (default 16)
#   --sizes    culprit sizes: big (100 increments of a volatile counter),
#              small (3), or a number of increments (default "big small")
#   --seeds    one run per seed and size (default "1 2 3")
#   --blocks   bisect's starting blocks per decision (default 8)
#   --max-blocks  bisect's cap of the doubling (default 32: a step still
#              undecided there stops the run, which says so)
#   --align-functions  build with CONFIG_DEBUG_FORCE_FUNCTION_ALIGN_64B
#              (runs are named SIZE-SEED-aligned)
#   --source   an unpacked Linux tree to start from (default: Debian's
#              linux-source-6.1, downloaded with apt-get into WORK)
#   --work     where the repository, ccache, databases and reports go
#              (default ~/.cache/kbench-bench/bisect-kernel)
# KBENCH names the kbench binary (default target/release/kbench).
# Needs git, apt-get and dpkg-deb (for the source), make, gcc, flex, bison,
# bc, libelf-dev, ccache and qemu-system-x86.
set -euo pipefail

KBENCH=$(realpath "${KBENCH:-target/release/kbench}")
WORK=${HOME}/.cache/kbench-bench/bisect-kernel
COMMITS=16
SIZES="big small"
SEEDS="1 2 3"
BLOCKS=8
MAX_BLOCKS=32
ALIGN=()
SOURCE=""
while [ $# -gt 0 ]; do
    case "$1" in
    --commits) COMMITS=$2; shift 2 ;;
    --sizes) SIZES=$2; shift 2 ;;
    --seeds) SEEDS=$2; shift 2 ;;
    --blocks) BLOCKS=$2; shift 2 ;;
    --max-blocks) MAX_BLOCKS=$2; shift 2 ;;
    --align-functions) ALIGN=(--align-functions); shift ;;
    --source) SOURCE=$(realpath "$2"); shift 2 ;;
    --work) WORK=$2; shift 2 ;;
    *) echo "bisect-kernel.sh: unknown option $1 (see the comment at the top)" >&2; exit 2 ;;
    esac
done
if [ "$COMMITS" -lt 3 ]; then
    echo "bisect-kernel.sh: --commits must be at least 3 (a culprit between two neutral commits)" >&2
    exit 2
fi
for tool in git make gcc flex bison bc ccache qemu-system-x86_64 python3; do
    command -v "$tool" >/dev/null || { echo "bisect-kernel.sh: $tool is not installed" >&2; exit 2; }
done
[ -x "$KBENCH" ] || { echo "bisect-kernel.sh: no kbench at $KBENCH (cargo build --release, or set KBENCH)" >&2; exit 2; }
mkdir -p "$WORK"
WORK=$(realpath "$WORK")
export CCACHE_DIR="$WORK/ccache"
REPO="$WORK/linux"
GIT=(git -C "$REPO" -c user.name=bench -c user.email=bench@kbench.invalid -c commit.gpgsign=false -c core.hooksPath=/dev/null)

# The source tree: --source, or Debian's linux-source-6.1 unpacked once.
if [ -z "$SOURCE" ]; then
    SOURCE="$WORK/source/linux-source-6.1"
    if [ ! -f "$SOURCE/Makefile" ]; then
        rm -rf "$WORK/source" && mkdir -p "$WORK/source"
        (cd "$WORK/source" && apt-get download linux-source-6.1 >/dev/null &&
            dpkg-deb -x linux-source-6.1_*.deb deb &&
            tar xJf deb/usr/src/linux-source-6.1.tar.xz && rm -rf deb linux-source-6.1_*.deb)
    fi
fi

loops_of() {
    case "$1" in
    big) echo 100 ;;
    small) echo 3 ;;
    *[!0-9]* | "") echo "bisect-kernel.sh: a size is big, small or a number of increments, not $1" >&2; exit 2 ;;
    *) echo "$1" ;;
    esac
}

# Edits a file of the repository with a Python expression on its text `s`.
edit() {
    python3 - "$REPO/$1" "$2" <<'EOF'
import sys
path, expression = sys.argv[1], sys.argv[2]
s = open(path).read()
t = eval(expression, {"s": s})
assert t != s, f"{path}: the edit changed nothing"
open(path, "w").write(t)
EOF
}

# The base repository: the tree as one commit, tagged base (made once).
if ! "${GIT[@]}" rev-parse -q --verify base >/dev/null 2>&1; then
    rm -rf "$REPO"
    echo "making a git repository of $SOURCE in $REPO ..." >&2
    cp -a "$SOURCE" "$REPO"
    # Debian's packaging ignores everything at the top level: take that out,
    # or git would see no file.
    if grep -q '^# Debian packaging' "$REPO/.gitignore"; then
        edit .gitignore "s.split('#\n# Debian packaging')[0]"
    fi
    "${GIT[@]}" init -q -b main
    "${GIT[@]}" add -A
    "${GIT[@]}" commit -q -m "linux-source-6.1 as Debian ships it"
    "${GIT[@]}" tag base
fi

# A neutral commit of kind (n % 4), its details from n.
neutral() {
    local n=$1 i=$2
    case $((n % 4)) in
    0)
        local docs=(Documentation/process/changes.rst Documentation/admin-guide/README.rst Documentation/filesystems/proc.rst)
        local f=${docs[$((n / 4 % 3))]}
        printf '\n.. Note %s: wording reviewed (neutral commit).\n' "$i" >>"$REPO/$f"
        echo "docs: note on $(basename "$f") ($i)"
        ;;
    1)
        # A comment in code the tiny build compiles: the lines after it move,
        # so __LINE__ in WARN_ON and the like changes, as in real commits.
        local files=(kernel/fork.c fs/namei.c kernel/exit.c fs/read_write.c)
        local f=${files[$((n / 4 % 4))]}
        edit "$f" "s.replace('\n\nstatic ', '\n\n/* Neutral commit $i: no code changes. */\nstatic ', 1)"
        echo "$(dirname "$f"): comment in $(basename "$f") ($i)"
        ;;
    2)
        local f=drivers/net/ethernet/intel/e1000/e1000_main.c
        edit "$f" "s.replace('\n\nstatic ', '\n\n/* e1000 note $i: unrelated to this kernel. */\nstatic ', 1)"
        echo "e1000: comment in a driver this config does not build ($i)"
        ;;
    3)
        printf 'Notes of neutral commit %s.\n' "$i" >"$REPO/Documentation/kbench-neutral-$i.txt"
        echo "docs: add kbench-neutral-$i.txt"
        ;;
    esac
}

# The culprit: getppid increments a volatile counter $1 times (a load and a
# store each, which the compiler must keep).
plant() {
    edit kernel/sys.c "s.replace('''SYSCALL_DEFINE0(getppid)
{
	int pid;
''', '''static volatile unsigned int getppid_extra;

SYSCALL_DEFINE0(getppid)
{
	int pid;
	unsigned int i;

	for (i = 0; i < $1; i++)
		getppid_extra++;
''', 1)"
    echo "sys: getppid does $1 increments of extra work (the planted culprit)"
}

run_one() {
    local size=$1 seed=$2 loops at i subject culprit=""
    loops=$(loops_of "$size")
    at=$((2 + (seed * 7) % (COMMITS - 2)))
    "${GIT[@]}" checkout -q -f -B "series-$size-$seed" base
    for i in $(seq 1 "$COMMITS"); do
        if [ "$i" -eq "$at" ]; then
            subject=$(plant "$loops")
        else
            subject=$(neutral $((seed * 31 + i * 17)) "$i")
        fi
        "${GIT[@]}" add -A
        "${GIT[@]}" commit -q -m "$subject"
        if [ "$i" -eq "$at" ]; then culprit=$("${GIT[@]}" rev-parse HEAD); fi
    done
    "${GIT[@]}" checkout -q -f base
    local name="$size-$seed${ALIGN:+-aligned}"
    local db="$WORK/runs/$name.db"
    mkdir -p "$WORK/runs"
    rm -f "$db"
    echo "== $name: culprit at commit $at of $COMMITS (getppid +$loops increments), $culprit" >&2
    local started=$SECONDS status=0
    "$KBENCH" --db "$db" bisect --repo "$REPO" --good base --bad "series-$size-$seed" \
        --kernel-config tiny "${ALIGN[@]}" --bench syscall-null --blocks "$BLOCKS" --max-blocks "$MAX_BLOCKS" --into "bisect-$name" \
        --html "$WORK/runs/$name.html" --json >"$WORK/runs/$name.json" 2>"$WORK/runs/$name.log" || status=$?
    local seconds=$((SECONDS - started))
    python3 - "$WORK/runs/$name.json" "$name" "$loops" "$at" "$culprit" "$status" "$seconds" "$WORK/runs/$name.log" <<'EOF' | tee -a "$WORK/summary.jsonl"
import json, sys
path, name, loops, at, culprit, status, seconds, log = sys.argv[1:]
row = {"run": name, "loops": int(loops), "culprit_at": int(at), "planted": culprit,
       "exit": int(status), "seconds": int(seconds)}
try:
    r = json.load(open(path))
except ValueError:
    lines = open(log).read().strip().splitlines()
    row["error"] = lines[-1] if lines else "no output"
    print(json.dumps(row))
    sys.exit(0)
ch, ref = r["change"]["change_pct"], r["reference"]["change_pct"]
builds = r["builds"]
hits = sum(b["ccache"]["hits"] for b in builds if b.get("ccache"))
misses = sum(b["ccache"]["misses"] for b in builds if b.get("ccache"))
row.update({
    "found": r["first_bad"]["hash"] == culprit,
    "named": r["first_bad"]["identifier"],
    "confirmed": r["confirmed"],
    "effect_pct": [round(ch["point"], 2), round(ch["ci_low"], 2), round(ch["ci_high"], 2)],
    "endpoints_pct": [round(ref["point"], 2), round(ref["ci_low"], 2), round(ref["ci_high"], 2)],
    "rebuild_pct": None if not r.get("rebuild") else [round(r["rebuild"]["change"]["change_pct"][k], 2) for k in ("point", "ci_low", "ci_high")],
    "rebuild_identical": None if not r.get("rebuild") else r["rebuild"]["identical"],
    "builds": len(builds),
    "build_minutes": round(sum(b["seconds"] for b in builds) / 60, 1),
    "boots": r["measurements_now"],
    "commits_measured": r["commits_measured"],
    "ccache_hits": hits, "ccache_misses": misses,
})
print(json.dumps(row))
EOF
}

for size in $SIZES; do
    for seed in $SEEDS; do
        run_one "$size" "$seed"
    done
done
