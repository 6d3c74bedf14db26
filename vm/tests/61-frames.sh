# Frames after a pinned load (main.bpf.c, lift_shared_time): a hog pinned
# to every CPU for SECS moves every CPU frame's T while the shared frame's
# T moves only with the few shared tasks; then as many unpinned hogs start,
# with a periodic waker (cyclictest, whose thread it pins to CPU 0 itself
# when no -a is given) and a sampler forking every
# 0.2 s beside both phases, as a user's shell would be. Shared tasks keyed
# far behind every CPU's T won every decision on every CPU while the CPUs'
# own tasks waited for the starvation guards, until they caught up
# (docs/kernel-results.md, "Frames after a pinned load").
#
# Checked: no starvation-guard serve in the free phase beyond what the
# host's stalls explain. A guard serves a DSQ its CPU has not served for
# starve_ns (500 ms). A CPU that is run decides at every slice end (4 ms),
# so such a gap is either decisions going against the DSQ (the fault) or
# time the host did not run the vCPU, which scx_tix counts as stalled
# (run time past a slice and a tick). Allowed: one serve per 250 ms
# stalled on any CPU, half a starve_ns, for the slices between stalls.
# On 4 vCPUs single-threaded TCG counts 11-16 s stalled in the 8 s (each
# vCPU waits for three others' turns), which allows too much to tell; so
# also: cyclictest's longest wait in the free phase is at most 3x its
# longest in the pinned phase just before, the same waker on the same
# guest and host (free, it may use any CPU; 3x for two 8 s windows of a
# host that varies), and the same of a second cyclictest beside it whose
# thread is unpinned (a shared task: the lift must not leave it behind
# the CPUs' own tasks either). Measured (this file, 2 and 4 vCPUs, a second guest
# beside): before the lift 11-15 serves on 2 vCPUs (303-408 ms stalled
# where counted), 7-12 on 4, and the free phase's longest wait 1.01-1.06 s
# against 61-168 ms pinned; with it no serve, and 18-129 ms against
# 60-178 ms.
#
# Then a pinned load beside idle CPUs (vtime.bpf.h, key_on_cpu): a hog
# pinned to CPU 0 runs alone for 2 x SECS while every other CPU idles, so
# CPU 0's T moves and no other frame's does (the lift never acts); then
# NCPU unpinned hogs start. NCPU + 1 hogs on NCPU CPUs, each capped at
# one: each is due NCPU / (NCPU + 1) of a CPU, an equal part of the hogs'
# time. Before the floor the new hogs were weighed on CPU 0 by keys far
# behind its T and won every decision there until they caught up, while
# the pinned hog ran at the starvation guards' serves. Checked: the
# pinned hog's part of the hogs' time over the next 4 s is at least its
# due less lottery_tol (4 binomial sd of the draws the hogs won in the
# window, with the host's stalls; stride's errors are smaller) and less
# the lag banks the floor leaves the new hogs (32 of their 4 ms slices,
# each, on CPU 0) over the hogs' time. Measured on 2 vCPUs (this file,
# the build before the floor, 1bf5e2e): .0239 (stride) and .1419
# (lottery) with 12 and 8 serves, bound .2355 and .2319 (8 s alone it
# was .2261 and .2324: too close to tell, hence 2 x SECS). On 4 vCPUs
# the build before left the pinned hog its due even after 16 s (.2015
# and .2086, 3 and 5 serves; single-threaded TCG stalls every vCPU for
# three others' turns), so there the check guards against a regression
# but does not tell the builds apart.

NCPU=$(nproc)
SECS=8

serves() { tix status 2>/dev/null | awk '$1 == "decisions:" { for (i = 1; i < NF; i++) if ($i == "serves") { print $(i + 1) + 0; exit } }'; }

sampler() {
    _end=$(($(now_ms) + $1 * 1000))
    while [ "$(now_ms)" -lt "$_end" ]; do
        awk '{ print $1 }' /proc/loadavg >/dev/null
        sleep 0.2
    done
}

# hogs each|any: NCPU hogs, one pinned to each CPU or all unpinned; their pids.
hogs() {
    _h=""
    _c=0
    while [ "$_c" -lt "$NCPU" ]; do
        if [ "$1" = each ]; then _h="$_h $(hog "$_c")"; else _h="$_h $(hog any)"; fi
        _c=$((_c + 1))
    done
    echo "$_h"
}

