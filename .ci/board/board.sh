#!/bin/sh
# A U-Boot board for LAVA on this machine: qemu-system-aarch64's virt
# machine with Debian's U-Boot (u-boot-qemu) as its firmware, which loads
# what LAVA deploys over TFTP (qemu's user network serves LAVA's TFTP
# directory at 10.0.2.2). Like a lab's board, it has a serial console
# (`console`: this script's stdio, LAVA's connection command), power
# control (`reset`, `off`: LAVA's hard reset and power-off commands) and a
# device tree (`dtb FILE`: the machine's, which the job deploys).
#
# Usage: board.sh STATE_DIR dtb FILE | console | reset | off
set -eu
usage="usage: board.sh STATE_DIR dtb FILE | console | reset | off"
[ $# -ge 2 ] || { echo "$usage" >&2; exit 2; }
state=$1
mkdir -p "$state"
tftp=$(. /etc/default/tftpd-hpa && echo "$TFTP_DIRECTORY")
machine="-M virt -cpu cortex-a57 -m 2048 -smp 2 -bios /usr/lib/u-boot/qemu_arm64/u-boot.bin
    -netdev user,id=net0,tftp=$tftp -device virtio-net-pci,netdev=net0 -display none"
# Stops the running machine, if any (its pid file goes with it, so that
# a later stop cannot hit another process of that pid).
stop() {
    if [ -f "$state/qemu.pid" ]; then
        kill "$(cat "$state/qemu.pid")" 2>/dev/null || true
        rm -f "$state/qemu.pid"
    fi
}
case "$2" in
dtb) [ $# -eq 3 ] || { echo "$usage" >&2; exit 2; }
    exec qemu-system-aarch64 $machine -machine dumpdtb="$3" ;;
console)
    # Power on and off: each power-on runs the machine until it stops
    # (the guest powers off, or `reset` or `off` stops it).
    while true; do
        while [ ! -e "$state/power" ]; do sleep 0.2; done
        rm -f "$state/power"
        qemu-system-aarch64 $machine -serial stdio -monitor none -no-reboot \
            -pidfile "$state/qemu.pid" || true
    done ;;
# Power goes off, then on: the console's loop starts the machine afresh.
reset) stop; touch "$state/power" ;;
off) rm -f "$state/power"; stop ;;
*) echo "$usage" >&2; exit 2 ;;
esac
