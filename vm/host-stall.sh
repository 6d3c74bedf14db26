#!/usr/bin/env bash
# A busy host on demand: stops every QEMU process on this host for MS
# milliseconds every SECS seconds, for as long as one runs (after a 20 s
# head start for the boot). Under TCG a guest's clock follows the host's,
# so each stop reaches the guest as a stall billed to whichever task ran.
# usage: vm/host-stall.sh MS SECS &   (then run a vm/tests or vm/bench job)
set -u
usage() { echo "usage: vm/host-stall.sh MS SECS (positive integers)" >&2; exit 2; }
[ $# -eq 2 ] || usage
case "$1$2" in '' | *[!0-9]*) usage ;; esac
[ "$1" -gt 0 ] && [ "$2" -gt 0 ] || usage
ms=$1
secs=$2
# (A process's name is cut at 15 characters: qemu-system-x86.)
cont() { pkill -CONT -x qemu-system-x86 2>/dev/null; }
trap 'cont; exit 0' INT TERM
trap cont EXIT
until pgrep -x qemu-system-x86 >/dev/null; do sleep 1; done
sleep 20
while pids=$(pgrep -x qemu-system-x86); do
    # shellcheck disable=SC2086 # one pid each
    kill -STOP $pids 2>/dev/null
    sleep "$(awk -v m="$ms" 'BEGIN { print m / 1000 }')"
    # shellcheck disable=SC2086
    kill -CONT $pids 2>/dev/null
    sleep "$secs"
done
