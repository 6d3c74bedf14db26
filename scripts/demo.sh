#!/usr/bin/env bash
# tix demo: three CPU hogs pinned to one CPU with 100, 200 and 400 tickets;
# expected against measured CPU shares under scx_tix lottery, then stride,
# then the kernel's default scheduler (nice 0/-3/-6), printed as one table.
# Runs natively when this kernel has sched_ext and we are root, otherwise in
# the VM (vm/run.sh, which fetches a sched_ext kernel on first use).
#
# usage: scripts/demo.sh [--vm | --native] [--secs N] [--no-build]
#   --secs N     seconds measured per scheduler (default 10)
#   --no-build   use already built binaries
# env: CARGO_TARGET_DIR (where the release binaries are), TIX_VM_* (see vm/run.sh)
set -euo pipefail
# Multi-threaded TCG crashed a guest on a second attach (int3 in
# task_should_scx during fork); single-threaded TCG has not.
export TIX_VM_ACCEL=${TIX_VM_ACCEL:-tcg,thread=single}
repo=$(cd "$(dirname "$0")/.." && pwd)

mode=auto
secs=10
build=1
while [ $# -gt 0 ]; do
    case "$1" in
        --vm) mode=vm ;;
        --native) mode=native ;;
        --no-build) build=0 ;;
        --secs)
            [ $# -ge 2 ] || { echo "demo: --secs needs a number" >&2; exit 2; }
            secs=$2
            shift
            ;;
        -h | --help)
            sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'
            exit 0
            ;;
        *)
            echo "demo: unknown argument '$1' (try --help)" >&2
            exit 2
            ;;
    esac
    shift
done
case "$secs" in '' | *[!0-9]* | 0)
    echo "demo: --secs must be a positive integer, got '$secs'" >&2
    exit 2
    ;;
esac

if [ "$mode" = auto ]; then
    if [ -e /sys/kernel/sched_ext/state ] && [ "$(id -u)" = 0 ]; then mode=native; else mode=vm; fi
fi
if [ "$mode" = native ]; then
    [ -e /sys/kernel/sched_ext/state ] || { echo "demo: this kernel has no sched_ext (use --vm)" >&2; exit 1; }
    [ "$(id -u)" = 0 ] || { echo "demo: attaching a scheduler needs root (use --vm, or sudo)" >&2; exit 1; }
fi

target=${CARGO_TARGET_DIR:-$repo/target}
if [ "$build" = 1 ]; then
    echo "demo: building scx_tix and tix (release)" >&2
    (cd "$repo" && cargo build --release -p scx_tix -p tix) >&2 || { echo "demo: build failed" >&2; exit 1; }
fi
for b in scx_tix tix; do
    [ -x "$target/release/$b" ] || { echo "demo: $target/release/$b missing (build failed or --no-build)" >&2; exit 1; }
done

# The measurement itself, POSIX sh: busybox ash in the VM, /bin/sh natively.
read -r -d '' guest <<'GUEST' || true
set -u
. "$TIX_LIB"
log=/tmp/scx_tix-demo.log
table=/tmp/tix-demo-table
daemon=""
hogs=""
fail() {
    echo "demo: error: $*"
    daemon_report demo "$daemon" "$log"
    [ -n "$daemon" ] && kill -TERM "$daemon" 2>/dev/null
    stop $hogs
    exit 1
}
command -v scx_tix >/dev/null || fail "scx_tix not on PATH"
command -v tix >/dev/null || fail "tix not on PATH"
if ! command -v lrenice >/dev/null; then
    mkdir -p /tmp/tix-demo-bin
    ln -sf "$(command -v tix)" /tmp/tix-demo-bin/lrenice
    PATH=/tmp/tix-demo-bin:$PATH
fi
[ "$(sched_state)" = disabled ] || fail "a sched_ext scheduler is already attached: $(ops_name)"

