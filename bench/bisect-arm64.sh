#!/usr/bin/env bash
# bench/bisect-arm64.sh: `kbench bisect --kernel arch/arm64/boot/Image` on
# an x86_64 host, booting arm64 kernels in qemu-system-aarch64 (TCG) with
# the aarch64 cross-build of kbench as the guests' init.
#
# No arm64 kernel is compiled: a git repository of 8 commits, whose build
# (`--build ./build.sh`) copies Debian's arm64 cloud kernel the commit's
# KERNEL file names into arch/arm64/boot/Image. Commit 5 switches it from
# 6.1 to 6.12, which open-close measures 40 % faster under TCG here; bisect
# must name that commit. It checks the plumbing a cross-built tree uses
# (the image's architecture from its path, qemu, the guest's kbench, one
# boot per measurement), not a kernel build.
#
# Needs: the host's kbench (cargo build --release), the aarch64 cross-build
# (docs/contributing.md, "kbench for aarch64"), qemu-system-arm, apt with
# arm64 packages (dpkg --add-architecture arm64 && apt-get update).
# Usage: bench/bisect-arm64.sh [--work DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
kbench=$PWD/target/release/kbench
work=$(mktemp -d)
if [ "${1:-}" = --work ]; then
    work=$2
    mkdir -p "$work"
fi

"$kbench" kernel fetch --arch arm64 debian:6.1 debian:6.12 | tee "$work/kernels.txt"
mapfile -t images < <(awk '{print $2}' "$work/kernels.txt")

repo=$work/repo
rm -rf "$repo" "$work/bisect.db"
git init -q "$repo"
cd "$repo"
git config user.email bench@kbench && git config user.name bench
printf 'arch/\n' >.gitignore
cat >build.sh <<'EOF'
#!/bin/sh
# Builds the kernel this commit names: copies that arm64 Image.
set -e
mkdir -p arch/arm64/boot
cp "$(cat KERNEL)" arch/arm64/boot/Image
EOF
chmod +x build.sh
echo "${images[0]}" >KERNEL
git add -A && git commit -qm "base: 6.1" && git tag good
for i in 1 2 3; do echo "change $i" >>CHANGES; git add -A; git commit -qm "change $i"; done
echo "${images[1]}" >KERNEL
git add -A && git commit -qm "switch to 6.12"
culprit=$(git rev-parse HEAD)
for i in 5 6 7; do echo "change $i" >>CHANGES; git add -A; git commit -qm "change $i"; done
git tag bad

started=$(date +%s)
"$kbench" --db "$work/bisect.db" bisect --repo "$repo" --good good --bad bad --build ./build.sh \
    --kernel arch/arm64/boot/Image --bench open-close --json >"$work/bisect.json"
elapsed=$(($(date +%s) - started))
python3 - "$work/bisect.json" "$culprit" "$elapsed" <<'PY'
import json, sys
result = json.load(open(sys.argv[1]))
named = (result.get("first_bad") or {}).get("hash")
ok = named == sys.argv[2]
print(f"arm64 bisect: {'named the switch' if ok else f'named {named}, not {sys.argv[2]}'} in {int(sys.argv[3]) / 60:.1f} min")
sys.exit(0 if ok else 1)
PY
