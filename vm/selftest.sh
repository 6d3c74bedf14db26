#!/usr/bin/env bash
# Self-test of the VM harness and vm/guest/lib.sh under the kernel's default
# scheduler (no sched_ext scheduler attached): boot, users, hogs, CPU-time
# shares, state polling and the TAP helpers. Exit status = the guest's.
#
# usage: vm/selftest.sh [vm/run.sh options]
set -euo pipefail
here=$(dirname "$0")

exec "$here/run.sh" --timeout 180 "$@" -- "$(
    cat <<'GUEST'
. "$TIX_LIB"
diag "kernel $(uname -r), $(nproc) CPUs"
[ "$(sched_state)" = disabled ]; check "sched_ext present and idle" $?
[ -z "$(ops_name)" ]; check "no ops attached" $?
wait_state disabled 100; check "wait_state sees the current state" $?
wait_state enabled 200; [ $? = 1 ]; check "wait_state times out on a state never reached" $?

for u in alice bob; do
    [ "$(su -s /bin/sh $u -c 'id -u'):$(stat -c %U /home/$u)" = "$(id -u $u):$u" ]
    check "user $u exists and owns its home" $?
done
[ -d /etc/tix ]; check "/etc/tix exists" $?

# Two hogs on CPU 0 at nice 0 and nice 5: EEVDF weights 1024 and 335 give
# 1024/335 = 3.057. Over 4 s with ~3 ms slices the rounding error is well
# under 1%; 5% absorbs TCG's timer noise.
a=$(hog 0)
b=$(hog 0 alice)
renice -n 5 -p "$b" >/dev/null
[ "$(awk '/^Uid:/ { print $2 }' /proc/$b/status)" = 1001 ]; check "hog as alice runs as uid 1001" $?
[ "$(taskset -p "$a" | awk '{ print $NF }')" = 1 ]; check "hog is pinned to CPU 0" $?
c0=$(cpu_ns "$a"); sleep 0.5; c1=$(cpu_ns "$a")
[ "$c1" -gt "$c0" ]; check "cpu_ns advances for a running hog" $?
out=$(measure_shares 4 "$a" "$b")
diag "$out"
sa=$(echo "$out" | awk 'NR == 1 { print $2 }')
sb=$(echo "$out" | awk 'NR == 2 { print $2 }')
within "$(awk -v a="$sa" -v b="$sb" 'BEGIN { print a / b }')" 3.057 0.05
check "nice 0 : nice 5 CPU ratio within 5% of 3.057" $?
sum=$(echo "$out" | awk '{ s += $3 } END { printf "%.3f", s }')
[ "$sum" = 1.000 ]; check "shares sum to 1" $?
stop "$a" "$b"

[ "$(check probe 1)" = "not ok - probe" ] && [ "$(check probe 0)" = "ok - probe" ]
check "check prints TAP lines" $?
summary
GUEST
)"