h1=$(hog 0)
h2=$(hog 0)
h3=$(hog 0)
hogs="$h1 $h2 $h3"
: >"$table"

# measure LABEL W1 W2 W3: measure the three hogs and add rows (expected = W / sum W).
measure() {
    out=$(measure_shares "$DEMO_SECS" $h1 $h2 $h3)
    echo "$out" | awk -v label="$1" -v w="$2 $3 $4" -v unit="$5" '
        BEGIN { split(w, W, " "); for (i = 1; i <= 3; i++) sw += W[i] }
        { i = NR; e = W[i] / sw; m = $3
          printf "| %-17s | hog %d | %-13s | %8.3f | %8.3f | %8.3f |\n", label, i, W[i] " " unit, e, m, m / e }
    ' >>"$table"
}

scx_tix --policy lottery >"$log" 2>&1 &
daemon=$!
wait_attach "$daemon" 300000 || fail "scx_tix did not attach (state $(sched_state); waited up to 300 s)"
i=0
until tix status >/dev/null 2>&1; do
    i=$((i + 1))
    [ $i -le 100 ] || fail "tix status keeps failing: $(tix status 2>&1 | head -n 1)"
    sleep 0.1
done
lrenice "$h1" 100 >/dev/null || fail "lrenice $h1 100 failed"
lrenice "$h2" 200 >/dev/null || fail "lrenice $h2 200 failed"
lrenice "$h3" 400 >/dev/null || fail "lrenice $h3 400 failed"
for p in $hogs; do on_scx "$p" || fail "hog $p is not scheduled by sched_ext"; done
echo "demo: scx_tix attached ($(ops_name)); lottery for ${DEMO_SECS}s"
sleep 1
measure "scx_tix lottery" 100 200 400 tickets
[ "$(sched_state)" = enabled ] || fail "scx_tix was ejected during the lottery run"

tix policy stride >/dev/null || fail "tix policy stride failed"
echo "demo: stride for ${DEMO_SECS}s"
sleep 1
measure "scx_tix stride" 100 200 400 tickets
[ "$(sched_state)" = enabled ] || fail "scx_tix was ejected during the stride run"

kill -TERM "$daemon"
wait "$daemon" 2>/dev/null
daemon=""
wait_state disabled 2000 || fail "sched_ext still $(sched_state) 2 s after SIGTERM"
# nice 0/-3/-6 are weights 1024/1991/3906 (1 : 1.94 : 3.81), the closest nice ratio to 1:2:4.
renice -n 0 -p "$h1" >/dev/null && renice -n -3 -p "$h2" >/dev/null && renice -n -6 -p "$h3" >/dev/null ||
    fail "renice failed"
echo "demo: default scheduler (nice 0/-3/-6) for ${DEMO_SECS}s"
sleep 1
measure "default (nice)" 1024 1991 3906 weight
stop $hogs

echo
echo "Three CPU hogs pinned to CPU 0, ${DEMO_SECS} s per scheduler, kernel $(uname -r):"
echo
echo "| scheduler         | hog   | tickets       | expected | measured | meas/exp |"
echo "|-------------------|-------|---------------|----------|----------|----------|"
cat "$table"
echo
echo "default: nice 0/-3/-6 (weights 1024/1991/3906 = 1 : 1.94 : 3.81) is the closest nice ratio to 1:2:4."
GUEST

if [ "$mode" = native ]; then
    echo "demo: running natively on $(uname -r)" >&2
    PATH="$target/release:$PATH" TIX_LIB="$repo/vm/guest/lib.sh" DEMO_SECS=$secs sh -c "$guest"
else
    echo "demo: this kernel has no sched_ext or we are not root: running in the VM" >&2
    exec "$repo/vm/run.sh" --cpus 2 --timeout $((3 * secs + 900)) \
        --add "$target/release/scx_tix" --add "$target/release/tix" -- "DEMO_SECS=$secs
$guest"
fi
