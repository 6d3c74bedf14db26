#!/usr/bin/env bash
# Saves the simulator-beside-kernel replays of a VM test log for the
# report's page: every "# kernel-json {...}" line 77-sim-vs-kernel.sh
# printed, one JSON object per line on stdout, with the build and the
# command that measured it added (the page cites both).
#   bash vm/tests/run.sh --only '77-*.sh' > LOG
#   bash scripts/kernel-replays.sh [--build REV] LOG > docs/kernel/sim-vs-kernel.jsonl
#   tix sim report --out DIR --kernel docs/kernel/sim-vs-kernel.jsonl
set -euo pipefail
cd "$(dirname "$0")/.."

build=""
if [ "${1:-}" = --build ]; then
    [ $# -ge 2 ] || { echo "kernel-replays.sh: --build needs a revision" >&2; exit 2; }
    build=$2
    shift 2
fi
[ $# -eq 1 ] || { echo "usage: kernel-replays.sh [--build REV] LOG" >&2; exit 2; }
[ -r "$1" ] || { echo "kernel-replays.sh: cannot read $1" >&2; exit 1; }
# The build defaults to this checkout's commit, marked when its tree
# differs from that commit (the binaries the VM ran were built from it).
if [ -z "$build" ]; then
    build=$(git rev-parse --short HEAD)
    git diff --quiet HEAD -- crates vm || build="$build+changes"
fi
case $build in
    *[!A-Za-z0-9.+_-]*) echo "kernel-replays.sh: --build: letters, digits and . + _ - only" >&2; exit 2 ;;
esac
command="bash vm/tests/run.sh --only '77-*.sh'"
# Each line is one compact JSON object (serde_json's): the two fields go
# before its closing brace.
out=$(sed -n 's/^# kernel-json \({.*}\)$/\1/p' "$1" |
    sed 's|}$|,"build":"'"$build"'","command":"'"$command"'"}|')
[ -n "$out" ] || { echo "kernel-replays.sh: no kernel-json lines in $1" >&2; exit 1; }
printf '%s\n' "$out"
