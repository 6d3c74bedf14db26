# tix in-guest test library, sourced by busybox ash (no bash in the guest):
#   . "${TIX_LIB:-/usr/share/tix/lib.sh}"
# CPU hogs, per-task CPU time, sched_ext state, share measurement and
# TAP-style checks ending in the "N passed, N failed" line CI reads.
# Counters live in this shell: call check from the main shell, not a pipeline.

TIX_PASS=0
TIX_FAIL=0
TIX_N=0
TIX_SCX=${TIX_SCX:-/sys/kernel/sched_ext}

# hog CPU [USER]: start a busy loop pinned to CPU ("any": unpinned), as USER if given; prints its pid.
hog() {
    if [ "$1" = any ]; then
        _pin=""
    else
        _pin="taskset $(printf '%x' $((1 << $1)))"
    fi
    # exec keeps one pid from su through taskset to the loop; stdout closed so $(hog N) returns.
    if [ -n "${2:-}" ]; then
        su -s /bin/sh "$2" -c "exec $_pin sh -c 'while :; do :; done'" </dev/null >/dev/null 2>&1 &
    else
        $_pin sh -c 'while :; do :; done' </dev/null >/dev/null 2>&1 &
    fi
    echo $!
}

# daemon_report WHO PID LOG: what became of the scheduler loader PID (still
# running, or its exit status; nothing if PID is empty) and the last 20
# lines of its LOG, for a script's error path.
daemon_report() {
    if [ -n "$2" ]; then
        if kill -0 "$2" 2>/dev/null; then echo "$1: scx_tix (pid $2) is still running"; else
            wait "$2"
            echo "$1: scx_tix exited with status $?"
        fi
    fi
    if [ -s "$3" ]; then echo "$1: scx_tix output (last 20 lines):"; tail -n 20 "$3"; fi
}

# cpu_ns PID: CPU time of all PID's threads in ns (sum_exec_runtime, /proc/PID/task/*/schedstat).
cpu_ns() {
    cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { if (NR == 0) exit 1; printf "%.0f\n", s }'
}

# sched_state: sched_ext state, "enabled" or "disabled" (others while switching).
sched_state() { cat "$TIX_SCX/state" 2>/dev/null || echo unsupported; }

# ops_name: name of the attached sched_ext scheduler, empty if none.
ops_name() { cat "$TIX_SCX/root/ops" 2>/dev/null || true; }

# on_scx PID: succeeds if PID is currently scheduled by sched_ext (ext.enabled in /proc/PID/sched).
on_scx() { grep -Eq '^ext\.enabled +: +1' /proc/"$1"/sched 2>/dev/null; }

# now_ms: monotonic milliseconds since boot (from /proc/uptime).
now_ms() { awk '{ printf "%.0f\n", $1 * 1000 }' /proc/uptime; }

# wait_state STATE TIMEOUT_MS: poll every 10 ms until sched_state is STATE; fails after TIMEOUT_MS.
wait_state() {
    _end=$(($(now_ms) + $2))
    while [ "$(sched_state)" != "$1" ]; do
        [ "$(now_ms)" -ge "$_end" ] && return 1
        sleep 0.01
    done
    return 0
}

# wait_attach PID TIMEOUT_MS: wait for state "enabled" while the loader PID lives; fails at once if it exits.
wait_attach() {
    _end=$(($(now_ms) + $2))
    while [ "$(sched_state)" != enabled ]; do
        kill -0 "$1" 2>/dev/null || return 1
        [ "$(now_ms)" -ge "$_end" ] && return 1
        sleep 0.05
    done
    return 0
}

# measure_shares SECS PID...: CPU-time deltas over SECS; prints "PID NS SHARE" per pid (share of the sum).
measure_shares() {
    _secs=$1
    shift
    _before=""
    for _p in "$@"; do _before="$_before $(cpu_ns "$_p" || echo 0)"; done
    sleep "$_secs"
    _after=""
    for _p in "$@"; do _after="$_after $(cpu_ns "$_p" || echo 0)"; done
    snap_diff "$*" "$_before" "$_after"
}

# snap_diff "PID..." BEFORE AFTER: from two lists of those pids' CPU times
# (ns), "PID NS SHARE" per pid, SHARE its part of the summed deltas.
snap_diff() {
    echo "$1 |$2|$3" | awk -F'|' '{
        n = split($1, p, " "); split($2, b, " "); split($3, a, " ")
        for (i = 1; i <= n; i++) { d[i] = a[i] - b[i]; s += d[i] }
        for (i = 1; i <= n; i++) printf "%s %.0f %.4f\n", p[i], d[i], (s > 0 ? d[i] / s : 0)
    }'
}

# within VALUE TARGET TOL: succeeds if |VALUE/TARGET - 1| <= TOL (a fraction, e.g. 0.03).
within() { awk -v v="$1" -v t="$2" -v e="$3" 'BEGIN { r = v / t - 1; if (r < 0) r = -r; exit !(r <= e) }'; }

# diag MSG...: print a TAP comment line.
diag() { printf '%s\n' "$*" | sed 's/^/# /'; }

# check NAME RESULT: RESULT 0 prints "ok - NAME", anything else "not ok - NAME"; counts both.
check() {
    TIX_N=$((TIX_N + 1))
    if [ "${2:-1}" = 0 ]; then
        TIX_PASS=$((TIX_PASS + 1))
        echo "ok - $1"
    else
        TIX_FAIL=$((TIX_FAIL + 1))
        echo "not ok - $1"
    fi
}

# check_cmd NAME CMD...: run CMD and check its exit status.
check_cmd() {
    _name=$1
    shift
    "$@"
    check "$_name" $?
}

# stop PID...: SIGKILL the given processes (hogs) and ignore those already gone.
stop() { kill -9 "$@" 2>/dev/null || true; }

# summary: print the TAP plan and "N passed, N failed"; returns 1 if anything failed or nothing ran.
summary() {
    echo "1..$TIX_N"
    echo "$TIX_PASS passed, $TIX_FAIL failed"
    [ "$TIX_FAIL" = 0 ] && [ "$TIX_N" -gt 0 ]
}