# unpin PID: every thread of PID allowed on every CPU, once its measuring
# thread exists (this cyclictest pins thread #N to CPU #N when no -a is
# given); prints how many of its threads are still pinned.
unpin() {
    _all=$(printf '%x' $(((1 << NCPU) - 1)))
    _i=0
    while [ "$(ls /proc/"$1"/task 2>/dev/null | wc -l)" -lt 2 ] && [ "$_i" -lt 250 ]; do
        sleep 0.02
        _i=$((_i + 1))
    done
    _n=0
    for _t in /proc/"$1"/task/*; do
        taskset -p "$_all" "${_t##*/}" >/dev/null 2>&1
        [ "$(awk '/^Cpus_allowed_list/ { print $2 }' "$_t/status")" = "0-$((NCPU - 1))" ] || _n=$((_n + 1))
    done
    echo "$_n"
}

# phase OUT FREE_OUT: SECS of two cyclictests, one as it runs by default
# (no -a: its thread on CPU 0, output to OUT) and one unpinned (FREE_OUT;
# its first samples, before the unpinning, come from CPU 0), and the
# sampler. PINNED: its threads still pinned after the unpinning.
phase() {
    cyclictest -q -D "$SECS" -i 1000 -t 1 >"$1" 2>&1 &
    _ct=$!
    cyclictest -q -D "$SECS" -i 1000 -t 1 >"$2" 2>&1 &
    _cf=$!
    PINNED=$(unpin "$_cf")
    sampler "$SECS"
    wait "$_ct"
    wait "$_cf"
}

# ct_max OUT: cyclictest's longest wait (us) in OUT.
ct_max() { awk '/Max:/ { for (i = 1; i < NF; i++) if ($i == "Max:") print $(i + 1) }' "$1"; }

for pol in stride lottery; do
    tix_start --policy "$pol"
    check "frames $pol: attached" $?
    PIN=$(hogs each)
    phase /tmp/frames-ct1.out /tmp/frames-cf1.out
    p1=$PINNED
    stop $PIN

    FREE=$(hogs any)
    s0=$(serves)
    set -- $(stall_counts)
    m0=${1:-0}
    phase /tmp/frames-ct2.out /tmp/frames-cf2.out
    p2=$PINNED
    s1=$(serves)
    set -- $(stall_counts)
    m1=${1:-0}
    stop $FREE
    mx1=$(ct_max /tmp/frames-ct1.out)
    mx2=$(ct_max /tmp/frames-ct2.out)
    mf1=$(ct_max /tmp/frames-cf1.out)
    mf2=$(ct_max /tmp/frames-cf2.out)
    allow=$(((m1 - m0) / 250))
    diag "$pol: guard serves in the free phase after the pinned one: $((s1 - s0)) (allowed $allow: $((m1 - m0)) ms stalled); cyclictest's longest wait ${mx1:-?} us pinned phase, ${mx2:-?} us free phase; unpinned cyclictest's ${mf1:-?} and ${mf2:-?} us (threads left pinned: $p1, $p2)"
    [ -n "$s0" ] && [ -n "$s1" ] && [ $((s1 - s0)) -le "$allow" ]
    check "frames $pol: free tasks after a pinned load leave no CPU's tasks to the starvation guard" $?
    [ -n "$mx1" ] && [ -n "$mx2" ] && [ "$mx2" -le $((3 * mx1)) ]
    check "frames $pol: a waker's longest wait after a pinned load is within 3x its longest during it" $?
    [ "$p1" = 0 ] && [ "$p2" = 0 ] && [ -n "$mf1" ] && [ -n "$mf2" ] && [ "$mf2" -le $((3 * mf1)) ]
    check "frames $pol: an unpinned waker's longest wait after a pinned load is within 3x its longest during it" $?

    ALONE=$(hog 0)
    sleep $((2 * SECS))
    FREE=$(hogs any)
    s0=$(serves)
    draws_during 4 "$ALONE $FREE" measure_snap 4 $ALONE $FREE
    s1=$(serves)
    stop $ALONE $FREE
    got=$(echo "$OUT" | awk 'NR == 1 { print $3 }')
    tot=$(echo "$OUT" | awk '{ s += $2 } END { printf "%.0f\n", s }')
    due=$(awk -v n="$NCPU" 'BEGIN { printf "%.4f\n", 1 / (n + 1) }')
    tol=$(lottery_tol "$due" 4 "$DRAWS" "$STALL_SQ")
    low=$(awk -v d="$due" -v t="$tol" -v n="$NCPU" -v s="$tot" 'BEGIN { printf "%.4f\n", d - t - (s > 0 ? n * 32 * 4e6 / s : 1) }')
    diag "$pol: a hog pinned to CPU 0 after $((2 * SECS)) s alone, beside $NCPU new unpinned hogs: $got of the hogs' time over 4 s (due $due, at least $low; draws ${DRAWS:-?}, stalled $STALLED; guard serves $((s1 - s0)))"
    awk -v g="${got:-0}" -v l="$low" 'BEGIN { exit !(g >= l) }'
    check "frames $pol: a pinned load beside idle CPUs keeps its share when unpinned hogs start" $?
    tix_stop
done
