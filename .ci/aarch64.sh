#!/usr/bin/env bash
# kbench for aarch64, cross-built on this x86_64 Debian 12 machine with
# Debian's Rust (rustc-web, whose arm64 standard library is a package;
# rustup's toolchain here has none and cannot fetch one), statically linked
# so that it runs without an arm64 loader, under qemu-user:
#   - the tests of the statistics, the model and the benchmark registry;
#   - one real `kbench run` of syscall-null and aim9's exec-test (its
#     aarch64 exit(0) helper exec'd), whose snapshot must say aarch64;
#   - `kbench vm compare` (the host's x86_64 kbench) of Debian's arm64 cloud
#     kernels 6.1 and 6.12, booted in qemu-system-aarch64 under TCG with
#     this aarch64 build as their init: both kernels' samples stored, with
#     the guest's release and architecture;
#   - a LAVA job of the same kernels (lava-run), on LAVA's qemu device
#     type and on a U-Boot board (.ci/board);
#   - the arm64 Debian package of this build.
# Emulated timings are functional checks only. A run's agent is a child
# process exec'd from the aarch64 binary, so qemu-aarch64 is registered
# with binfmt_misc (qemu-user-binfmt; update-binfmts is binfmt-support's,
# which a machine without systemd lacks) for it.
#
# Needs, as root: dpkg --add-architecture arm64 && apt-get update &&
#   apt-get install rustc-web cargo-web libstd-rust-web-dev:arm64
#   gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user qemu-user-binfmt
#   binfmt-support qemu-system-arm lava-dispatcher u-boot-qemu u-boot-tools
#   tftpd-hpa
# (.ci/run installs them), and cargo-deb for the package. docs/contributing.md has the same commands.
set -euo pipefail
cd "$(dirname "$0")/.."

target=aarch64-unknown-linux-gnu
missing=()
for tool in /usr/bin/rustc /usr/bin/cargo aarch64-linux-gnu-gcc qemu-aarch64 update-binfmts \
    qemu-system-aarch64 cargo-deb lava-run mkimage; do
    command -v "$tool" >/dev/null || missing+=("$tool")
done
[ -d /usr/lib/rustlib/$target ] || missing+=("the arm64 standard library")
[ -f /usr/lib/u-boot/qemu_arm64/u-boot.bin ] || missing+=("U-Boot for qemu")
[ -f /etc/default/tftpd-hpa ] || missing+=("tftpd-hpa's TFTP directory")
if [ ${#missing[@]} -gt 0 ]; then
    echo ".ci/aarch64.sh: missing ${missing[*]}: apt-get install rustc-web cargo-web" \
         "libstd-rust-web-dev:arm64 gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user" \
         "qemu-user-binfmt binfmt-support qemu-system-arm lava-dispatcher u-boot-qemu" \
         "u-boot-tools tftpd-hpa (after dpkg" \
         "--add-architecture arm64);" \
         "cargo install cargo-deb --locked --no-default-features" >&2
    exit 1
fi

# The host's kbench, which boots the arm64 guests (built already by the
# README's test command; its flags, not the cross-build's below).
cargo build --release -p kbench
host_kbench=target/release/kbench

# rustup's cargo and rustc come first on PATH: Debian's are named.
export RUSTC=/usr/bin/rustc
export RUSTFLAGS="-C target-feature=+crt-static"
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER=qemu-aarch64
# Apart from the host's build: another compiler's artifacts.
export CARGO_TARGET_DIR=target/aarch64
cargo=(/usr/bin/cargo)

"${cargo[@]}" build --release --target $target -p kbench
# --lib --tests: the doctests would need an arm64 rustdoc.
"${cargo[@]}" test --release --target $target -p kbench-stats -p kbench-model --lib --tests
"${cargo[@]}" test --release --target $target -p kbench-bench --test docs
"${cargo[@]}" test --release --target $target -p kbench-bench --lib each_benchmark_says_where_its_loop_runs

if [ ! -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]; then
    mountpoint -q /proc/sys/fs/binfmt_misc || mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
    update-binfmts --enable qemu-aarch64
fi
kbench=$CARGO_TARGET_DIR/$target/release/kbench
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
qemu-aarch64 "$kbench" --version
qemu-aarch64 "$kbench" --db "$work/r.db" run syscall-null exec-test --rounds 1 --max-time 0.2 --into arm
qemu-aarch64 "$kbench" --db "$work/r.db" export arm > "$work/arm.json"
python3 - "$work/arm.json" <<'PY'
import json, sys
data = json.load(open(sys.argv[1]))
runs = [run for identifier in data["identifiers"] for run in identifier["runs"]]
arches = {run["info"]["snapshot"]["arch"] for run in runs}
assert arches == {"aarch64"}, arches
tests = {test for run in runs for test in run["samples"]}
assert {"syscall-null", "exec-test"} <= tests, tests
print(f"aarch64 kbench under qemu-user: {len(runs)} run(s), arch {arches.pop()}, tests {sorted(t for t in tests if ':' not in t)}")
PY

# arm64 guests on this x86_64 machine: qemu-system-aarch64 -M virt, TCG.
"$host_kbench" kernel fetch --arch arm64 --kernel-cache "$work/kernels" debian:6.1 debian:6.12 \
    | tee "$work/kernels.txt"
mapfile -t images < <(awk '{print $2}' "$work/kernels.txt")
[ ${#images[@]} = 2 ] || { echo "expected two arm64 kernels, got: ${images[*]}" >&2; exit 1; }
"$host_kbench" --db "$work/vm.db" vm compare --kernel "${images[0]}" --kernel "${images[1]}" \
    syscall-null exec-test --rounds 2 --max-time 0.3 --accel tcg --into arm64-kernels \
    --guest-kbench "$kbench" --kernel-cache "$work/kernels"
"$host_kbench" --db "$work/vm.db" export arm64-kernels > "$work/arm64-kernels.json"
python3 - "$work/arm64-kernels.json" "$work/kernels.txt" <<'PY'
import json, sys
data = json.load(open(sys.argv[1]))
releases = [line.split()[0] for line in open(sys.argv[2])]
by_name = {identifier["name"]: identifier for identifier in data["identifiers"]}
assert sorted(by_name) == sorted(releases), (sorted(by_name), releases)
for release in releases:
    runs = by_name[release]["runs"]
    assert len(runs) == 2, (release, len(runs))  # one run per boot, two boots
    for run in runs:
        snapshot = run["info"]["snapshot"]
        assert snapshot["arch"] == "aarch64", snapshot["arch"]
        assert snapshot["kernel_release"] == release, (snapshot["kernel_release"], release)
        for test in ("syscall-null", "exec-test"):
            assert len(run["samples"].get(test, [])) > 0, (release, test)
print(f"arm64 guests under TCG: {', '.join(releases)}: 2 boots each, samples of both tests, arch aarch64")
PY

# The same arm64 kernels as a LAVA job, run by Debian's lava-dispatcher
# (`lava-run`) on the qemu device type, whose dictionary is lava-server's
# own template rendered with the job's context (arch arm64), without KVM.
templates=target/tmp/lava-server/usr/share/lava-server/device-types
if [ ! -f "$templates/qemu.jinja2" ]; then
    mkdir -p target/tmp/lava-server
    (cd target/tmp/lava-server && apt-get download lava-server >/dev/null && dpkg-deb -x lava-server_*.deb .)
fi

# Writes the dictionary of a device on stdout: SOURCE (a template that
# extends one of lava-server's, or .ci/board's) rendered with JOB's context
# and the KEY=VALUE pairs, as a server does when it schedules the job.
render_device() {
    /usr/bin/python3 - "$templates" "$@" <<'PY'
import sys, jinja2, yaml
templates, source, job, *pairs = sys.argv[1:]
context = yaml.safe_load(open(job))["context"]
context.update(pair.split("=", 1) for pair in pairs)
env = jinja2.Environment(loader=jinja2.FileSystemLoader([templates, ".ci/board"]), autoescape=False, trim_blocks=True)
sys.stdout.write(env.from_string(source).render(**context))
PY
}

# Imports lava-run's LOG into result set SET and checks it: two boots of
# each kernel, each run an aarch64 snapshot of its kernel's release, with
# samples; WHAT names the job in the line it prints.
import_boots() {
    local log=$1 set=$2 what=$3
    "$host_kbench" --db "$work/lava.db" lava import "$log" --into "$set"
    "$host_kbench" --db "$work/lava.db" export "$set" > "$work/$set.json"
    python3 - "$work/$set.json" "$work/kernels.txt" "$what" <<'PY'
import json, sys
data = json.load(open(sys.argv[1]))
releases = sorted(line.split()[0] for line in open(sys.argv[2]))
runs = {i["name"]: i["runs"] for i in data["identifiers"]}
assert sorted(runs) == releases, (sorted(runs), releases)
for release, its in runs.items():
    assert len(its) == 2, (release, len(its))  # one run per boot
    for run in its:
        snapshot = run["info"]["snapshot"]
        assert (snapshot["arch"], snapshot["kernel_release"]) == ("aarch64", release), snapshot
        assert len(run["samples"]["syscall-null"]) > 0, release
print(f"arm64 kernels {sys.argv[3]}: {', '.join(releases)}: 2 boots each, arch aarch64")
PY
}

"$host_kbench" --db "$work/lava.db" lava job --kernel "${images[0]}" --kernel "${images[1]}" \
    syscall-null --boots 2 --max-time 0.5 --guest-kbench "$kbench" \
    --kernel-cache "$work/kernels" --out "$work/lava-job" >/dev/null
render_device "{% extends 'qemu.jinja2' %}{% set no_kvm = True %}" "$work/lava-job/job.yaml" \
    > "$work/qemu.yaml"
lava-run --job-id 1 --output-dir "$work/lava-out" --device "$work/qemu.yaml" \
    "$work/lava-job/job.yaml" 2> "$work/lava.log" || { tail -c 4000 "$work/lava.log" >&2; exit 1; }
import_boots "$work/lava.log" arm64-lava "on LAVA's qemu device (lava-run)"

# The same kernels on a U-Boot board, run by lava-run as a lab runs one:
# .ci/board/board.sh is qemu's virt machine with Debian's U-Boot as its
# firmware, a serial console and power control; LAVA deploys each boot's
# kernel, initramfs (with U-Boot's header) and the board's device tree to
# its TFTP directory, U-Boot loads them over the network and boots them
# (booti), every boot on the first one's console.
board=$(readlink -f .ci/board/board.sh)
"$board" "$work/board" dtb "$work/board.dtb"
"$host_kbench" --db "$work/lava.db" lava job --kernel "${images[0]}" --kernel "${images[1]}" \
    syscall-null --boots 2 --max-time 0.5 --guest-kbench "$kbench" \
    --kernel-cache "$work/kernels" --out "$work/board-job" \
    --boot-method u-boot --device-type qemu-uboot --dtb "$work/board.dtb" >/dev/null
render_device "{% extends 'qemu-uboot.jinja2' %}" "$work/board-job/job.yaml" \
    board="$board" state="$work/board" > "$work/board.yaml"
# U-Boot fetches from qemu's TFTP server, at 10.0.2.2 on its network.
echo "dispatcher_ip: 10.0.2.2" > "$work/dispatcher.yaml"
started=$(date +%s)
lava-run --job-id 2 --output-dir "$work/board-out" --device "$work/board.yaml" \
    --dispatcher "$work/dispatcher.yaml" "$work/board-job/job.yaml" 2> "$work/board.log" \
    || { tail -c 4000 "$work/board.log" >&2; exit 1; }
echo "U-Boot board job (lava-run, 4 boots): $(( $(date +%s) - started )) s"
grep -c 'Loading init Ramdisk from Legacy Image' "$work/board.log" | grep -qx 4 \
    || { echo "U-Boot did not load the four initramfs images" >&2; exit 1; }
import_boots "$work/board.log" board "on a U-Boot board (lava-run)"

# The arm64 Debian package, of this build.
bash .ci/deb.sh --no-build --target $target release
dpkg-deb --info "$CARGO_TARGET_DIR"/$target/debian/kbench_*_arm64.deb | grep '^ Architecture: arm64$' >/dev/null
